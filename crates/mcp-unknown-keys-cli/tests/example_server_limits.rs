//! The example server's limits: what it refuses to read, how much it reads,
//! and the answer to a request too long to read. Also its confinement to
//! its root against symbolic links, dangling or swapped in mid-call.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;

use mcp_unknown_keys::{McpServer, Provider, ToolCall, ToolResult};
use serde_json::{Value, json};
use support::{PATIENCE, ScratchDir, block_on, wait_with_patience};

async fn connect(root: &ScratchDir) -> McpServer {
    McpServer::stdio(support::binary())
        .args(["example-server", "--root"])
        .arg(root.path())
        .forward_stderr(false)
        .connect()
        .await
        .unwrap()
}

async fn call(server: &McpServer, name: &str, arguments: Value) -> ToolResult {
    let calls = vec![ToolCall::new("1", name, arguments.to_string())];
    let answer = tokio::time::timeout(PATIENCE, server.execute_tool_calls(calls))
        .await
        .unwrap_or_else(|_| panic!("{name} answered in time"));
    answer.unwrap().remove(0)
}

#[test]
fn write_does_not_follow_a_dangling_symbolic_link_out_of_the_root() {
    let root = ScratchDir::new();
    let outside = ScratchDir::new();
    let target = outside.path().join("created.txt");
    std::os::unix::fs::symlink(&target, root.path().join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("away")).unwrap();
    block_on(async {
        let server = connect(&root).await;
        for path in ["link.txt", "away/new.txt", "away/deeper/new.txt"] {
            let written = call(&server, "write", json!({"path": path, "content": "x"})).await;
            assert!(written.is_error, "{path}: {}", written.content);
            assert!(
                written.content.contains("outside the root"),
                "{}",
                written.content
            );
        }
        server.close().await;
    });
    assert!(!target.exists(), "written outside the root");
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn a_symbolic_link_swapped_in_while_calls_run_never_leads_out() {
    let root = ScratchDir::new();
    let outside = ScratchDir::new();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let swap = root.path().join("swap");
    let inside = root.path().join("real");
    std::fs::create_dir(&inside).unwrap();
    std::fs::write(inside.join("secret.txt"), "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, swap, inside, outside) = (
            stop.clone(),
            swap.clone(),
            inside.clone(),
            outside.path().to_owned(),
        );
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for target in [&inside, &outside] {
                    let staged = swap.with_extension("new");
                    let _ = std::fs::remove_file(&staged);
                    std::os::unix::fs::symlink(target, &staged).unwrap();
                    std::fs::rename(&staged, &swap).unwrap();
                }
            }
        })
    };
    block_on(async {
        let server = connect(&root).await;
        for n in 0..150 {
            let read = call(&server, "read", json!({"path": "swap/secret.txt"})).await;
            assert_ne!(
                read.content, "secret",
                "read through a link swapped to the outside"
            );
            let path = format!("swap/written-{n}.txt");
            call(&server, "write", json!({"path": path, "content": "x"})).await;
        }
        server.close().await;
    });
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let escaped: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name())
        .filter(|name| name != "secret.txt")
        .collect();
    assert!(escaped.is_empty(), "written outside the root: {escaped:?}");
}

#[test]
fn reading_a_fifo_is_refused_and_the_server_goes_on_answering() {
    let root = ScratchDir::seeded();
    let fifo = root.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    block_on(async {
        let server = connect(&root).await;
        let read = call(&server, "read", json!({"path": "pipe"})).await;
        assert!(read.is_error);
        assert!(read.content.contains("not a regular file"), "{}", read.content);
        let written = call(&server, "write", json!({"path": "pipe", "content": "x"})).await;
        assert!(written.is_error, "{}", written.content);
        let listing = call(&server, "list", json!({})).await;
        assert!(listing.content.contains("notes.txt"));
        let directory = call(&server, "read", json!({"path": "src"})).await;
        assert!(directory.is_error);
        server.close().await;
    });
}

#[test]
fn a_large_file_is_read_up_to_a_cap_and_the_answer_says_so() {
    let root = ScratchDir::new();
    let line = "é".repeat(49) + "\n"; // 99 bytes, two per character
    std::fs::write(root.path().join("big.txt"), line.repeat(30_000)).unwrap();
    block_on(async {
        let server = connect(&root).await;
        let read = call(&server, "read", json!({"path": "big.txt"})).await;
        assert!(!read.is_error, "{}", read.content);
        assert!(
            read.content.len() <= (1 << 20) + 200,
            "{} bytes",
            read.content.len()
        );
        assert!(read.content.starts_with(&line), "whole characters");
        assert!(
            read.content
                .ends_with("[only the first 1 MiB of this 2970000-byte file were read]"),
            "{}",
            &read.content[read.content.len() - 100..]
        );
        server.close().await;
    });
}

#[test]
fn a_request_longer_than_the_server_reads_is_answered_with_an_error() {
    let root = ScratchDir::seeded();
    let mut server = Command::new(support::binary())
        .args(["example-server", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let (send, answers) = mpsc::channel();
    let stdout = server.stdout.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if send.send(serde_json::from_str::<Value>(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let mut send = |line: &str| writeln!(stdin, "{line}").unwrap();
    let answer = || answers.recv_timeout(PATIENCE).expect("an answer in time");
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"limits","version":"1"}}}"#,
    );
    answer();
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{{"name":"task","arguments":{{"prompt":"{}"}}}}}}"#,
        "p".repeat(17 << 20)
    );
    send(&huge);
    let refused = answer();
    assert_eq!(refused["id"], "big", "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{} bytes", huge.len())) && message.contains("16 MiB"),
        "{message}"
    );
    send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    assert_eq!(answer()["id"], "after", "the server reads on");
    let _ = server.kill();
    wait_with_patience(&mut server);
}
