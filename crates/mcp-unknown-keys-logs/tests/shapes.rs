//! What a record is read as: each shape by its whole shape, never by one
//! member's name.

use mcp_unknown_keys_logs::{RecordKind, read_record};
use serde_json::{Value, json};

fn read(record: &Value) -> mcp_unknown_keys_logs::Recognised {
    read_record(record.to_string().as_bytes())
}

fn tools_of(found: &mcp_unknown_keys_logs::Recognised) -> Vec<&str> {
    found.calls.iter().map(|call| call.tool.as_str()).collect()
}

#[test]
fn a_call_or_a_message_with_a_proxy_log_member_is_read_for_its_calls() {
    let chat_call = json!({"id": "c1", "type": "function",
        "function": {"name": "fs_read", "arguments": "{\"ffset\":1}"}});
    let records = [
        json!({"role": "assistant", "tool_calls": [chat_call], "summary": {"findings": [], "coverage": {"calls": 0}}}),
        json!({"type": "mcp_tool_call", "id": "i1", "server": "fs", "tool": "fs_read",
            "arguments": {"ffset": 1}, "status": "completed",
            "verdict": "ignored", "unknown_keys": ["ffset"]}),
        json!({"type": "tool_use", "id": "t1", "name": "fs_read", "input": {"ffset": 1},
            "note": {"tool": "fs_read", "at": "", "problem": "remote_ref", "text": "x"}}),
        json!({"type": "mcp_tool_call", "id": "i2", "server": "fs", "tool": "fs_read",
            "arguments": {"ffset": 1}, "unknown_keys": ["ffset"], "declared_keys": ["path"]}),
    ];
    for record in &records {
        let found = read(record);
        assert_eq!(tools_of(&found), ["fs_read"], "{record}");
        let logged = (
            found.logged_warnings,
            found.logged_verdicts,
            found.logged_notes,
            found.summaries,
        );
        assert_eq!(logged, (0, 0, 0, 0), "{record}");
    }
}

#[test]
fn a_proxy_s_lines_are_recognised_by_their_whole_shape() {
    let summary = json!({"summary": {"coverage": {"calls": 1, "audited": 1, "unaudited": {}, "unlisted_tools": {}},
        "findings": [], "declared_keys": {}}});
    assert_eq!(read(&summary).summaries, 1);
    assert_eq!(
        read(&json!({"summary": [{"tool": "t", "key": "k", "calls": 1}]})).summaries,
        1
    );
    // Some other log's summary.
    let other = read(&json!({"summary": {"title": "Fixing the parser", "tokens": 12}}));
    assert_eq!((other.summaries, other.kind), (0, RecordKind::Idle));
    let warning = json!({"tool": "fs_read", "unknown_keys": ["ffset"], "declared_keys": ["path"], "id": "1"});
    assert_eq!(read(&warning).logged_warnings, 1);
    let verdict = json!({"verdict": "ignored", "tool": "fs_read", "id": "1", "unknown_keys": ["ffset"]});
    assert_eq!(read(&verdict).logged_verdicts, 1);
}

#[test]
fn a_request_s_function_call_directive_is_no_call() {
    let functions = json!([{"name": "get_weather", "parameters": {"properties": {"city": {}}}}]);
    for directive in [json!("auto"), json!({"name": "get_weather"})] {
        let request = json!({"model": "m", "functions": functions, "function_call": directive,
            "messages": [{"role": "user", "content": "weather?"}]});
        let found = read(&request);
        assert_eq!((found.calls.len(), found.catalogues.len()), (0, 1), "{request}");
    }
    // An assistant message's function_call is one.
    let message = json!({"role": "assistant", "content": null,
        "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}});
    assert_eq!(tools_of(&read(&message)), ["get_weather"]);
}

#[test]
fn a_call_whose_name_is_empty_is_a_call_and_one_with_no_name_is_none() {
    let message = |call: Value| json!({"role": "assistant", "tool_calls": [call]});
    let empty = message(json!({"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}));
    assert_eq!(tools_of(&read(&empty)), [""]);
    let absent = message(json!({"id": "c1", "type": "function", "function": {"arguments": "{}"}}));
    assert!(tools_of(&read(&absent)).is_empty());
}
