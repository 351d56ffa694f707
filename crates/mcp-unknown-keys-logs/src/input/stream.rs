//! A line too long to hold that holds a JSON document (a minified
//! trajectory file: one array of hundreds of megabytes on one line), read
//! by its parts in bounded memory, as a pretty-printed document is read
//! element by element.
//!
//! The line is followed byte by byte without being parsed. Each array or
//! object one level inside the document (an element of an array, a member
//! value of an object) is gathered and handed over whole; one that grows
//! past the most a line may hold is read by its own parts instead, the
//! parts it holds so far taken from what was gathered. An object read by
//! its parts (its own members beside them are not read) is said to be too
//! long, as is one nested too deep to be read by parts: it may hold calls.

use std::io::{self, BufRead};

use crate::strings::Strings;

/// How many levels down a value too long to hold is read by its parts:
/// each level costs one more pass over what was gathered.
const MAX_LEVELS: usize = 16;

/// What reading one long line hands over, in order.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Part<'a> {
    /// A value of the document, whole (an array or an object).
    Value(&'a [u8]),
    /// A value too long to hold read only by its parts, or not at all.
    TooLong,
}

/// How the line ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct End {
    /// The bytes consumed from the reader, its line end included.
    pub consumed: usize,
    /// It ended with `\r` (a `\n` right after belongs to it).
    pub cr: bool,
    /// It ended inside the document (the document was cut short, or was
    /// not JSON).
    pub open: bool,
    /// It ended with a line end, not with the input.
    pub line_end: bool,
    /// A value it held was said to be too long.
    pub said_too_long: bool,
    /// It held more than one JSON value: it is no document.
    pub more: bool,
}

/// Follows one line, whose first bytes `start` were read already, to its
/// end in `reader`, handing over the parts of the document it holds; `max`
/// is the most bytes one part may hold.
pub(super) fn read_line(
    start: &[u8],
    reader: &mut dyn BufRead,
    max: usize,
    on_part: &mut dyn FnMut(Part<'_>),
) -> io::Result<End> {
    let mut split = Split::new(max);
    for &byte in start {
        split.byte(byte, on_part);
    }
    let mut consumed = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(split.end(consumed, false, false, on_part));
        }
        let end = memchr::memchr2(b'\n', b'\r', available);
        for &byte in &available[..end.unwrap_or(available.len())] {
            split.byte(byte, on_part);
        }
        match end {
            Some(at) => {
                let cr = available[at] == b'\r';
                reader.consume(at + 1);
                return Ok(split.end(consumed + at + 1, cr, true, on_part));
            }
            None => {
                let len = available.len();
                reader.consume(len);
                consumed += len;
            }
        }
    }
}

/// The state of one line being followed.
struct Split {
    max: usize,
    strings: Strings,
    /// Arrays and objects open.
    depth: usize,
    /// The depth at which a value opening is gathered: 1, one level inside
    /// the document, and one more for each value read by its parts.
    level: usize,
    /// The value being gathered, from its opening bracket; `None` when
    /// none is.
    gathered: Option<Vec<u8>>,
    /// A value nested too deep to read by parts: skipped until the depth
    /// falls below this.
    skipping: Option<usize>,
    /// A value was said to be too long.
    said_too_long: bool,
    /// Whether the document closed, and whether anything but blanks
    /// followed it.
    closed: bool,
    more: bool,
}

impl Split {
    fn new(max: usize) -> Split {
        Split {
            max,
            strings: Strings::default(),
            depth: 0,
            level: 1,
            gathered: None,
            skipping: None,
            said_too_long: false,
            closed: false,
            more: false,
        }
    }

    fn byte(&mut self, byte: u8, on_part: &mut dyn FnMut(Part<'_>)) {
        let outside = self.strings.outside(byte);
        if self.depth == 0 && self.closed && !byte.is_ascii_whitespace() {
            self.more = true;
        }
        if self.more {
            // No document: nothing more of it is read.
            return;
        }
        let opens = outside && matches!(byte, b'[' | b'{');
        if opens && self.gathered.is_none() && self.skipping.is_none() && self.depth == self.level {
            self.gathered = Some(Vec::new());
        }
        if let Some(gathered) = &mut self.gathered {
            gathered.push(byte);
        }
        if opens {
            self.depth += 1;
            if self.depth == 1 && byte == b'{' {
                // The document is an object: its own members are not read.
                self.too_long(on_part);
            }
        } else if outside && matches!(byte, b']' | b'}') {
            self.depth = self.depth.saturating_sub(1);
            self.closed |= self.depth == 0;
            if self.skipping.is_some_and(|at| self.depth < at) {
                self.skipping = None;
            }
            if self.depth == self.level
                && let Some(gathered) = self.gathered.take()
            {
                on_part(Part::Value(&gathered));
            }
            // The value read by its parts has closed: gather its siblings.
            self.level = self.level.min(self.depth.max(1));
        }
        if self.gathered.as_ref().is_some_and(|g| g.len() > self.max) {
            self.by_parts(on_part);
        }
    }

    /// The value gathered has grown too long to hold: hands over its parts
    /// that ended, and gathers on from the part still open, one level down.
    fn by_parts(&mut self, on_part: &mut dyn FnMut(Part<'_>)) {
        let Some(gathered) = self.gathered.take() else {
            return;
        };
        if gathered[0] == b'{' || self.level >= MAX_LEVELS {
            self.too_long(on_part);
        }
        if self.level >= MAX_LEVELS {
            self.skipping = Some(self.level + 1);
            return;
        }
        self.level += 1;
        let mut strings = Strings::default();
        let mut depth = 0usize;
        let mut open = None;
        for (at, &byte) in gathered.iter().enumerate() {
            if !strings.outside(byte) {
                continue;
            }
            match byte {
                b'[' | b'{' => {
                    if depth == 1 && open.is_none() {
                        open = Some(at);
                    }
                    depth += 1;
                }
                b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 1
                        && let Some(start) = open.take()
                    {
                        on_part(Part::Value(&gathered[start..=at]));
                    }
                }
                _ => {}
            }
        }
        self.gathered = open.map(|start| gathered[start..].to_vec());
        if self.gathered.as_ref().is_some_and(|g| g.len() > self.max) {
            self.by_parts(on_part);
        }
    }

    /// The line ends: a value still gathered is cut. Cut by the input's
    /// end (a file truncated while written), the values that ended inside
    /// it before the cut are read, as in a pretty-printed document cut
    /// short; cut by a line end, it is no document, and said too long.
    fn end(self, consumed: usize, cr: bool, line_end: bool, on_part: &mut dyn FnMut(Part<'_>)) -> End {
        let mut split = self;
        match split.gathered.take() {
            Some(cut) if !line_end => {
                let values = std::str::from_utf8(&cut).ok().and_then(super::cut::values);
                if let Some(super::cut::Values::CutShort { values, .. }) = values {
                    for value in values {
                        on_part(Part::Value(value.get().as_bytes()));
                    }
                }
            }
            Some(_) => split.too_long(on_part),
            None => {}
        }
        End {
            consumed,
            cr,
            open: split.depth > 0,
            line_end,
            said_too_long: split.said_too_long,
            more: split.more,
        }
    }

    fn too_long(&mut self, on_part: &mut dyn FnMut(Part<'_>)) {
        self.said_too_long = true;
        on_part(Part::TooLong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &str, max: usize) -> (Vec<String>, End) {
        let mut seen = Vec::new();
        let mut rest = io::Cursor::new(line.as_bytes());
        let end = read_line(b"", &mut rest, max, &mut |part| {
            seen.push(match part {
                Part::Value(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
                Part::TooLong => "too long".to_owned(),
            })
        })
        .unwrap();
        (seen, end)
    }

    #[test]
    fn an_array_is_read_element_by_element() {
        let (seen, end) = parts(r#"[{"a":"]"}, 1, {"b":[2]}, "x"]"#, 12);
        assert_eq!(seen, [r#"{"a":"]"}"#, r#"{"b":[2]}"#]);
        assert!(!end.open);
    }

    #[test]
    fn a_value_too_long_is_read_by_its_parts() {
        // The array of records under `messages` is too long: its elements.
        let line = r#"{"model":"m","messages":[{"role":"a"},{"role":"b"},{"role":"c"}]}"#;
        let (seen, _) = parts(line, 16);
        assert_eq!(
            seen,
            [
                "too long",
                r#"{"role":"a"}"#,
                r#"{"role":"b"}"#,
                r#"{"role":"c"}"#
            ]
        );
        // An element too long: said, and its parts read.
        let (seen, _) = parts(r#"[{"type":"x","input":{"k":1},"z":"0123456789"}, {"a":1}]"#, 16);
        assert_eq!(seen, ["too long", r#"{"k":1}"#, r#"{"a":1}"#]);
    }

    #[test]
    fn a_line_ends_at_its_line_end_and_a_document_cut_there_is_said() {
        let (seen, end) = parts("[{\"a\":1}, {\"b\":\n{\"c\":1}\n", 64);
        assert_eq!(seen, [r#"{"a":1}"#, "too long"]);
        assert_eq!((end.consumed, end.open, end.cr), (16, true, false));
    }

    #[test]
    fn a_document_cut_by_the_input_s_end_is_read_to_the_cut() {
        let (seen, end) = parts(r#"[{"a":1}, {"b":[{"c":2}, {"d":"#, 64);
        assert_eq!(seen, [r#"{"a":1}"#, r#"{"c":2}"#]);
        assert!(end.open && !end.line_end && !end.said_too_long);
    }

    #[test]
    fn a_line_holding_more_than_one_value_is_no_document() {
        let (seen, end) = parts("[2026-11-30 INFO] started [{\"a\":1}]", 64);
        assert!(end.more && !end.open);
        assert!(seen.is_empty(), "{seen:?}");
    }

    #[test]
    fn nesting_too_deep_to_read_by_parts_is_skipped_in_bounded_memory() {
        let line = format!("[{}{}, {{\"ok\":1}}]", "[".repeat(10_000), "]".repeat(10_000));
        let (seen, end) = parts(&line, 8);
        assert_eq!(seen.last().map(String::as_str), Some(r#"{"ok":1}"#));
        assert!(seen.contains(&"too long".to_owned()));
        assert!(!end.open);
    }
}
