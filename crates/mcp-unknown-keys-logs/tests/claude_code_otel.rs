//! Claude Code's OpenTelemetry `tool_result` events, as a Collector's file
//! exporter writes them: each MCP tool's call named by the server and tool
//! in `tool_parameters`, its arguments the JSON text of `tool_input`.

use mcp_unknown_keys::audit::Skip;
use mcp_unknown_keys_logs::{Options, Report, Tools};
use serde_json::{Value, json};

fn audit(lines: &[Value]) -> Report {
    let tools = Tools::declarations(
        "github",
        vec![json!({"name": "issue_read", "inputSchema": {"properties": {"owner": {}, "repo": {}, "issue_number": {}}}})],
    )
    .of_server("github");
    crate::support::audited_as("claude-code-logs.jsonl", lines, &Options::default().tools(tools))
}

fn string(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// One export (one line of the file exporter) holding one event.
fn export(event: &str, sequence: Value, attributes: Vec<Value>) -> Value {
    let mut all = vec![
        string("session.id", "11111111-2222-3333-4444-555555555555"),
        string("event.name", event),
        json!({"key": "event.sequence", "value": {"intValue": sequence}}),
    ];
    all.extend(attributes);
    json!({"resourceLogs": [{"resource": {"attributes": [string("service.name", "claude-code")]},
        "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events", "version": "2.1.226"},
            "logRecords": [{"timeUnixNano": "1786407295840000000",
                "body": {"stringValue": format!("claude_code.{event}")}, "attributes": all}]}]}]})
}

fn mcp_result(id: &str, parameters: Option<&str>, input: &str) -> Vec<Value> {
    let mut attributes = vec![
        string("tool_name", "mcp_tool"),
        string("tool_use_id", id),
        string("success", "true"),
    ];
    if let Some(parameters) = parameters {
        attributes.push(string("tool_parameters", parameters));
    }
    attributes.push(string("tool_input", input));
    attributes
}

const ISSUE_READ: &str = r#"{"mcp_server_name":"github","mcp_tool_name":"issue_read"}"#;

#[test]
fn an_mcp_tool_result_is_a_call_of_its_server_s_tool_in_either_integer_form() {
    for sequence in [json!("26"), json!(26)] {
        let report = audit(&[
            export(
                "user_prompt",
                sequence.clone(),
                vec![string("prompt_length", "56")],
            ),
            export(
                "tool_result",
                sequence.clone(),
                mcp_result(
                    "toolu_1",
                    Some(ISSUE_READ),
                    r#"{"owner":"octo","repo":"demo","issue_number":42,"verbose":true}"#,
                ),
            ),
            // A built-in tool: no MCP call.
            export(
                "tool_result",
                sequence,
                vec![
                    string("tool_name", "Read"),
                    string("tool_input", r#"{"file_path":"README.md"}"#),
                ],
            ),
        ]);
        assert_eq!((report.coverage.calls, report.coverage.audited), (1, 1));
        assert_eq!(report.warnings.len(), 1);
        let warning = &report.warnings[0];
        assert_eq!(
            (warning.tool.as_str(), &warning.unknown_keys[..]),
            ("mcp__github__issue_read", &["verbose".to_owned()][..])
        );
        assert_eq!(warning.id, "toolu_1");
    }
}

#[test]
fn a_call_logged_without_details_or_cut_short_is_counted_unaudited() {
    let decision = vec![
        string("tool_name", "mcp_tool"),
        string("tool_parameters", ISSUE_READ),
        string("decision", "accept"),
    ];
    let report = audit(&[
        // The decision before the result is no call of its own.
        export("tool_decision", json!("25"), decision),
        // Without OTEL_LOG_TOOL_DETAILS=1.
        export(
            "tool_result",
            json!("26"),
            vec![string("tool_name", "mcp_tool"), string("tool_use_id", "toolu_2")],
        ),
        // A tool_input cut at 4 KB is no JSON.
        export(
            "tool_result",
            json!("27"),
            mcp_result("toolu_3", Some(ISSUE_READ), r#"{"owner":"octo","re…[truncated]"#),
        ),
        // tool_parameters that are no JSON.
        export(
            "tool_result",
            json!("28"),
            mcp_result("toolu_4", Some("{not json"), "{}"),
        ),
    ]);
    assert!(report.warnings.is_empty());
    assert_eq!(report.coverage.calls, 3);
    assert_eq!(
        report.coverage.unaudited.get(&Skip::UnreadableArguments),
        Some(&1)
    );
    assert_eq!(report.coverage.unlisted_tools.get("mcp_tool"), Some(&2));
}
