//! Requests too long to read get an answer: the example server's stdin,
//! cut into lines of at most [`MAX_REQUEST_BYTES`].
//!
//! rmcp drops a line over its limit without a word, so the client would
//! wait for an answer forever. Here a longer line is not kept: it is
//! scanned as it passes for its top-level `id`, and replaced by a small
//! request of the method [`OVERSIZED`] with that id, which the server
//! answers with an error saying how long the request was. A message with no
//! id (a notification) needs no answer and is dropped; one whose id cannot
//! be read is answered with a null id, as JSON-RPC asks.

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest request the example server reads: rmcp's own limit.
pub(super) const MAX_REQUEST_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The method that stands for a request too long to read; its `bytes`
/// parameter is the request's length.
pub(super) const OVERSIZED: &str = "mcp-unknown-keys/oversized";

/// The longest id kept from a request too long to read.
const MAX_ID_BYTES: usize = 1024;

/// Copies `input` to `output` line by line, each line whole, replacing a
/// line longer than [`MAX_REQUEST_BYTES`] as the module says.
pub(super) async fn bound_lines(mut input: impl AsyncRead + Unpin, mut output: impl AsyncWrite + Unpin) {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut over: Option<(IdScan, usize)> = None;
    loop {
        let n = match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest);
            let piece = &rest[..end.unwrap_or(rest.len())];
            rest = end.map_or(&[][..], |at| &rest[at + 1..]);
            match &mut over {
                Some((scan, bytes)) => {
                    scan.feed(piece);
                    *bytes += piece.len();
                }
                None if line.len() + piece.len() > MAX_REQUEST_BYTES => {
                    let mut scan = IdScan::default();
                    scan.feed(&line);
                    scan.feed(piece);
                    over = Some((scan, line.len() + piece.len()));
                    line = Vec::new();
                }
                None => line.extend_from_slice(piece),
            }
            if end.is_none() {
                continue;
            }
            let whole = match over.take() {
                Some((scan, bytes)) => stand_in(scan.id(), bytes),
                None => {
                    line.push(b'\n');
                    Some(std::mem::take(&mut line))
                }
            };
            if let Some(whole) = whole
                && output.write_all(&whole).await.is_err()
            {
                return;
            }
        }
    }
    // A last line without a newline: rmcp takes nothing from it either.
    let _ = output.shutdown().await;
}

/// The request that stands for one too long to read, or `None` when it had
/// no id (a notification).
fn stand_in(id: Found, bytes: usize) -> Option<Vec<u8>> {
    let id = match id {
        Found::None => return None,
        Found::Id(id) => id,
        Found::Unreadable => "null".to_owned(),
    };
    let line =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{OVERSIZED}","params":{{"bytes":{bytes}}}}}"#);
    Some((line + "\n").into_bytes())
}

/// What a scan found of a message's top-level `id`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Found {
    None,
    /// The id's JSON text: a string or a number.
    Id(String),
    Unreadable,
}

/// Finds the top-level `id` member of a JSON object fed in pieces, keeping
/// only that member's value (the last one, should it repeat).
#[derive(Default)]
struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At the object's top level, the next string is a member name.
    expect_name: bool,
    /// The member name being read (its raw text), while at most 64 bytes.
    name: Option<Vec<u8>>,
    /// The last member name read was `id`.
    name_is_id: bool,
    /// The id's value being read, raw; `None` when not reading one.
    value: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
    overflowed: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.step(byte);
        }
    }

    fn step(&mut self, byte: u8) {
        let top = self.depth == 1;
        if self.in_string {
            self.keep(byte);
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if let Some(name) = self.name.take() {
                    self.name_is_id = serde_json::from_slice::<String>(&name).is_ok_and(|n| n == "id");
                }
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if top && self.expect_name {
                    self.expect_name = false;
                    self.name = Some(vec![b'"']);
                } else {
                    self.keep(byte);
                }
            }
            b'{' | b'[' => {
                self.keep(byte);
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_name = byte == b'{';
                }
            }
            b'}' | b']' if top => {
                self.end_value();
                self.depth = 0;
            }
            b'}' | b']' => {
                self.keep(byte);
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if top => {
                self.end_value();
                self.expect_name = true;
            }
            b':' if top && self.name_is_id => {
                self.name_is_id = false;
                self.value = Some(Vec::new());
                self.overflowed = false;
            }
            _ => self.keep(byte),
        }
    }

    /// Keeps a byte of the name or value being read, within bounds.
    fn keep(&mut self, byte: u8) {
        if let Some(name) = &mut self.name {
            if name.len() < 64 {
                name.push(byte);
            } else {
                self.name = Some(Vec::new()); // too long to be `id`
            }
        } else if let Some(value) = &mut self.value {
            if value.len() < MAX_ID_BYTES {
                value.push(byte);
            } else {
                self.overflowed = true;
            }
        }
    }

    fn end_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.found = Some(if self.overflowed { Vec::new() } else { value });
        }
    }

    /// The id found, as JSON text.
    fn id(mut self) -> Found {
        self.end_value();
        let Some(raw) = self.found else {
            return Found::None;
        };
        // The id as it came (a string or a number), so the answer repeats it.
        match serde_json::from_slice::<Value>(&raw) {
            Ok(Value::String(_) | Value::Number(_)) => {
                Found::Id(String::from_utf8_lossy(&raw).trim().to_owned())
            }
            _ => Found::Unreadable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(text: &str, step: usize) -> Found {
        let mut scan = IdScan::default();
        for piece in text.as_bytes().chunks(step) {
            scan.feed(piece);
        }
        scan.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_stands_and_however_it_is_cut() {
        for step in [1, 2, 7, 1000] {
            for (text, id) in [
                (r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, "7"),
                (r#"{"params":{"id":1,"x":"\"id\":2"},"id":"a\"b"}"#, r#""a\"b""#),
                (r#"{ "\u0069d" : -1.5e3 , "method":"x"}"#, "-1.5e3"),
                (r#"{"id":1,"params":[{"id":2}],"id":3}"#, "3"),
            ] {
                assert_eq!(id_of(text, step), Found::Id(id.into()), "{text} by {step}");
            }
        }
        assert_eq!(id_of(r#"{"method":"x","params":{"id":1}}"#, 3), Found::None);
        assert_eq!(id_of(r#"{"id":{"a":1},"method":"x"}"#, 3), Found::Unreadable);
        assert_eq!(id_of(r#"{"id":null}"#, 3), Found::Unreadable);
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(2000));
        assert_eq!(id_of(&long, 100), Found::Unreadable);
    }

    #[test]
    fn short_lines_pass_whole_and_long_ones_are_stood_in_for() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"x":"{}"}}}}"#,
            "y".repeat(MAX_REQUEST_BYTES)
        );
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"n","params":"{}"}}"#,
            "z".repeat(MAX_REQUEST_BYTES)
        );
        let input = format!("{{\"a\":1}}\n{long}\n{notification}\n{{\"b\":2}}\npartial");
        let mut output = Vec::new();
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(bound_lines(input.as_bytes(), &mut output));
        let expected = format!(
            "{{\"a\":1}}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"{OVERSIZED}\",\"params\":{{\"bytes\":{}}}}}\n{{\"b\":2}}\n",
            long.len()
        );
        assert_eq!(String::from_utf8(output).unwrap(), expected);
    }
}
