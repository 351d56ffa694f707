//! Splitting a stream into lines, whichever line ends it uses: `\n`,
//! `\r\n`, or `\r` alone (old Mac files, some Windows tools). A JSON text
//! never holds a raw carriage return inside a string, so splitting at one
//! cannot cut a record.

use std::io::{self, BufRead};

/// Reads lines into a buffer, one at a time, each at most `max` bytes long.
#[derive(Debug)]
pub(super) struct Lines {
    /// The last line ended with `\r`: a `\n` right after belongs to it.
    after_cr: bool,
    /// The longest line kept; a longer one is read past, not kept.
    max: usize,
}

/// One line read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Line {
    /// The bytes consumed, its line end included; 0 at the end of the input.
    pub consumed: usize,
    /// The line is longer than the most kept: the buffer holds its first
    /// bytes, and the rest is still to be read ([`Lines::skip_rest`], or
    /// read by its parts).
    pub too_long: bool,
}

impl Lines {
    /// Lines of at most `max` bytes.
    pub(super) fn new(max: usize) -> Lines {
        Lines { after_cr: false, max }
    }

    /// Reads the next line into `line` (cleared first), without its line
    /// end. Of a line longer than the most kept, only that much is read:
    /// the caller reads the rest by its parts or reads past it
    /// ([`Lines::skip_rest`]), so one line of gigabytes costs no memory.
    pub(super) fn next(&mut self, reader: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<Line> {
        line.clear();
        let mut read = Line {
            consumed: 0,
            too_long: false,
        };
        loop {
            let available = reader.fill_buf()?;
            if available.is_empty() {
                if line.is_empty() && !read.too_long {
                    read.consumed = 0;
                }
                return Ok(read);
            }
            if std::mem::take(&mut self.after_cr) && available[0] == b'\n' {
                reader.consume(1);
                read.consumed += 1;
                continue;
            }
            let end = memchr::memchr2(b'\n', b'\r', available);
            let piece = &available[..end.unwrap_or(available.len())];
            let room = self.max.saturating_sub(line.len());
            if piece.len() > room {
                read.too_long = true;
                line.extend_from_slice(&piece[..room]);
                reader.consume(room);
                read.consumed += room;
                return Ok(read);
            }
            line.extend_from_slice(piece);
            match end {
                Some(at) => {
                    self.after_cr = available[at] == b'\r';
                    reader.consume(at + 1);
                    read.consumed += at + 1;
                    return Ok(read);
                }
                None => {
                    let len = available.len();
                    reader.consume(len);
                    read.consumed += len;
                }
            }
        }
    }
}

impl Lines {
    /// Reads past the rest of a line too long to keep, to its end: the
    /// bytes consumed.
    pub(super) fn skip_rest(&mut self, reader: &mut dyn BufRead) -> io::Result<usize> {
        let mut consumed = 0;
        loop {
            let available = reader.fill_buf()?;
            if available.is_empty() {
                return Ok(consumed);
            }
            match memchr::memchr2(b'\n', b'\r', available) {
                Some(at) => {
                    self.after_cr = available[at] == b'\r';
                    reader.consume(at + 1);
                    return Ok(consumed + at + 1);
                }
                None => {
                    let len = available.len();
                    reader.consume(len);
                    consumed += len;
                }
            }
        }
    }

    /// A line read to its end elsewhere ended with `\r` (`cr`): a `\n`
    /// right after belongs to it.
    pub(super) fn ended(&mut self, cr: bool) {
        self.after_cr = cr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &[u8], capacity: usize) -> Vec<String> {
        split_at_most(text, capacity, usize::MAX)
            .into_iter()
            .map(|(line, _)| line)
            .collect()
    }

    fn split_at_most(text: &[u8], capacity: usize, max: usize) -> Vec<(String, bool)> {
        let mut reader = io::BufReader::with_capacity(capacity, text);
        let mut lines = Lines::new(max);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            let read = lines.next(&mut reader, &mut line).unwrap();
            if read.consumed == 0 {
                return out;
            }
            if read.too_long {
                lines.skip_rest(&mut reader).unwrap();
            }
            out.push((String::from_utf8(line.clone()).unwrap(), read.too_long));
        }
    }

    #[test]
    fn a_line_past_the_most_kept_is_read_past_and_said_too_long() {
        for capacity in [1, 3, 64] {
            let lines = split_at_most(b"abc\nabcdefgh\r\nab\nabcd", capacity, 3);
            let expected = [("abc", false), ("abc", true), ("ab", false), ("abc", true)];
            let expected: Vec<(String, bool)> = expected.iter().map(|(l, t)| (l.to_string(), *t)).collect();
            assert_eq!(lines, expected, "{capacity}");
        }
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
