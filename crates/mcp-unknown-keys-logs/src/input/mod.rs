//! Reading inputs as they are kept: JSON Lines, or a file that is one JSON
//! document (or several, pretty-printed one after another); plain, gzip or
//! Zstandard, recognised by their first bytes; with or without a UTF-8 byte
//! order mark; with any line ends. A file that is not text is refused once,
//! whole, rather than line by line.

mod cut;
mod decode;
mod lines;
mod stream;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::OnceLock;

use serde::de::IgnoredAny;

use crate::error::{Error, Role};
use cut::Values;
use decode::Compression;
use lines::Lines;

/// The longest line held (64 MiB). A longer one that holds a JSON
/// document (a minified trajectory file) is read by its parts, element by
/// element, in bounded memory; any other, which no log writes but a hostile
/// or broken stream may (one line of gigabytes, decompressed), is read past
/// to its end without being kept, and counted as too long.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Lowers the longest line held, for tests, which then need no file of
/// 64 MiB: read once, at most [`MAX_LINE_BYTES`], at least
/// [`MIN_TEST_LINE_BYTES`].
const LINE_BYTES_ENV: &str = "MCP_UNKNOWN_KEYS_TEST_MAX_LINE_BYTES";
const MIN_TEST_LINE_BYTES: usize = 64;

/// The longest line held: [`MAX_LINE_BYTES`], unless a test lowered it.
pub(crate) fn max_line_bytes() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var(LINE_BYTES_ENV)
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .map_or(MAX_LINE_BYTES, |bytes| {
                bytes.clamp(MIN_TEST_LINE_BYTES, MAX_LINE_BYTES)
            })
    })
}

/// A line buffer grown past this by one long line is given back afterwards,
/// so one huge line does not hold its memory for the rest of the run.
const KEPT_BUFFER_BYTES: usize = 1 << 20;
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
/// The buffer files are read through.
const BUFFER_BYTES: usize = 256 << 10;

/// One input to audit: a file, stdin, or any reader, looked at once when
/// opened (decompressed if it is gzip or Zstandard, its byte order mark
/// dropped, refused if it is not text).
///
/// ```
/// use mcp_unknown_keys_logs::Input;
///
/// let input = Input::from_reader("recorded", &b"{\"type\":\"tool_use\"}\n"[..])?;
/// assert_eq!(input.name(), "recorded");
/// assert!(Input::from_reader("binary", &b"\0\x01\x02"[..]).is_err());
/// # Ok::<(), mcp_unknown_keys_logs::Error>(())
/// ```
pub struct Input {
    name: String,
    reader: Box<dyn BufRead>,
    /// The length in bytes of a plain file.
    size: Option<u64>,
}

/// What reading an input meets, in order.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// A line of JSON Lines, without its line end, and its number from 1.
    Line { bytes: &'a [u8], number: u64 },
    /// The input is not JSON Lines but `values` JSON values one after
    /// another (often one document): each follows as a [`Event::Document`].
    Documents { values: usize },
    /// One JSON value of an input that is not JSON Lines.
    Document { text: &'a str },
    /// The input is one JSON document (or several) whose text ends partway
    /// through one, at `at`: the values before the cut follow, each as a
    /// [`Event::Document`].
    CutShort { at: usize },
    /// A line longer than [`MAX_LINE_BYTES`], read past, and its number;
    /// or, of such a line read by its parts, a value too long to hold.
    TooLong { number: u64 },
    /// One value of a line too long to hold that holds a JSON document,
    /// read by its parts (an element of its array), and the line's number.
    Part { bytes: &'a [u8], number: u64 },
    /// The bytes read so far, after each line.
    Progress { read: u64 },
}

impl Input {
    /// Standard input.
    pub fn stdin() -> Result<Input, Error> {
        Input::stdin_as(Role::Input)
    }

    /// Standard input, read as `role`. Not locked while the input lives: a
    /// second input of stdin reads on where the first stopped, rather than
    /// waiting for a lock the first holds.
    fn stdin_as(role: Role) -> Result<Input, Error> {
        let reader = BufReader::with_capacity(BUFFER_BYTES, io::stdin());
        Input::new("stdin".to_owned(), Box::new(reader), None, role)
    }

    /// Opens a file; `-` is stdin, as command lines write it.
    pub fn open(path: impl AsRef<Path>) -> Result<Input, Error> {
        Input::open_as(path.as_ref(), Role::Input)
    }

    /// Whether the file at `path` can be opened as an input (`-`, stdin,
    /// always can), without keeping it open: so every input of a long list
    /// can be checked before any is read, and each opened only when read.
    ///
    /// ```
    /// use mcp_unknown_keys_logs::{Error, Input};
    ///
    /// assert!(matches!(Input::check("no/such/log.jsonl"), Err(Error::Open { .. })));
    /// assert!(matches!(Input::check("."), Err(Error::Directory { .. })));
    /// assert!(Input::check("-").is_ok());
    /// ```
    pub fn check(path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        if path == Path::new("-") {
            return Ok(());
        }
        Input::file(path, Role::Input).map(drop)
    }

    /// Reads from `reader`, named `name` in messages.
    pub fn from_reader(name: impl Into<String>, reader: impl Read + 'static) -> Result<Input, Error> {
        let reader = BufReader::with_capacity(BUFFER_BYTES, reader);
        Input::new(name.into(), Box::new(reader), None, Role::Input)
    }

    /// How the input is named in messages: the path as given, or `stdin`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size of a plain file in bytes (not of a compressed one, nor of a
    /// stream), for a progress bar.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Opens a file (`-` is stdin) to be read as `role`.
    pub(crate) fn open_as(path: &Path, role: Role) -> Result<Input, Error> {
        if path == Path::new("-") {
            return Input::stdin_as(role);
        }
        let (file, len) = Input::file(path, role)?;
        let reader = BufReader::with_capacity(BUFFER_BYTES, file);
        Input::new(path.display().to_string(), Box::new(reader), Some(len), role)
    }

    /// Opens the file at `path`, refusing a directory: the file and its
    /// length.
    fn file(path: &Path, role: Role) -> Result<(File, u64), Error> {
        let name = path.display().to_string();
        let file = match File::open(path) {
            Ok(file) => file,
            Err(source) => return Err(Error::Open { role, name, source }),
        };
        let metadata = match file.metadata() {
            Ok(metadata) => metadata,
            Err(source) => return Err(Error::Read { role, name, source }),
        };
        if metadata.is_dir() {
            return Err(Error::Directory { role, name });
        }
        Ok((file, metadata.len()))
    }

    /// Looks at the first bytes: decompresses, drops a byte order mark, and
    /// refuses what is not text.
    fn new(
        name: String,
        mut reader: Box<dyn BufRead>,
        size: Option<u64>,
        role: Role,
    ) -> Result<Input, Error> {
        let mut size = size;
        let start = match reader.fill_buf() {
            Ok(start) => Compression::of(start),
            Err(source) => return Err(Error::Read { role, name, source }),
        };
        if let Some(compression) = start {
            reader = match compression.decode(reader) {
                Ok(reader) => reader,
                Err(source) => return Err(Error::Read { role, name, source }),
            };
            // The file's length says nothing of the text's.
            size = None;
        }
        let start = match reader.fill_buf() {
            Ok(start) => start,
            Err(source) => return Err(Error::Read { role, name, source }),
        };
        if let Some(why) = not_text(start) {
            return Err(Error::NotText { role, name, why });
        }
        if start.starts_with(UTF8_BOM) {
            reader.consume(UTF8_BOM.len());
        }
        Ok(Input { name, reader, size })
    }

    /// Calls `on_event` with each record: each line of JSON Lines, read
    /// into one reused buffer so memory holds one line at a time; or, when
    /// the first line opens a JSON document that does not end on it, each
    /// JSON value of the whole input (which is then held in memory).
    ///
    /// A read that fails partway is an error; the lines before it were
    /// handed over.
    pub(crate) fn read(self, mut on_event: impl FnMut(Event<'_>)) -> io::Result<()> {
        let mut reader = self.reader;
        let max = max_line_bytes();
        let mut lines = Lines::new(max);
        let mut line = Vec::with_capacity(64 << 10);
        let mut number = 0;
        let mut read = 0;
        let mut looked = false;
        loop {
            let next = lines.next(&mut *reader, &mut line)?;
            if next.consumed == 0 {
                break;
            }
            let first = !looked && !line.trim_ascii().is_empty();
            if first {
                looked = true;
                if !next.too_long && opens_a_document(&line) {
                    let mut whole = std::mem::take(&mut line);
                    // Its line end, if it had one: a text cut inside a
                    // string must end there, not in a raw line end.
                    if next.consumed > whole.len() {
                        whole.push(b'\n');
                    }
                    reader.read_to_end(&mut whole)?;
                    if documents(&whole, &mut on_event) {
                        return Ok(());
                    }
                    // Not one document after all: its lines, from memory.
                    reader = Box::new(io::Cursor::new(whole));
                    lines = Lines::new(max);
                    continue;
                }
            }
            number += 1;
            let mut consumed = next.consumed;
            if next.too_long && starts_a_value(&line) {
                if first {
                    on_event(Event::Documents { values: 1 });
                }
                let end = stream::read_line(&line, &mut *reader, max, &mut |part| match part {
                    stream::Part::Value(bytes) => on_event(Event::Part { bytes, number }),
                    stream::Part::TooLong => on_event(Event::TooLong { number }),
                })?;
                lines.ended(end.cr);
                consumed += end.consumed;
                let at = read + consumed as u64;
                if end.open && !end.line_end {
                    // A document cut short by the input's end, as a
                    // pretty-printed one may be.
                    on_event(Event::CutShort { at: at as usize });
                } else if (end.open || end.more) && !end.said_too_long {
                    // Not one JSON document after all: unread.
                    on_event(Event::TooLong { number });
                }
            } else if next.too_long {
                consumed += lines.skip_rest(&mut *reader)?;
                on_event(Event::TooLong { number });
            } else {
                on_event(Event::Line { bytes: &line, number });
            }
            read += consumed as u64;
            on_event(Event::Progress { read });
            if line.capacity() > KEPT_BUFFER_BYTES {
                line = Vec::with_capacity(64 << 10);
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("name", &self.name)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// Whether `line` starts with a JSON array or object (after blanks).
fn starts_a_value(line: &[u8]) -> bool {
    matches!(line.trim_ascii_start().first(), Some(b'[' | b'{'))
}

/// Whether `line` starts a JSON object or array that does not end on it.
fn opens_a_document(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    (line.starts_with(b"{") || line.starts_with(b"["))
        && serde_json::from_slice::<IgnoredAny>(line).is_err_and(|e| e.is_eof())
}

/// Hands over the JSON values `text` holds one after another, and says
/// where it was cut short if it ends partway through one; `false` (and
/// nothing handed over) when it is not JSON values.
fn documents(text: &[u8], on_event: &mut impl FnMut(Event<'_>)) -> bool {
    let Some(values) = std::str::from_utf8(text).ok().and_then(cut::values) else {
        return false;
    };
    let (values, cut) = match values {
        Values::Whole(values) => (values, None),
        Values::CutShort { values, at } => (values, Some(at)),
    };
    // Said once: as documents, or as a document cut short.
    match cut {
        Some(at) => on_event(Event::CutShort { at }),
        None => on_event(Event::Documents { values: values.len() }),
    }
    for value in values {
        on_event(Event::Document { text: value.get() });
    }
    true
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
