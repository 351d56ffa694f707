//! Reading inputs as they are kept: JSON Lines, or a file that is one JSON
//! document (or several, pretty-printed one after another); plain, gzip or
//! Zstandard, recognised by their first bytes; with or without a UTF-8 byte
//! order mark; with any line ends. A file that is not text is refused once,
//! whole, rather than line by line.

mod decode;
mod lines;
mod progress;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use decode::Compression;
use lines::Lines;
pub use progress::Progress;

/// A line buffer grown past this by one long line is given back afterwards,
/// so one huge line does not hold its memory for the rest of the run.
const KEPT_BUFFER_BYTES: usize = 1 << 20;
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// One input: a file, or stdin.
pub struct Input {
    /// How the input is named in messages (`stdin` for stdin).
    pub name: String,
    reader: Box<dyn BufRead>,
    /// The length in bytes of a plain file, for the progress bar.
    len: Option<u64>,
    /// Whether a file that is not JSON Lines is said on stderr.
    say_document: bool,
}

/// One record of an input.
#[derive(Debug)]
pub enum Record<'a> {
    /// A line of JSON Lines, without its line end, and its number from 1.
    Line { bytes: &'a [u8], number: u64 },
    /// One JSON value of an input that is not JSON Lines.
    Document { text: &'a str },
}

impl Input {
    /// Standard input; the error says why it cannot be read.
    pub fn stdin() -> Result<Input, String> {
        Input::new("stdin".to_owned(), Box::new(io::stdin().lock()), None)
    }

    /// Opens a file (`-` is stdin); the error says which file and why.
    pub fn open(path: &Path) -> Result<Input, String> {
        if path == Path::new("-") {
            return Input::stdin();
        }
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| format!("cannot open the input {name}: {e}"))?;
        let metadata = file
            .metadata()
            .map_err(|e| format!("cannot read the input {name}: {e}"))?;
        if metadata.is_dir() {
            return Err(format!("cannot read the input {name}: it is a directory"));
        }
        let reader = BufReader::with_capacity(256 << 10, file);
        Input::new(name, Box::new(reader), Some(metadata.len()))
    }

    /// Looks at the first bytes: decompresses, drops a byte order mark, and
    /// refuses what is not text.
    fn new(name: String, mut reader: Box<dyn BufRead>, len: Option<u64>) -> Result<Input, String> {
        let unreadable = |e: io::Error| format!("cannot read the input {name}: {e}");
        let mut len = len;
        if let Some(compression) = Compression::of(reader.fill_buf().map_err(unreadable)?) {
            reader = compression.decode(reader).map_err(unreadable)?;
            // The file's length says nothing of the text's.
            len = None;
        }
        let start = reader.fill_buf().map_err(unreadable)?;
        if let Some(why) = not_text(start) {
            return Err(format!(
                "the input {name} is not text ({why}): nothing read from it"
            ));
        }
        if start.starts_with(UTF8_BOM) {
            reader.consume(UTF8_BOM.len());
        }
        Ok(Input {
            name,
            reader,
            len,
            say_document: true,
        })
    }

    /// The same input, read without saying that it is a JSON document (a
    /// catalogue file usually is one).
    pub fn documents_expected(self) -> Input {
        Input {
            say_document: false,
            ..self
        }
    }

    /// Calls `on_record` with each record: each line of JSON Lines, read
    /// into one reused buffer so memory holds one line at a time; or, when
    /// the first line opens a JSON document that does not end on it, each
    /// JSON value of the whole input (which is then held in memory, and
    /// said once on stderr).
    pub fn read(self, mut on_record: impl FnMut(Record<'_>, &mut Progress)) -> io::Result<()> {
        let mut progress = Progress::new(&self.name, self.len);
        let mut reader = self.reader;
        let mut lines = Lines::default();
        let mut line = Vec::with_capacity(64 << 10);
        let mut number = 0;
        let mut looked = false;
        loop {
            let read = lines.next(&mut *reader, &mut line)?;
            if read == 0 {
                break;
            }
            if !looked && !line.trim_ascii().is_empty() {
                looked = true;
                if opens_a_document(&line) {
                    let mut whole = std::mem::take(&mut line);
                    whole.push(b'\n');
                    reader.read_to_end(&mut whole)?;
                    if let Some(values) = json_values(&whole) {
                        if self.say_document {
                            progress.clear();
                            say_document(&self.name, values.len());
                        }
                        for value in values {
                            on_record(Record::Document { text: value.get() }, &mut progress);
                        }
                        return Ok(());
                    }
                    // Not one document after all: its lines, from memory.
                    reader = Box::new(io::Cursor::new(whole));
                    lines = Lines::default();
                    continue;
                }
            }
            number += 1;
            on_record(Record::Line { bytes: &line, number }, &mut progress);
            progress.advance(read as u64);
            if line.capacity() > KEPT_BUFFER_BYTES {
                line = Vec::with_capacity(64 << 10);
            }
        }
        progress.clear();
        Ok(())
    }
}

fn say_document(name: &str, values: usize) {
    let what = match values {
        1 => "one JSON document".to_owned(),
        n => format!("{n} JSON documents"),
    };
    eprintln!("mcp-unknown-keys audit: {name} is {what}, not JSON Lines: read element by element");
}

/// Whether `line` starts a JSON object or array that does not end on it.
fn opens_a_document(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    (line.starts_with(b"{") || line.starts_with(b"["))
        && serde_json::from_slice::<IgnoredAny>(line).is_err_and(|e| e.is_eof())
}

/// The JSON values `text` holds one after another, if it is nothing else.
fn json_values(text: &[u8]) -> Option<Vec<&RawValue>> {
    let text = std::str::from_utf8(text).ok()?;
    let values: Result<Vec<&RawValue>, _> = serde_json::Deserializer::from_str(text)
        .into_iter::<&RawValue>()
        .collect();
    values.ok().filter(|values| !values.is_empty())
}

/// Why the first bytes of an input show it is not text, if they do.
fn not_text(start: &[u8]) -> Option<&'static str> {
    if start.starts_with(b"\xff\xfe") || start.starts_with(b"\xfe\xff") {
        return Some("it is UTF-16; convert it to UTF-8, e.g. with iconv -f UTF-16 -t UTF-8");
    }
    if start.contains(&0) {
        return Some("it holds NUL bytes");
    }
    // Control characters other than tabs, line ends and form feeds are
    // rare in text and common in binary data.
    let controls = start
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)) || b == 0x7f)
        .count();
    (controls * 100 > start.len()).then_some("it holds control bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_opens_a_document_is_one_that_ends_early() {
        assert!(opens_a_document(b"["));
        assert!(opens_a_document(b"  {"));
        assert!(opens_a_document(br#"{"loglines": ["#));
        assert!(!opens_a_document(br#"{"a":1}"#));
        assert!(!opens_a_document(b"[1,2]"));
        assert!(!opens_a_document(br#"{"a":1} x"#));
        assert!(!opens_a_document(b"not json"));
    }

    #[test]
    fn binary_is_told_from_text() {
        assert_eq!(not_text(b"{\"a\":1}\n\t\r\n"), None);
        assert_eq!(not_text("{\"ü\":\"ß\"}".as_bytes()), None);
        assert!(not_text(b"{\"a\":\0}").is_some());
        assert!(not_text(b"\xff\xfe{\0").unwrap().contains("UTF-16"));
        assert!(not_text(b"\x01\x02\x03abc").is_some());
    }
}
