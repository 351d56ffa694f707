//! MCP JSON-RPC messages among the records, read by the core's
//! [`jsonrpc`] reader: the very function the proxy reads each line with, so
//! `audit` and the proxy agree on every message by construction (escaped
//! methods, repeated members, arguments sent as a JSON string, ids equal by
//! value).
//!
//! A record is a JSON-RPC message when it has a `jsonrpc` member, a
//! `method`, or an `id` with a `result` or an `error`: the same look at its
//! members that finds the shapes it may hold says so
//! ([`Plan::candidates`]). A record the walker holds as text (a line, an
//! element of a batch or a document) is handed to the reader as it is. A message nested in another record (a traffic log's
//! `{"direction":…,"message":{…}}`) was read in the record's one pass, and
//! only the members kept of it remain: the reader is handed those members,
//! written out again as a JSON object, each as the record held it (the
//! last of repeated members, names decoded, as the capture keeps them).
//! JSON-RPC calls are never taken for repeats of earlier calls: their ids
//! start again with each session.

use std::fmt::Write;

use mcp_unknown_keys::jsonrpc;
use serde_json::value::RawValue;

use super::capture::{Node, Object};
use super::plan::{Path, Plan};

/// The message a record holds: read from `text` when the record's text is
/// at hand, else from the members kept of it.
pub(super) fn read<'t>(
    plan: &Plan,
    record: &Object<'_>,
    text: Option<&'t str>,
    kept: &'t mut String,
) -> Option<jsonrpc::Message<'t>> {
    let text = match text {
        Some(text) => text,
        None => {
            *kept = written_again(plan, record);
            kept
        }
    };
    jsonrpc::read_message(text)
}

/// The members of a JSON-RPC message the reader looks at, as a JSON object:
/// a member that is not an object where one is looked inside (`params`,
/// `result`) is written as `0`, which reads as no object, as it did.
fn written_again(plan: &Plan, record: &Object<'_>) -> String {
    let rpc = &plan.rpc;
    let mut text = Members::default();
    for (name, path) in [
        ("jsonrpc", &rpc.jsonrpc),
        ("id", &rpc.id),
        ("method", &rpc.method),
    ] {
        if let Some(raw) = raw(plan, record, path) {
            text.add(name, raw.get());
        }
    }
    let params = [
        ("name", &rpc.name),
        ("arguments", &rpc.arguments),
        ("cursor", &rpc.cursor),
        ("requestId", &rpc.request),
    ];
    text.add_object(plan, record, ("params", &rpc.params), &params);
    let result = [("tools", &rpc.tools), ("nextCursor", &rpc.next_cursor)];
    text.add_object(plan, record, ("result", &rpc.result), &result);
    text.end()
}

/// A JSON object being written, member by member.
#[derive(Default)]
struct Members(String);

impl Members {
    fn add(&mut self, name: &str, value: &str) {
        self.0.push(if self.0.is_empty() { '{' } else { ',' });
        let _ = write!(self.0, "\"{name}\":{value}");
    }

    /// The member `name` at `at`, written with its members `inside`.
    fn add_object(
        &mut self,
        plan: &Plan,
        record: &Object<'_>,
        (name, at): (&str, &Path),
        inside: &[(&str, &Path)],
    ) {
        match plan.node(record, at) {
            None => {}
            Some(Node::Object(_)) => {
                let mut object = Members::default();
                for (name, path) in inside {
                    if let Some(raw) = raw(plan, record, path) {
                        object.add(name, raw.get());
                    }
                }
                self.add(name, &object.end());
            }
            Some(_) => self.add(name, "0"),
        }
    }

    fn end(mut self) -> String {
        if self.0.is_empty() {
            self.0.push('{');
        }
        self.0.push('}');
        self.0
    }
}

/// The raw text at `path`, `null` included.
fn raw<'a>(plan: &Plan, record: &Object<'a>, path: &Path) -> Option<&'a RawValue> {
    match plan.node(record, path)? {
        Node::Raw(raw) => Some(raw),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_unknown_keys::jsonrpc::{ListingPage, Message};
    use proptest::prelude::*;

    /// What a message means to an audit: a response's result as the
    /// listing page it is (or is not), whatever else it holds.
    fn meaning(message: Option<Message<'_>>) -> String {
        match message {
            Some(Message::Response { id, result }) => {
                let page = result.map(|result| ListingPage::read(result.get()));
                format!("Response {id:?} {page:?}")
            }
            other => format!("{other:?}"),
        }
    }

    /// The message a record nested in another reads as.
    fn nested(text: &str) -> Option<String> {
        let plan = Plan::get();
        let Ok(Node::Object(object)) = plan.vocabulary.read(text, false) else {
            return None;
        };
        Some(meaning(read(plan, &object, None, &mut String::new())))
    }

    #[test]
    fn a_nested_message_reads_as_it_would_on_its_own() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"\u0074ools/call","params":{"name":"a","arguments":{"x":1},"name":"b"}}"#,
            r#"{"id":1.0,"method":"tools/call","id":"2","params":{"name":"t","arguments":"{\"k\":1}"}}"#,
            r#"{"id":1,"method":"tools/list","params":{"cursor":"c"}}"#,
            r#"{"id":1,"method":"tools/list","params":null}"#,
            r#"{"id":1,"method":"tools/call","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{}}],"nextCursor":"2","x":[1]}}"#,
            r#"{"id":1,"result":null}"#,
            r#"{"id":1,"error":{"code":1}}"#,
            r#"{"method":"notifications/cancelled","params":{"requestId":3}}"#,
            r#"{"method":"notifications/tools/list_changed"}"#,
        ] {
            let alone = meaning(jsonrpc::read_message(text));
            assert_eq!(nested(text).as_deref(), Some(alone.as_str()), "{text}");
        }
    }

    proptest! {
        /// Whatever the members, and however they repeat or are escaped, a
        /// message nested in a record reads as it would on its own.
        #[test]
        fn any_nested_message_reads_as_it_would_on_its_own(
            members in prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "\"id\"", "\"i\\u0064\"", "\"method\"", "\"params\"", "\"result\"", "\"jsonrpc\"",
                        "\"error\"", "\"other\"",
                    ]),
                    prop::sample::select(vec![
                        "1", "1.0", "\"1\"", "null", "[]", "\"tools/call\"", "\"tools/list\"",
                        "\"t\\u006fols/call\"", "\"notifications/tools/list_changed\"",
                        "\"notifications/cancelled\"",
                        r#"{"name":"t","arguments":{"k":1}}"#,
                        r#"{"name":"t","arguments":"{\"k\":1}","name":"u"}"#,
                        r#"{"cursor":"c","requestId":1}"#,
                        r#"{"tools":[{"name":"t","inputSchema":{"properties":{"p":{}}}}],"nextCursor":null}"#,
                        r#"{"tools":"no","nextCursor":"n"}"#,
                    ]),
                ),
                1..8,
            )
        ) {
            let body: Vec<String> = members.iter().map(|(name, value)| format!("{name}:{value}")).collect();
            let text = format!("{{{}}}", body.join(","));
            let alone = meaning(jsonrpc::read_message(&text));
            prop_assert_eq!(nested(&text), Some(alone), "{}", text);
        }
    }
}
