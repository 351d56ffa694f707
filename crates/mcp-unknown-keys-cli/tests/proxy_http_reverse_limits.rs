//! `proxy --listen` at its bounds: a request body that trickles in is cut
//! (as hyper cuts headers that do), the bodies held whole at once are
//! bounded in total, and running out of file descriptors neither spins a
//! core nor goes unsaid; each time the proxy serves on.

#![cfg(feature = "remote")]

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::remote::post;
use support::reverse::Reverse;
use support::scripted::{Reply, Scripted, Seen};
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

#[test]
fn a_body_that_trickles_in_is_cut_and_the_proxy_serves_on() {
    let server = Scripted::start(answer);
    let proxy = Reverse::start_with(&server.url(), &[], |command| {
        // The 30 s bound, shortened for the test.
        command.env("MCP_UNKNOWN_KEYS_TEST_BODY_WITHIN_MS", "500");
    });
    let mut stream = TcpStream::connect(&proxy.address).unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        .unwrap();
    // A byte every 50 ms: never idle long, never whole.
    let mut trickle = stream.try_clone().unwrap();
    thread::spawn(move || {
        for _ in 0..400 {
            if trickle.write_all(b" ").is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    });
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buffer = [0; 1024];
    let ended = loop {
        match stream.read(&mut buffer) {
            Ok(0) => break true,
            Ok(read) => answer.extend_from_slice(&buffer[..read]),
            // Reset (the rest of the body unread), or not cut in time.
            Err(_) => break started.elapsed() < PATIENCE,
        }
    };
    assert!(ended, "the request was still held after {:?}", started.elapsed());
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    assert!(server.drain().is_empty(), "nothing reached the server");
    assert_eq!(
        block_on(post(&proxy.url(), &[], &list_request("1", None))).status,
        200
    );
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
