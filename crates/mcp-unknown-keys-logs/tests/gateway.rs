//! An MCP gateway's log (GitHub Agentic Workflows' `rpc-messages.jsonl`):
//! each server's listing is its catalogue, each call is audited against its
//! own server's, and each response judges the request of its server it
//! answers; records the gateway could not keep as JSON are read again.

use mcp_unknown_keys::audit::{Judged, Skip, Verdict};
use mcp_unknown_keys_logs::{Audit, Input, Observer, Options, Report};
use serde_json::{Value, json};

/// The verdicts an observer was told, as `(tool, verdict)`.
#[derive(Default)]
struct Verdicts(Vec<(String, Verdict)>);

impl Observer for Verdicts {
    fn verdict(&mut self, judged: &Judged) {
        self.0.push((judged.tool.clone(), judged.verdict));
    }
}

fn audit(lines: &[Value]) -> (Vec<(String, Verdict)>, Report) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut audit = Audit::with_observer(&Options::default(), Verdicts::default()).unwrap();
    audit
        .read(Input::from_reader("rpc-messages.jsonl", std::io::Cursor::new(text)).unwrap())
        .unwrap();
    let told = std::mem::take(&mut audit.observer_mut().0);
    (told, audit.finish())
}

/// A legacy record (`type`), or a current one (`event`, `_schema`).
fn record(v2: bool, request: bool, server: &str, payload: Value) -> Value {
    let direction = if request { "OUT" } else { "IN" };
    let mut record = if v2 {
        let event = if request { "rpc_request" } else { "rpc_response" };
        json!({"timestamp": "2026-07-19T10:00:00.101Z", "event": event, "_schema": "rpc-message/v2"})
    } else {
        let kind = if request { "REQUEST" } else { "RESPONSE" };
        json!({"timestamp": "2026-02-18T01:28:44.940936559Z", "type": kind})
    };
    record["direction"] = json!(direction);
    record["server_id"] = json!(server);
    if let Some(method) = payload.get("method") {
        record["method"] = method.clone();
    }
    record["payload"] = payload;
    record
}

/// `server` lists one tool, `read`, declaring `declared`.
fn listing(v2: bool, server: &str, declared: &[&str]) -> [Value; 2] {
    let properties: serde_json::Map<String, Value> =
        declared.iter().map(|key| (key.to_string(), json!({}))).collect();
    [
        record(
            v2,
            true,
            server,
            json!({"jsonrpc": "2.0", "method": "tools/list", "params": null}),
        ),
        record(
            v2,
            false,
            server,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "read", "inputSchema": {"type": "object", "properties": properties}}]}}),
        ),
    ]
}

fn call(v2: bool, server: &str, arguments: Value) -> Value {
    record(
        v2,
        true,
        server,
        json!({"jsonrpc": "2.0", "method": "tools/call",
        "params": {"arguments": arguments, "name": "read"}}),
    )
}

fn answer(v2: bool, server: &str, is_error: bool) -> Value {
    record(
        v2,
        false,
        server,
        json!({"jsonrpc": "2.0", "id": 1,
        "result": {"content": [{"type": "text", "text": "…"}], "isError": is_error}}),
    )
}

#[test]
fn each_server_s_calls_meet_its_own_listing_and_each_answer_its_own_request() {
    for v2 in [false, true] {
        let [fs_list, fs_listed] = listing(v2, "fs", &["path"]);
        let [git_list, git_listed] = listing(v2, "git", &["rev"]);
        // The two servers' calls interleave: each response answers the
        // oldest request of its own server, whatever id it carries.
        let (told, report) = audit(&[
            fs_list,
            git_list,
            git_listed,
            fs_listed,
            call(v2, "fs", json!({"path": "a", "rev": "x"})),
            call(v2, "git", json!({"rev": "x", "path": "a"})),
            answer(v2, "git", true),
            answer(v2, "fs", false),
            call(v2, "fs", json!({"path": "b"})),
            answer(v2, "fs", false),
        ]);
        let warned: Vec<(&str, &[String])> = report
            .warnings
            .iter()
            .map(|warning| (warning.tool.as_str(), &warning.unknown_keys[..]))
            .collect();
        assert_eq!(
            warned,
            [
                ("mcp__fs__read", &["rev".to_owned()][..]),
                ("mcp__git__read", &["path".to_owned()][..])
            ],
            "v2: {v2}"
        );
        assert_eq!(
            told,
            [
                ("mcp__git__read".to_owned(), Verdict::Rejected),
                ("mcp__fs__read".to_owned(), Verdict::Ignored)
            ]
        );
        assert_eq!((report.coverage.calls, report.coverage.audited), (3, 3));
    }
}

#[test]
fn a_member_the_gateway_redacted_into_no_json_is_read_again_with_its_key() {
    let [list, listed] = listing(true, "gh", &["owner"]);
    let redacted = json!({"timestamp": "2026-07-19T10:00:05.002Z", "event": "rpc_request",
        "_schema": "rpc-message/v2", "direction": "OUT", "server_id": "gh", "method": "tools/call",
        "payload": {"_error": "invalid JSON",
            "_raw": r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"key"=[REDACTED],"owner":"o"},"name":"read"}}"#}});
    let (_, report) = audit(&[list, listed, redacted]);
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.warnings[0].unknown_keys, ["key"]);
}

#[test]
fn a_call_whose_answer_the_gateway_never_got_is_unanswered() {
    let [list, listed] = listing(true, "gh", &["owner"]);
    let failed = json!({"timestamp": "2026-07-19T10:00:12.000Z", "event": "rpc_response",
        "_schema": "rpc-message/v2", "direction": "IN", "server_id": "gh",
        "error": "context deadline exceeded", "payload": {"_error": "invalid JSON", "_raw": ""}});
    let (told, _) = audit(&[
        list,
        listed,
        call(true, "gh", json!({"owner": "o", "x": 1})),
        failed,
    ]);
    assert_eq!(told, [("mcp__gh__read".to_owned(), Verdict::Unanswered)]);
}

#[test]
fn a_server_the_log_never_listed_has_no_catalogue_of_its_own() {
    let [list, listed] = listing(false, "fs", &["path"]);
    let (_, report) = audit(&[list, listed, call(false, "web", json!({"path": "a"}))]);
    assert!(report.warnings.is_empty());
    assert_eq!(report.coverage.unaudited.get(&Skip::UnlistedTool), Some(&1));
    assert_eq!(report.coverage.unlisted_tools.get("mcp__web__read"), Some(&1));
}

#[test]
fn odd_gateway_records_are_counted_never_a_crash() {
    let odd = [
        json!({"type": "REQUEST", "server_id": "s", "payload": "text"}),
        json!({"type": "REQUEST", "server_id": 5, "payload": {"method": "tools/call"}}),
        json!({"type": "RESPONSE", "server_id": "s", "payload": []}),
        json!({"event": "rpc_request", "server_id": "s", "method": "tools/call", "payload": {"_error": "invalid JSON", "_raw": "{\"params\":"}}),
        json!({"event": "difc_filtered", "_schema": "difc-filtered/v2", "server_id": "s", "tool_name": "read", "payload": null}),
        json!({"event": "rpc_response", "server_id": "s", "payload": {"id": {"deep": [1]}, "result": {"tools": "none"}}}),
        json!({"type": "RESPONSE", "server_id": "nobody", "payload": {"jsonrpc": "2.0", "id": 1, "result": {}}}),
    ];
    let (told, report) = audit(&odd);
    assert!(told.is_empty());
    assert_eq!(report.lines.read, 7);
    // The unreadable call is counted, under no name.
    assert_eq!(report.coverage.calls, 1);
    assert_eq!(report.coverage.unlisted_tools.get("mcp__s__"), Some(&1));
}

#[test]
fn a_log_naming_more_servers_than_are_followed_stays_bounded() {
    let mut lines = Vec::new();
    for n in 0..1_100 {
        let server = format!("s{n}");
        lines.extend(listing(true, &server, &["path"]));
        lines.push(call(true, &server, json!({"path": "a", "x": 1})));
    }
    let (told, report) = audit(&lines);
    assert!(told.len() <= 1_000 + 1);
    assert_eq!(report.coverage.calls, 1_100);
    // The servers past the bound have no catalogue: their calls are unlisted.
    assert_eq!(report.coverage.audited, 1_000);
}
