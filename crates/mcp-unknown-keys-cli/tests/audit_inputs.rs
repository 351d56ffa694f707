//! How `audit` takes its inputs: stdin read once, and each file opened only
//! when its turn comes.

mod audit_support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use audit_support::*;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

/// Runs `command` with `stdin`, killing it if it has not ended within a
/// minute (a hang fails the test rather than holding it forever).
fn run_within_a_minute(mut command: Command, stdin: &str) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-unknown-keys");
    let mut input = child.stdin.take().expect("stdin");
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let pid = child.id();
    let (done, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let output = match waited.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.expect("wait for mcp-unknown-keys"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("mcp-unknown-keys audit did not end within a minute");
        }
    };
    Run {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

#[test]
fn stdin_named_twice_is_refused_not_waited_on() {
    let text = lines(&[
        mcp_catalogue(),
        openai_call("c1", "fs_read", json!({"path": "a"})),
    ]);
    let mut command = Command::new(BIN);
    command.args(["audit", "-", "-"]);
    let run = run_within_a_minute(command, &text);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("stdin (-) is given more than once"),
        "{}",
        run.stderr
    );
}

/// More files than the process may hold open at once: each is opened when
/// read, and closed before the next.
#[cfg(unix)]
#[test]
fn more_files_than_descriptors_are_read_one_at_a_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for at in 0..200 {
        let path = dir.path().join(format!("{at:03}.jsonl"));
        let call = openai_call(&format!("c{at}"), "fs_read", json!({"path": "a"}));
        std::fs::write(&path, lines(&[mcp_catalogue(), call])).expect("write a log");
        paths.push(path.display().to_string());
    }
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" audit "$@""#)
        .arg(BIN)
        .args(&paths);
    let run = run_within_a_minute(command, "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(coverage(&run), all_audited(200));
    // Still checked before anything is read: a misspelt name fails first.
    let mut command = Command::new(BIN);
    command
        .arg("audit")
        .args(&paths)
        .arg(dir.path().join("missing.jsonl"));
    let run = run_within_a_minute(command, "");
    assert_eq!((run.code, run.stdout.as_str()), (2, ""), "{}", run.stderr);
}
