//! Model-written text as the alarm shows it: on one line, with nothing
//! hidden, and short.

use std::fmt;

use crate::limits::MAX_SHOWN_CHARS;

/// Writes each item's `Display`, `separator` between them.
pub(crate) fn write_each<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    items: &[T],
    separator: &str,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// Shows model-written text safely in one line: control characters escaped
/// (`\n`, `\u{1b}`), and so is every character that could make two names
/// look alike or disguise text (zero-width and other format characters,
/// bidirectional controls, variation selectors); cut after
/// [`MAX_SHOWN_CHARS`] characters with `…`.
///
/// ```
/// use mcp_unknown_keys::audit::Printable;
///
/// assert_eq!(Printable("a\nb\u{1b}").to_string(), r"a\nb\u{1b}");
/// assert_eq!(Printable("x\u{2028}y\u{202e}z").to_string(), r"x\u{2028}y\u{202e}z");
/// assert_eq!(Printable("pa\u{200b}th").to_string(), r"pa\u{200b}th");
/// assert_eq!(Printable(&"x".repeat(100)).to_string().chars().count(), 65);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Printable<'a>(pub &'a str);

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (shown, c) in self.0.chars().enumerate() {
            if shown == MAX_SHOWN_CHARS {
                return f.write_str("…");
            }
            if disguises(c) {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// Whether `c` could break a line, or disguise its text in a terminal or a
/// log viewer: control characters, line and paragraph separators, and every
/// character that shows as nothing or changes how its neighbours show —
/// Unicode's format characters (category Cf: zero-width spaces and joiners,
/// the soft hyphen, bidirectional controls, the byte order mark, tags) and
/// the variation selectors. Two names that differ only by one of them would
/// otherwise look the same.
fn disguises(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_names_that_differ_by_an_invisible_character_never_look_alike() {
        for hidden in [
            '\u{200b}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{ad}',
            '\u{fe0f}',
            '\u{e0041}',
            '\u{202e}',
        ] {
            let disguised = format!("path{hidden}");
            assert_ne!(Printable(&disguised).to_string(), "path", "{:?}", hidden);
            assert!(Printable(&disguised).to_string().contains("\\u{"), "{:?}", hidden);
        }
        assert_eq!(Printable("offset_ü_東").to_string(), "offset_ü_東");
    }
}
