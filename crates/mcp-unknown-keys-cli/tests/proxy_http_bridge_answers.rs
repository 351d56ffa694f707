//! `proxy --url URL` against a scripted server: every message the server
//! sends reaches the host as it came, whatever its shape; answers pair with
//! their requests by the value of their ids; a one-way message's answer is
//! passed on, and never cancelled by the wait for it; each message is held
//! to a bound; the stream of the server's own messages is resumed, and its
//! end said; a signal ends the bridge even when the host stopped reading.

#![cfg(feature = "remote")]

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use support::remote::{INITIALIZE, INITIALIZED, bridge};
use support::scripted::{Gate, Reply, Scripted, Seen};
use support::{PATIENCE, list_request, list_response, wait_with_patience};

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;

const INITIALIZED_ANSWER: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;

/// A 2025 server: `initialize` opens session `s1`; notifications are
/// accepted; GET is not offered; DELETE ends the session; a call is answered
/// by `call`.
fn legacy(call: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Scripted {
    Scripted::start(move |seen| match seen.method.as_str() {
        "GET" => Reply::status(405),
        "DELETE" => Reply::status(200),
        _ if seen.text().contains("\"initialize\"") => {
            Reply::json(INITIALIZED_ANSWER).header("mcp-session-id", "s1")
        }
        _ if !seen.text().contains("\"id\"") => Reply::status(202),
        _ => call(seen),
    })
}

fn lines(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_answer_the_bridge_cannot_type_still_reaches_the_host_once() {
    // A repeated member and a member of no schema: a typed reader refuses
    // the first; the answer must pass as it came, and nothing be added.
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"id":1,"x-extra":{"a":[1]}}"#;
    let server = legacy(move |_| Reply::json(answer));
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(CALL);
    assert_eq!(String::from_utf8_lossy(&s.recv()).trim_end(), answer);
    let finished = s.finish();
    assert!(
        lines(&finished.stdout).is_empty(),
        "{:?}",
        lines(&finished.stdout)
    );
}

#[test]
fn an_answer_pairs_with_its_request_by_the_value_of_the_id() {
    // `1.0` answers `1`, on a JSON body and on an event stream.
    let answer = r#"{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}"#;
    for stream in [false, true] {
        let server = legacy(move |_| {
            if stream {
                Reply::events(&[answer])
            } else {
                Reply::json(answer)
            }
        });
        let mut s = bridge(&server.url(), &[]);
        s.send(INITIALIZE);
        s.recv();
        s.send(INITIALIZED);
        s.send(CALL);
        assert_eq!(String::from_utf8_lossy(&s.recv()).trim_end(), answer);
        let finished = s.finish();
        assert!(
            lines(&finished.stdout).is_empty(),
            "stream {stream}: {:?}",
            lines(&finished.stdout)
        );
        assert!(
            !finished.stderr.contains("before answering"),
            "{}",
            finished.stderr
        );
    }
}

#[test]
fn a_body_on_the_answer_to_a_notification_reaches_the_host() {
    let message =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let server = Scripted::start(move |seen| {
        if seen.text().contains("notifications/initialized") {
            Reply::json(message)
        } else {
            Reply::status(405)
        }
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZED);
    assert_eq!(String::from_utf8_lossy(&s.recv()).trim_end(), message);
    assert!(s.finish().status.success());
}

#[test]
fn a_stream_kept_open_on_the_answer_to_a_notification_does_not_hold_the_exit() {
    let message =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let server = Scripted::start(move |seen| {
        if seen.text().contains("notifications/initialized") {
            Reply::events(&[message]).endless()
        } else {
            Reply::status(405)
        }
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZED);
    assert_eq!(String::from_utf8_lossy(&s.recv()).trim_end(), message);
    // stdin closes: the bridge exits although the stream stays open.
    assert!(s.finish().status.success());
}

#[test]
fn a_notification_slower_than_the_wait_is_still_delivered_and_its_answer_passed_on() {
    // The server takes longer than the bridge waits before sending the next
    // message (10 s): the notification must not be cancelled.
    let message =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}"#;
    let server = Scripted::start(move |seen| {
        if seen.text().contains("notifications/initialized") {
            Reply::status(200)
                .header("content-type", "application/json")
                .piece(Duration::from_secs(12), message.as_bytes())
        } else {
            Reply::status(405)
        }
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZED);
    assert_eq!(String::from_utf8_lossy(&s.recv()).trim_end(), message);
    let finished = s.finish();
    assert!(
        finished.stderr.contains("sending the next message anyway"),
        "{}",
        finished.stderr
    );
}

#[test]
fn an_answer_longer_than_the_bound_is_failed_with_a_clear_error() {
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "x".repeat(65 << 20)
    );
    let server = legacy(move |_| Reply::json(&long));
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(CALL);
    let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(answer["id"], 1);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("longer than 64 MiB"), "{message}");
    let finished = s.finish();
    assert!(
        finished.stderr.contains("longer than 64 MiB"),
        "{}",
        finished.stderr
    );
}

#[test]
fn an_event_stream_line_without_end_past_the_bound_is_failed_and_the_bridge_serves_on() {
    // A line that never ends, on a stream kept open: held whole, it would
    // grow the bridge's memory for as long as the server sends.
    let server = legacy(|seen| {
        if seen.text().contains(r#""id":1,"#) {
            let mut line = b"data: ".to_vec();
            line.resize(65 << 20, b'x');
            Reply::status(200)
                .header("content-type", "text/event-stream")
                .piece(Duration::ZERO, &line)
                .endless()
        } else {
            Reply::json(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)
        }
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(CALL);
    let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(answer["id"], 1);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("longer than 64 MiB"), "{message}");
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert_eq!(
        String::from_utf8_lossy(&s.recv()).trim_end(),
        r#"{"jsonrpc":"2.0","id":2,"result":{}}"#
    );
    let finished = s.finish();
    assert!(finished.status.success());
    assert!(
        finished.stderr.contains("longer than 64 MiB"),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_host_line_longer_than_the_bound_is_sent_unread_and_its_answer_passed_on() {
    let server = legacy(|seen| {
        let id = if seen.body.len() > 1 << 20 { 7 } else { 1 };
        Reply::json(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))
    });
    let mut s = bridge(&server.url(), &[]);
    let notification = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#,
        "y".repeat(65 << 20)
    );
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{"a":"{}"}}}}}}"#,
        "z".repeat(65 << 20)
    );
    s.send(&notification);
    s.send(&call);
    assert_eq!(
        String::from_utf8_lossy(&s.recv()).trim_end(),
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
    );
    s.send(CALL);
    assert_eq!(
        String::from_utf8_lossy(&s.recv()).trim_end(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    let finished = s.finish();
    assert!(finished.status.success());
    assert!(
        finished
            .stderr
            .contains("3 call(s): 0 audited, 3 unaudited (1 no_catalogue, 2 unreadable_arguments)"),
        "{}",
        finished.stderr
    );
    let sent: Vec<Vec<u8>> = server.drain().into_iter().map(|seen| seen.body).collect();
    assert_eq!(sent.len(), 3, "each line reaches the server once");
    assert!(sent[0] == notification.as_bytes(), "the notification as it came");
    assert!(sent[1] == call.as_bytes(), "the call as it came");
}

#[test]
fn the_stream_of_the_servers_own_messages_is_resumed_and_its_end_said() {
    // Each GET brings only a priming event (an id, a short retry) and ends.
    let server = Scripted::start(|seen| match seen.method.as_str() {
        "GET" => Reply::sse("id: e1\nretry: 20\ndata:\n\n"),
        "DELETE" => Reply::status(200),
        _ if seen.text().contains("\"initialize\"") => {
            Reply::json(INITIALIZED_ANSWER).header("mcp-session-id", "s1")
        }
        _ => Reply::status(202),
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    let mut gets = Vec::new();
    while gets.len() < 7 {
        let seen = server.next(PATIENCE).expect("the bridge opens the stream again");
        if seen.method == "GET" {
            gets.push(seen);
        }
    }
    assert_eq!(gets[0].header("last-event-id"), None);
    assert!(
        gets[1..]
            .iter()
            .all(|get| get.header("last-event-id") == Some("e1"))
    );
    std::thread::sleep(Duration::from_secs(3));
    let finished = s.finish();
    assert!(
        finished.stderr.contains("gave up the stream of"),
        "{}",
        finished.stderr
    );
}

#[test]
fn answers_larger_than_the_pipe_reach_a_slow_host_whole_and_once_each() {
    // Each answer is more than a pipe holds: written at once, it leaves a
    // rest for the writer, and the answers that come meanwhile queue behind
    // it. A host that reads slowly must still get every line whole, once.
    const CALLS: usize = 12;
    let text = |id: usize| "z".repeat(100_000 + id);
    let server = legacy(move |seen| {
        let request: Value = serde_json::from_slice(&seen.body).unwrap();
        let id = request["id"].as_u64().unwrap() as usize;
        Reply::json(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{}"}}}}"#,
            text(id)
        ))
    });
    let mut child = support::proxy_command(&["--url", &server.url()], &[])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}").unwrap();
    for id in 1..=CALLS {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#
        )
        .unwrap();
    }
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("protocolVersion"), "{line}");
    let mut answered = std::collections::BTreeSet::new();
    for _ in 0..CALLS {
        std::thread::sleep(Duration::from_millis(20));
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).expect("each answer a whole line of JSON");
        let id = answer["id"].as_u64().unwrap() as usize;
        assert_eq!(answer["result"]["text"].as_str(), Some(text(id).as_str()));
        assert!(answered.insert(id), "answer {id} came twice");
    }
    assert_eq!(answered.len(), CALLS);
    drop(stdin);
    wait_with_patience(&mut child);
}

#[test]
fn a_signal_ends_the_bridge_even_when_the_host_stopped_reading() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "z".repeat(1 << 20)
    );
    let server = legacy(move |_| Reply::json(&big));
    let mut child = support::proxy_command(&["--url", &server.url()], &[])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [INITIALIZE, INITIALIZED, CALL, CALL, CALL] {
        writeln!(stdin, "{line}").unwrap();
    }
    // Nobody reads stdout: the answers fill the pipe and the writer blocks.
    let mut calls = 0;
    while calls < 3 {
        let seen = server.next(PATIENCE).expect("the calls reach the server");
        calls += usize::from(seen.text().contains("tools/call"));
    }
    std::thread::sleep(Duration::from_millis(500));
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    wait_with_patience(&mut child);
    let deleted =
        std::iter::from_fn(|| server.next(Duration::from_millis(100))).any(|seen| seen.method == "DELETE");
    assert!(deleted, "the session is deleted");
    drop(stdin);
}

#[test]
fn a_signal_ends_the_bridge_even_when_answers_queue_behind_a_host_that_stopped_reading() {
    // The first answer fills the pipe, so the writer blocks; the answers
    // to the next 400 calls fill the queue to the writer behind it, where
    // the end of the session must not wait for room.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "z".repeat(1 << 20)
    );
    let server = legacy(move |seen| {
        let request: Value = serde_json::from_slice(&seen.body).unwrap();
        match request["id"].as_u64() {
            Some(1) => Reply::json(&big),
            id => Reply::json(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
                id.unwrap_or(0)
            )),
        }
    });
    let mut child = support::proxy_command(&["--url", &server.url()], &[])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}").unwrap();
    for id in 1..=401 {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#
        )
        .unwrap();
    }
    let mut calls = 0;
    while calls < 401 {
        let seen = server.next(PATIENCE).expect("the calls reach the server");
        calls += usize::from(seen.text().contains("tools/call"));
    }
    std::thread::sleep(Duration::from_millis(500));
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    wait_with_patience(&mut child);
    drop(stdin);
}

#[test]
fn a_call_with_an_undeclared_key_is_warned_of_before_the_server_answers() {
    // The server holds its answer to the call (status and headers too)
    // until the test has seen the warning, or gives up after a while.
    let gate = Gate::new();
    let held = gate.clone();
    let released = std::sync::Arc::new(std::sync::Mutex::new(None));
    let kept = released.clone();
    let server = legacy(move |seen| {
        if seen.text().contains("tools/list") {
            return Reply::json(&list_response("1", &[("t", &["path"])], None));
        }
        *kept.lock().unwrap() = Some(held.wait(Duration::from_secs(5)));
        Reply::json(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#)
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(&list_request("1", None));
    s.recv();
    // Let the audit finish reading the listing and wait for more: the call
    // must wake it, not find it still awake.
    std::thread::sleep(Duration::from_millis(300));
    s.send(&support::call("2", "t", r#"{"path":"a","extra":1}"#));
    let warnings = s.wait_for_warnings(1);
    gate.open();
    assert_eq!(warnings[0]["unknown_keys"], serde_json::json!(["extra"]));
    s.recv();
    assert_eq!(
        *released.lock().unwrap(),
        Some(true),
        "the warning came only after the server answered"
    );
    s.finish();
}

#[test]
fn a_url_s_variables_come_from_the_environment_and_its_secret_parts_are_never_shown() {
    let server = legacy(|_| {
        Reply::status(500)
            .header("content-type", "text/plain")
            .piece(Duration::ZERO, b"broken")
    });
    let dir = tempfile::tempdir().unwrap();
    let template = format!(
        "http://${{MCP_UK_URL_USER}}:${{MCP_UK_URL_PASS}}@{}/mcp?api_key=${{MCP_UK_URL_KEY}}",
        server.address
    );
    let mut s = support::Session::start_with(
        &dir.path().join("log.jsonl"),
        &["--url", &template],
        &[],
        |command| {
            command
                .env("MCP_UK_URL_USER", "u5er")
                .env("MCP_UK_URL_PASS", "pa55")
                .env("MCP_UK_URL_KEY", "k3y-value");
        },
    );
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(CALL);
    let answer = String::from_utf8_lossy(&s.recv()).into_owned();
    assert!(answer.contains("HTTP 500"), "{answer}");
    let finished = s.finish();
    let seen: Vec<Seen> = server.drain();
    assert_eq!(seen[0].uri, "/mcp?api_key=k3y-value", "the server gets the value");
    let everything = format!("{answer}{}", finished.stderr);
    assert!(
        everything.contains(&format!("http://{}/mcp", server.address)),
        "{everything}"
    );
    for secret in ["u5er", "pa55", "k3y", "${"] {
        assert!(!everything.contains(secret), "{secret}: {everything}");
    }

    let unset = support::proxy_command(&["--url", "http://127.0.0.1:9/mcp?k=${MCP_UK_NO_SUCH_KEY}"], &[])
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(
        stderr.contains("--url: the environment variable MCP_UK_NO_SUCH_KEY is not set"),
        "{stderr}"
    );
}

#[test]
fn a_password_with_a_slash_or_a_header_without_its_colon_is_never_echoed() {
    let port = support::remote::free_port();
    for options in [
        vec![
            "--url".to_owned(),
            format!("http://admin:4242/z9@127.0.0.1:{port}/mcp"),
        ],
        vec![
            "--url".to_owned(),
            format!("http://admin:s3cr?et@127.0.0.1:{port}/mcp"),
        ],
        vec![
            "--url".to_owned(),
            format!("http://127.0.0.1:{port}/mcp"),
            "--header".to_owned(),
            "Authorization Bearer sk-live-4f9a:x".to_owned(),
        ],
    ] {
        let options: Vec<&str> = options.iter().map(String::as_str).collect();
        let mut command = support::proxy_command(&options, &[]);
        let mut child = command.spawn().unwrap();
        // It may have exited already, refusing its command line.
        let _ = writeln!(child.stdin.take().unwrap(), "{INITIALIZE}");
        let output = child.wait_with_output().unwrap();
        let everything = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(2), "{options:?}: {everything}");
        for secret in ["admin", "4242", "z9", "s3cr", "Bearer", "sk-live", "4f9a"] {
            assert!(!everything.contains(secret), "{options:?}: {everything}");
        }
    }
}

#[test]
fn sequential_calls_answered_on_event_streams_share_one_connection() {
    let server = legacy(|seen| {
        let request: Value = serde_json::from_slice(&seen.body).unwrap();
        let id = request["id"].to_string();
        // The stream ends a moment after the answer, as a real server's
        // end comes in a packet of its own.
        Reply::events(&[&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)])
            .piece(Duration::from_millis(2), b": end\n\n")
    });
    let mut s = bridge(&server.url(), &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    for id in 1..=100 {
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#
        ));
        let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
        assert_eq!(answer["id"], id);
    }
    let finished = s.finish();
    assert!(finished.status.success());
    // One for the calls; the GET of the server's own stream (refused
    // here), sent while a call is on its way, may need a second; a loaded
    // machine may miss an end now and then. Dropping each stream at its
    // answer took a connection per call.
    let connections = server.connections();
    assert!(connections <= 5, "{connections} connections for 100 calls");
}

#[test]
fn a_url_s_userinfo_is_sent_as_basic_credentials_and_never_shown() {
    let server = legacy(|seen| {
        let request: Value = serde_json::from_slice(&seen.body).unwrap();
        if request["method"] == "tools/list" {
            Reply::json(&list_response(&request["id"].to_string(), &[("t", &["a"])], None))
        } else {
            Reply::json(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#)
        }
    });
    let url = server.url().replace("http://", "http://me:s3cr%2Fet@");
    let mut s = bridge(&url, &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    s.send(&list_request("1", None));
    s.recv();
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"a":1,"extra":1}}}"#);
    s.recv();
    let finished = s.finish();
    // "me:s3cr/et", on every request.
    let sent: Vec<Seen> = server.drain();
    assert!(sent.len() >= 4, "{sent:?}");
    for seen in &sent {
        assert_eq!(
            seen.header("authorization"),
            Some("Basic bWU6czNjci9ldA=="),
            "{} {}",
            seen.method,
            seen.text()
        );
    }
    assert_eq!(finished.warnings.len(), 1, "{}", finished.stderr);
    assert_eq!(finished.warnings[0]["server"], "127.0.0.1");
    // Unreachable: the error names the server without its userinfo.
    let port = support::remote::free_port();
    let mut s = bridge(&format!("http://me:s3cr%2Fet@127.0.0.1:{port}/mcp"), &[]);
    s.send(INITIALIZE);
    let error = String::from_utf8_lossy(&s.recv()).into_owned();
    assert!(
        error.contains(&format!("cannot reach http://127.0.0.1:{port}/mcp")),
        "{error}"
    );
    let unreachable = s.finish();
    for said in [
        &finished.stderr,
        &finished.log,
        &unreachable.stderr,
        &unreachable.log,
        &error,
    ] {
        for secret in ["me:", "s3cr", "bWU6czNjci9ldA"] {
            assert!(!said.contains(secret), "{secret} in {said}");
        }
    }
}

#[test]
fn a_server_that_stops_taking_a_request_is_answered_for_and_one_that_takes_it_slowly_is_not() {
    use support::paced::{Pace, Paced};
    let gate = support::scripted::Gate::new();
    let server = Paced::start(Pace {
        between: Duration::from_millis(2),
        held_over: 10 << 20,
        gate: gate.clone(),
    });
    let dir = tempfile::tempdir().unwrap();
    let mut s = support::Session::start_with(
        &dir.path().join("log.jsonl"),
        &["--url", &server.url()],
        &[],
        |command| {
            command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
        },
    );
    let call = |id: u32, length: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{"a":"{}"}}}}}}"#,
            "x".repeat(length)
        )
    };
    // 8 MB the server takes slowly (more than the idle time in all): answered.
    s.send(&call(1, 8 << 20));
    let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(answer["id"], 1);
    assert!(answer.get("result").is_some(), "{answer}");
    // 12 MB the server takes none of: the bridge answers, saying so.
    s.send(&call(2, 12 << 20));
    let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(answer["id"], 2);
    let said = answer["error"]["message"].as_str().unwrap();
    assert!(said.contains("took no byte of tools/call for 0.3 s"), "{said}");
    gate.open();
    let finished = s.finish();
    assert!(!finished.stderr.contains("cannot reach"), "{}", finished.stderr);
}
