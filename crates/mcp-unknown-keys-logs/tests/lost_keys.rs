//! What calls lost, read from logs: required keys a call lacked, calls
//! emptied of their arguments, and the calls of responses cut at their
//! length limit, in every shape that keeps a stop reason.

use mcp_unknown_keys::audit::{Cause, Skip};
use mcp_unknown_keys_logs::{Audit, Dimension, Input, Notice, Options, Report};
use serde_json::{Value, json};

/// `fs_read` as a chat request declares it: `path` required.
fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "fs_read", "parameters": {
        "properties": {"path": {}, "offset": {}}, "required": ["path"],
    }}}])
}

fn audited(lines: &[Value], options: &Options) -> Report {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut audit = Audit::new(options).unwrap();
    audit
        .read(Input::from_reader("log", std::io::Cursor::new(text.into_bytes())).unwrap())
        .unwrap();
    audit.finish()
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
