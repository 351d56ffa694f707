//! Splitting a stream into lines, whichever line ends it uses: `\n`,
//! `\r\n`, or `\r` alone (old Mac files, some Windows tools). A JSON text
//! never holds a raw carriage return inside a string, so splitting at one
//! cannot cut a record.

use std::io::{self, BufRead};

/// Reads lines into a buffer, one at a time.
#[derive(Debug, Default)]
pub struct Lines {
    /// The last line ended with `\r`: a `\n` right after belongs to it.
    after_cr: bool,
}

impl Lines {
    /// Reads the next line into `line` (cleared first), without its line
    /// end. Returns the bytes consumed, 0 at the end of the input.
    pub fn next(&mut self, reader: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
        line.clear();
        let mut consumed = 0;
        loop {
            let available = reader.fill_buf()?;
            if available.is_empty() {
                return Ok(if line.is_empty() { 0 } else { consumed });
            }
            if std::mem::take(&mut self.after_cr) && available[0] == b'\n' {
                reader.consume(1);
                consumed += 1;
                continue;
            }
            match memchr::memchr2(b'\n', b'\r', available) {
                Some(at) => {
                    line.extend_from_slice(&available[..at]);
                    self.after_cr = available[at] == b'\r';
                    reader.consume(at + 1);
                    return Ok(consumed + at + 1);
                }
                None => {
                    let len = available.len();
                    line.extend_from_slice(available);
                    reader.consume(len);
                    consumed += len;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &[u8], capacity: usize) -> Vec<String> {
        let mut reader = io::BufReader::with_capacity(capacity, text);
        let mut lines = Lines::default();
        let mut line = Vec::new();
        let mut out = Vec::new();
        while lines.next(&mut reader, &mut line).unwrap() > 0 {
            out.push(String::from_utf8(line.clone()).unwrap());
        }
        out
    }

    #[test]
    fn every_line_end_splits_and_crlf_is_one_end() {
        for capacity in [1, 2, 3, 64] {
            assert_eq!(
                split(b"a\nb\r\nc\rd", capacity),
                ["a", "b", "c", "d"],
                "{capacity}"
            );
            assert_eq!(split(b"a\r\n\r\nb\r", capacity), ["a", "", "b"], "{capacity}");
            assert_eq!(split(b"\n\n", capacity), ["", ""], "{capacity}");
        }
    }
}
