//! Text edits: replace byte spans of a document and leave every other byte
//! as it was. Wrapping is a handful of these, never a re-serialisation.

use super::jsonc::{Member, Span};

/// Replace `span` of the document with `text` (an insertion when the span
/// is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced.
    pub span: Span,
    /// What stands there instead.
    pub text: String,
}

impl Edit {
    /// Replaces `span` with `text`.
    pub fn replace(span: Span, text: impl Into<String>) -> Edit {
        Edit {
            span,
            text: text.into(),
        }
    }

    /// Inserts `text` at byte `at`.
    pub fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit::replace(Span { start: at, end: at }, text)
    }

    /// Deletes `span`.
    pub fn delete(span: Span) -> Edit {
        Edit::replace(span, "")
    }
}

/// The document with `edits` made. The edits may come in any order but must
/// not overlap (each one's decision was made on the original text).
pub(crate) fn apply(text: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|edit| (edit.span.start, edit.span.end));
    let mut out = String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for edit in sorted {
        debug_assert!(edit.span.start >= at, "overlapping edits");
        out.push_str(&text[at..edit.span.start]);
        out.push_str(&edit.text);
        at = edit.span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// `text` as a JSON string token.
pub(crate) fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serialises")
}

/// The text of `span`.
pub(crate) fn slice(text: &str, span: Span) -> &str {
    &text[span.start..span.end]
}

/// What separates a member written after `member` from it: `,` and the
/// line break and indentation `member` itself starts with when it begins
/// its own line, else `, `. New members then look like their neighbours.
pub(crate) fn separator_after(text: &str, member: &Member) -> String {
    separator_before(text, member.key_span.start)
}

/// What separates an item written after the one that starts at byte
/// `start` (a member's key, an array's element): see [`separator_after`].
pub(crate) fn separator_before(text: &str, start: usize) -> String {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..start];
    if line_start == 0 || !indent.bytes().all(|b| b == b' ' || b == b'\t') {
        return ", ".to_owned();
    }
    let newline = if text[..line_start].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    format!(",{newline}{indent}")
}

/// The edits that remove `members[index]` with the separator that joins it
/// to its neighbour: from the end of the member before it, or, for the
/// first member, up to the start of the one after it. A comment in that
/// separator stays (only the member and its comma go). None when it is the
/// only member (its object would be left with nothing to join).
pub(crate) fn remove_member(text: &str, members: &[Member], index: usize) -> Vec<Edit> {
    let spans: Vec<Span> = members.iter().map(Member::span).collect();
    remove_item(text, &spans, index)
}

/// [`remove_member`] for the items of an object or an array, given by
/// their spans (a member's from its key to its value's end).
pub(crate) fn remove_item(text: &str, items: &[Span], index: usize) -> Vec<Edit> {
    let item = items[index];
    let gap = if index > 0 {
        Span {
            start: items[index - 1].end,
            end: item.start,
        }
    } else if let Some(after) = items.get(1) {
        Span {
            start: item.end,
            end: after.start,
        }
    } else {
        return Vec::new();
    };
    let comma = comma_outside_comments(slice(text, gap)).map(|at| gap.start + at);
    match comma.filter(|_| slice(text, gap).contains('/')) {
        Some(comma) => vec![
            Edit::delete(Span {
                start: comma,
                end: comma + 1,
            }),
            Edit::delete(item),
        ],
        None if index > 0 => vec![Edit::delete(Span {
            start: gap.start,
            end: item.end,
        })],
        None => vec![Edit::delete(Span {
            start: item.start,
            end: gap.end,
        })],
    }
}

/// Where the `,` of a separator (whitespace, comments and one comma) is.
fn comma_outside_comments(separator: &str) -> Option<usize> {
    let bytes = separator.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match (bytes[at], bytes.get(at + 1)) {
            (b',', _) => return Some(at),
            (b'/', Some(b'/')) => at += separator[at..].find('\n').unwrap_or(bytes.len() - at),
            (b'/', Some(b'*')) => {
                at += separator[at + 2..]
                    .find("*/")
                    .map_or(bytes.len() - at, |end| end + 4)
            }
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::jsonc::parse;
    use super::*;

    #[test]
    fn edits_apply_in_any_order() {
        let text = "0123456789";
        let edits = [
            Edit::replace(Span { start: 6, end: 8 }, "x"),
            Edit::insert(0, "<"),
            Edit::delete(Span { start: 2, end: 4 }),
        ];
        assert_eq!(apply(text, &edits), "<0145x89");
    }

    #[test]
    fn separators_follow_the_neighbours() {
        let multi = "{\r\n    \"a\": 1,\r\n    \"b\": 2\r\n}";
        let doc = parse(multi).unwrap();
        assert_eq!(separator_after(multi, &doc.as_object().unwrap()[1]), ",\r\n    ");
        let single = "{\"a\": 1, \"b\": 2}";
        let doc = parse(single).unwrap();
        assert_eq!(separator_after(single, &doc.as_object().unwrap()[1]), ", ");
    }

    #[test]
    fn removing_a_member_takes_one_separator() {
        let text = "{\"a\": 1, \"b\": 2, \"c\": 3}";
        let doc = parse(text).unwrap();
        let members = doc.as_object().unwrap();
        let removed = |i| apply(text, &remove_member(text, members, i));
        assert_eq!(removed(0), "{\"b\": 2, \"c\": 3}");
        assert_eq!(removed(1), "{\"a\": 1, \"c\": 3}");
        assert_eq!(removed(2), "{\"a\": 1, \"b\": 2}");
        let alone = parse("{\"a\": 1}").unwrap();
        assert_eq!(remove_member("{\"a\": 1}", alone.as_object().unwrap(), 0), []);
    }

    #[test]
    fn removing_a_member_keeps_the_comments_around_it() {
        let text = "{\"a\": 1, // one\n /* two, */ \"b\": 2 /* three */, \"c\": 3}";
        let doc = parse(text).unwrap();
        let members = doc.as_object().unwrap();
        let removed = |i| apply(text, &remove_member(text, members, i));
        assert_eq!(
            removed(1),
            "{\"a\": 1 // one\n /* two, */  /* three */, \"c\": 3}"
        );
        assert_eq!(
            removed(0),
            "{ // one\n /* two, */ \"b\": 2 /* three */, \"c\": 3}"
        );
    }
}
