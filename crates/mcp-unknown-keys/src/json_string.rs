//! A JSON string's text, decoded with at most one copy.
//!
//! serde_json decodes a string holding escapes into a scratch buffer that
//! grows by doubling (a copy at each step) and then copies it once more
//! into the `String` handed out: a long `arguments` string, as an OpenAI
//! call carries them, was copied several times over. Here a string without
//! escapes is borrowed, and one with escapes is decoded once, into a
//! `String` allocated at its final size or more.

use std::borrow::Cow;

/// The decoded text of the JSON string `text` (its quotes included, JSON
/// whitespace around them allowed), or
/// `None` when `text` is not exactly one JSON string, as serde_json reads
/// one: no raw control character, no lone surrogate in a `\u` escape.
pub(crate) fn decode(text: &str) -> Option<Cow<'_, str>> {
    let text = text.trim_matches([' ', '\t', '\n', '\r']);
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let plain = |piece: &str| !piece.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
    let Some(first_escape) = inner.find('\\') else {
        return plain(inner).then_some(Cow::Borrowed(inner));
    };
    let mut decoded = String::with_capacity(inner.len());
    let mut rest = inner;
    let mut escape = first_escape;
    loop {
        let (run, after) = rest.split_at(escape);
        if !plain(run) {
            return None;
        }
        decoded.push_str(run);
        rest = unescape(&after[1..], &mut decoded)?;
        match rest.find('\\') {
            Some(at) => escape = at,
            None if plain(rest) => {
                decoded.push_str(rest);
                return Some(Cow::Owned(decoded));
            }
            None => return None,
        }
    }
}

/// Decodes the escape at the start of `text` (after its `\`) onto `out`;
/// the text after it.
fn unescape<'t>(text: &'t str, out: &mut String) -> Option<&'t str> {
    let (letter, rest) = text.split_at_checked(1)?;
    let c = match letter {
        "\"" => '"',
        "\\" => '\\',
        "/" => '/',
        "b" => '\u{8}',
        "f" => '\u{c}',
        "n" => '\n',
        "r" => '\r',
        "t" => '\t',
        "u" => {
            let (unit, rest) = hex4(rest)?;
            let (c, rest) = match unit {
                0xD800..=0xDBFF => {
                    let (low, rest) = hex4(rest.strip_prefix("\\u")?)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    (char::from_u32(code)?, rest)
                }
                0xDC00..=0xDFFF => return None,
                _ => (char::from_u32(u32::from(unit))?, rest),
            };
            out.push(c);
            return Some(rest);
        }
        _ => return None,
    };
    out.push(c);
    Some(rest)
}

/// Four hex digits at the start of `text`, and the text after them.
fn hex4(text: &str) -> Option<(u16, &str)> {
    let (digits, rest) = text.split_at_checked(4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((u16::from_str_radix(digits, 16).ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_decoded_as_serde_json_decodes_them() {
        for text in [
            r#""""#,
            r#""plain""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u0041\u00e9\u4e2d\ud83d\ude00""#,
            r#""é中😀 raw""#,
            r#""{\"path\":\"a\"}""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""a"b""#,
            "\"tab\there\"",
            r#""\""#,
            r#"""#,
            r#""unterminated"#,
            "plain",
            r#""a" "#,
            " \n\"a\\n\"\t",
            r#""é\u""#,
        ] {
            let expected = serde_json::from_str::<String>(text).ok();
            assert_eq!(decode(text).map(Cow::into_owned), expected, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_reads_as_serde_json_reads_it(text in r#""([^"\\]|\\(["\\/bfnrtx]|u[0-9a-fA-FdD]{0,4})|"){0,12}"?"#) {
            let expected = serde_json::from_str::<String>(&text).ok();
            proptest::prop_assert_eq!(decode(&text).map(Cow::into_owned), expected);
        }

        #[test]
        fn any_string_written_by_serde_json_reads_back(string in ".{0,40}") {
            let text = serde_json::to_string(&string).unwrap();
            proptest::prop_assert_eq!(decode(&text).map(Cow::into_owned), Some(string));
        }
    }

    #[test]
    fn a_string_without_escapes_is_borrowed() {
        assert!(matches!(decode(r#""abc""#), Some(Cow::Borrowed("abc"))));
    }
}
