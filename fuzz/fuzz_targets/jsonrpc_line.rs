//! The proxy tap's line reader, on any bytes, in both directions: each line
//! of the input (split at newlines) through `jsonrpc::read_line`, and what
//! it reads acted on as the tap acts on it, by the core's `Session`:
//! `tools/list` requests awaited, a response answering one read as a
//! listing page into a catalogue, calls audited against it and paired with
//! their answers. Nothing may panic or hang; and a line that parses as JSON
//! (as the peer's parser reads it) is read as the message that JSON is: its
//! method, tool name, arguments, ids and result as `serde_json::Value`
//! holds them, the last of repeated members.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys::audit::{Auditor, Summary};
use mcp_unknown_keys::jsonrpc::{Id, Line, ListingPage, Message, read_line};
use mcp_unknown_keys::session::{Session, Side};
use serde_json::Value;
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    let auditor = Auditor::new().with_sink(());
    let mut session = Session::new();
    for line in data.split(|&b| b == b'\n') {
        let read = read_line(line);
        check(line, &read);
        let messages = match read {
            Line::Message(message) => vec![message],
            Line::Batch(messages) => messages,
            Line::Unreadable => Vec::new(),
        };
        for message in messages {
            session.read(&auditor, side(&message), message);
        }
    }
    session.finish();
    // The session's summary, in words and as a JSON line, whatever the
    // keys and names a line held.
    let summary = Summary::new(session.coverage(), session.findings(), session.verdicts().tally());
    let line: Value = serde_json::from_str(&summary.to_json_line()).expect("the summary is JSON");
    assert!(line["summary"]["coverage"].is_object());
    assert!(summary.to_text("").ends_with('\n'));
});

/// The side that sends a message of this kind: one stream holds both.
fn side(message: &Message<'_>) -> Side {
    match message {
        Message::Response { .. } | Message::ListChanged => Side::Server,
        _ => Side::Host,
    }
}

/// A line that parses as JSON reads as the message its `Value` is.
fn check(line: &[u8], read: &Line<'_>) {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    match (&value, read) {
        (Value::Object(_), Line::Message(message)) => agrees(&value, message),
        (Value::Array(elements), Line::Batch(messages)) => {
            assert_eq!(elements.len(), messages.len(), "a batch read element by element");
            for (element, message) in elements.iter().zip(messages) {
                if element.is_object() {
                    agrees(element, message);
                } else {
                    assert_eq!(message, &Message::Other);
                }
            }
        }
        (Value::Object(_) | Value::Array(_), other) => panic!("JSON read as {other:?}"),
        (_, other) => assert_eq!(other, &Line::Unreadable),
    }
}

fn agrees(value: &Value, message: &Message<'_>) {
    let params = value.get("params").filter(|params| params.is_object());
    let param = |name: &str| params.and_then(|params| params.get(name));
    let method = value.get("method");
    match message {
        Message::Call {
            id,
            name,
            arguments,
            meta,
            ..
        } => {
            assert_eq!(method.and_then(Value::as_str), Some("tools/call"));
            // A call naming no tool is a call to the empty name.
            assert_eq!(param("name").and_then(Value::as_str).unwrap_or(""), &**name);
            match id {
                Some(id) => same_id(value.get("id"), id),
                None => assert!(value.get("id").is_none_or(|id| !id_like(id))),
            }
            match (param("arguments"), arguments) {
                (None, None) => {}
                (Some(Value::String(text)), Some(read)) => assert_eq!(text, read),
                (Some(other), Some(read)) => {
                    let reread: Value = serde_json::from_str(read).expect("arguments' own text");
                    assert_eq!(&reread, other);
                }
                (expected, read) => panic!("arguments {expected:?} read as {read:?}"),
            }
            // `_meta` is kept as written, whatever it holds.
            match (param("_meta"), meta) {
                (None, None) => {}
                (Some(expected), Some(read)) => {
                    let reread: Value = serde_json::from_str(read.get()).expect("_meta's own text");
                    assert_eq!(&reread, expected);
                }
                (expected, read) => panic!("_meta {expected:?} read as {read:?}"),
            }
        }
        Message::ListTools { id, first } => {
            assert_eq!(method.and_then(Value::as_str), Some("tools/list"));
            same_id(value.get("id"), id);
            assert_eq!(*first, param("cursor").is_none_or(Value::is_null));
        }
        Message::Cancelled { request } => {
            assert_eq!(method.and_then(Value::as_str), Some("notifications/cancelled"));
            same_id(param("requestId"), request);
        }
        Message::ListChanged => {
            assert_eq!(
                method.and_then(Value::as_str),
                Some("notifications/tools/list_changed")
            );
        }
        Message::TaskResult { id, task } => {
            assert_eq!(method.and_then(Value::as_str), Some("tasks/result"));
            same_id(value.get("id"), id);
            assert_eq!(param("taskId").and_then(Value::as_str), Some(&**task));
        }
        Message::CancelTask { task } => {
            assert_eq!(method.and_then(Value::as_str), Some("tasks/cancel"));
            assert_eq!(param("taskId").and_then(Value::as_str), Some(&**task));
        }
        Message::Response { id, result } => {
            assert!(method.is_none(), "a response names no method");
            same_id(value.get("id"), id);
            assert_eq!(result.is_some(), value.get("result").is_some());
            if let Some(result) = result {
                let page = ListingPage::read(result.get());
                let tools = value["result"].get("tools").filter(|tools| tools.is_array());
                assert_eq!(page.is_some(), tools.is_some(), "a listing page");
            }
        }
        Message::Other => {
            assert!(
                method.and_then(Value::as_str) != Some("tools/call"),
                "a call read as no message"
            );
            // With no method, an id that can be answered makes a response.
            assert!(method.is_some() || value.get("id").is_none_or(|id| !id_like(id)));
        }
    }
}

/// Whether `id` reads as the id `value` holds, for the ids a `Value`
/// holds exactly: strings and integers.
fn same_id(value: Option<&Value>, id: &Id) {
    let value = value.expect("an id");
    if matches!(value, Value::String(_)) || value.is_i64() || value.is_u64() {
        let raw = RawValue::from_string(value.to_string()).expect("JSON");
        assert_eq!(Id::read(&raw).as_ref(), Some(id));
    }
}

fn id_like(id: &Value) -> bool {
    id.is_string() || id.is_number()
}
