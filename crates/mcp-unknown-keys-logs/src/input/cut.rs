//! A JSON document cut short (a file truncated while it was written or
//! copied): the values that end before the cut are read, so the calls they
//! hold are not lost with the rest.
//!
//! The complete values before the cut are read whole; inside the value the
//! cut falls in, each complete element of an array, and each complete
//! member value of an object, that is itself an array or an object, is read
//! as a value of its own, and so on down to the cut. It is one pass over the
//! text, with no recursion: however deep the cut falls, it costs no stack
//! and no second reading.

use serde_json::value::RawValue;

use crate::strings::Strings;

/// The JSON values of `text`, one after another.
pub(super) enum Values<'a> {
    /// Every value is whole.
    Whole(Vec<&'a RawValue>),
    /// The text ends partway through a value: the values read before the
    /// cut, and the text's length (where it was cut).
    CutShort { values: Vec<&'a RawValue>, at: usize },
}

/// The values `text` holds, if it is nothing but JSON values, or JSON values
/// cut short by its end; `None` when it holds anything else (a syntax error
/// before its end).
pub(super) fn values(text: &str) -> Option<Values<'_>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let mut values = Vec::new();
    loop {
        match stream.next() {
            None => return (!values.is_empty()).then_some(Values::Whole(values)),
            Some(Ok(value)) => values.push(value),
            // serde_json says the end came first only when all before it
            // read: what follows is JSON up to the cut.
            Some(Err(error)) if error.is_eof() => break,
            Some(Err(_)) => return None,
        }
    }
    let cut = &text[stream.byte_offset()..];
    for (start, end) in complete_inside(cut) {
        values.push(serde_json::from_str(&cut[start..end]).ok()?);
    }
    Some(Values::CutShort {
        values,
        at: text.len(),
    })
}

/// The arrays and objects that end inside `text`, a JSON value cut short,
/// and whose container does not (the elements and member values read
/// whole), as spans, in order. One pass: each container open is a frame
/// holding the spans of its children that ended; a frame that ends gives
/// its own span to its parent and drops its children's.
fn complete_inside(text: &str) -> Vec<(usize, usize)> {
    struct Frame {
        start: usize,
        children: Vec<(usize, usize)>,
    }
    let mut open: Vec<Frame> = Vec::new();
    let mut strings = Strings::default();
    for (at, byte) in text.bytes().enumerate() {
        if !strings.outside(byte) {
            continue;
        }
        match byte {
            b'[' | b'{' => open.push(Frame {
                start: at,
                children: Vec::new(),
            }),
            b']' | b'}' => {
                let Some(frame) = open.pop() else { break };
                match open.last_mut() {
                    Some(parent) => parent.children.push((frame.start, at + 1)),
                    // The value closed: it was not cut after all.
                    None => break,
                }
            }
            _ => {}
        }
    }
    open.into_iter().flat_map(|frame| frame.children).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<(Vec<&str>, Option<usize>)> {
        Some(match values(text)? {
            Values::Whole(values) => (values.iter().map(|v| v.get()).collect(), None),
            Values::CutShort { values, at } => (values.iter().map(|v| v.get()).collect(), Some(at)),
        })
    }

    #[test]
    fn whole_values_are_read_whole() {
        assert_eq!(read("[1]\n{\"a\":2}"), Some((vec!["[1]", "{\"a\":2}"], None)));
        assert_eq!(read("  "), None);
        assert_eq!(read("[1] x"), None);
    }

    #[test]
    fn values_before_the_cut_are_read_down_to_it() {
        let text = r#"[{"a":1}, {"b":[{"c":2}, {"d":3}, {"e":"#;
        let (values, at) = read(text).unwrap();
        assert_eq!(values, [r#"{"a":1}"#, r#"{"c":2}"#, r#"{"d":3}"#]);
        assert_eq!(at, Some(text.len()));
        // Brackets inside strings are text.
        let (values, _) = read(r#"[{"a":"]}\"["}, {"b":"#).unwrap();
        assert_eq!(values, [r#"{"a":"]}\"["}"#]);
        // An object's member values, arrays and objects alike.
        let text = r#"{"type":"x","message":{"content":[{"id":1}],"usage":{"n":2},"tail":"ab"#;
        let (values, _) = read(text).unwrap();
        assert_eq!(values, [r#"[{"id":1}]"#, r#"{"n":2}"#]);
        // Whole documents before a cut one.
        let (values, at) = read("{\"a\":1}\n{\"b\":").unwrap();
        assert_eq!((values, at), (vec![r#"{"a":1}"#], Some(13)));
    }

    #[test]
    fn a_text_that_breaks_before_its_end_is_not_values() {
        assert_eq!(read(r#"[{"a":1} {"b":"#), None);
        assert_eq!(read(r#"{"a" 1, "b":["#), None);
    }

    #[test]
    fn a_cut_deep_down_costs_no_stack_nor_time() {
        let text = "[".repeat(1_000_000);
        let (values, at) = read(&text).unwrap();
        assert_eq!((values.len(), at), (0, Some(text.len())));
        // Each `{}` is an element of an array that was cut.
        let text = format!("[{}", "{}, ".repeat(100_000));
        assert_eq!(read(&text).unwrap().0.len(), 100_000);
    }
}
