//! What calls lost, read from logs: required keys a call lacked, calls
//! emptied of their arguments, and the calls of responses cut at their
//! length limit, in every shape that keeps a stop reason.

use mcp_unknown_keys::audit::{Cause, Skip};
use mcp_unknown_keys_logs::{Audit, Dimension, Input, Notice, Options, Report};
use serde_json::{Value, json};

use crate::support::audited;

/// `fs_read` as a chat request declares it: `path` required.
fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "fs_read", "parameters": {
        "properties": {"path": {}, "offset": {}}, "required": ["path"],
    }}}])
}

/// An exchange: the request's tools and the response's one choice.
fn exchange(id: &str, arguments: &str, finish_reason: &str) -> Value {
    json!({
        "request": {"model": "gpt-4o", "tools": tools()},
        "response": {"choices": [{"finish_reason": finish_reason, "message": {"tool_calls": [
            {"id": id, "type": "function", "function": {"name": "fs_read", "arguments": arguments}},
        ]}}]},
    })
}

#[test]
fn missing_and_emptied_calls_are_findings_with_their_own_cause() {
    let options = Options::default().group_by([Dimension::Cause]);
    let report = audited(
        &[
            exchange("1", r#"{"offset":1}"#, "tool_calls"),
            exchange("2", "{}", "tool_calls"),
            exchange("3", r#"{"path":"a"}"#, "tool_calls"),
        ],
        &options,
    );
    let pairs = report.pairs();
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    assert!(pairs[0].missing);
    assert_eq!(
        (pairs[0].key, pairs[0].calls, pairs[0].cause),
        ("path", 2, Some(Cause::MissingRequired))
    );
    let groups = report.groups(&[Dimension::Cause]).unwrap();
    let rate = |cause: &str| {
        let group = groups.iter().find(|g| g.values[0].1 == cause).expect(cause);
        (group.calls, group.calls_with_unknown_keys)
    };
    assert_eq!(rate("missing_required"), (1, 1));
    assert_eq!(rate("emptied"), (1, 1));
    assert_eq!(rate("(none)"), (1, 0));
    // Off, as the first version was.
    let off = audited(
        &[exchange("1", r#"{"offset":1}"#, "stop")],
        &Options::default().no_missing(true),
    );
    assert!(off.pairs().is_empty());
}

#[test]
fn the_calls_of_a_truncated_response_are_counted_and_caused_so() {
    let report = audited(
        &[
            exchange("1", r#"{"offset":1}"#, "length"),
            exchange("2", r#"{"path":"a"}"#, "length"),
            exchange("3", r#"{"path":"a","offs"#, "length"),
            exchange("4", r#"{"path":"a"}"#, "stop"),
        ],
        &Options::default(),
    );
    assert_eq!(report.coverage.in_truncated_responses, 3);
    assert_eq!(report.coverage.unaudited[&Skip::UnreadableArguments], 1);
    let pairs = report.pairs();
    assert_eq!(pairs[0].cause, Some(Cause::TruncatedResponse));
    assert!(report.notices.iter().any(|notice| matches!(
        notice,
        Notice::UnreadableInTruncatedResponse { tool } if tool == "fs_read"
    )));
    let coverage = serde_json::to_value(&report.coverage).unwrap();
    assert_eq!(coverage["in_truncated_responses"], 3);
}

#[test]
fn every_shape_s_stop_reason_marks_its_calls() {
    let anthropic = json!({"tools": [{"name": "fs_read", "input_schema": {"properties": {"path": {}}}}],
        "stop_reason": "max_tokens",
        "content": [{"type": "tool_use", "id": "a", "name": "fs_read", "input": {"path": "x"}}]});
    let gemini = json!({"candidates": [{"finishReason": "MAX_TOKENS", "content": {"parts": [
        {"functionCall": {"name": "fs_read", "args": {"path": "x"}}}]}}]});
    let responses = json!({"incomplete_details": {"reason": "max_output_tokens"}, "output": [
        {"type": "function_call", "call_id": "r", "name": "fs_read", "arguments": "{\"path\":\"x\"}"}]});
    for (name, line) in [
        ("anthropic", anthropic),
        ("gemini", gemini),
        ("responses", responses),
    ] {
        let report = audited(&[line], &Options::default());
        assert_eq!(report.coverage.calls, 1, "{name}");
        assert_eq!(report.coverage.in_truncated_responses, 1, "{name}");
    }
}

fn audited_text(text: &str) -> Report {
    let mut audit = Audit::new(&Options::default()).unwrap();
    audit
        .read(Input::from_reader("log", std::io::Cursor::new(text.as_bytes().to_vec())).unwrap())
        .unwrap();
    audit.finish()
}

/// A streamed chat completion of one call, in two chunks: the first holds
/// the call whole, the last says why the choice finished.
fn chat_stream(stream: &str, arguments: &str, finish_reason: &str) -> String {
    let chunk = |call: Value, finish: Value| {
        let chunk = json!({"id": stream, "object": "chat.completion.chunk", "model": "gpt-4o",
            "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]});
        format!("data: {chunk}\n\n")
    };
    chunk(
        json!({"index": 0, "id": stream, "type": "function", "function": {"name": "fs_read", "arguments": arguments}}),
        Value::Null,
    ) + &chunk(
        json!({"index": 0, "function": {"arguments": ""}}),
        json!(finish_reason),
    )
}

/// A streamed Anthropic message of one `tool_use` block, as server-sent
/// events: its stop reason comes after the block stopped.
fn message_stream(id: &str, partial_json: &str, stop_reason: &str) -> String {
    [
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
            "content": [], "stop_reason": null}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": id, "name": "fs_read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial_json}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 4096}}),
        json!({"type": "message_stop"}),
    ]
    .iter()
    .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
    .collect()
}

#[test]
fn streamed_responses_cut_at_their_length_limit_mark_their_calls() {
    let log = [
        format!("{}\n", json!({"tools": tools()})),
        chat_stream("chat_cut", r#"{"path":"a","bogus":1}"#, "length"),
        chat_stream("chat_whole", r#"{"path":"a","other":1}"#, "tool_calls"),
        message_stream("toolu_cut", r#"{"path":"a","extra":1}"#, "max_tokens"),
        message_stream("toolu_cut_mid_arguments", r#"{"path":"a","ex"#, "max_tokens"),
        message_stream("toolu_whole", r#"{"path":"a","more":1}"#, "end_turn"),
        // Cut short by the input's end, not by the length limit.
        chat_stream("chat_unfinished", r#"{"path":"a","left":1}"#, "length")
            .split("\n\n")
            .next()
            .unwrap()
            .to_owned()
            + "\n",
    ]
    .concat();
    let report = audited_text(&log);
    assert_eq!(report.coverage.calls, 6);
    assert_eq!(report.coverage.in_truncated_responses, 3);
    assert_eq!(report.coverage.unaudited[&Skip::UnreadableArguments], 1);
    assert!(report.notices.iter().any(|notice| matches!(
        notice,
        Notice::UnreadableInTruncatedResponse { tool } if tool == "fs_read"
    )));
    let cause = |key: &str| {
        let pairs = report.pairs();
        let pair = pairs.iter().find(|pair| pair.key == key).expect(key);
        pair.cause
    };
    assert_eq!(cause("bogus"), Some(Cause::TruncatedResponse));
    assert_eq!(cause("extra"), Some(Cause::TruncatedResponse));
    for whole in ["other", "more", "left"] {
        assert_ne!(cause(whole), Some(Cause::TruncatedResponse), "{whole}");
    }
}

/// Where a stream gives a call and its stop reason in different records
/// and none holds the call back, the call is counted where it first comes,
/// unmarked (docs/audit.md says so): a Responses stream's
/// `response.output_item.done` before its `response.incomplete`, a Gemini
/// chunk before the one whose candidate says `MAX_TOKENS`. What the
/// record with the stop reason alone holds is marked.
#[test]
fn a_stop_reason_in_a_later_record_marks_only_the_calls_it_holds() {
    let item = |call_id: &str| {
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
            "name": "fs_read", "arguments": "{\"path\":\"x\"}", "status": "incomplete"})
    };
    let incomplete = json!({"type": "response.incomplete", "response": {"status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "output": [item("streamed"), item("only_at_the_end")]}});
    let report = audited(
        &[
            json!({"type": "response.output_item.done", "output_index": 0, "item": item("streamed")}),
            incomplete,
        ],
        &Options::default(),
    );
    assert_eq!(
        (report.coverage.calls, report.coverage.in_truncated_responses),
        (2, 1)
    );
    let chunk = |finish_reason: Value, args: Value| {
        json!({"candidates": [{"finishReason": finish_reason, "content": {"parts": [
            {"functionCall": {"name": "fs_read", "args": args}}]}}]})
    };
    let report = audited(
        &[
            chunk(Value::Null, json!({"path": "before"})),
            chunk(json!("MAX_TOKENS"), json!({"path": "with"})),
        ],
        &Options::default(),
    );
    assert_eq!(
        (report.coverage.calls, report.coverage.in_truncated_responses),
        (2, 1)
    );
}
