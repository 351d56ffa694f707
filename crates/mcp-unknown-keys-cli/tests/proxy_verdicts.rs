//! The verdict: each call that carried an undeclared key is paired with
//! the server's answer — `ignored` (it "succeeded"), `rejected`, or
//! `unanswered` — in the log and the summary, on every door, against real
//! servers.

use crate::support;

use serde_json::{Value, json};
use support::{Session, binary, call, list_request, list_response, prerequisite, read_verdicts};

/// An `initialize` any 2025 server accepts.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

/// Opens a session with a real stdio server and lists its tools.
fn handshake(s: &mut Session) {
    s.send(INITIALIZE);
    answer(s, "0");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(&list_request("1", None));
    answer(s, "1");
}

/// The server's answer to the request `id`, past any notification.
fn answer(s: &mut Session, id: &str) -> Value {
    let id: Value = serde_json::from_str(id).unwrap();
    loop {
        let line: Value = serde_json::from_slice(&s.recv()).expect("the server writes JSON");
        if line["id"] == id && line.get("method").is_none() {
            return line;
        }
    }
}

/// The verdict lines, without attribution: (verdict, tool, id, unknown keys).
fn verdicts(lines: &[Value]) -> Vec<(String, String, String, Value)> {
    lines
        .iter()
        .map(|v| {
            (
                v["verdict"].as_str().unwrap().to_owned(),
                v["tool"].as_str().unwrap().to_owned(),
                v["id"].as_str().unwrap().to_owned(),
                v["unknown_keys"].clone(),
            )
        })
        .collect()
}

fn judged(verdict: &str, tool: &str, id: &str, keys: Value) -> (String, String, String, Value) {
    (verdict.into(), tool.into(), id.into(), keys)
}

#[test]
fn mcp_server_time_rejects_a_call_missing_its_required_key() {
    let server = prerequisite("MCP_UK_SERVER_TIME");
    let mut s = Session::start(&["--quiet"], &[&server, "--local-timezone", "UTC"]);
    handshake(&mut s);
    // `time_zone` for `timezone`: the required key is missing.
    s.send(&call("2", "get_current_time", r#"{"time_zone":"Europe/Paris"}"#));
    let refused = answer(&mut s, "2");
    assert!(
        refused.get("error").is_some() || refused["result"]["isError"] == true,
        "{refused}"
    );
    let finished = s.finish();
    assert_eq!(
        verdicts(&finished.verdicts()),
        [judged("rejected", "get_current_time", "2", json!(["time_zone"]))]
    );
    let finding = &finished.logged_summary()["findings"][0];
    assert_eq!(finding["key"], "time_zone");
    assert_eq!(finding["verdicts"], json!({"rejected": 1}));
}

#[test]
fn the_example_server_ignores_an_undeclared_key_and_the_call_succeeds() {
    let root = support::ScratchDir::seeded();
    let mut s = Session::start(
        &[],
        &[
            &binary(),
            "example-server",
            "--root",
            root.path().to_str().unwrap(),
        ],
    );
    handshake(&mut s);
    for id in ["2", "3"] {
        s.send(&call(id, "read", r#"{"path":"notes.txt","ffset":1}"#));
        let read = answer(&mut s, id);
        assert_eq!(read["result"]["isError"], false, "{read}");
    }
    // A declared call is not judged.
    s.send(&call("4", "read", r#"{"path":"notes.txt"}"#));
    answer(&mut s, "4");
    let finished = s.finish();
    assert_eq!(
        verdicts(&finished.verdicts()),
        [
            judged("ignored", "read", "2", json!(["ffset"])),
            judged("ignored", "read", "3", json!(["ffset"])),
        ]
    );
    assert_eq!(
        finished.logged_summary()["findings"][0]["verdicts"],
        json!({"ignored": 2})
    );
    assert!(
        finished
            .summary_lines()
            .contains(&"    read `ffset`: 2 calls (truncated) — ignored 2"),
        "{:?}",
        finished.summary_lines()
    );
}

#[test]
fn a_server_that_never_answers_leaves_its_calls_unanswered_and_a_cancelled_call_is_too() {
    // `cat` echoes each line: the listing comes back as a response, each
    // call as a request, never as an answer.
    let mut s = Session::start(&["--quiet"], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path"])], None));
    s.echo(&call("2", "fs_read", r#"{"path":"a","ffset":1}"#));
    s.echo(&call("3", "fs_read", r#"{"path":"a","ffset":2,"limit":1}"#));
    s.echo(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    // Judged when cancelled, before the session ends.
    let cancelled = wait_for_verdicts(&s.log, 1);
    assert_eq!(
        verdicts(&cancelled),
        [judged("unanswered", "fs_read", "3", json!(["ffset", "limit"]))]
    );
    let finished = s.finish();
    assert_eq!(
        verdicts(&finished.verdicts()),
        [
            judged("unanswered", "fs_read", "3", json!(["ffset", "limit"])),
            judged("unanswered", "fs_read", "2", json!(["ffset"])),
        ]
    );
}

#[test]
fn an_answer_is_paired_by_id_value_before_or_after_its_result_and_is_error_rejects() {
    let mut s = Session::start(&["--quiet"], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("t", &["a"])], None));
    for id in ["2", "3", "4", r#""five""#] {
        s.echo(&call(id, "t", r#"{"a":1,"b":{"deep":true}}"#));
    }
    // Answers as servers write them: `id` last (TypeScript), first
    // (Python), `2.0` for `2`, a result that mentions "id" and "isError"
    // in its content, and a JSON-RPC error.
    s.echo(r#"{"result":{"content":[{"type":"text","text":"{\"id\":3,\"isError\":true}"}]},"jsonrpc":"2.0","id":2.0}"#);
    s.echo(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#);
    s.echo(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"unknown key b"}}"#);
    s.echo(r#"{"jsonrpc":"2.0","id":"five","result":{"content":[]}}"#);
    let finished = s.finish();
    assert_eq!(
        verdicts(&finished.verdicts()),
        [
            judged("ignored", "t", "2", json!(["b"])),
            judged("rejected", "t", "3", json!(["b"])),
            judged("rejected", "t", "4", json!(["b"])),
            judged("ignored", "t", "five", json!(["b"])),
        ]
    );
    assert_eq!(
        finished.logged_summary()["findings"][0]["verdicts"],
        json!({"ignored": 2, "rejected": 2})
    );
}

#[test]
fn a_nested_undeclared_key_is_judged_with_its_path() {
    let mut s = Session::start(&["--quiet"], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"create","inputSchema":{"type":"object","properties":{"entities":{"type":"array","items":{"type":"object","properties":{"name":{}}}}}}}]}}"#);
    s.echo(&call("2", "create", r#"{"entities":[{"name":"a","age":3}]}"#));
    s.echo(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
    let finished = s.finish();
    let verdict = &finished.verdicts()[0];
    assert_eq!(verdict["verdict"], "ignored");
    assert_eq!(verdict["unknown_keys"], json!([]));
    assert_eq!(verdict["unknown_paths"], json!(["entities[].age"]));
    let finding = &finished.logged_summary()["findings"][0];
    assert_eq!(
        (&finding["key"], &finding["nested"], &finding["verdicts"]),
        (&json!("entities[].age"), &json!(true), &json!({"ignored": 1}))
    );
}

/// Waits until the log holds at least `count` verdicts.
fn wait_for_verdicts(log: &std::path::Path, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + support::PATIENCE;
    loop {
        let found = read_verdicts(log);
        if found.len() >= count {
            return found;
        }
        assert!(std::time::Instant::now() < deadline, "{count} verdict(s) in time");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(feature = "remote")]
mod remote {
    use super::*;
    use support::remote::{INITIALIZE, INITIALIZED, Server, bridge};

    #[test]
    fn through_the_bridge_an_ignored_a_rejected_and_an_unanswered_call() {
        let server = Server::python(&[]);
        let mut s = bridge(&server.url(), &["--quiet"]);
        s.send(INITIALIZE);
        answer(&mut s, "0");
        s.send(INITIALIZED);
        s.send(&list_request("1", None));
        answer(&mut s, "1");
        s.send(&call("2", "echo", r#"{"text":"hi","verbose":true}"#));
        assert_eq!(answer(&mut s, "2")["result"]["isError"], false);
        // `b` is no integer: the SDK refuses the call.
        s.send(&call("3", "add", r#"{"a":1,"b":"two","c":3}"#));
        answer(&mut s, "3");
        // `slow` answers only once released, which never happens here.
        s.send(&call("4", "slow", r#"{"hurry":true}"#));
        wait_for_verdicts(&s.log, 2);
        // The third warning says the bridge has read and audited call 4, so
        // it awaits the answer the end of the session judges unanswered.
        s.wait_for_warnings(3);
        let finished = stop(s);
        assert_eq!(
            verdicts(&finished),
            [
                judged("ignored", "echo", "2", json!(["verbose"])),
                judged("rejected", "add", "3", json!(["c"])),
                judged("unanswered", "slow", "4", json!(["hurry"])),
            ]
        );
    }

    #[test]
    fn a_call_the_bridge_answers_itself_is_unanswered_by_the_server() {
        let server = Server::python(&[]);
        let mut s = bridge(&server.url(), &["--quiet"]);
        s.send(INITIALIZE);
        answer(&mut s, "0");
        s.send(INITIALIZED);
        s.send(&list_request("1", None));
        answer(&mut s, "1");
        drop(server);
        s.send(&call("2", "echo", r#"{"text":"hi","verbose":true}"#));
        let error = answer(&mut s, "2");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("cannot reach"),
            "{error}"
        );
        let finished = s.finish();
        assert_eq!(
            verdicts(&finished.verdicts()),
            [judged("unanswered", "echo", "2", json!(["verbose"]))]
        );
    }

    /// SIGTERM to the bridge, which then ends the session; its verdicts.
    fn stop(s: Session) -> Vec<Value> {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &s.child.id().to_string()])
            .status();
        let finished = s.finish();
        assert!(finished.status.success(), "{}", finished.stderr);
        finished.verdicts()
    }
}
