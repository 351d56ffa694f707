//! A JSONC reader that keeps byte positions, so a configuration can be
//! edited as text and every byte it does not change stays as it was.
//!
//! It reads JSON plus what host configurations add (VS Code's `mcp.json` is
//! JSONC): `//` and `/* */` comments, trailing commas and a byte-order mark.
//! Every value carries its [`Span`] in the text, every string its decoded
//! value; numbers and literals are checked, not decoded (nothing here needs
//! them). A document it cannot read is refused with the byte offset of the
//! first fault, which [`position`] turns into a line and column.

use std::fmt;

/// How deep objects and arrays may nest: a configuration is shallow, and a
/// bound keeps a hostile file from exhausting the stack.
const MAX_DEPTH: usize = 128;

/// A byte range `start..end` of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A value and where it is.
#[derive(Debug)]
pub struct Value {
    /// From its first byte to its last (`{` to `}`, quote to quote).
    pub span: Span,
    /// What it is.
    pub kind: Kind,
}

/// The kinds of value the editor tells apart.
#[derive(Debug)]
pub enum Kind {
    /// An object's members, in document order (repeated keys included).
    Object(Vec<Member>),
    /// An array's elements, in order.
    Array(Vec<Value>),
    /// A string, decoded.
    String(String),
    /// A number, `true`, `false` or `null`.
    Other,
}

/// One `"key": value` of an object.
#[derive(Debug)]
pub struct Member {
    /// The key, decoded.
    pub key: String,
    /// The key's string token, quotes included.
    pub key_span: Span,
    /// The value.
    pub value: Value,
}

impl Member {
    /// From the key's opening quote to the value's last byte.
    pub fn span(&self) -> Span {
        Span {
            start: self.key_span.start,
            end: self.value.span.end,
        }
    }
}

impl Value {
    /// The members, when this is an object.
    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The elements, when this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Array(elements) => Some(elements),
            _ => None,
        }
    }

    /// The decoded text, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(text) => Some(text),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn describe(&self) -> &'static str {
        match self.kind {
            Kind::Object(_) => "an object",
            Kind::Array(_) => "an array",
            Kind::String(_) => "a string",
            Kind::Other => "a number, boolean or null",
        }
    }
}

/// What the tool cannot read — a document that is not JSON or JSONC, or a
/// part of one in a shape it does not know: where and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The byte offset of the fault.
    pub offset: usize,
    /// What was wrong there.
    pub message: String,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, column)
}

/// Reads a whole document: one value, with only whitespace and comments
/// around it.
pub fn parse(text: &str) -> Result<Value, Unreadable> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    if text.starts_with('\u{feff}') {
        parser.pos = '\u{feff}'.len_utf8();
    }
    parser.skip_trivia()?;
    let value = parser.value()?;
    parser.skip_trivia()?;
    if parser.pos < parser.bytes.len() {
        return Err(parser.error("unexpected text after the document"));
    }
    Ok(value)
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> Unreadable {
        Unreadable {
            offset: self.pos,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), Unreadable> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => {
                        let rest = &self.bytes[self.pos..];
                        self.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                    }
                    Some(b'*') => {
                        let body = self.pos + 2;
                        match self.text[body..].find("*/") {
                            Some(end) => self.pos = body + end + 2,
                            None => return Err(self.error("a /* comment is never closed")),
                        }
                    }
                    _ => return Err(self.error("unexpected '/' (a comment starts with // or /*)")),
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Value, Unreadable> {
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => {
                let (text, span) = self.string()?;
                Ok(Value {
                    span,
                    kind: Kind::String(text),
                })
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't' | b'f' | b'n') => self.literal(),
            Some(_) => Err(self.error(format!("unexpected {}", self.describe_here()))),
            None => Err(self.error("the document ends where a value should be")),
        }
    }

    fn describe_here(&self) -> String {
        match self.text[self.pos..].chars().next() {
            Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
            Some(c) => format!("'{c}'"),
            None => "end of the document".to_owned(),
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, Unreadable>) -> Result<Value, Unreadable> {
        if self.depth == MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, Unreadable> {
        let start = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b'}') => break,
                Some(b'"') => {}
                _ => return Err(self.error("expected a key in double quotes, or '}'")),
            }
            let (key, key_span) = self.string()?;
            self.skip_trivia()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_trivia()?;
            let value = self.value()?;
            members.push(Member { key, key_span, value });
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => break,
                _ => return Err(self.error("expected ',' or '}' after a member")),
            }
        }
        self.pos += 1;
        Ok(Value {
            span: Span { start, end: self.pos },
            kind: Kind::Object(members),
        })
    }

    fn array(&mut self) -> Result<Value, Unreadable> {
        let start = self.pos;
        self.pos += 1;
        let mut elements = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(b']') {
                break;
            }
            elements.push(self.value()?);
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => break,
                _ => return Err(self.error("expected ',' or ']' after an element")),
            }
        }
        self.pos += 1;
        Ok(Value {
            span: Span { start, end: self.pos },
            kind: Kind::Array(elements),
        })
    }

    /// A string token at `pos` (on its opening quote): its decoded text and
    /// its span, quotes included.
    fn string(&mut self) -> Result<(String, Span), Unreadable> {
        let start = self.pos;
        self.pos += 1;
        let mut decoded = String::new();
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            decoded.push_str(&self.text[run_start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok((decoded, Span { start, end: self.pos }));
                }
                Some(b'\\') => decoded.push(self.escape()?),
                Some(_) => {
                    return Err(self.error(format!(
                        "{} inside a string (write it as an escape)",
                        self.describe_here()
                    )));
                }
                None => {
                    return Err(Unreadable {
                        offset: start,
                        message: "a string is never closed".to_owned(),
                    });
                }
            }
        }
    }

    /// One escape at `pos` (on its backslash), decoded. A `\u` surrogate
    /// that is not half of a pair decodes to U+FFFD: JavaScript hosts accept
    /// it, and nothing here depends on it.
    fn escape(&mut self) -> Result<char, Unreadable> {
        let simple = match self.bytes.get(self.pos + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(),
            _ => return Err(self.error("not a JSON escape")),
        };
        self.pos += 2;
        Ok(simple)
    }

    fn unicode_escape(&mut self) -> Result<char, Unreadable> {
        let high = self.hex4(self.pos + 2)?;
        self.pos += 6;
        if (0xD800..0xDC00).contains(&high) && self.text[self.pos..].starts_with("\\u") {
            let low = self.hex4(self.pos + 2)?;
            if (0xDC00..0xE000).contains(&low) {
                self.pos += 6;
                let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                return Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
        Ok(char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn hex4(&self, at: usize) -> Result<u32, Unreadable> {
        self.text
            .get(at..at + 4)
            .filter(|digits| digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|digits| u32::from_str_radix(digits, 16).ok())
            .ok_or_else(|| self.error("\\u must be followed by four hexadecimal digits"))
    }

    fn number(&mut self) -> Result<Value, Unreadable> {
        let start = self.pos;
        self.eat(b'-');
        if !self.eat(b'0') && self.digits() == 0 {
            return Err(self.error("a number needs digits"));
        }
        if self.eat(b'.') && self.digits() == 0 {
            return Err(self.error("a number needs digits after '.'"));
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _ = self.eat(b'+') || self.eat(b'-');
            if self.digits() == 0 {
                return Err(self.error("a number needs digits in its exponent"));
            }
        }
        Ok(Value {
            span: Span { start, end: self.pos },
            kind: Kind::Other,
        })
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.pos += usize::from(found);
        found
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn literal(&mut self) -> Result<Value, Unreadable> {
        let start = self.pos;
        let word = ["true", "false", "null"]
            .into_iter()
            .find(|word| self.text[start..].starts_with(word))
            .ok_or_else(|| self.error(format!("unexpected {}", self.describe_here())))?;
        self.pos += word.len();
        Ok(Value {
            span: Span { start, end: self.pos },
            kind: Kind::Other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(value: &Value) -> Vec<(&str, &str)> {
        value
            .as_object()
            .unwrap()
            .iter()
            .map(|m| (m.key.as_str(), m.value.describe()))
            .collect()
    }

    #[test]
    fn spans_cover_the_tokens_as_written() {
        let text = r#"{ "a\"b": "x\u0041\n", "c": [1, -2.5e3, true, null] }"#;
        let doc = parse(text).unwrap();
        let member = &doc.as_object().unwrap()[0];
        assert_eq!(member.key, "a\"b");
        assert_eq!(&text[member.key_span.start..member.key_span.end], r#""a\"b""#);
        assert_eq!(member.value.as_str(), Some("xA\n"));
        assert_eq!(
            &text[member.value.span.start..member.value.span.end],
            r#""x\u0041\n""#
        );
        let array = &doc.as_object().unwrap()[1].value;
        assert_eq!(&text[array.span.start..array.span.end], "[1, -2.5e3, true, null]");
        assert_eq!(array.as_array().unwrap().len(), 4);
    }

    #[test]
    fn comments_trailing_commas_and_a_bom_are_read() {
        let text = "\u{feff}// top\n{ /* a */ \"a\": 1, // b\n \"b\": [2, 3,], }\n/* end */";
        let doc = parse(text).unwrap();
        assert_eq!(
            members(&doc),
            [("a", "a number, boolean or null"), ("b", "an array")]
        );
    }

    #[test]
    fn surrogate_pairs_decode_and_lone_halves_are_replaced() {
        let doc = parse(r#"["\ud83d\ude00", "\ud83d", "\ude00x"]"#).unwrap();
        let texts: Vec<_> = doc
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(texts, ["😀", "\u{fffd}", "\u{fffd}x"]);
    }

    #[test]
    fn faults_are_located() {
        let cases = [
            ("{\"a\": 1,,}", 8, "expected a key"),
            ("{\"a\" 1}", 5, "expected ':'"),
            ("{\"a\": 1} x", 9, "unexpected text"),
            ("{\"a\": \"b\nc\"}", 8, "inside a string"),
            ("{\"a\": \"b", 6, "never closed"),
            ("{/* open", 1, "never closed"),
            ("{\"a\": tru}", 6, "unexpected 't'"),
            ("{\"a\": 01}", 7, "expected ','"),
            ("{\"a\": \"\\x\"}", 7, "not a JSON escape"),
            ("", 0, "ends where a value should be"),
        ];
        for (text, offset, message) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.offset, offset, "{text:?}: {error:?}");
            assert!(error.message.contains(message), "{text:?}: {error:?}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "{\n  \"é\": x}";
        assert_eq!(position(text, text.find('x').unwrap()), (2, 8));
        assert_eq!(position(text, 0), (1, 1));
    }
}
