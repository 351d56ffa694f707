//! What the proxy learns and audits, message by message.
//!
//! The server here is `cat`: it echoes every line, so the test plays both
//! sides. A line the test sends reaches the proxy from the client, and its
//! echo reaches the proxy from the server; a `tools/list` response the test
//! writes is, on its way back, the server's answer. Once a line's echo is
//! read, the proxy has seen it in both directions.

use crate::support;

use serde_json::Value;
use support::{Finished, Session, call, list_request, list_response, summary, unattributed};

fn cat(options: &[&str]) -> Session {
    Session::start(options, &["cat"])
}

fn says(tool: &str, keys: &[&str], id: &str) -> (String, Vec<String>, String) {
    (
        tool.into(),
        keys.iter().map(|k| k.to_string()).collect(),
        id.into(),
    )
}

fn done(s: Session) -> Finished {
    let finished = s.finish();
    assert!(finished.status.success(), "{}", finished.stderr);
    finished
}

const FS_READ: &[(&str, &[&str])] = &[("fs_read", &["path", "offset"])];

#[test]
fn a_call_is_audited_against_the_listing_and_each_pair_is_said_once() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("2", "fs_read", r#"{"path":"a","ffset":12,"the rest":"…"}"#));
    s.echo(&call("3", "fs_read", r#"{"path":"a","ffset":13}"#));
    s.echo(&call("4", "fs_read", r#"{"path":"a","offset":1,"reason":"why"}"#));
    let finished = done(s);
    assert_eq!(
        summary(&finished.warnings),
        [says("fs_read", &["ffset", "the rest"], "2")]
    );
    assert_eq!(
        finished.warnings[0]["declared_keys"],
        serde_json::json!(["offset", "path"])
    );
    assert_eq!(
        finished.warning_lines(),
        [
            "mcp-unknown-keys: fs_read was called with undeclared argument(s) ffset, the rest; it declares offset, path \
             — ffset → offset? (truncated), the rest (fragment); offset was not sent"
        ]
    );
}

#[test]
fn on_exit_a_summary_counts_every_call_that_carried_each_key_with_its_cause() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("2", "fs_read", r#"{"path":"a","ffset":12}"#));
    s.echo(&call(
        "3",
        "fs_read",
        r#"{"path":"a","ffset":13,"recursive":true}"#,
    ));
    let finished = done(s);
    assert_eq!(finished.warning_lines().len(), 2);
    assert_eq!(
        finished.summary_lines(),
        [
            "mcp-unknown-keys summary: 2 call(s): all audited",
            "  2 undeclared key(s) on 1 tool(s), with the calls that carried each:",
            // `cat` echoes each call back and answers none.
            "    fs_read `ffset`: 2 calls (truncated) — unanswered 2",
            "    fs_read `recursive`: 1 call (invented) — unanswered 1",
        ]
    );
    let logged = finished.logged_summary();
    assert_eq!(
        logged,
        serde_json::json!({
            "coverage": {"calls": 2, "audited": 2, "unaudited": {}, "unlisted_tools": {}},
            "findings": [
                {"tool": "fs_read", "key": "ffset", "calls": 2, "first_id": "2", "cause": "truncated", "verdicts": {"unanswered": 2}},
                {"tool": "fs_read", "key": "recursive", "calls": 1, "first_id": "3", "cause": "invented", "verdicts": {"unanswered": 1}},
            ],
            "declared_keys": {"fs_read": ["offset", "path"]},
        })
    );
}

#[test]
fn a_quiet_session_with_nothing_found_logs_an_empty_summary_and_says_nothing() {
    let mut s = cat(&["--quiet"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("2", "fs_read", r#"{"path":"a"}"#));
    let finished = done(s);
    assert_eq!(finished.stderr, "");
    assert_eq!(finished.logged_summary()["findings"], serde_json::json!([]));
    assert_eq!(finished.logged_summary()["coverage"]["audited"], 1);
}

#[test]
fn a_call_before_any_listing_is_not_audited() {
    let mut s = cat(&[]);
    s.echo(&call(r#""early""#, "fs_read", r#"{"path":"a","ffset":1}"#));
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call(r#""late""#, "fs_read", r#"{"path":"a","ffset":1}"#));
    assert_eq!(summary(&done(s).warnings), [says("fs_read", &["ffset"], "late")]);
}

#[test]
fn ids_are_strings_or_numbers_and_responses_may_come_in_any_order() {
    let mut s = cat(&[]);
    // Two listings in flight; a call and a server request in between.
    s.echo(&list_request(r#""list-a""#, None));
    s.echo(&list_request("7", None));
    s.echo(&call("8", "early", r#"{"x":1}"#));
    // A request from the server reusing a pending id is not a response.
    s.echo(r#"{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{"tools":[]}}"#);
    s.echo(&list_response("7", &[("first", &["a"])], None));
    s.echo(&call("9", "first", r#"{"a":1,"b":2}"#));
    s.echo(&list_response(r#""list-a""#, &[("second", &["a"])], None));
    s.echo(&call(r#""call-x""#, "second", r#"{"a":1,"c":2}"#));
    s.echo(&call("10", "first", r#"{"a":1,"d":2}"#));
    let finished = done(s);
    assert_eq!(
        summary(&finished.warnings),
        [says("first", &["b"], "9"), says("second", &["c"], "call-x")]
    );
}

#[test]
fn each_page_of_a_listing_is_audited_against_as_it_arrives_and_a_first_page_starts_afresh() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("a", &["x"])], Some("page-2")));
    // The first page alone is a catalogue: a client may fetch no further.
    s.echo(&call("2", "a", r#"{"k1":1}"#));
    s.echo(&list_request("3", Some("page-2")));
    s.echo(&list_response("3", &[("b", &["y"])], None));
    s.echo(&call("4", "a", r#"{"k2":1}"#));
    s.echo(&call("5", "b", r#"{"k3":1}"#));
    // A new listing starts a new catalogue from its first page: `a` is not
    // in it.
    s.echo(&list_request("6", None));
    s.echo(&list_response("6", &[("b", &["y"])], Some("next")));
    s.echo(&call("7", "a", r#"{"k4":1}"#));
    s.echo(&list_request("8", Some("next")));
    s.echo(&list_response("8", &[("c", &["z"])], None));
    s.echo(&call("9", "a", r#"{"k5":1}"#));
    s.echo(&call("10", "c", r#"{"k6":1}"#));
    let finished = done(s);
    assert_eq!(
        summary(&finished.warnings),
        [
            says("a", &["k1"], "2"),
            says("a", &["k2"], "4"),
            says("b", &["k3"], "5"),
            says("c", &["k6"], "10"),
        ]
    );
    let coverage = &finished.logged_summary()["coverage"];
    assert_eq!(coverage["unaudited"], serde_json::json!({"unlisted_tool": 2}));
}

#[test]
fn list_changed_drops_the_catalogue_until_the_next_listing() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("2", "fs_read", r#"{"k1":1}"#));
    s.echo(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    s.echo(&call("3", "fs_read", r#"{"k2":1}"#));
    s.echo(&list_request("4", None));
    s.echo(&list_response("4", FS_READ, None));
    s.echo(&call("5", "fs_read", r#"{"k3":1}"#));
    assert_eq!(
        summary(&done(s).warnings),
        [says("fs_read", &["k1"], "2"), says("fs_read", &["k3"], "5")]
    );
}

#[test]
fn the_first_listing_answered_after_list_changed_is_the_next_listing() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    s.echo(&call("2", "fs_read", r#"{"k1":1}"#));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("3", "fs_read", r#"{"k2":1}"#));
    assert_eq!(summary(&done(s).warnings), [says("fs_read", &["k2"], "3")]);
}

#[test]
fn a_failed_listing_keeps_the_previous_catalogue() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&list_request("2", None));
    s.echo(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}"#);
    s.echo(&call("3", "fs_read", r#"{"k1":1}"#));
    assert_eq!(summary(&done(s).warnings), [says("fs_read", &["k1"], "3")]);
}

#[test]
fn lines_the_tap_cannot_read_pass_untouched_and_do_not_disturb_it() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    let unreadable: [&[u8]; 6] = [
        b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}\n",
        b"this is not JSON at all, tools/call\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/frobnicate\",\"params\":{\"name\":\"fs_read\",\"arguments\":{\"k\":1}}}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"fs_read\",\"arguments\":\"not an object\"}}\n",
        b"\r\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"fs_read\",\"arguments\":{\"path\":\"\xc3\xa9\",\"k\xff\":1}}}\n",
    ];
    for line in unreadable {
        s.send_bytes(line);
        assert_eq!(s.recv(), line);
    }
    s.echo(&call("7", "fs_read", r#"{"path":"a","after":1}"#));
    assert_eq!(summary(&done(s).warnings), [says("fs_read", &["after"], "7")]);
}

#[test]
fn a_ten_mib_call_passes_unchanged_and_is_audited() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    let big = call(
        "2",
        "fs_read",
        &format!(r#"{{"path":"{}","huge":true}}"#, "x".repeat(10 << 20)),
    );
    s.echo(&big);
    assert_eq!(summary(&done(s).warnings), [says("fs_read", &["huge"], "2")]);
}

#[test]
fn allowed_keys_are_tolerated_and_quiet_silences_stderr_but_not_the_log() {
    let mut s = cat(&["--allow", "toolCallId", "--allow", "_auth", "--quiet"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call(
        "2",
        "fs_read",
        r#"{"path":"a","toolCallId":"x","_auth":1,"ffset":2}"#,
    ));
    let finished = done(s);
    assert_eq!(summary(&finished.warnings), [says("fs_read", &["ffset"], "2")]);
    assert!(finished.warning_lines().is_empty(), "{}", finished.stderr);
}

#[test]
fn warnings_name_keys_never_values() {
    let mut s = cat(&[]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call(
        "2",
        "fs_read",
        r#"{"path":"SECRET-PATH","token":"SECRET-VALUE"}"#,
    ));
    let finished = done(s);
    let log = &finished.log;
    assert!(log.contains("token") && !log.contains("SECRET"), "{log}");
    assert!(finished.stderr.contains("token") && !finished.stderr.contains("SECRET"));
}

/// The proxy and `audit` share one auditor's rules: a session the proxy
/// relayed, recorded and audited offline, raises the very warnings the proxy
/// logged, and so does the proxy's log.
#[test]
fn a_recorded_session_audits_offline_into_the_warnings_the_proxy_logged() {
    let tools: &[(&str, &[&str])] = &[("fs_read", &["path", "offset"]), ("task", &["prompt"])];
    let traffic = [
        call("1", "fs_read", r#"{"path":"a","early":1}"#),
        list_request("2", None),
        list_response("2", &tools[..1], Some("page-2")),
        call("3", "task", r#"{"prompt":"Investigate the","nvestigate":"x"}"#),
        list_request("4", Some("page-2")),
        list_response("4", &tools[1..], None),
        call("5", "fs_read", r#"{"path":"a","ffset":12,"the rest":"…"}"#),
        call(
            "6",
            "task",
            r#"{"prompt":"Investigate the","nvestigate":"x","reason":"why"}"#,
        ),
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
        call("7", "fs_read", r#"{"path":"a","stale":1}"#),
        list_request("8", None),
        list_response("8", tools, None),
        call("9", "fs_read", r#"{"path":"a","offest":1}"#),
        // A first page left open, then a listing from the start.
        list_request("10", None),
        list_response("10", &tools[1..], Some("more")),
        list_request("11", None),
        list_response("11", &tools[..1], None),
        call("12", "task", r#"{"prompt":"x","unlisted":1}"#),
        call("13", "fs_read", r#"{"path":"a","k13":1}"#),
    ];
    let mut s = cat(&[]);
    for line in &traffic {
        s.echo(line);
    }
    let finished = done(s);
    // The warnings, without the attribution the log adds to each line.
    let live: Vec<Value> = finished.warnings.iter().cloned().map(unattributed).collect();
    assert_eq!(live.len(), 4, "{live:?}");
    // The log's lines as written: warnings and verdicts, attributed.
    let logged: Vec<&str> = finished
        .log
        .lines()
        .filter(|l| !l.starts_with(r#"{"summary""#))
        .collect();
    assert_eq!(logged.len(), 4 + 4, "a verdict per call flagged: {logged:?}");
    // The same, attribution aside: the warnings, then the calls `cat` never
    // answered, judged when the session (or the recording) ended.
    let said: Vec<Value> = logged
        .iter()
        .map(|line| unattributed(serde_json::from_str(line).unwrap()))
        .collect();
    assert_eq!(said[..4], live);

    let recording = traffic.join("\n") + "\n";
    assert_eq!(
        audit_offline(&recording),
        said,
        "the recording audits into the very lines logged"
    );
    // The log audits again into the same warnings, its diagnosis kept as
    // logged (a log holds no values to find a fragment in).
    let mut log = logged.join("\n") + "\n";
    assert_eq!(audit_offline(&log), said);
    let summary = finished.log.lines().last().unwrap();
    assert!(
        summary.starts_with(r#"{"summary":"#),
        "the summary line ends the log"
    );
    log += summary;
    assert_eq!(audit_offline(&(log + "\n")), said);
}

fn audit_offline(input: &str) -> Vec<Value> {
    let mut audit = std::process::Command::new(support::binary())
        .arg("audit")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut audit.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let output = audit.wait_with_output().unwrap();
    assert!(output.status.success());
    // The warnings and verdicts, without the coverage line `audit` ends with.
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with(r#"{"coverage""#))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
