//! JSON-RPC messages read as the peer's JSON parser reads them: pure
//! functions, text in, message out.
//!
//! A server acts on the message its parser builds, so every door that reads
//! MCP traffic reads it the same way, through this module: the proxy's tap
//! (each line of both directions) and the `audit` command's log reader
//! (each JSON-RPC record of a recording). So the proxy and `audit` agree on
//! every line by construction.
//!
//! - Member names and string values are decoded: a method written
//!   `"\u0074ools/call"` is `tools/call`.
//! - A member that appears twice counts by its last value, as in
//!   serde_json's `Value`, Python's `json` and JavaScript's `JSON.parse`.
//! - `arguments` sent as a JSON string is read as the JSON text it holds
//!   ([`arguments_text`]).
//! - Ids compare as values ([`Id`]): a server may answer `1.0` with `1`.
//! - Only the members needed are delimited; every other value is skipped
//!   without being built, at any depth, so no line nests too deep to read.
//!
//! ```
//! use mcp_unknown_keys::jsonrpc::{Line, Message, read_line};
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"method":"\u0074ools/call","id":8,
//!     "params":{"name":"fs_read","arguments":"{\"path\":\"a\",\"ffset\":1}"}}"#;
//! let Line::Message(Message::Call { id, name, arguments, .. }) = read_line(line) else {
//!     panic!("a call");
//! };
//! assert_eq!(id.map(|id| id.to_string()).as_deref(), Some("8")); // the last `id`
//! assert_eq!(name, "fs_read");
//! assert_eq!(arguments.as_deref(), Some(r#"{"path":"a","ffset":1}"#));
//! ```
//!
//! A listing arrives as a response that answers a `tools/list` request:
//! [`ListingPage::read`] reads its tools one at a time; the session
//! ([`Session`](crate::session::Session)) matches responses to the requests
//! awaiting them.
//!
//! These functions never panic, whatever the bytes: [`read_line`] is what
//! the fuzz target for the tap's line reader calls.

mod id;
mod listings;

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::audit::keys::arguments_text;

pub use id::{Decimal, Id};
pub(crate) use listings::AwaitedListings;
pub use listings::{ListingPage, read_listing};

/// What a line is.
#[derive(Debug, PartialEq)]
pub enum Line<'a> {
    /// One JSON-RPC message.
    Message(Message<'a>),
    /// A JSON-RPC batch (an array, as peers before the 2025-06-18 revision
    /// may send): each element read as a line of its own would be.
    Batch(Vec<Message<'a>>),
    /// Not UTF-8, not JSON, or JSON that is neither an object nor an array.
    Unreadable,
}

/// The messages that matter to an audit; everything else is
/// [`Message::Other`].
#[derive(Debug, PartialEq)]
pub enum Message<'a> {
    /// A `tools/list` request.
    ListTools {
        /// Its id, which the response answers.
        id: Id,
        /// It has no cursor: its response opens a new listing.
        first: bool,
    },
    /// A `tools/call` request. More of its members may be read in time:
    /// match it with `..`.
    #[non_exhaustive]
    Call {
        /// Its id, read exactly ([`Id`]: a number of any size keeps every
        /// digit), so the response that answers it is paired with it;
        /// `None` for a call sent as a notification.
        id: Option<Id>,
        /// The tool called; `""` when the request names none that reads as
        /// a string (the call is still counted: as an unlisted tool).
        name: Cow<'a, str>,
        /// The JSON text to scan for its argument keys, or `None` when the
        /// request has no `arguments`.
        arguments: Option<Cow<'a, str>>,
        /// Its `params._meta`, unread: the session reads the trace context
        /// in it ([`TraceContext`](crate::trace::TraceContext)) only for a
        /// call that raised a finding.
        meta: Option<Raw<'a>>,
    },
    /// `notifications/cancelled`.
    Cancelled {
        /// The request given up.
        request: Id,
    },
    /// `notifications/tools/list_changed`.
    ListChanged,
    /// A `tasks/result` request (the tasks utility, MCP 2025-11-25): its
    /// response is the final result of the task-augmented call that
    /// created the task.
    TaskResult {
        /// Its id, which the response answers.
        id: Id,
        /// The task whose result it asks for.
        task: Cow<'a, str>,
    },
    /// A `tasks/cancel` request: the task's call will have no result.
    CancelTask {
        /// The task given up.
        task: Cow<'a, str>,
    },
    /// A response: a message with an id and no method.
    Response {
        /// The request it answers.
        id: Id,
        /// Its `result`; `None` for an error.
        result: Option<Raw<'a>>,
    },
    /// Any other message.
    Other,
}

/// A member's raw JSON text, compared as text.
#[derive(Clone, Copy, Debug)]
pub struct Raw<'a>(pub &'a RawValue);

impl<'a> Raw<'a> {
    /// The raw JSON text.
    pub fn get(&self) -> &'a str {
        self.0.get()
    }
}

impl PartialEq for Raw<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

/// Reads one line of a stdio stream (without its newline): a message, a
/// batch, or neither.
pub fn read_line(line: &[u8]) -> Line<'_> {
    let Ok(text) = std::str::from_utf8(line) else {
        return Line::Unreadable;
    };
    match text.trim_start().as_bytes().first() {
        Some(b'{') => read_message(text).map_or(Line::Unreadable, Line::Message),
        Some(b'[') => match serde_json::from_str::<Vec<&RawValue>>(text) {
            Ok(elements) => Line::Batch(
                elements
                    .into_iter()
                    .map(|element| read_message(element.get()).unwrap_or(Message::Other))
                    .collect(),
            ),
            Err(_) => Line::Unreadable,
        },
        _ => Line::Unreadable,
    }
}

/// Reads one JSON-RPC message; `None` when `text` is not a JSON object.
///
/// ```
/// use mcp_unknown_keys::jsonrpc::{Id, Message, read_message};
///
/// let listing = read_message(r#"{"id":"a","method":"tools/list","params":{"cursor":"c"}}"#);
/// assert_eq!(listing, Some(Message::ListTools { id: Id::Text("a".into()), first: false }));
/// assert_eq!(read_message(r#"{"method":"ping"}"#), Some(Message::Other));
/// assert_eq!(read_message("[1]"), None);
/// ```
pub fn read_message(text: &str) -> Option<Message<'_>> {
    let [id, method, params, result] = members(text, ["id", "method", "params", "result"])?;
    let Some(method) = method else {
        // A response names no method. One without an id answers nothing the
        // tap awaits.
        return Some(match id.and_then(Id::read) {
            Some(id) => Message::Response {
                id,
                result: result.map(Raw),
            },
            None => Message::Other,
        });
    };
    let Some(method) = string(method) else {
        return Some(Message::Other);
    };
    let params = params.map(|params| {
        members(
            params.get(),
            ["name", "arguments", "cursor", "requestId", "taskId", "_meta"],
        )
    });
    // `params` that is not an object has none of the members read here.
    let [name, arguments, cursor, request, task, meta] = params.flatten().unwrap_or_default();
    let message = match &*method {
        "tools/list" => match id.and_then(Id::read) {
            Some(id) => Message::ListTools {
                id,
                first: absent(cursor),
            },
            None => Message::Other,
        },
        "tools/call" => Message::Call {
            id: id.and_then(Id::read),
            name: name.and_then(string).unwrap_or_default(),
            arguments: arguments.map(|raw| arguments_text(raw.get())),
            meta: meta.map(Raw),
        },
        "notifications/cancelled" => match request.and_then(Id::read) {
            Some(request) => Message::Cancelled { request },
            None => Message::Other,
        },
        "notifications/tools/list_changed" => Message::ListChanged,
        "tasks/result" => match (id.and_then(Id::read), task.and_then(string)) {
            (Some(id), Some(task)) => Message::TaskResult { id, task },
            _ => Message::Other,
        },
        "tasks/cancel" => match task.and_then(string) {
            Some(task) => Message::CancelTask { task },
            None => Message::Other,
        },
        _ => Message::Other,
    };
    Some(message)
}

/// Whether a member is absent or `null`, as an optional member reads.
pub fn absent(member: Option<&RawValue>) -> bool {
    member.is_none_or(|value| value.get() == "null")
}

/// A JSON string's decoded text, borrowed when it holds no escape; `None`
/// for any other value.
pub fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    crate::json_string::decode(raw.get())
}

/// The raw value of each of `names` among the members of the JSON object
/// `text`, the last one when a name repeats; `None` when `text` is not an
/// object. Names are compared decoded; other values are skipped unbuilt.
///
/// ```
/// use mcp_unknown_keys::jsonrpc::members;
///
/// let [tools, next] = members(r#"{"tools":[],"\u006eextCursor":"c","tools":[1]}"#, ["tools", "nextCursor"]).unwrap();
/// assert_eq!(tools.map(|raw| raw.get()), Some("[1]"));
/// assert_eq!(next.map(|raw| raw.get()), Some(r#""c""#));
/// ```
pub fn members<'a, const N: usize>(text: &'a str, names: [&str; N]) -> Option<[Option<&'a RawValue>; N]> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let found = deserializer.deserialize_map(Members { names }).ok()?;
    deserializer.end().ok()?;
    Some(found)
}

struct Members<'n, const N: usize> {
    names: [&'n str; N],
}

impl<'de, const N: usize> Visitor<'de> for Members<'_, N> {
    type Value = [Option<&'de RawValue>; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [None; N];
        while let Some(Name(name)) = map.next_key()? {
            match self.names.iter().position(|wanted| *wanted == name) {
                Some(at) => found[at] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// A member name, decoded, borrowed when it holds no escape.
struct Name<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Text<'a>(#[serde(borrow)] Cow<'a, str>);
        Text::deserialize(deserializer).map(|Text(text)| Name(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(line: &str) -> Message<'_> {
        match read_line(line.as_bytes()) {
            Line::Message(message) => message,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn id(text: &str) -> Id {
        Id::read(&RawValue::from_string(text.to_owned()).unwrap()).unwrap()
    }

    #[test]
    fn escaped_methods_and_member_names_are_read_decoded() {
        let line = r#"{"jsonrpc":"2.0","\u0069d":1,"method":"\u0074ools/call","params":{"n\u0061me":"t","arguments":{"a":1}}}"#;
        assert!(matches!(message(line), Message::Call { ref name, .. } if name == "t"));
    }

    #[test]
    fn a_repeated_member_counts_by_its_last_value() {
        let line = r#"{"id":1,"method":"tools/list","id":2,"method":"tools/call","params":{"name":"a","arguments":{"x":1},"name":"b","arguments":{"y":1}},"id":3}"#;
        let Message::Call {
            id, name, arguments, ..
        } = message(line)
        else {
            panic!()
        };
        assert_eq!(
            (id, &*name, arguments.as_deref()),
            (Some(self::id("3")), "b", Some(r#"{"y":1}"#))
        );
        let params_twice = r#"{"id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}"#;
        assert!(matches!(message(params_twice), Message::Call { ref name, .. } if name == "b"));
    }

    #[test]
    fn arguments_sent_as_a_json_string_are_read_as_the_text_they_hold() {
        let line = r#"{"id":1,"method":"tools/call","params":{"name":"t","arguments":"{\"k\":1}"}}"#;
        let Message::Call { arguments, .. } = message(line) else {
            panic!()
        };
        assert_eq!(arguments.as_deref(), Some(r#"{"k":1}"#));
    }

    #[test]
    fn each_kind_of_message_is_told_apart() {
        assert_eq!(
            message(r#"{"id":"a","method":"tools/list","params":{"cursor":"c"}}"#),
            Message::ListTools {
                id: Id::Text("a".into()),
                first: false
            }
        );
        assert_eq!(
            message(r#"{"method":"notifications/cancelled","params":{"requestId":2.0}}"#),
            Message::Cancelled { request: id("2") }
        );
        assert_eq!(
            message(r#"{"method":"notifications/tools/list_changed"}"#),
            Message::ListChanged
        );
        assert!(matches!(
            message(r#"{"result":{"tools":[]},"id":1}"#),
            Message::Response { result: Some(_), .. }
        ));
        assert_eq!(
            message(r#"{"error":{"code":1},"id":1}"#),
            Message::Response {
                id: id("1"),
                result: None
            }
        );
        // A request of the server's own with a pending id is no response.
        assert_eq!(message(r#"{"id":7,"method":"roots/list"}"#), Message::Other);
        assert_eq!(message(r#"{"id":7,"method":5}"#), Message::Other);
    }

    #[test]
    fn a_call_with_no_readable_name_is_a_call_to_the_empty_name() {
        for line in [
            r#"{"id":1,"method":"tools/call","params":[]}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":5,"arguments":{"a":1}}}"#,
            r#"{"id":1,"method":"tools/call"}"#,
        ] {
            assert!(
                matches!(message(line), Message::Call { ref name, id: Some(_), .. } if name.is_empty()),
                "{line}"
            );
        }
    }

    #[test]
    fn a_call_keeps_every_digit_of_its_id() {
        let line = r#"{"id":12345678901234567890123,"method":"tools/call","params":{"name":"t"}}"#;
        let Message::Call { id, .. } = message(line) else {
            panic!()
        };
        let answer = r#"{"id":12345678901234567890123,"result":{}}"#;
        let Message::Response { id: answered, .. } = message(answer) else {
            panic!()
        };
        assert_eq!(id, Some(answered));
        assert_ne!(id, Some(self::id("12345678901234567890124")));
        assert_eq!(id.unwrap().to_string(), "12345678901234567890123");
    }

    #[test]
    fn batches_are_read_element_by_element_and_the_rest_is_unreadable() {
        let Line::Batch(messages) = read_line(br#"[{"method":"notifications/tools/list_changed"}, 5]"#)
        else {
            panic!()
        };
        assert_eq!(messages, [Message::ListChanged, Message::Other]);
        for line in [&b"\xff{}"[..], b"", b"null", b"{", b"{} {}", b"[1,"] {
            assert_eq!(read_line(line), Line::Unreadable, "{line:?}");
        }
    }

    #[test]
    fn a_deep_value_is_skipped_not_built() {
        let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        let line = format!(
            r#"{{"id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"k":{deep}}},"x":{deep}}}}}"#
        );
        assert!(matches!(message(&line), Message::Call { .. }));
    }
}
