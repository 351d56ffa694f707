//! The keys of a small flat object, read without serde_json: most calls.
//!
//! A model's typical call is a small object of strings, numbers and
//! booleans. Read through serde_json's map visitor, each of its keys costs
//! a `MapAccess` step, a borrowed `parse_str` and a value skipped through
//! `ignore_value`: about as much again as validating the text at all. This
//! reads such an object in one pass, and answers only when the text is in a
//! subset of JSON that serde_json reads the same way: an object of at most
//! [`MAX_KEYS`] members, at most [`MAX_BYTES`] long, whose keys and string
//! values hold no escape, and whose values are strings, numbers, `true`,
//! `false` or `null`. Anything else (an escape, a nested value, a byte out
//! of place, an error) gets no answer, and serde_json reads the text
//! instead: so serde_json alone decides what is refused, and what this
//! accepts, serde_json accepts too, with the same keys in the same order
//! (a property test and the `top_level_keys` fuzz target check both).

/// The longest text read here; longer ones are mostly a long value, which
/// serde_json's scan of eight bytes at a time reads as fast.
pub(super) const MAX_BYTES: usize = 1024;
const _: () = assert!(MAX_BYTES <= u16::MAX as usize);

/// The most keys read here, so they fit on the stack.
pub(super) const MAX_KEYS: usize = 16;

/// The keys of a flat object, in order, duplicates included: where each
/// lies in the text (small, so that building and returning them costs a
/// few stores rather than a copy of sixteen string references).
pub(super) struct FlatKeys<'a> {
    text: &'a str,
    spans: [(u16, u16); MAX_KEYS],
    len: usize,
}

impl<'a> FlatKeys<'a> {
    /// Each key, in order.
    #[inline]
    pub(super) fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        // Each span lies between two quotes: character boundaries.
        let text = self.text;
        self.spans[..self.len]
            .iter()
            .map(move |&(start, end)| text.get(usize::from(start)..usize::from(end)).unwrap_or_default())
    }
}

/// The keys of `text` when it is a flat object in the subset described
/// above; `None` when it is not (serde_json reads it then).
pub(super) fn flat_keys(text: &str) -> Option<FlatKeys<'_>> {
    let bytes = text.as_bytes();
    if bytes.len() > MAX_BYTES {
        return None;
    }
    let mut found = FlatKeys {
        text,
        spans: [(0, 0); MAX_KEYS],
        len: 0,
    };
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_whitespace(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        at += 1;
    } else {
        loop {
            if bytes.get(at) != Some(&b'"') || found.len == MAX_KEYS {
                return None;
            }
            let end = string_end(bytes, at + 1)?;
            // Within MAX_BYTES, so both fit.
            found.spans[found.len] = (u16::try_from(at + 1).ok()?, u16::try_from(end).ok()?);
            found.len += 1;
            at = skip_whitespace(bytes, end + 1);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            at = skip_whitespace(bytes, at + 1);
            at = skip_whitespace(bytes, scalar_end(bytes, at)?);
            match bytes.get(at) {
                Some(b',') => at = skip_whitespace(bytes, at + 1),
                Some(b'}') => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_whitespace(bytes, at) == bytes.len()).then_some(found)
}

/// The first byte at or after `at` that is not JSON whitespace (serde_json
/// skips these four).
#[inline]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The index of the closing quote of a string whose text starts at `at`,
/// when the string holds no escape and no control character (which
/// serde_json refuses raw); `None` otherwise.
#[inline]
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    // Eight bytes at a time, as serde_json does: a word holding no quote,
    // backslash or control character is passed over whole.
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let stops = has_zero(word ^ (ONES * u64::from(b'"')))
            | has_zero(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
        if stops != 0 {
            // The lowest flagged byte is exact (a borrow only flags bytes
            // above a true match); stop at it and look at it below.
            at += (stops.trailing_zeros() / 8) as usize;
            break;
        }
        at += 8;
    }
    loop {
        match *bytes.get(at)? {
            b'"' => return Some(at),
            b'\\' | 0x00..=0x1f => return None,
            _ => at += 1,
        }
    }
}

/// The end of the string, number or literal starting at `at`; `None` for
/// anything else (an object or an array: serde_json reads those).
#[inline]
fn scalar_end(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'"' => string_end(bytes, at + 1).map(|end| end + 1),
        b't' => literal_end(bytes, at, b"true"),
        b'f' => literal_end(bytes, at, b"false"),
        b'n' => literal_end(bytes, at, b"null"),
        b'-' | b'0'..=b'9' => number_end(bytes, at),
        _ => None,
    }
}

#[inline]
fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(literal).then_some(at + literal.len())
}

/// The end of a number as JSON writes one: `-`, then `0` or a digit from 1
/// followed by digits, then `.` and digits, then `e` or `E`, a sign and
/// digits. What follows is the caller's to check (serde_json refuses
/// `01`, and so does the caller, finding `1` where a comma belongs).
#[inline]
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits_from = |mut at: usize| {
        while let Some(b'0'..=b'9') = bytes.get(at) {
            at += 1;
        }
        at
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match *bytes.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits_from(at + 1),
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        let end = digits_from(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let end = digits_from(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::super::scan_keys;
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;

    /// The keys serde_json reads, or `None` when it refuses the text.
    fn serde_keys(text: &str) -> Option<Vec<String>> {
        let mut keys = Vec::new();
        scan_keys(text, |key| keys.push(key.to_owned()))
            .ok()
            .map(|()| keys)
    }

    fn flat(text: &str) -> Option<Vec<String>> {
        flat_keys(text).map(|keys| keys.iter().map(str::to_owned).collect())
    }

    /// Whenever the flat reading answers, serde_json reads the same keys.
    fn agrees(text: &str) -> Result<(), TestCaseError> {
        if let Some(keys) = flat(text) {
            prop_assert_eq!(Some(keys), serde_keys(text), "{:?}", text);
        }
        let mut keys = Vec::new();
        let through_arguments = crate::audit::Arguments::Json(text)
            .for_each_key(|key| keys.push(key.to_owned()))
            .ok()
            .map(|()| keys);
        prop_assert_eq!(through_arguments, serde_keys(text), "{:?}", text);
        Ok(())
    }

    #[test]
    fn reads_the_flat_calls_it_is_for() {
        for (text, keys) in [
            ("{}", &[][..]),
            (" {\n}\t", &[]),
            (
                r#"{"path":"src/app.rs","offset":12,"mode":"append"}"#,
                &["path", "offset", "mode"],
            ),
            (
                "{ \"é\" : -0.5E+3 , \"\" :true,\"a\":false,\"a\":null,\"n\":0}\r\n",
                &["é", "", "a", "a", "n"],
            ),
            (
                r#"{"long":"a string of more than eight bytes, passed over a word at a time"}"#,
                &["long"],
            ),
        ] {
            let keys: Vec<String> = keys.iter().map(|key| key.to_string()).collect();
            assert_eq!(flat(text), Some(keys.clone()), "{text}");
            assert_eq!(serde_keys(text), Some(keys), "{text}");
        }
    }

    #[test]
    fn leaves_to_serde_json_what_it_does_not_read_or_refuses() {
        let many: Vec<String> = (0..=MAX_KEYS).map(|i| format!("\"k{i}\":{i}")).collect();
        let long = format!(r#"{{"a":"{}"}}"#, "x".repeat(MAX_BYTES));
        for text in [
            // Read by serde_json, not here.
            r#"{"a\nb":1}"#,
            r#"{"a":"x\"y"}"#,
            r#"{"a":{"b":1}}"#,
            r#"{"a":[1]}"#,
            &format!("{{{}}}", many.join(",")),
            &long,
            // Refused by serde_json.
            "",
            "[]",
            "{",
            r#"{"a":1,}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":1e}"#,
            r#"{"a":.5}"#,
            r#"{"a":+1}"#,
            r#"{"a":tru}"#,
            r#"{"a":nulll}"#,
            "{\"a\":\"\u{1}\"}",
            "{\"a\u{1f}\":1}",
            "{\"a\":1}\u{b}",
            "{\"a\":1} {}",
            r#"{"a" 1}"#,
            r#"{a:1}"#,
        ] {
            assert_eq!(flat(text), None, "{text}");
        }
    }

    /// Scalars as the flat reading reads them.
    const VALUES: &[&str] = &[
        "\"x\"",
        "\"\"",
        "\"é ü\"",
        "\"\u{7f}\"",
        "\"12345678\"",
        "\"a longer value, eight by eight\"",
        "0",
        "-0",
        "12",
        "-1.5e+3",
        "1E2",
        "0.0",
        "1e-0",
        "true",
        "false",
        "null",
    ];

    /// Values it leaves to serde_json, well formed or not.
    const OTHER_VALUES: &[&str] = &[
        "\"a\\\"b\"",
        "\"\u{1}\"",
        "\"1234567\\n\"",
        "01",
        "1.",
        "-",
        "1e",
        ".5",
        "+1",
        "tru",
        "nulll",
        "[]",
        "{}",
        "[1,{\"a\":2}]",
        "NaN",
    ];

    /// Objects of members mostly in the flat subset, some not: most
    /// objects are read here, the others show where the subset ends.
    fn object() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            6 => "[a-zé_ 0]{0,9}",
            1 => "[a-z\u{1f}\"\\\\]{1,3}",
        ]
        .prop_map(|key| format!("\"{key}\""));
        let space = || prop_oneof![9 => "[ \t\n\r]{0,2}", 1 => "[ \u{b}\u{c}]{1,2}"];
        let value = prop_oneof![
            9 => proptest::sample::select(VALUES),
            1 => proptest::sample::select(OTHER_VALUES),
        ];
        let member = (space(), key, space(), value, space())
            .prop_map(|(a, key, b, value, c)| format!("{a}{key}{b}:{value}{c}"));
        (proptest::collection::vec(member, 0..8), space())
            .prop_map(|(members, space)| format!("{space}{{{}}}{space}", members.join(",")))
    }

    #[test]
    fn the_generated_objects_are_mostly_read_here() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let read = (0..1000)
            .filter(|_| flat(&object().new_tree(&mut runner).unwrap().current()).is_some())
            .count();
        assert!((300..1000).contains(&read), "{read} of 1000 read here");
    }

    proptest! {
        #[test]
        fn reads_what_serde_json_reads(text in object()) {
            agrees(&text)?;
        }

        #[test]
        fn reads_what_serde_json_reads_after_a_byte_changes(
            text in object(),
            at in any::<proptest::sample::Index>(),
            byte in proptest::sample::select(&b"{}[],:\"\\ 0a-.eE\x01\t"[..]),
            remove in any::<bool>(),
        ) {
            let mut bytes = text.into_bytes();
            let at = at.index(bytes.len() + 1);
            if remove && at < bytes.len() {
                bytes.remove(at);
            } else {
                bytes.insert(at, byte);
            }
            if let Ok(text) = String::from_utf8(bytes) {
                agrees(&text)?;
            }
        }

        #[test]
        fn reads_what_serde_json_reads_of_any_pieces(
            pieces in proptest::collection::vec(
                proptest::sample::select(&["{", "}", "[", "]", ",", ":", " ", "\"a\"", "\"", "\\", "1", "-", "e", "true", "\u{1}"][..]),
                0..16,
            ),
        ) {
            agrees(&pieces.concat())?;
        }
    }
}
