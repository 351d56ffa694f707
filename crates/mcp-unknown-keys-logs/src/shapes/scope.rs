//! A record's calls, held until the whole record is read: the tools a
//! record declares apply to the calls of that record, whichever member
//! comes first (a logged exchange may put its `response` before its
//! `request`), and to no other record's.
//!
//! A call held borrows what it can from the text being read (the line, or
//! the document's value): most calls are read from that text as it is,
//! their names and arguments escaping nothing, so holding them copies
//! nothing. Only what was decoded apart from it (a name with an escape, a
//! body kept as a string, a call assembled from a stream) is copied, for
//! that lives no longer than the part of the walk that decoded it.

use std::borrow::Cow;
use std::rc::Rc;

use mcp_unknown_keys::jsonrpc::Id;
use serde_json::Value;

use super::Found;

/// One call found in a record still being read, kept until the record ends.
#[derive(Debug)]
pub(super) struct Pending<'t> {
    tool: Cow<'t, str>,
    server: Option<Cow<'t, str>>,
    arguments: Option<Cow<'t, str>>,
    id: Option<Value>,
    rpc_id: Option<Id>,
    as_listed: bool,
    model: Option<Rc<str>>,
    truncated: bool,
}

impl<'t> Pending<'t> {
    /// The call, kept: borrowed from `text` (the text being read) where it
    /// was read from it, `model` shared with the records naming it.
    pub(super) fn keep(found: &Found<'_>, text: &'t str, model: Option<&Rc<str>>) -> Pending<'t> {
        Pending {
            tool: within(text, found.tool),
            server: found.server.map(|server| within(text, server)),
            arguments: found.arguments.map(|arguments| within(text, arguments)),
            id: found.id.cloned(),
            rpc_id: found.rpc_id.cloned(),
            as_listed: found.as_listed,
            model: model.cloned(),
            truncated: found.truncated,
        }
    }

    /// The call, as it was found.
    pub(super) fn found(&self) -> Found<'_> {
        Found {
            tool: &self.tool,
            server: self.server.as_deref(),
            arguments: self.arguments.as_deref(),
            id: self.id.as_ref(),
            rpc_id: self.rpc_id.as_ref(),
            as_listed: self.as_listed,
            model: self.model.as_deref(),
            truncated: self.truncated,
        }
    }
}

/// `part` as a slice of `text` when it lies within it (it was read from
/// `text` as it is), else a copy. Told by where `part` lies in memory: a
/// string decoded apart lies in an allocation of its own, never inside
/// `text`'s.
fn within<'t>(text: &'t str, part: &str) -> Cow<'t, str> {
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    match start.checked_add(part.len()).and_then(|end| text.get(start..end)) {
        // The same bytes at the same place: `part` itself, with `text`'s
        // lifetime.
        Some(slice) if std::ptr::eq(slice.as_ptr(), part.as_ptr()) => Cow::Borrowed(slice),
        _ => Cow::Owned(part.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_of_the_text_is_borrowed_and_anything_else_copied() {
        let text = String::from(r#"{"name":"fs_read","x":"é"}"#);
        let name = &text[9..16];
        assert!(matches!(within(&text, name), Cow::Borrowed("fs_read")));
        assert!(matches!(within(&text, &text[23..25]), Cow::Borrowed("é")));
        assert!(matches!(within(&text, ""), Cow::Borrowed("") | Cow::Owned(_)));
        let decoded = String::from("fs_read");
        assert!(matches!(within(&text, &decoded), Cow::Owned(copy) if copy == "fs_read"));
        assert!(matches!(within(&text[..5], name), Cow::Owned(copy) if copy == "fs_read"));
    }
}
