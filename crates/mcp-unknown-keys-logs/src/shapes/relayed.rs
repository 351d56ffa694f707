//! An MCP gateway's log of the JSON-RPC messages it relayed to and from
//! its servers (GitHub Agentic Workflows' MCP Gateway,
//! `mcp-logs/rpc-messages.jsonl`): each record one message, under
//! `payload`, with the server's name beside it ([`RELAYED`]).
//!
//! The gateway writes a message it could not keep as JSON as text:
//! `{"_error":"invalid JSON","_raw":"…"}`. Its sanitiser makes that happen
//! when a member with a secret's name (`"key":"…"`, `"token":"…"`) is
//! rewritten `"key"=[REDACTED]`: the text is read with each such member
//! given back the value `"[REDACTED]"`, so its keys are still audited.
//!
//! [`RELAYED`]: super::table::RELAYED

use std::borrow::Cow;

use mcp_unknown_keys::audit::{Answer, arguments_text};
use mcp_unknown_keys::jsonrpc::Id;

use super::capture::{Node, Object};
use super::plan::Plan;
use super::table::{RELAYED_REQUEST, RELAYED_RESPONSE};
use super::{Relayed, RelayedMessage};

/// What the gateway's sanitiser writes in place of a member's value, which
/// leaves the text no JSON.
const REDACTED: &str = "\"=[REDACTED]";
/// The same member, given a value again.
const REDACTED_AS_JSON: &str = "\":\"[REDACTED]\"";

/// Reads one record of a gateway's log and yields its message to `to`
/// (which the walker turns into its event: the message borrows text decoded
/// here); whether it was a request or a response.
pub(super) fn read(plan: &Plan, record: &Object<'_>, to: impl FnOnce(Relayed<'_>)) -> bool {
    let paths = &plan.relayed;
    let Some(server) = plan.text(record, &paths.server) else {
        return false;
    };
    let kind = plan
        .text(record, &paths.kind)
        .or_else(|| plan.text(record, &paths.event));
    let request = match kind.as_deref() {
        Some(kind) if RELAYED_REQUEST.contains(&kind) => true,
        Some(kind) if RELAYED_RESPONSE.contains(&kind) => false,
        // A record of what the gateway filtered, or of another kind.
        _ => return false,
    };
    let kept = match plan.node(record, &paths.message) {
        Some(Node::Object(message)) => Some(message),
        _ => None,
    };
    let written_as_text = kept.filter(|message| plan.present(message, &paths.unreadable));
    let repaired = written_as_text
        .and_then(|message| plan.text(message, &paths.text))
        .map(|text| text.replace(REDACTED, REDACTED_AS_JSON));
    let reread = match repaired.as_deref().map(|text| plan.vocabulary.read(text, false)) {
        Some(Ok(Node::Object(message))) => Some(message),
        _ => None,
    };
    let message = match written_as_text {
        Some(_) => reread.as_ref(),
        None => kept,
    };
    let relayed = match (message, request) {
        (Some(message), true) => self::request(plan, record, message),
        (Some(message), false) => response(plan, message),
        // A request the gateway could not keep: a call, by its record's
        // method, counted under no name; another request, of no use.
        (None, true) => Relayed {
            server: "",
            id: None,
            message: match plan.text(record, &paths.method).as_deref() {
                Some("tools/call") => RelayedMessage::Call {
                    name: Cow::Borrowed(""),
                    arguments: None,
                },
                _ => RelayedMessage::OtherRequest,
            },
        },
        (None, false) => Relayed {
            server: "",
            id: None,
            message: RelayedMessage::Failed,
        },
    };
    let failed = plan.present(record, &paths.failed);
    let message = match relayed.message {
        // The gateway's own error on a response: no answer came.
        RelayedMessage::Response { .. } if failed => RelayedMessage::Failed,
        other => other,
    };
    to(Relayed {
        server: &server,
        id: relayed.id,
        message,
    });
    true
}

/// A request: by its own method, or its record's.
fn request<'a>(plan: &Plan, record: &Object<'a>, message: &Object<'a>) -> Relayed<'a> {
    let paths = &plan.relayed;
    let method = plan
        .text(message, &paths.method)
        .or_else(|| plan.text(record, &paths.method));
    let message_of = match method.as_deref() {
        Some("tools/list") => RelayedMessage::ListTools {
            first: !plan.present(message, &paths.cursor),
        },
        Some("tools/call") => RelayedMessage::Call {
            name: plan.text(message, &paths.name).unwrap_or_default(),
            arguments: plan
                .raw(message, &paths.arguments)
                .map(|raw| arguments_text(raw.get())),
        },
        _ => RelayedMessage::OtherRequest,
    };
    Relayed {
        server: "",
        id: id(plan, message),
        message: message_of,
    }
}

/// A response: a result (a tool's failure when it says `isError: true`),
/// or an error.
fn response<'a>(plan: &Plan, message: &Object<'a>) -> Relayed<'a> {
    let paths = &plan.relayed;
    let answer = if plan.present(message, &paths.error) || !plan.present(message, &paths.result) {
        Answer::Error
    } else {
        let is_error = plan
            .raw(message, &paths.is_error)
            .is_some_and(|raw| raw.get() == "true");
        Answer::Result { is_error }
    };
    let tools = plan
        .raw(message, &paths.tools)
        .map(|raw| match super::json_string(raw) {
            Some(text) => text,
            None => Cow::Borrowed(raw.get()),
        });
    Relayed {
        server: "",
        id: id(plan, message),
        message: RelayedMessage::Response { tools, answer },
    }
}

fn id(plan: &Plan, message: &Object<'_>) -> Option<Id> {
    Id::read(plan.raw(message, &plan.relayed.id)?)
}
