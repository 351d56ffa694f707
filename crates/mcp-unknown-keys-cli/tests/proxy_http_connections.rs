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

/// A server whose answers (HTTP/1.1, no `Connection: close`) let the
/// client send another request on the connection: which it then takes,
/// or, when `closes`, does not, closing the connection after one answer.
/// Returns its MCP URL and its connection count.
fn server(closes: bool) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                while answer(&mut reader, &stream) && !closes {}
                // Dropped: closed, unannounced.
            });
        }
    });
    (url, connections)
}

/// Reads one request and answers it: a POST with an id with an empty
/// result for that id, a notification with 202, anything else with 405.
/// False once the client has closed the connection.
fn answer(reader: &mut BufReader<TcpStream>, mut stream: &TcpStream) -> bool {
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false; // closed before a request: the client let it go
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
    if reader.read_exact(&mut body).is_err() {
        return false;
    }
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
    stream.write_all(answer.as_bytes()).is_ok()
}

fn call(id: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#)
}

#[test]
fn the_bridge_lets_go_of_connections_the_server_closed_and_loses_no_call() {
    let (url, connections) = server(true);
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
    let (url, connections) = server(true);
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

#[test]
fn the_reverse_proxy_keeps_its_connection_from_one_call_to_the_next() {
    let (url, connections) = server(false);
    let proxy = Reverse::start(&url, &[]);
    for id in 1..=30 {
        let answer = block_on(post(&proxy.url(), &[], &call(id)));
        let message: Value = serde_json::from_slice(&answer.messages[0]).unwrap();
        assert_eq!(message["id"], id, "{message}");
    }
    proxy.stop();
    // One; a loaded machine may see a call come before the last answer's
    // connection is ready again, now and then. A connection per call
    // would be 30.
    let connections = connections.load(Ordering::SeqCst);
    assert!(
        connections <= 3,
        "{connections} connections for 30 sequential calls"
    );
}
