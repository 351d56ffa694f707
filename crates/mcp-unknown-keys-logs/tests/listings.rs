//! Listings in recorded JSON-RPC traffic, as the proxy's session takes
//! them: each input is one session, so a listing is assembled within one
//! input, and an input holding a server's side alone takes its listing
//! responses as pages all the same.

use mcp_unknown_keys_logs::{Audit, Input, Options, Report};
use serde_json::{Value, json};

/// Audits each input in turn.
fn audit(inputs: &[&[Value]]) -> Report {
    let mut audit = Audit::new(&Options::default()).unwrap();
    for lines in inputs {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let input = Input::from_reader("recording", std::io::Cursor::new(text.into_bytes())).unwrap();
        audit.read(input).unwrap();
    }
    audit.finish()
}

/// A `tools/list` response listing `tool`, declaring `path`.
fn page(id: u64, tool: &str, next: Option<&str>) -> Value {
    let mut result = json!({"tools": [{"name": tool, "inputSchema": {"properties": {"path": {}}}}]});
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"path": "a", "ffset": 1}}})
}

fn warned(report: &Report) -> Vec<(&str, &[String])> {
    report
        .warnings
        .iter()
        .map(|warning| (warning.tool.as_str(), warning.unknown_keys.as_slice()))
        .collect()
}

#[test]
fn a_server_s_side_alone_assembles_its_listing_from_responses_answering_no_request() {
    let report = audit(&[&[
        page(1, "read", Some("2")),
        page(2, "write", None),
        call(3, "read"),
        call(4, "write"),
    ]]);
    let ffset = ["ffset".to_owned()];
    assert_eq!(warned(&report), [("read", &ffset[..]), ("write", &ffset[..])]);
    assert_eq!((report.coverage.calls, report.coverage.audited), (2, 2));
}

#[test]
fn once_a_request_is_recorded_only_its_answer_is_a_listing() {
    let report = audit(&[&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        page(1, "read", None),
        // Answers no request: another call's result shaped like a listing.
        page(2, "write", None),
        call(3, "write"),
    ]]);
    assert!(report.warnings.is_empty());
    assert_eq!(report.coverage.unlisted_tools.get("write"), Some(&1));
}

#[test]
fn a_listing_open_when_an_input_ends_is_not_continued_by_the_next() {
    // The first input's listing is audited against as far as it came; the
    // next input is another session, whose first page opens a listing of
    // its own, as a proxy's next session would.
    let report = audit(&[
        &[page(1, "read", Some("2")), call(2, "read")],
        &[page(1, "write", None), call(2, "read"), call(3, "write")],
    ]);
    let ffset = ["ffset".to_owned()];
    assert_eq!(warned(&report), [("read", &ffset[..]), ("write", &ffset[..])]);
    assert_eq!(report.coverage.unlisted_tools.get("read"), Some(&1));
    assert_eq!((report.coverage.calls, report.coverage.audited), (3, 2));
}
