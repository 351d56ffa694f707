//! Which catalogue a call meets: those given, those an input holds, and
//! what is no catalogue at all.

use mcp_unknown_keys::audit::Skip;
use mcp_unknown_keys_logs::{Options, Report, Tools};
use serde_json::{Value, json};

fn fs_read() -> Value {
    json!({"name": "fs_read", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}})
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn audit(options: &Options, lines: &[Value]) -> Report {
    crate::support::audited_as("session.jsonl", lines, options)
}

#[test]
fn a_list_of_tool_names_is_no_catalogue_and_keeps_the_one_given() {
    let options = Options::default().tools(Tools::declarations("fs tools", vec![fs_read()]));
    // Claude Code's stream-json `init` line: its tools are names.
    let init = json!({"type": "system", "subtype": "init", "session_id": "s",
        "tools": ["Bash", "Read", "mcp__fs__fs_read"]});
    let report = audit(
        &options,
        &[
            init,
            tool_use("t1", "mcp__fs__fs_read", json!({"path": "a", "ffset": 1})),
        ],
    );
    assert_eq!((report.coverage.calls, report.coverage.audited), (1, 1));
    assert_eq!(report.warnings[0].unknown_keys, ["ffset"]);
    // Nor is an empty list.
    let empty = json!({"model": "m", "messages": [], "tools": []});
    let report = audit(&options, &[empty, tool_use("t1", "fs_read", json!({"ffset": 1}))]);
    assert_eq!(report.coverage.audited, 1);
}

#[test]
fn without_a_catalogue_a_list_of_names_leaves_calls_with_none() {
    let init = json!({"type": "system", "subtype": "init", "tools": ["fs_read"]});
    let report = audit(
        &Options::default(),
        &[init, tool_use("t1", "fs_read", json!({"path": "a"}))],
    );
    assert_eq!(report.coverage.unaudited[&Skip::NoCatalogue], 1);
}

#[test]
fn a_record_that_carries_a_catalogue_is_still_read_for_its_calls() {
    let chat = json!({"model": "m",
        "tools": [{"type": "function", "function": {"name": "fs_read", "parameters": {"properties": {"path": {}}}}}],
        "messages": [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "fs_read", "arguments": "{\"ffset\":1}"}}]}]});
    let anthropic = json!({"model": "m",
        "tools": [{"name": "fs_read", "input_schema": {"properties": {"path": {}}}}],
        "messages": [{"role": "assistant", "content": [tool_use("t1", "fs_read", json!({"ffset": 2}))]}]});
    let responses = json!({"model": "m",
        "tools": [{"type": "function", "name": "fs_read", "parameters": {"properties": {"path": {}}}}],
        "input": [{"type": "function_call", "call_id": "f1", "name": "fs_read", "arguments": "{\"ffset\":3}"}]});
    let gemini = json!({
        "tools": [{"functionDeclarations": [{"name": "fs_read", "parameters": {"properties": {"path": {}}}}]}],
        "contents": [{"role": "model", "parts": [{"functionCall": {"name": "fs_read", "args": {"ffset": 4}}}]}]});
    let bedrock = json!({"toolConfig": {"tools": [{"toolSpec": {"name": "fs_read",
            "inputSchema": {"json": {"properties": {"path": {}}}}}}]},
        "messages": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "b1", "name": "fs_read",
            "input": {"ffset": 5}}}]}]});
    for body in [chat, anthropic, responses, gemini, bedrock] {
        let report = audit(&Options::default(), std::slice::from_ref(&body));
        assert_eq!((report.coverage.calls, report.coverage.audited), (1, 1), "{body}");
        assert_eq!(report.warnings[0].unknown_keys, ["ffset"], "{body}");
    }
}

#[test]
fn a_call_to_an_unbound_server_never_meets_another_server_s_catalogue() {
    let options = Options::default().tools(Tools::declarations("fs tools", vec![fs_read()]).of_server("fs"));
    let codex = json!({"type": "item.completed", "item": {"id": "i1", "type": "mcp_tool_call",
        "server": "git", "tool": "fs_read", "arguments": {"ref": "main"}, "status": "completed"}});
    let report = audit(
        &options,
        &[
            tool_use("t1", "mcp__git__fs_read", json!({"ref": "main"})),
            codex,
            tool_use("t2", "mcp__fs__fs_read", json!({"ffset": 1})),
        ],
    );
    // Only the fs server's own call is audited against fs's tools.
    assert_eq!((report.coverage.calls, report.coverage.audited), (3, 1));
    assert_eq!(report.coverage.unaudited[&Skip::UnlistedTool], 2);
    let tools: Vec<&str> = report.warnings.iter().map(|w| w.tool.as_str()).collect();
    assert_eq!(tools, ["mcp__fs__fs_read"]);
}

/// A logged exchange, as API gateways and eval harnesses write one a line:
/// the request (its own `tools`) and the response (its calls), in either
/// order.
fn exchange(id: &str, declares: &[&str], call: Value, response_first: bool) -> Value {
    let properties: serde_json::Map<String, Value> =
        declares.iter().map(|key| (key.to_string(), json!({}))).collect();
    let request = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}],
        "tools": [{"type": "function", "function": {"name": "search",
            "parameters": {"type": "object", "properties": properties}}}]});
    let response = json!({"object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "tool_calls": [{"id": format!("call_{id}"), "type": "function",
            "function": {"name": "search", "arguments": call.to_string()}}]}}]});
    if response_first {
        json!({"id": id, "response": response, "request": request})
    } else {
        json!({"id": id, "request": request, "response": response})
    }
}

#[test]
fn a_record_s_tools_meet_its_own_calls_and_never_the_next_record_s() {
    // `search` is declared anew on each line with other keys: each call
    // meets its own line's schema, whichever member comes first.
    for response_first in [false, true] {
        let report = audit(
            &Options::default(),
            &[
                exchange("1", &["query"], json!({"query": "a"}), response_first),
                exchange(
                    "2",
                    &["q", "limit"],
                    json!({"q": "b", "limit": 3}),
                    response_first,
                ),
                exchange(
                    "3",
                    &["query"],
                    json!({"query": "c", "lang": "en"}),
                    response_first,
                ),
            ],
        );
        assert_eq!(
            (report.coverage.calls, report.coverage.audited),
            (3, 3),
            "{response_first}"
        );
        let said: Vec<_> = report
            .warnings
            .iter()
            .map(|w| (w.tool.as_str(), w.unknown_keys.clone()))
            .collect();
        assert_eq!(said, [("search", vec!["lang".to_owned()])], "{response_first}");
    }
}

#[test]
fn a_record_s_tools_do_not_last_past_it() {
    // A request body, then a call of its own line: no catalogue for it.
    let request = json!({"model": "m", "messages": [],
        "tools": [{"name": "fs_read", "input_schema": {"properties": {"path": {}}}}]});
    let report = audit(
        &Options::default(),
        &[request, tool_use("t1", "fs_read", json!({"ffset": 1}))],
    );
    assert!(report.warnings.is_empty());
    assert_eq!(report.coverage.unaudited[&Skip::NoCatalogue], 1);
    // A catalogue given lasts, and a record's own tools win over it for
    // their record's calls only.
    let options = Options::default().tools(Tools::declarations("fs tools", vec![fs_read()]));
    let own = json!({"request": {"model": "m", "tools": [{"name": "fs_read", "input_schema": {"properties": {"ffset": {}}}}]},
        "response": {"content": [tool_use("t2", "fs_read", json!({"ffset": 2}))]}});
    let report = audit(
        &options,
        &[own, tool_use("t3", "fs_read", json!({"path": "b", "limit": 3}))],
    );
    assert_eq!((report.coverage.calls, report.coverage.audited), (2, 2));
    let said: Vec<_> = report.warnings.iter().map(|w| w.unknown_keys.clone()).collect();
    assert_eq!(said, [vec!["limit".to_owned()]]);
}

#[test]
fn a_one_line_exchange_meets_its_own_tools_whichever_member_comes_first() {
    for response_first in [false, true] {
        let report = audit(
            &Options::default(),
            &[exchange(
                "1",
                &["query"],
                json!({"query": "a", "lang": "en"}),
                response_first,
            )],
        );
        assert_eq!(
            (report.coverage.calls, report.coverage.audited),
            (1, 1),
            "{response_first}"
        );
        assert_eq!(report.warnings[0].unknown_keys, ["lang"], "{response_first}");
    }
}
