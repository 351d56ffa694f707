//! Following JSON text byte by byte without parsing it: which bytes lie
//! inside strings. What it tells apart is JSON's own rule (a `"` opens and
//! closes a string, a `\` escapes the byte after it), so the readers that
//! scan text rather than parse it share it.

/// Where JSON text is, byte after byte: inside a string or not.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Strings {
    in_string: bool,
    escaped: bool,
}

impl Strings {
    /// Whether `byte`, the next byte of the text, lies outside every string
    /// (a string's quotes are inside it).
    pub(crate) fn outside(&mut self, byte: u8) -> bool {
        if self.in_string {
            match byte {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return false;
        }
        self.in_string = byte == b'"';
        !self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_inside_strings_and_escapes_are_told_apart() {
        let text = br#"{"a\"]":[1]}"#;
        let mut strings = Strings::default();
        let outside: String = text
            .iter()
            .filter(|&&byte| strings.outside(byte))
            .map(|&byte| byte as char)
            .collect();
        assert_eq!(outside, "{:[1]}");
    }
}
