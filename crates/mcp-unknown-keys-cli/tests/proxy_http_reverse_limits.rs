//! `proxy --listen` at its bounds: a request body that trickles in is let
//! go unread rather than held, one that stops is cut, and one a slow server
//! takes slowly goes through however long it takes; a server that stops
//! taking a request is answered for; the bodies held whole at once are
//! bounded in total until written; and running out of file descriptors
//! neither spins a core nor goes unsaid; each time the proxy serves on.

#![cfg(feature = "remote")]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::paced::{Pace, Paced};
use support::remote::post;
use support::reverse::Reverse;
use support::scripted::{Gate, Reply, Scripted, Seen};
use support::{PATIENCE, block_on, call, list_request, list_response};

/// An answer to a `tools/list` (declaring `path` for `fs_read`) or to a
/// call, with the request's id.
fn answer(seen: &Seen) -> Reply {
    let request: Value = serde_json::from_slice(&seen.body).unwrap();
    let id = request["id"].to_string();
    if request["method"] == "tools/list" {
        Reply::json(&list_response(&id, &[("fs_read", &["path"])], None))
    } else {
        Reply::json(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
        ))
    }
}

/// Writes `head` (a POST's request line and headers, each line ended,
/// `Content-Length` among them) to the proxy, then `body` as `send` sends
/// it; returns the connection, to read the answer from.
fn posted(
    proxy: &Reverse,
    head: &str,
    body: &[u8],
    send: impl FnOnce(&mut TcpStream, &[u8]) + Send,
) -> TcpStream {
    let mut stream = TcpStream::connect(&proxy.address).unwrap();
    stream
        .write_all(
            format!("{head}Host: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
    thread::scope(|scope| {
        let mut writer = stream.try_clone().unwrap();
        scope.spawn(move || send(&mut writer, body));
    });
    stream
}

/// The answer on `stream` (asked with `Connection: close`), read until the
/// proxy closes it or PATIENCE passes: its status line and body (empty
/// when the connection was reset or nothing came in time).
fn answer_on(mut stream: TcpStream) -> (String, String) {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.lines().next().unwrap_or("").to_owned(), body.to_owned())
}

/// A `tools/call` of `fs_read` with id `id` and a path of `length` bytes.
fn long_read(id: &str, length: usize) -> String {
    call(id, "fs_read", &format!(r#"{{"path":"{}"}}"#, "p".repeat(length)))
}

/// A server that takes none of a body longer than `held_over` bytes until
/// the gate it comes with opens.
fn gated(held_over: u64) -> (Paced, Arc<Gate>) {
    let gate = Gate::new();
    let server = Paced::start(Pace {
        held_over,
        gate: gate.clone(),
        ..Pace::eager()
    });
    (server, gate)
}

#[test]
fn a_body_that_trickles_in_is_let_go_unread_not_cut() {
    let server = Scripted::start(answer);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        // The 30 s bound, and the idle one, shortened for the test.
        command.env("MCP_UNKNOWN_KEYS_TEST_BODY_WITHIN_MS", "300");
        command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
    });
    block_on(post(&proxy.url(), &[], &list_request("1", None)));
    // A byte every 20 ms: never idle long, whole only after 2 s.
    let message = call("2", "fs_read", r#"{"path":"a","trickled":1}"#);
    let head = format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n", message.len());
    let started = Instant::now();
    let stream = posted(&proxy, &head, message.as_bytes(), |writer, body| {
        for byte in body {
            writer.write_all(&[*byte]).unwrap();
            thread::sleep(Duration::from_millis(20));
        }
    });
    let (status, body) = answer_on(stream);
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(started.elapsed() > Duration::from_secs(1), "it did trickle");
    assert!(body.contains(r#""id":2"#), "{body}");
    proxy.wait_for_stderr(|line| {
        line.contains("not whole 0.3 s after its headers was sent on as it came, unread")
    });
    let (stderr, _) = proxy.stop();
    assert!(
        !stderr.contains("trickled"),
        "let go, not held to be read: {stderr}"
    );
    let bodies: Vec<String> = server.drain().iter().map(Seen::text).collect();
    assert_eq!(bodies.last(), Some(&message), "it reached the server whole");
}

#[test]
fn a_body_that_stops_is_cut_and_the_proxy_serves_on() {
    let server = Scripted::start(answer);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
    });
    let started = Instant::now();
    let stream = posted(
        &proxy,
        "POST /mcp HTTP/1.1\r\nContent-Length: 1000\r\n",
        b"{",
        |writer, body| {
            writer.write_all(body).unwrap();
        },
    );
    let (status, body) = answer_on(stream);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "cut after {took:?}, not after the idle time"
    );
    assert!(
        status.is_empty() || status == "HTTP/1.1 408 Request Timeout",
        "{status}"
    );
    assert!(
        status.is_empty() || body.contains("no byte of the request's body came for 0.3 s"),
        "{body}"
    );
    assert!(server.drain().is_empty(), "nothing reached the server");
    assert_eq!(
        block_on(post(&proxy.url(), &[], &list_request("1", None))).status,
        200
    );
}

#[test]
fn a_body_that_stops_while_streaming_upstream_is_answered_with_a_json_rpc_timeout() {
    let server = Paced::start(Pace::eager());
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
        // Past 1000 bytes held at once, a body streams on as it comes.
        command.env("MCP_UNKNOWN_KEYS_TEST_MAX_HELD", "1000");
    });
    let opening = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"{}"#,
        "a".repeat(2000)
    );
    let head = "POST /mcp HTTP/1.1\r\nContent-Length: 5000\r\n";
    let stream = posted(&proxy, head, opening.as_bytes(), |writer, body| {
        writer.write_all(body).unwrap()
    });
    let (status, body) = answer_on(stream);
    assert_eq!(status, "HTTP/1.1 408 Request Timeout", "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["id"], 7);
    assert_eq!(
        error["error"]["message"],
        "mcp-unknown-keys: no byte of the request's body came for 0.3 s"
    );
    let (stderr, _) = proxy.stop();
    assert!(!stderr.contains("cannot reach"), "{stderr}");
}

#[test]
fn a_long_body_a_slow_server_takes_for_longer_than_the_bounds_goes_through() {
    // The server reads 8 KiB at a time, a moment apart: the body moves
    // all along, but takes several times the bounds to arrive.
    let server = Paced::start(Pace {
        between: Duration::from_millis(2),
        ..Pace::eager()
    });
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        command.env("MCP_UNKNOWN_KEYS_TEST_BODY_WITHIN_MS", "300");
        command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
        // Past 1000 bytes held at once, a body streams on as it comes.
        command.env("MCP_UNKNOWN_KEYS_TEST_MAX_HELD", "1000");
    });
    let message = long_read("2", 8 << 20);
    let started = Instant::now();
    let answer = block_on(post(&proxy.url(), &[], &message));
    let took = started.elapsed();
    assert_eq!(
        answer.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&answer.messages.concat())
    );
    assert!(
        took > Duration::from_millis(900),
        "it took {took:?}: not slow enough to test the bounds"
    );
    let answered: Value = serde_json::from_slice(&answer.messages[0]).unwrap();
    assert_eq!(answered["id"], 2);
    assert!(
        server
            .bodies()
            .last()
            .is_some_and(|body| body == message.as_bytes())
    );
}

#[test]
fn a_server_that_stops_taking_a_request_is_answered_with_a_json_rpc_timeout() {
    let (server, gate) = gated(1 << 20);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        command.env("MCP_UNKNOWN_KEYS_TEST_IDLE_MS", "300");
    });
    let message = long_read("2", 12 << 20);
    let answer = block_on(post(&proxy.url(), &[], &message));
    assert_eq!(answer.status, 504);
    let error: Value = serde_json::from_slice(&answer.messages[0]).unwrap();
    assert_eq!(error["id"], 2);
    let said = error["error"]["message"].as_str().unwrap();
    assert!(said.contains("took no byte of the request for 0.3 s"), "{said}");
    gate.open();
    assert_eq!(
        block_on(post(&proxy.url(), &[], &list_request("1", None))).status,
        200,
        "the proxy serves on"
    );
    let (stderr, _) = proxy.stop();
    assert!(!stderr.contains("cannot reach"), "{stderr}");
}

#[test]
fn a_body_holds_its_part_of_the_total_until_the_server_has_taken_it() {
    // The server takes none of a 16 MB body until the gate opens.
    let (server, gate) = gated(14 << 20);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        // The 256 MiB bound, shortened for the test.
        command.env("MCP_UNKNOWN_KEYS_TEST_MAX_HELD", (24 << 20).to_string());
    });
    block_on(post(&proxy.url(), &[], &list_request("1", None)));
    let first = long_read("2", 16 << 20);
    let url = proxy.url();
    let writing = thread::spawn(move || block_on(post(&url, &[], &first)).status);
    server.wait_for_head_over(14 << 20);
    // Handed to the server's connection, not yet written: still held. A
    // 12 MB body would pass the 24 MiB: it streams on, unread.
    let second = call(
        "3",
        "fs_read",
        &format!(r#"{{"path":"{}","while_writing":1}}"#, "q".repeat(12 << 20)),
    );
    assert_eq!(block_on(post(&proxy.url(), &[], &second)).status, 200);
    proxy.wait_for_stderr(|line| line.contains("request bodies held whole at once reached 24 MiB"));
    gate.open();
    assert_eq!(writing.join().unwrap(), 200);
    // Written: given back. The next is read, and warned of.
    let after = call("4", "fs_read", r#"{"path":"a","after":1}"#);
    assert_eq!(block_on(post(&proxy.url(), &[], &after)).status, 200);
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) after"));
    let (stderr, _) = proxy.stop();
    assert!(!stderr.contains("while_writing"), "{stderr}");
    assert!(server.bodies().iter().any(|body| body == second.as_bytes()));
}

#[test]
fn past_the_total_held_a_body_streams_through_unread_and_it_is_said() {
    let server = Scripted::start(answer);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        // The 256 MiB bound, shortened for the test.
        command.env("MCP_UNKNOWN_KEYS_TEST_MAX_HELD", "1000");
    });
    let long_path = "p".repeat(500);
    let call_with =
        |id: &str, key: &str| call(id, "fs_read", &format!(r#"{{"path":"{long_path}","{key}":1}}"#));
    block_on(post(&proxy.url(), &[], &list_request("1", None)));
    // A client holds 600 bytes of a body it has not finished.
    let mut slow = TcpStream::connect(&proxy.address).unwrap();
    slow.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 700\r\n\r\n{}",
            " ".repeat(600)
        )
        .as_bytes(),
    )
    .unwrap();
    // Another 600 would pass the 1000 held at once: streamed, unread.
    // (A moment first, for the proxy to read what the slow client sent.)
    thread::sleep(Duration::from_millis(500));
    let streamed = call_with("2", "while_full");
    let answer = block_on(post(&proxy.url(), &[], &streamed));
    assert_eq!(answer.status, 200);
    proxy.wait_for_stderr(|line| line.contains("request bodies held whole at once reached"));
    drop(slow);
    // Held no more: the next is read, and warned of.
    let read = call_with("3", "after");
    assert_eq!(block_on(post(&proxy.url(), &[], &read)).status, 200);
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) after"));
    let (stderr, _) = proxy.stop();
    assert!(!stderr.contains("while_full"), "{stderr}");
    let bodies: Vec<String> = server.drain().iter().map(Seen::text).collect();
    assert!(
        bodies.contains(&streamed),
        "the streamed call reached the server whole"
    );
}

/// User and system CPU time of a process so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn out_of_file_descriptors_the_accept_loop_backs_off_says_it_once_and_recovers() {
    let server = Scripted::start(answer);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        // SAFETY: setrlimit is async-signal-safe, and only this process's
        // limit changes.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    // More idle connections than descriptors: the kernel queues the rest.
    let held: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(&proxy.address).unwrap())
        .collect();
    proxy.wait_for_stderr(|line| line.contains("cannot accept connections"));
    let before = cpu_ticks(proxy.pid());
    let measured = Instant::now();
    thread::sleep(Duration::from_secs(1));
    let used = cpu_ticks(proxy.pid()) - before;
    let over = measured.elapsed();
    // A busy retry takes a whole core; backing off takes next to nothing
    // (clock ticks are 1/100 s).
    assert!(used < 30, "{used} ticks of CPU in {over:?} with nothing to do");
    drop(held);
    assert_eq!(
        block_on(post(&proxy.url(), &[], &list_request("1", None))).status,
        200
    );
    let (stderr, _) = proxy.stop();
    assert_eq!(stderr.matches("cannot accept connections").count(), 1, "{stderr}");
}
