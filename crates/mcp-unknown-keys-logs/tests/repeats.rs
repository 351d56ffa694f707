//! A call read twice (a response log, then the next request repeating it in
//! its history) counts once.

use std::io::Cursor;

use mcp_unknown_keys_logs::{Audit, Input, Options};
use serde_json::json;

#[test]
fn a_call_with_an_id_written_back_escaped_anew_counts_once() {
    let tools = [{
        json!({"type": "function", "function": {"name": "find", "parameters": {"properties": {"city": {}}}}})
    }];
    let response = json!({"object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "find", "arguments": "{\"city\":\"Zürich/Nord\",\"country\":\"CH\"}"}}]}}]});
    // The client writes the call back with its arguments escaped anew and
    // their members reordered.
    let request = format!(
        r#"{{"model":"m","tools":{},"messages":[{{"role":"assistant","tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"find","arguments":"{{\"country\":\"CH\",\"city\":\"Z\\u00fcrich\\/Nord\"}}"}}}}]}},{{"role":"tool","tool_call_id":"call_1","content":"ok"}}]}}"#,
        json!(tools)
    );
    let text = format!("{}\n{response}\n{request}\n", json!({"tools": tools}));
    let mut audit = Audit::new(&Options::default()).unwrap();
    audit
        .read(Input::from_reader("requests.jsonl", Cursor::new(text)).unwrap())
        .unwrap();
    let report = audit.finish();
    assert_eq!(report.coverage.calls, 1);
    assert_eq!(report.warnings.len(), 1);
}

#[test]
fn a_document_of_request_bodies_counts_each_body_s_history_apart() {
    let paris = json!({"functionCall": {"name": "find", "args": {"city": "Paris"}}});
    let asked = |calls: usize| {
        json!({"contents": [
            {"role": "user", "parts": [{"text": "where?"}]},
            {"role": "model", "parts": vec![paris.clone(); calls]},
        ]})
    };
    // The second request repeats the first call and adds one just like it.
    let document = serde_json::to_string_pretty(&json!([asked(1), asked(2)])).unwrap();
    let mut audit = Audit::new(&Options::default()).unwrap();
    audit
        .read(Input::from_reader("requests.json", Cursor::new(document)).unwrap())
        .unwrap();
    assert_eq!(audit.finish().coverage.calls, 2);
}
