//! What the proxy learns from listings: page by page as they arrive, and
//! every tool it can read even when one cannot be.

use crate::support;

use std::io::{BufRead, BufReader, Write};

use support::{Session, call, list_request, proxy_command, summary, wait_with_patience};

#[test]
fn a_client_that_fetches_only_the_first_page_has_its_calls_audited() {
    // The example server lists two tools per page; this client reads one
    // page and calls a tool on it.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut proxy = proxy_command(
        &["--log", log.to_str().unwrap(), "--quiet"],
        &[support::binary().as_str(), "example-server", "--page-size", "2"],
    )
    .spawn()
    .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
    let mut answer = String::new();
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pages","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &list_request("1", None),
        &call("2", "read", r#"{"path":"notes.txt","ffset":1}"#),
    ] {
        writeln!(stdin, "{line}").unwrap();
        if !line.contains("notifications/") {
            answer.clear();
            stdout.read_line(&mut answer).unwrap();
        }
        if line.contains("tools/list") {
            assert!(answer.contains("nextCursor"), "a first page: {answer}");
        }
    }
    drop(stdin);
    assert!(wait_with_patience(&mut proxy).success());
    let warnings = support::read_warnings(&log);
    assert_eq!(summary(&warnings).len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["unknown_keys"], serde_json::json!(["ffset"]));
}

#[test]
fn a_tool_whose_schema_nests_too_deep_is_listed_declaring_nothing_and_named_once() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let listing = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"deep","inputSchema":{{"properties":{{"x":{{"enum":{deep}}}}}}}}},{{"name":"fs_read","inputSchema":{{"type":"object","properties":{{"path":{{}}}}}}}}]}}}}"#
    );
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&listing);
    s.echo(&list_request("2", None));
    s.echo(&listing.replace(r#""id":1"#, r#""id":2"#));
    s.echo(&call("3", "fs_read", r#"{"path":"a","ffset":1}"#));
    s.echo(&call("4", "deep", r#"{"x":1,"y":2}"#));
    let finished = s.finish();
    assert_eq!(summary(&finished.warnings).len(), 1, "{:?}", finished.warnings);
    assert_eq!(finished.warnings[0]["tool"], "fs_read");
    let notices: Vec<&str> = finished
        .stderr
        .lines()
        .filter(|l| l.contains("nests too deep"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", finished.stderr);
    assert!(notices[0].contains("deep"), "{}", notices[0]);
    let coverage = &finished.logged_summary()["coverage"];
    // Listed by the server, so never an unlisted tool.
    assert_eq!(coverage["unaudited"]["declares_nothing"], 1);
    assert_eq!(coverage["unaudited"].get("unlisted_tool"), None);
}
