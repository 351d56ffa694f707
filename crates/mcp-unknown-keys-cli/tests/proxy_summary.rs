//! The summary on exit: it opens with the coverage, names the tools no
//! listing had, caps what it lists on stderr, and costs what was found, not
//! what was found times the catalogue.

use crate::support;

use support::{Session, call, list_request, list_response};

#[test]
fn the_summary_opens_with_the_coverage_and_names_unlisted_tools() {
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&call("1", "early", r#"{"a":1}"#));
    s.echo(&list_request("2", None));
    s.echo(&list_response("2", &[("fs_read", &["path"])], None));
    s.echo(&call("3", "mcp__fs__read", r#"{"path":"a"}"#));
    s.echo(&call("4", "mcp__fs__read", r#"{"path":"a"}"#));
    s.echo(&call("5", "fs_read", r#""not an object""#));
    s.echo(&call("6", "fs_read", r#"{"path":"a","ffset":1}"#));
    let finished = s.finish();
    assert_eq!(
        finished.summary_lines(),
        [
            "mcp-unknown-keys summary: 5 call(s): 1 audited, 4 unaudited (1 no_catalogue, 2 unlisted_tool, 1 unreadable_arguments)",
            "  not in any listing: early (1), mcp__fs__read (2)",
            "  1 undeclared key(s) on 1 tool(s), with the calls that carried each:",
            // `cat` echoes the call back and answers nothing.
            "    fs_read `ffset`: 1 call (invented) — unanswered 1",
        ]
    );
    assert_eq!(
        finished.logged_summary()["coverage"],
        serde_json::json!({
            "calls": 5,
            "audited": 1,
            "unaudited": {"no_catalogue": 1, "unlisted_tool": 2, "unreadable_arguments": 1},
            "unlisted_tools": {"early": 1, "mcp__fs__read": 2},
        })
    );
}

#[test]
fn declared_keys_are_summarised_once_per_tool_however_many_keys_were_found() {
    // 3,000 declared properties and 1,000 undeclared keys: a summary that
    // repeated the declaration per finding would run to 50 MB.
    let declared: Vec<String> = (0..3_000).map(|n| format!("property_{n:05}")).collect();
    let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
    let undeclared: Vec<String> = (0..1_000).map(|n| format!(r#""undeclared_{n}":{n}"#)).collect();
    let mut s = Session::start(&["--quiet"], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("big", &declared)], None));
    s.echo(&call("2", "big", &format!("{{{}}}", undeclared.join(","))));
    s.wait_for_warnings(1);
    let finished = s.finish();
    let summary_line = finished.log.lines().last().unwrap();
    assert!(
        summary_line.len() < 200_000,
        "the summary line is {} bytes",
        summary_line.len()
    );
    let summary = finished.logged_summary();
    assert_eq!(summary["findings"].as_array().unwrap().len(), 1_000);
    assert_eq!(summary["declared_keys"]["big"].as_array().unwrap().len(), 3_000);
    assert!(summary["findings"][0].get("declared_keys").is_none());
}

#[test]
fn the_stderr_summary_lists_a_bounded_number_of_findings() {
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path"])], None));
    let keys: Vec<String> = (0..120).map(|n| format!(r#""k{n:03}":1"#)).collect();
    s.echo(&call("2", "fs_read", &format!("{{{}}}", keys.join(","))));
    let finished = s.finish();
    let lines = finished.summary_lines();
    assert_eq!(lines.len(), 2 + 50 + 1, "{lines:#?}");
    assert_eq!(lines[2], "    fs_read `k000`: 1 call (invented) — unanswered 1");
    assert_eq!(lines.last().unwrap(), &"    … and 70 more (the log has them all)");
    assert_eq!(
        finished.logged_summary()["findings"].as_array().unwrap().len(),
        120
    );
}
