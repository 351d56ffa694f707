//! `proxy --url URL`: stdio to the host, streamable HTTP to the server,
//! against real servers on loopback — the Python SDK's (both protocol
//! eras, sessions, the GET stream, resumable streams), and
//! `@modelcontextprotocol/server-everything` — and driven by the Python
//! SDK's stdio client or line by line.

#![cfg(feature = "remote")]

use crate::support;

use serde_json::{Value, json};
use support::remote::{
    self, Certificates, INITIALIZE, INITIALIZED, MODERN, Server, bridge, modern_meta, post,
};
use support::{Session, block_on, read_warnings, summary};

/// The Python SDK's stdio client, through the bridge, in `mode`.
fn sdk_through_bridge(server: &Server, mode: &str, calls: Value) -> (Value, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("warnings.jsonl");
    let command = json!([
        remote::proxy_binary(),
        "proxy",
        "--log",
        log,
        "--url",
        server.url()
    ]);
    let report = remote::sdk_client(&json!({"stdio": command, "mode": mode, "calls": calls}));
    (report, read_warnings(&log))
}

fn texts(report: &Value) -> Vec<(bool, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["is_error"].as_bool().unwrap(),
                r["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_sdk_client_works_through_the_bridge_in_both_eras_and_an_undeclared_key_is_said_once() {
    let server = Server::python(&[]);
    let calls = json!([
        {"name": "echo", "arguments": {"text": "hi", "verbose": true}},
        {"name": "echo", "arguments": {"text": "again", "verbose": false}},
        // Its region travels in Mcp-Param-Region (base64, not being ASCII),
        // which the server checks against the body in the 2026-07-28 era.
        {"name": "regional", "arguments": {"region": "Zürich", "query": "q"}},
    ]);
    for (mode, version) in [("legacy", "2025-11-25"), (MODERN, MODERN)] {
        let (report, warnings) = sdk_through_bridge(&server, mode, calls.clone());
        assert_eq!(report["version"], version);
        assert!(report["tools"].as_array().unwrap().contains(&json!("regional")));
        assert_eq!(
            texts(&report),
            [
                (false, "hi".into()),
                (false, "again".into()),
                (false, "Zürich: q".into())
            ],
            "{mode}"
        );
        let said: Vec<(String, Vec<String>)> =
            summary(&warnings).into_iter().map(|(t, k, _)| (t, k)).collect();
        assert_eq!(said, [("echo".into(), vec!["verbose".into()])], "{mode}");
    }
}

#[test]
fn a_dual_era_client_falls_back_to_initialize_with_server_everything() {
    let server = Server::everything();
    let calls = json!([{"name": "echo", "arguments": {"message": "hi", "loud": true}}]);
    let (report, warnings) = sdk_through_bridge(&server, "auto", calls);
    assert_eq!(report["version"], "2025-11-25");
    assert_eq!(texts(&report), [(false, "Echo: hi".into())]);
    assert_eq!(summary(&warnings)[0].1, ["loud"]);
}

/// Sends each line through the bridge and directly, and checks every
/// message the server sent back arrives as the very same bytes.
#[test]
fn every_message_arrives_byte_for_byte_as_the_server_sent_it() {
    let server = Server::python(&[]);
    let meta = modern_meta();
    let legacy = [
        INITIALIZE.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":"é","method":"tools/call","params":{"name":"echo","arguments":{"text":"\u2028 \"quoted\" \\n"}}}"#.to_owned(),
    ];
    let modern = [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"ü"}},{meta}}}}}"#
        ),
    ];
    for (era, lines) in [("legacy", &legacy[..]), ("modern", &modern[..])] {
        let direct = block_on(direct_messages(&server.url(), lines, era == "legacy"));
        let mut s = bridge(&server.url(), &[]);
        for (line, expected) in lines.iter().zip(&direct) {
            s.send(line);
            if line == INITIALIZE {
                let answer = s.recv();
                assert_eq!(&answer[..answer.len() - 1], &expected[..]);
                s.send(INITIALIZED);
                continue;
            }
            let answer = s.recv();
            assert_eq!(
                String::from_utf8_lossy(&answer[..answer.len() - 1]),
                String::from_utf8_lossy(expected),
                "{era}: {line}"
            );
        }
        assert!(s.finish().status.success());
    }
}

/// The messages answering `lines`, each read directly from the server.
async fn direct_messages(url: &str, lines: &[String], legacy: bool) -> Vec<Vec<u8>> {
    let mut session: Vec<(&str, String)> = Vec::new();
    let mut answers = Vec::new();
    for line in lines {
        let mut headers = session.clone();
        if !legacy {
            headers.push(("mcp-protocol-version", MODERN.to_owned()));
            headers.extend(modern_routing(line));
        }
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let answer = post(url, &headers, line).await;
        assert_eq!(answer.status, 200, "{line}");
        if legacy && session.is_empty() {
            let id = answer.headers["mcp-session-id"].to_str().unwrap().to_owned();
            session = vec![
                ("mcp-session-id", id),
                ("mcp-protocol-version", "2025-11-25".to_owned()),
            ];
            let headers: Vec<(&str, &str)> = session.iter().map(|(n, v)| (*n, v.as_str())).collect();
            post(url, &headers, INITIALIZED).await;
        }
        answers.push(answer.messages.last().expect("an answer").clone());
    }
    answers
}

/// `Mcp-Method` and `Mcp-Name` of a modern line, as a client sets them.
fn modern_routing(line: &str) -> Vec<(&'static str, String)> {
    let message: Value = serde_json::from_str(line).unwrap();
    if message["params"]["_meta"].is_null() {
        return Vec::new();
    }
    let mut headers = vec![("mcp-method", message["method"].as_str().unwrap().to_owned())];
    if let Some(name) = message["params"]["name"].as_str() {
        headers.push(("mcp-name", name.to_owned()));
    }
    headers
}

/// Starts a 2025 session through the bridge.
fn initialized(server: &Server, options: &[&str]) -> Session {
    let mut s = bridge(&server.url(), options);
    s.send(INITIALIZE);
    let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    s.send(INITIALIZED);
    s
}

fn recv_json(s: &mut Session) -> Value {
    serde_json::from_slice(&s.recv()).expect("each line is one JSON message")
}

#[test]
fn a_dropped_stream_is_resumed_with_last_event_id() {
    let server = Server::python(&[]);
    let mut s = initialized(&server, &[]);
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"drop_stream","arguments":{},"_meta":{"progressToken":"p"}}}"#);
    let first = recv_json(&mut s);
    assert_eq!(first["params"]["message"], "before the drop");
    // The server closed the stream here: what follows came on the resumed one.
    let second = recv_json(&mut s);
    assert_eq!(second["params"]["message"], "after the drop");
    let answer = recv_json(&mut s);
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "resumed");
    assert!(s.finish().status.success());
}

#[test]
fn a_slow_stream_is_forwarded_event_by_event_and_calls_go_side_by_side() {
    let server = Server::python(&[]);
    let mut s = initialized(&server, &[]);
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}"#);
    // `slow` waits for `release`: its progress can only arrive before the
    // answer, while the stream is still open.
    let progress = recv_json(&mut s);
    assert_eq!(progress["method"], "notifications/progress");
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"release","arguments":{}}}"#);
    let mut ids = [recv_json(&mut s)["id"].clone(), recv_json(&mut s)["id"].clone()];
    ids.sort_by_key(|id| id.as_i64());
    assert_eq!(ids, [json!(1), json!(2)]);
    assert!(s.finish().status.success());
}

#[test]
fn the_servers_own_messages_come_on_the_get_stream() {
    let server = Server::python(&[]);
    let mut s = initialized(&server, &[]);
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"changed","arguments":{}}}"#);
    let mut methods = [recv_json(&mut s), recv_json(&mut s)];
    methods.sort_by_key(|m| m["method"].is_null());
    assert_eq!(methods[0]["method"], "notifications/tools/list_changed");
    assert_eq!(methods[1]["id"], 1);
    assert!(s.finish().status.success());
}

#[test]
fn an_expired_session_is_answered_as_such() {
    let server = Server::python(&[]);
    let mut s = initialized(&server, &[]);
    s.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"end_session","arguments":{}}}"#,
    );
    assert_eq!(recv_json(&mut s)["id"], 1);
    std::thread::sleep(std::time::Duration::from_millis(600));
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = recv_json(&mut s);
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32000);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("ended the MCP session (HTTP 404"), "{message}");
    let finished = s.finish();
    assert!(finished.status.success());
    assert!(
        finished.stderr.contains("ended the MCP session"),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_server_that_refuses_connections_is_answered_not_waited_for() {
    let url = format!("http://127.0.0.1:{}/mcp", remote::free_port());
    let mut s = bridge(&url, &[]);
    s.send(INITIALIZE);
    let answer = recv_json(&mut s);
    assert_eq!(answer["id"], 0);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot reach") && message.contains("refused"),
        "{message}"
    );
    s.send(INITIALIZED);
    let finished = s.finish();
    assert!(finished.status.success());
    assert!(
        finished.stderr.contains("Connection refused"),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_subscription_stream_is_forwarded_and_closed_by_cancellation() {
    let server = Server::python(&[]);
    let meta = modern_meta();
    let mut s = bridge(&server.url(), &[]);
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{meta}}}}}"#
    ));
    let acknowledged = recv_json(&mut s);
    assert_eq!(acknowledged["method"], "notifications/subscriptions/acknowledged");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}"#);
    // The stream is closed: nothing is left to wait for once stdin closes.
    let finished = s.finish();
    assert!(finished.status.success(), "{}", finished.stderr);
}

#[test]
fn header_values_come_from_the_environment_and_stay_secret() {
    let url = format!("http://127.0.0.1:{}/mcp", remote::free_port());
    let unset = support::proxy_command(
        &[
            "--url",
            &url,
            "--header",
            "Authorization: Bearer ${MCP_UK_NO_SUCH_TOKEN}",
        ],
        &[],
    )
    .output()
    .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(stderr.contains("MCP_UK_NO_SUCH_TOKEN is not set"), "{stderr}");

    let mut command = support::proxy_command(
        &["--url", &url, "--header", "Authorization: Bearer ${MCP_UK_TOKEN}"],
        &[],
    );
    command.env("MCP_UK_TOKEN", "s3cret-value");
    let mut child = command.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{INITIALIZE}").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    let everything = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(everything.contains("refused"), "{everything}");
    assert!(!everything.contains("s3cret"), "{everything}");
}

#[test]
fn a_server_with_a_private_ca_is_reached_over_tls_with_ca_cert() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certificates::new(dir.path());
    let server = Server::python(&["--tls", certs.cert.to_str().unwrap(), certs.key.to_str().unwrap()]);
    let mut s = initialized(&server, &["--ca-cert", certs.ca.to_str().unwrap()]);
    s.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
    );
    assert_eq!(recv_json(&mut s)["result"]["structuredContent"]["result"], 5);
    assert!(s.finish().status.success());

    // Without the CA, the certificate is refused, and the host is told so.
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    let message = recv_json(&mut s)["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("certificate"), "{message}");
    assert!(s.finish().status.success());
}

/// How many sessions the server has open, asked in a session of its own.
fn open_sessions(server: &Server) -> String {
    block_on(async {
        let opened = post(&server.url(), &[], INITIALIZE).await;
        let session = opened.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        post(&server.url(), &headers, INITIALIZED).await;
        let asked =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sessions","arguments":{}}}"#;
        let answer = post(&server.url(), &headers, asked).await;
        let answer: Value = serde_json::from_slice(answer.messages.last().unwrap()).unwrap();
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    })
}

#[test]
fn a_host_s_signal_ends_the_bridge_gracefully_the_session_deleted_and_the_summary_written() {
    for signal in ["TERM", "INT", "HUP"] {
        let server = Server::python(&[]);
        let mut s = initialized(&server, &[]);
        s.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        recv_json(&mut s);
        s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","verbose":true}}}"#);
        recv_json(&mut s);
        let _ = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &s.child.id().to_string()])
            .status();
        let finished = s.finish();
        assert!(finished.status.success(), "SIG{signal}: {}", finished.stderr);
        assert!(
            finished
                .stderr
                .contains("mcp-unknown-keys summary: 1 call(s): all audited"),
            "SIG{signal}: {}",
            finished.stderr
        );
        assert_eq!(finished.logged_summary()["findings"][0]["key"], "verbose");
        // Only the session just opened to ask is open: the bridge's was
        // deleted.
        assert_eq!(open_sessions(&server), "1", "SIG{signal}");
    }
}
