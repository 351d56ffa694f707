//! The verdict from `audit`: in a recording of both directions of a
//! JSON-RPC session, each call that carried an undeclared key is paired
//! with the server's answer — `ignored`, `rejected`, `unanswered` — as the
//! proxy pairs it live. Each recording here is of a real session through
//! the proxy, against a real server, and `audit` of it must give the very
//! verdicts the proxy logged; so must `audit` of the proxy's `--log`.

use crate::audit_support;
use crate::support;

use serde_json::{Value, json};
use support::{Session, binary, call, list_request, prerequisite, unattributed};

/// An `initialize` any 2025 server accepts.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

/// A session through the proxy, recorded as a tap on the client's side
/// would record it: every line sent, every line received, in order.
struct Recorded {
    session: Session,
    lines: Vec<String>,
}

/// How a recorded session ended: the recording, and the proxy's log.
struct Ended {
    recording: Vec<String>,
    /// The verdicts the proxy logged, without their attribution.
    logged: Vec<Value>,
    log: std::path::PathBuf,
    _log_dir: tempfile::TempDir,
}

impl Recorded {
    /// Starts the proxy in front of `server`, then opens the session and
    /// lists the tools.
    fn start(server: &[&str]) -> Recorded {
        let mut recorded = Recorded {
            session: Session::start(&["--quiet"], server),
            lines: Vec::new(),
        };
        recorded.send(INITIALIZE);
        recorded.answer("0");
        recorded.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        recorded.send(&list_request("1", None));
        recorded.answer("1");
        recorded
    }

    fn send(&mut self, line: &str) {
        self.lines.push(line.to_owned());
        self.session.send(line);
    }

    /// The server's answer to the request `id`, past any notification;
    /// every line received is recorded.
    fn answer(&mut self, id: &str) -> Value {
        let id: Value = serde_json::from_str(id).unwrap();
        loop {
            let line = self.receive();
            if line["id"] == id && line.get("method").is_none() {
                return line;
            }
        }
    }

    fn receive(&mut self) -> Value {
        let line = String::from_utf8(self.session.recv()).expect("UTF-8");
        let line = line.trim_end_matches('\n').to_owned();
        let value = serde_json::from_str(&line).expect("the server writes JSON");
        self.lines.push(line);
        value
    }

    /// Ends the session (stdin closed), recording what the server still
    /// wrote; the proxy's log is kept for `audit` to read.
    fn end(self) -> Ended {
        let log_dir = tempfile::tempdir().unwrap();
        let log = log_dir.path().join("proxy.jsonl");
        let mut recording = self.lines;
        let finished = self.session.finish();
        assert!(finished.status.success(), "{}", finished.stderr);
        std::fs::write(&log, &finished.log).unwrap();
        let rest = String::from_utf8_lossy(&finished.stdout).into_owned();
        recording.extend(rest.lines().map(str::to_owned));
        Ended {
            recording,
            logged: finished.verdicts().into_iter().map(unattributed).collect(),
            log,
            _log_dir: log_dir,
        }
    }
}

/// The verdicts `audit` prints for `recording`.
fn audited(recording: &[String]) -> Vec<Value> {
    audit_support::verdicts(&audit_support::audit(&[], &(recording.join("\n") + "\n")))
}

fn verdict(verdict: &str, tool: &str, id: &str, keys: &[&str]) -> Value {
    json!({"verdict": verdict, "tool": tool, "id": id, "unknown_keys": keys})
}

/// The recording `audit`s into the verdicts the proxy logged, and so does
/// the proxy's log itself.
fn assert_audit_agrees(ended: &Ended, expected: &[Value]) {
    assert_eq!(ended.logged, expected, "the proxy's verdicts");
    assert_eq!(audited(&ended.recording), expected, "audit of the recording");
    let log = ended.log.to_str().unwrap();
    let from_log = audit_support::verdicts(&audit_support::audit(&[log], ""));
    assert_eq!(from_log, expected, "audit of the proxy's --log");
}

#[test]
fn the_example_server_ignores_an_undeclared_key_and_audit_says_ignored() {
    let root = support::ScratchDir::seeded();
    let root = root.path().to_str().unwrap();
    let mut s = Recorded::start(&[&binary(), "example-server", "--root", root]);
    for id in ["2", "3"] {
        s.send(&call(id, "read", r#"{"path":"notes.txt","ffset":1}"#));
        assert_eq!(s.answer(id)["result"]["isError"], false);
    }
    // A call carrying only declared keys is not judged.
    s.send(&call("4", "read", r#"{"path":"notes.txt"}"#));
    s.answer("4");
    let ended = s.end();
    let ignored = [
        verdict("ignored", "read", "2", &["ffset"]),
        verdict("ignored", "read", "3", &["ffset"]),
    ];
    assert_audit_agrees(&ended, &ignored);

    // The text report counts them per pair, and in its totals.
    let recording = ended.recording.join("\n") + "\n";
    let report = audit_support::audit(&["--format", "text"], &recording).stdout;
    assert!(
        report
            .lines()
            .any(|row| row.contains("ffset") && row.ends_with("first call 2 — ignored 2")),
        "{report}"
    );
    assert_eq!(audit_support::total(&report, "calls judged"), 2);
    assert_eq!(audit_support::total(&report, "ignored"), 2);
    assert_eq!(audit_support::total(&report, "unanswered"), 0);
}

#[test]
fn a_recording_that_ends_before_the_answer_leaves_the_call_unanswered() {
    let root = support::ScratchDir::seeded();
    let root = root.path().to_str().unwrap();
    let mut s = Recorded::start(&[&binary(), "example-server", "--root", root]);
    for id in ["2", "3"] {
        s.send(&call(id, "read", r#"{"path":"notes.txt","ffset":1}"#));
        s.answer(id);
    }
    let ended = s.end();
    // Cut right after the second call: its answer was never recorded.
    let sent = ended
        .recording
        .iter()
        .position(|line| line == &call("3", "read", r#"{"path":"notes.txt","ffset":1}"#))
        .unwrap();
    assert_eq!(
        audited(&ended.recording[..=sent]),
        [
            verdict("ignored", "read", "2", &["ffset"]),
            verdict("unanswered", "read", "3", &["ffset"]),
        ]
    );
}

#[test]
fn mcp_server_time_rejects_a_call_missing_its_required_key_and_audit_says_rejected() {
    let server = prerequisite("MCP_UK_SERVER_TIME");
    let mut s = Recorded::start(&[&server, "--local-timezone", "UTC"]);
    // `time_zone` for `timezone`: the required key is missing.
    s.send(&call("2", "get_current_time", r#"{"time_zone":"Europe/Paris"}"#));
    let refused = s.answer("2");
    assert!(
        refused.get("error").is_some() || refused["result"]["isError"] == true,
        "{refused}"
    );
    let ended = s.end();
    assert_audit_agrees(
        &ended,
        // It lacked the required `timezone` too, which the verdict says.
        &[
            json!({"verdict": "rejected", "tool": "get_current_time", "id": "2",
                 "unknown_keys": ["time_zone"], "missing_required": ["timezone"]}),
        ],
    );
}

#[test]
fn a_call_the_client_cancels_is_unanswered_in_the_proxy_and_in_audit() {
    let root = support::ScratchDir::seeded();
    let root = root.path().to_str().unwrap();
    let mut s = Recorded::start(&[&binary(), "example-server", "--root", root, "--with-sleep-tool"]);
    s.send(&call("2", "sleep", r#"{"ms":2000,"hurry":true}"#));
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"took too long"}}"#);
    // The server is still there, and the cancellation was read before.
    s.send(&call("3", "read", r#"{"path":"notes.txt"}"#));
    s.answer("3");
    let ended = s.end();
    assert_audit_agrees(&ended, &[verdict("unanswered", "sleep", "2", &["hurry"])]);
}
