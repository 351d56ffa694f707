//! `proxy --listen ADDR --upstream URL`: an HTTP reverse proxy in front of
//! real servers on loopback (the Python SDK's, both eras;
//! `@modelcontextprotocol/server-everything`), driven by the Python SDK's
//! streamable-HTTP client and by a plain HTTP client.

#![cfg(feature = "remote")]

use crate::support;

use std::process::Command;
use std::sync::mpsc;
use std::thread;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use support::remote::{self, Certificates, INITIALIZE, INITIALIZED, MODERN, Server, modern_meta, post};
use support::reverse::Reverse;
use support::{PATIENCE, binary, block_on};

fn sdk(url: &str, mode: &str, calls: Value) -> Value {
    remote::sdk_client(&json!({"url": url, "mode": mode, "calls": calls}))
}

fn texts(report: &Value) -> Vec<String> {
    let results = report["results"].as_array().unwrap();
    results
        .iter()
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_sdk_client_works_through_the_proxy_in_both_eras_with_one_catalogue_per_session() {
    let server = Server::python(&[]);
    let proxy = Reverse::start(&server.url(), &[]);
    let calls = json!([
        {"name": "echo", "arguments": {"text": "hi", "verbose": true}},
        {"name": "echo", "arguments": {"text": "again", "verbose": true}},
        {"name": "regional", "arguments": {"region": "Zürich", "query": "q"}},
        {"name": "drop_stream", "arguments": {}},
    ]);
    for (mode, version) in [("legacy", "2025-11-25"), (MODERN, MODERN)] {
        let report = sdk(&proxy.url(), mode, calls.clone());
        assert_eq!(report["version"], version);
        assert_eq!(texts(&report), ["hi", "again", "Zürich: q", "resumed"], "{mode}");
    }
    let (stderr, lines) = proxy.stop_with_log();
    let warnings: Vec<&Value> = lines.iter().filter(|line| line.get("hints").is_some()).collect();
    // Said once in each: the 2025 session, then the 2026 client's credentials.
    let said: Vec<&Value> = warnings.iter().map(|w| &w["unknown_keys"]).collect();
    assert_eq!(said, [&json!(["verbose"]), &json!(["verbose"])], "{stderr}");
    assert_eq!(stderr.matches("mcp-unknown-keys summary:").count(), 2, "{stderr}");
    // Each line says which upstream session (a keyed hash) it speaks for.
    let upstream = |line: &Value| line["upstream_session"].as_str().unwrap().to_owned();
    assert_ne!(upstream(warnings[0]), upstream(warnings[1]));
    assert!(
        lines
            .iter()
            .all(|line| line["server"] == "127.0.0.1" && line["session"].is_string())
    );
    // Both echo calls of each session "succeeded" with `verbose` ignored.
    let verdicts: Vec<(&Value, String)> = lines
        .iter()
        .filter(|line| line.get("verdict").is_some())
        .map(|line| (&line["verdict"], upstream(line)))
        .collect();
    assert_eq!(verdicts.len(), 4, "{lines:?}");
    assert!(verdicts.iter().all(|(verdict, _)| *verdict == "ignored"));
    assert!(
        stderr.contains("echo `verbose`: 2 calls (invented) — ignored 2"),
        "{stderr}"
    );
}

#[test]
fn server_everything_is_reached_through_the_proxy() {
    let server = Server::everything();
    let proxy = Reverse::start(&server.url(), &[]);
    let report = sdk(
        &proxy.url(),
        "legacy",
        json!([{"name": "echo", "arguments": {"message": "hi", "loud": 1}}]),
    );
    assert_eq!(texts(&report), ["Echo: hi"]);
    let (_, warnings) = proxy.stop();
    assert_eq!(warnings[0]["unknown_keys"], json!(["loud"]));
}

/// The same requests, directly and through the proxy, in a session each:
/// the same status, headers that matter and message bytes.
#[test]
fn responses_pass_through_with_their_headers_and_bytes() {
    let server = Server::python(&[]);
    let proxy = Reverse::start(&server.url(), &[]);
    let meta = modern_meta();
    block_on(async {
        let direct = legacy_session(&server.url()).await;
        let proxied = legacy_session(&proxy.url()).await;
        assert_eq!(direct.len(), proxied.len());
        for (d, p) in direct.iter().zip(&proxied) {
            assert_eq!(d.status, p.status);
            for header in ["content-type", "cache-control", "x-accel-buffering"] {
                assert_eq!(d.headers.get(header), p.headers.get(header), "{header}");
            }
            assert_eq!(d.messages, p.messages);
        }
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"ü"}},{meta}}}}}"#
        );
        let headers = [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ];
        let direct = post(&server.url(), &headers, &call).await;
        let proxied = post(&proxy.url(), &headers, &call).await;
        assert_eq!(
            (direct.status, &direct.messages),
            (proxied.status, &proxied.messages)
        );
    });
}

/// initialize, initialized, tools/list and a call, in a new 2025 session.
async fn legacy_session(url: &str) -> Vec<remote::Answer> {
    let initialize = post(url, &[], INITIALIZE).await;
    let id = initialize.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let session = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let mut answers = vec![initialize];
    for line in [
        INITIALIZED,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
    ] {
        answers.push(post(url, &session, line).await);
    }
    answers
}

#[test]
fn a_slow_stream_reaches_the_client_event_by_event() {
    let server = Server::python(&[]);
    let proxy = Reverse::start(&server.url(), &[]);
    block_on(async {
        let initialize = post(&proxy.url(), &[], INITIALIZE).await;
        let id = initialize.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let session = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        post(&proxy.url(), &session, INITIALIZED).await;

        let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut request = hyper::Request::post(proxy.url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        for (name, value) in session {
            request = request.header(name, value);
        }
        let slow = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}"#;
        let response = client
            .request(request.body(Full::new(Bytes::from(slow))).unwrap())
            .await
            .unwrap();
        let mut body = response.into_body();
        // `slow` answers only once released: the progress event must come
        // through while its stream is still open.
        let mut seen = Vec::new();
        while !remote::event_data(&seen)
            .iter()
            .any(|data| data.starts_with(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\""))
        {
            let frame = tokio::time::timeout(PATIENCE, body.frame())
                .await
                .expect("an event in time");
            seen.extend_from_slice(frame.unwrap().unwrap().data_ref().unwrap());
        }
        let release =
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"release","arguments":{}}}"#;
        assert_eq!(post(&proxy.url(), &session, release).await.status, 200);
        let rest = tokio::time::timeout(PATIENCE, body.collect())
            .await
            .unwrap()
            .unwrap()
            .to_bytes();
        seen.extend_from_slice(&rest);
        let last: Value = serde_json::from_slice(remote::event_data(&seen).last().unwrap()).unwrap();
        assert_eq!(last["result"]["content"][0]["text"], "released");
    });
}

#[test]
fn headers_pass_through_except_hop_by_hop_ones() {
    let (upstream, seen) = header_echo();
    let proxy = Reverse::start(&format!("http://{upstream}/mcp"), &[]);
    block_on(async {
        let answer = post(
            &proxy.url(),
            &[
                ("authorization", "Bearer t"),
                ("mcp-session-id", "abc"),
                ("mcp-param-region", "us-west1"),
                ("connection", "x-hop"),
                ("x-hop", "1"),
                ("x-end-to-end", "2"),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
        assert_eq!(answer.headers["x-upstream"], "yes");
        assert_eq!(
            answer.messages,
            [br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec()]
        );
    });
    let headers = seen.recv_timeout(PATIENCE).unwrap();
    for (name, value) in [
        ("authorization", "Bearer t"),
        ("mcp-session-id", "abc"),
        ("mcp-param-region", "us-west1"),
        ("x-end-to-end", "2"),
        ("host", upstream.as_str()),
    ] {
        assert_eq!(
            headers.get(name).map(String::as_str),
            Some(value),
            "{name}: {headers:?}"
        );
    }
    assert!(!headers.contains_key("x-hop"), "{headers:?}");
}

/// A server that answers `{"jsonrpc":"2.0","id":1,"result":{}}` with a
/// header of its own, and reports the headers of each request it gets.
fn header_echo() -> (String, mpsc::Receiver<std::collections::HashMap<String, String>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    let (report, seen) = mpsc::channel();
    thread::spawn(move || {
        block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let report = report.clone();
                let service =
                    hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let headers = request
                            .headers()
                            .iter()
                            .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_owned()))
                            .collect();
                        let _ = report.send(headers);
                        async {
                            let body =
                                Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
                            let mut response = hyper::Response::new(body);
                            response
                                .headers_mut()
                                .insert("content-type", "application/json".parse().unwrap());
                            response
                                .headers_mut()
                                .insert("x-upstream", "yes".parse().unwrap());
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
    });
    (address, seen)
}

#[test]
fn an_upstream_that_refuses_connections_gets_a_502_that_answers_the_request() {
    let proxy = Reverse::start(&format!("http://127.0.0.1:{}/mcp", remote::free_port()), &[]);
    let answer = block_on(post(
        &proxy.url(),
        &[],
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#,
    ));
    assert_eq!(answer.status, 502);
    assert_eq!(answer.headers["content-type"], "application/json");
    let error: Value = serde_json::from_slice(&answer.messages[0]).unwrap();
    assert_eq!((&error["jsonrpc"], &error["id"]), (&json!("2.0"), &json!("x")));
    assert!(error["error"]["code"].is_i64(), "{error}");
    assert!(
        error["error"]["message"].as_str().unwrap().contains("refused"),
        "{error}"
    );
    let (stderr, _) = proxy.stop();
    assert!(stderr.contains("Connection refused"), "{stderr}");
}

#[test]
fn a_non_loopback_address_must_be_asked_for() {
    let output = Command::new(binary())
        .args([
            "proxy",
            "--listen",
            "0.0.0.0:0",
            "--upstream",
            "http://127.0.0.1:9/mcp",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not a loopback address") && stderr.contains("--allow-non-loopback"),
        "{stderr}"
    );
}

#[test]
fn an_upstream_with_a_private_ca_is_reached_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let certs = Certificates::new(dir.path());
    let server = Server::python(&["--tls", certs.cert.to_str().unwrap(), certs.key.to_str().unwrap()]);
    let proxy = Reverse::start(&server.url(), &["--ca-cert", certs.ca.to_str().unwrap()]);
    let report = sdk(
        &proxy.url(),
        "legacy",
        json!([{"name": "add", "arguments": {"a": 2, "b": 3}}]),
    );
    assert_eq!(texts(&report), ["5"]);
}
