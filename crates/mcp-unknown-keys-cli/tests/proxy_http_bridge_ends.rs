//! `proxy --url URL` and the host's ends of stdio: pipes, which the bridge
//! reads and writes on its runtime (non-blocking, and blocking again when
//! it leaves them), and files, which it reads and writes on threads.

#![cfg(feature = "remote")]

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::support;

use serde_json::Value;
use support::remote::{INITIALIZE, INITIALIZED, Server, proxy_binary};
use support::{PATIENCE, read_warnings, summary};

/// The host's side of a short session: the handshake, a listing and a call
/// carrying a key `echo` does not declare.
const LINES: [&str; 4] = [
    INITIALIZE,
    INITIALIZED,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","verbose":true}}}"#,
];

fn bridge_command(server: &Server, log: &std::path::Path) -> Command {
    let mut command = Command::new(proxy_binary());
    command
        .args(["proxy", "--log", log.to_str().unwrap(), "--url", &server.url()])
        .stderr(Stdio::piped());
    command
}

/// The ids of the answers among `lines`, sorted.
fn answered_ids(lines: &[Value]) -> Vec<i64> {
    let mut ids: Vec<i64> = lines.iter().filter_map(|line| line["id"].as_i64()).collect();
    ids.sort_unstable();
    ids
}

fn is_nonblocking(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: F_GETFL on a descriptor the test holds open.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0, "fcntl failed");
    flags & libc::O_NONBLOCK != 0
}

#[test]
fn lines_from_a_file_are_sent_and_answers_written_to_a_file() {
    let server = Server::python(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    let log = dir.path().join("log");
    std::fs::write(&input, LINES.join("\n") + "\n").unwrap();
    let mut child = bridge_command(&server, &log)
        .stdin(File::open(&input).unwrap())
        .stdout(File::create(&output).unwrap())
        .spawn()
        .unwrap();
    // The end of the file ends the session, once every line is answered.
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the bridge did not exit at the end of its input");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert!(status.success());
    let answers: Vec<Value> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON message"))
        .collect();
    // Every line is sent, in order (the call may go before the listing's
    // answer is back, so whether it is audited is not asked here).
    assert_eq!(answered_ids(&answers), [0, 1, 2]);
    assert_eq!(answers.len(), 3);
}

#[test]
fn pipes_are_served_non_blocking_and_left_blocking() {
    let server = Server::python(&[]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let (stdin, mut to_bridge) = std::io::pipe().unwrap();
    let (from_bridge, stdout) = std::io::pipe().unwrap();
    // The test keeps a descriptor of each of the bridge's ends, sharing
    // their file descriptions, to read their mode.
    let (stdin_seen, stdout_seen) = (stdin.try_clone().unwrap(), stdout.try_clone().unwrap());
    let mut child = bridge_command(&server, &log)
        .stdin(stdin)
        .stdout(stdout)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    while !(is_nonblocking(stdin_seen.as_fd()) && is_nonblocking(stdout_seen.as_fd())) {
        assert!(
            Instant::now() < deadline,
            "the bridge never made its pipes non-blocking"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut answers = Vec::new();
    let mut from_bridge = BufReader::new(from_bridge);
    let mut read_answers = |count: usize| {
        while answers.len() < count {
            let mut line = String::new();
            assert!(
                from_bridge.read_line(&mut line).unwrap() > 0,
                "the bridge ended early"
            );
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        answered_ids(&answers)
    };
    // The call goes once the listing is answered, as a host's would.
    for line in &LINES[..3] {
        writeln!(to_bridge, "{line}").unwrap();
    }
    assert_eq!(read_answers(2), [0, 1]);
    writeln!(to_bridge, "{}", LINES[3]).unwrap();
    drop(to_bridge);
    assert_eq!(read_answers(3), [0, 1, 2]);
    assert!(child.wait().unwrap().success());
    assert!(!is_nonblocking(stdin_seen.as_fd()), "stdin was left non-blocking");
    assert!(
        !is_nonblocking(stdout_seen.as_fd()),
        "stdout was left non-blocking"
    );
    let said: Vec<String> = summary(&read_warnings(&log))
        .into_iter()
        .flat_map(|(_, keys, _)| keys)
        .collect();
    assert_eq!(said, ["verbose"]);
}
