//! `proxy --listen ADDR --upstream URL` in front of a scripted server, for
//! what no real server does on cue: a session that expires (its 404 passed
//! on as it came, its tap ended), what the proxy asks of the endpoint
//! (`Accept-Encoding: identity`), a 404 on another path (the session
//! lives on), and an answer held back (the warning is
//! said while the call is on its way, not once the answer begins).

#![cfg(feature = "remote")]

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use support::remote::post;
use support::reverse::Reverse;
use support::scripted::{Gate, Reply, Scripted, Seen};
use support::{block_on, call, list_request, list_response};

/// An answer to a `tools/list` (declaring `declared` for `fs_read`) or to
/// a call, with the request's id.
fn answer(seen: &Seen, declared: &[&str]) -> Reply {
    let request: Value = serde_json::from_slice(&seen.body).unwrap();
    let id = request["id"].to_string();
    if request["method"] == "tools/list" {
        Reply::json(&list_response(&id, &[("fs_read", declared)], None))
    } else {
        Reply::json(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
        ))
    }
}

#[test]
fn a_404_for_an_expired_session_passes_as_it_is_and_ends_the_session_s_tap() {
    let expired = Arc::new(AtomicBool::new(false));
    let gone = expired.clone();
    let server = Scripted::start(move |seen| match seen.header("mcp-session-id") {
        Some("s1") if gone.load(Ordering::SeqCst) => Reply::status(404)
            .header("content-type", "text/plain")
            .piece(Duration::ZERO, b"no such session"),
        Some("s1") => answer(seen, &["path"]),
        // The new session's tool declares the key.
        _ => answer(seen, &["path", "extra"]),
    });
    let proxy = Reverse::start(&server.url(), &[]);
    let with = |session: &'static str, message: String| {
        block_on(post(&proxy.url(), &[("mcp-session-id", session)], &message))
    };
    with("s1", list_request("1", None));
    with("s1", call("2", "fs_read", r#"{"path":"a","extra":1}"#));
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) extra"));

    expired.store(true, Ordering::SeqCst);
    let answer = with("s1", call("3", "fs_read", r#"{"path":"b"}"#));
    assert_eq!(answer.status, 404);
    assert_eq!(answer.headers["content-type"], "text/plain");
    assert_eq!(answer.messages, [b"no such session".to_vec()]);
    // The session is over: its summary now, not when the proxy stops.
    proxy.wait_for_stderr(|line| line.contains("summary: 2 call(s)"));

    with("s2", list_request("1", None));
    with("s2", call("2", "fs_read", r#"{"path":"a","extra":1}"#));
    with("s2", call("3", "fs_read", r#"{"path":"a","other":1}"#));
    let (stderr, warnings) = proxy.stop();
    let said: Vec<&Value> = warnings.iter().map(|w| &w["unknown_keys"]).collect();
    // `extra` is declared in the new session: only `other` is said.
    assert_eq!(said, [&json!(["extra"]), &json!(["other"])], "{stderr}");
    assert_ne!(warnings[0]["upstream_session"], warnings[1]["upstream_session"]);
}

#[test]
fn a_404_on_another_path_leaves_the_session_s_listing_in_place() {
    // OAuth metadata, say: not found, in a session. Only the endpoint
    // speaks for the session; its listing must still audit the next call.
    let server = Scripted::start(|seen| {
        if seen.text().contains("jsonrpc") {
            answer(seen, &["path"])
        } else {
            Reply::status(404)
        }
    });
    let proxy = Reverse::start(&server.url(), &[]);
    let session = [("mcp-session-id", "s1")];
    block_on(async {
        post(&proxy.url(), &session, &list_request("1", None)).await;
        let metadata = format!("http://{}/.well-known/oauth-authorization-server", proxy.address);
        assert_eq!(post(&metadata, &session, "{}").await.status, 404);
        post(
            &proxy.url(),
            &session,
            &call("2", "fs_read", r#"{"path":"a","extra":1}"#),
        )
        .await;
    });
    let (stderr, warnings) = proxy.stop();
    let said: Vec<&Value> = warnings.iter().map(|w| &w["unknown_keys"]).collect();
    assert_eq!(said, [&json!(["extra"])], "{stderr}");
}

#[test]
fn the_endpoint_is_asked_for_identity_encoding_and_other_paths_keep_the_client_s() {
    let server = Scripted::start(|seen| {
        if seen.text().contains("jsonrpc") {
            answer(seen, &["path"])
        } else {
            Reply::status(200)
        }
    });
    let proxy = Reverse::start(&server.url(), &[]);
    let gzip = [("accept-encoding", "gzip, br")];
    block_on(async {
        post(&proxy.url(), &gzip, &list_request("1", None)).await;
        post(
            &format!("http://{}/", proxy.address),
            &gzip,
            &list_request("2", None),
        )
        .await;
        post(&format!("http://{}/other", proxy.address), &gzip, "plain").await;
    });
    let seen: Vec<(String, Option<String>)> = server
        .drain()
        .iter()
        .map(|seen| (seen.text(), seen.header("accept-encoding").map(str::to_owned)))
        .collect();
    let encodings: Vec<Option<&str>> = seen.iter().map(|(_, encoding)| encoding.as_deref()).collect();
    assert_eq!(
        encodings,
        [Some("identity"), Some("identity"), Some("gzip, br")],
        "{seen:?}"
    );
}

#[test]
fn a_call_with_an_undeclared_key_is_warned_of_before_the_server_answers() {
    // The server holds its answer to the call (status and headers too)
    // until the test has seen the warning, or gives up after a while.
    let gate = Gate::new();
    let held = gate.clone();
    let released = Arc::new(Mutex::new(None));
    let kept = released.clone();
    let server = Scripted::start(move |seen| {
        if seen.text().contains("tools/call") {
            *kept.lock().unwrap() = Some(held.wait(Duration::from_secs(5)));
        }
        answer(seen, &["path"])
    });
    let proxy = Reverse::start(&server.url(), &[]);
    block_on(post(&proxy.url(), &[], &list_request("1", None)));
    let url = proxy.url();
    let calling = thread::spawn(move || {
        block_on(post(
            &url,
            &[],
            &call("2", "fs_read", r#"{"path":"a","extra":1}"#),
        ))
        .status
    });
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) extra"));
    gate.open();
    assert_eq!(calling.join().unwrap(), 200);
    assert_eq!(
        *released.lock().unwrap(),
        Some(true),
        "the warning came only after the server answered"
    );
}

#[test]
fn an_event_stream_line_without_end_past_the_bound_cuts_that_stream_and_the_proxy_serves_on() {
    // A line that never ends, on a stream kept open: held whole, it would
    // grow the proxy's memory for as long as the server sends.
    let server = Scripted::start(|seen| {
        if seen.text().contains(r#""id":1,"#) {
            let mut line = b"data: ".to_vec();
            line.resize(65 << 20, b'x');
            Reply::status(200)
                .header("content-type", "text/event-stream")
                .piece(Duration::ZERO, &line)
                .endless()
        } else {
            answer(seen, &["path"])
        }
    });
    let proxy = Reverse::start(&server.url(), &[]);
    let url = proxy.url();
    let cut = block_on(async move {
        use http_body_util::{BodyExt, Full};
        let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(hyper_util::client::legacy::connect::HttpConnector::new());
        let request = hyper::Request::post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(Full::new(bytes::Bytes::from(call(
                "1",
                "fs_read",
                r#"{"path":"a"}"#,
            ))))
            .unwrap();
        let response = client.request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        tokio::time::timeout(support::PATIENCE, response.into_body().collect())
            .await
            .expect("the stream is cut, not left to grow")
    });
    assert!(cut.is_err(), "the client sees the stream cut");
    proxy.wait_for_stderr(|line| line.contains("longer than 64 MiB"));
    let next = block_on(post(&proxy.url(), &[], &list_request("2", None)));
    assert_eq!(next.status, 200);
    assert_eq!(next.messages.len(), 1);
    let (stderr, _) = proxy.stop();
    assert!(stderr.contains("the stream was cut there"), "{stderr}");
}

/// The proxy in front of `server`, adding credentials, and letting
/// `https://app.example.com` use it.
fn adding_credentials(server: &Scripted) -> Reverse {
    Reverse::start(
        &server.url(),
        &[
            "--header",
            "Authorization: Bearer sk-test",
            "--allow-origin",
            "https://app.example.com",
        ],
    )
}

#[test]
fn a_page_s_host_or_origin_is_refused_before_anything_is_forwarded() {
    let server = Scripted::start(|seen| answer(seen, &["path"]));
    let proxy = adding_credentials(&server);
    let port = proxy.address.rsplit(':').next().unwrap().to_owned();
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    let with = |headers: &[(&str, &str)]| block_on(post(&proxy.url(), headers, &list_request("1", None)));
    // DNS rebinding: the page's own name, as Host and as Origin; twice.
    for _ in 0..2 {
        let refused = with(&[("host", &evil_host), ("origin", &evil_origin)]);
        assert_eq!(refused.status, 403);
        assert!(refused.headers.get("access-control-allow-origin").is_none());
    }
    assert_eq!(with(&[("host", &evil_host)]).status, 403, "Host alone");
    assert_eq!(with(&[("origin", &evil_origin)]).status, 403, "Origin alone");
    assert!(server.drain().is_empty(), "nothing refused reaches the server");
    // Clients that are not browsers send no Origin; loopback names and the
    // origins allowed pass.
    assert_eq!(with(&[]).status, 200);
    assert_eq!(with(&[("host", &format!("localhost:{port}"))]).status, 200);
    assert_eq!(with(&[("origin", "https://app.example.com")]).status, 200);
    assert_eq!(with(&[("origin", "http://localhost:5173")]).status, 200);
    assert_eq!(server.drain().len(), 4);
    let (stderr, _) = proxy.stop();
    let said = |value: &str| stderr.lines().filter(|line| line.contains(value)).count();
    assert_eq!(said(&format!("Host \"{evil_host}\"")), 1, "{stderr}");
    assert_eq!(said(&format!("origin \"{evil_origin}\"")), 1, "{stderr}");
}

/// Sends a request without body (`head`: its request line and headers,
/// each line ended) to `address` as it is; returns the answer's status and
/// body.
fn raw(address: &str, head: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(support::PATIENCE)).unwrap();
    write!(stream, "{head}Host: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

#[test]
fn a_page_s_request_without_origin_and_a_get_not_for_the_event_stream_are_refused() {
    // A page on another site may send requests it cannot read the answers
    // of: an <img>, a no-cors fetch. They carry no Origin and the proxy's
    // own Host, and would reach the server with the credentials it adds.
    let server = Scripted::start(|seen| match seen.method.as_str() {
        "GET" => Reply::status(405),
        _ => answer(seen, &["path"]),
    });
    let proxy = adding_credentials(&server);
    let with =
        |headers: &[(&str, &str)]| block_on(post(&proxy.url(), headers, &list_request("1", None))).status;
    let get = |path: &str, accept: &str| raw(&proxy.address, &format!("GET {path} HTTP/1.1\r\n{accept}"));
    for _ in 0..2 {
        assert_eq!(with(&[("sec-fetch-site", "cross-site")]), 403);
    }
    assert_eq!(with(&[("sec-fetch-site", "same-site")]), 403);
    let (status, body) = get("/mcp", "Accept: image/avif,image/webp,*/*;q=0.8\r\n");
    assert_eq!(status, 406);
    assert!(body.contains("text/event-stream"), "{body}");
    assert_eq!(get("/mcp", "").0, 406, "no Accept");
    assert_eq!(get("/", "Accept: text/html,*/*\r\n").0, 406, "the endpoint at /");
    assert!(server.drain().is_empty(), "nothing refused reaches the server");
    // A page's request with an Origin is judged by it; the rest pass.
    assert_eq!(
        with(&[
            ("sec-fetch-site", "cross-site"),
            ("origin", "https://evil.example")
        ]),
        403
    );
    assert_eq!(
        with(&[
            ("sec-fetch-site", "cross-site"),
            ("origin", "https://app.example.com")
        ]),
        200
    );
    assert_eq!(with(&[("sec-fetch-site", "same-origin")]), 200);
    assert_eq!(with(&[("sec-fetch-site", "none")]), 200, "typed by the user");
    assert_eq!(with(&[]), 200, "not a browser");
    assert_eq!(
        get("/mcp", "Accept: text/event-stream\r\n").0,
        405,
        "the server's answer"
    );
    assert_eq!(
        get("/.well-known/oauth-protected-resource", "").0,
        405,
        "another path than the endpoint's"
    );
    assert_eq!(server.drain().len(), 6);
    let (stderr, _) = proxy.stop();
    let said = |text: &str| stderr.lines().filter(|line| line.contains(text)).count();
    assert_eq!(said("Sec-Fetch-Site: cross-site"), 1, "said once: {stderr}");
    assert_eq!(said("Sec-Fetch-Site: same-site"), 1, "{stderr}");
    assert_eq!(said("does not accept text/event-stream"), 1, "{stderr}");
}

#[test]
fn an_upstream_s_userinfo_is_sent_as_basic_credentials_and_never_shown() {
    let server = Scripted::start(|seen| answer(seen, &["path"]));
    // "user:p@ss:w", as curl decodes it.
    let upstream = format!("http://us%65r:p%40ss:w@{}/mcp", server.address);
    let proxy = Reverse::start(&upstream, &[]);
    let client = [("authorization", "Bearer from-the-client")];
    block_on(post(&proxy.url(), &client, &list_request("1", None)));
    let called = block_on(post(
        &proxy.url(),
        &client,
        &call("2", "fs_read", r#"{"path":"a","extra":1}"#),
    ));
    assert_eq!(called.status, 200);
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) extra"));
    let (stderr, lines) = proxy.stop_with_log();
    let sent: Vec<Option<String>> = server
        .drain()
        .iter()
        .map(|seen| seen.header("authorization").map(str::to_owned))
        .collect();
    let basic = Some("Basic dXNlcjpwQHNzOnc=".to_owned());
    assert_eq!(
        sent,
        [basic.clone(), basic],
        "the user's credentials, as --header's"
    );
    let log: String = lines.iter().map(Value::to_string).collect();
    for secret in ["us%65r", "user", "p%40ss", "p@ss", "dXNlcjpwQHNzOnc"] {
        assert!(!stderr.contains(secret), "{secret} in {stderr}");
        assert!(!log.contains(secret), "{secret} in {log}");
    }
    assert!(lines.iter().all(|line| line["server"] == "127.0.0.1"), "{log}");
    // A --header Authorization is the one sent.
    let proxy = Reverse::start(&upstream, &["--header", "Authorization: Bearer sk-test"]);
    block_on(post(&proxy.url(), &[], &list_request("1", None)));
    let sent = server.drain();
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test"));
}
