//! The remote doors' connections to the server: kept open from one request
//! to the next, and let go when the server closes them — even when its
//! answer did not say it would, as servers whose keep-alive time is short
//! do — without a request lost to a closed connection.

#![cfg(feature = "remote")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use crate::support;

use serde_json::Value;
use support::block_on;
use support::remote::{INITIALIZE, INITIALIZED, bridge, post};
use support::reverse::Reverse;

/// A server that answers one request per connection and then closes it,
/// though its answer (HTTP/1.1, no `Connection: close`) let the client
/// expect to send another. Returns its MCP URL and its connection count.
fn closing_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || answer_once(stream));
        }
    });
    (url, connections)
}

/// Reads one request and answers it: a POST with an id with an empty
/// result for that id, a notification with 202, anything else with 405.
fn answer_once(mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return; // closed before a request: the client let it go
        }
        if line == "\r\n" {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let answer = match serde_json::from_slice::<Value>(&body) {
        Ok(message) if head.starts_with("POST") => match message.get("id") {
            Some(id) => {
                let json = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{json}",
                    json.len()
                )
            }
            None => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned(),
        },
        _ => "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n".to_owned(),
    };
    let _ = stream.write_all(answer.as_bytes());
    // Dropped: closed, unannounced.
}

fn call(id: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#)
}

#[test]
fn the_bridge_lets_go_of_connections_the_server_closed_and_loses_no_call() {
    let (url, connections) = closing_server();
    let mut s = bridge(&url, &[]);
    s.send(INITIALIZE);
    s.recv();
    s.send(INITIALIZED);
    for id in 1..=30 {
        s.send(&call(id));
        let answer: Value = serde_json::from_slice(&s.recv()).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert!(
            answer.get("result").is_some(),
            "call {id} was not carried: {answer}"
        );
    }
    let finished = s.finish();
    assert!(finished.status.success());
    // A connection per request: none was used again once closed.
    let connections = connections.load(Ordering::SeqCst);
    assert!(connections >= 32, "{connections} connections for 32 requests");
}

#[test]
fn the_reverse_proxy_lets_go_of_connections_the_server_closed_and_loses_no_call() {
    let (url, connections) = closing_server();
    let proxy = Reverse::start(&url, &[]);
    for id in 1..=30 {
        let answer = block_on(post(&proxy.url(), &[], &call(id)));
        assert_eq!(answer.status, 200, "call {id}");
        let message: Value = serde_json::from_slice(&answer.messages[0]).unwrap();
        assert_eq!(message["id"], id, "{message}");
        assert!(
            message.get("result").is_some(),
            "call {id} was not carried: {message}"
        );
    }
    let (stderr, _) = proxy.stop();
    assert!(!stderr.contains("cannot reach"), "{stderr}");
    let connections = connections.load(Ordering::SeqCst);
    assert!(connections >= 30, "{connections} connections for 30 requests");
}
