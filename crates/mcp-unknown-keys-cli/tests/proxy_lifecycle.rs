//! The proxy's life with its server and its client: exits, signals,
//! disconnects, start failures and back-pressure.

use crate::support;

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use support::{Session, alive, proxy_command, wait_with_patience};

#[test]
fn a_server_that_exits_mid_session_has_its_output_forwarded_and_its_status_returned() {
    // The client keeps stdin open: the server's exit alone ends the proxy.
    let mut s = Session::start(
        &[],
        &[
            "sh",
            "-c",
            "read line; echo \"got $line\"; printf 'last words'; exit 3",
        ],
    );
    s.send("hello");
    let finished = {
        assert_eq!(s.recv(), b"got hello\n");
        let status = wait_with_patience(&mut s.child);
        (status, s.recv())
    };
    assert_eq!(finished.0.code(), Some(3));
    assert_eq!(finished.1, b"last words");
}

#[test]
fn a_process_the_server_left_behind_does_not_keep_the_proxy_alive() {
    // The background sleep inherits the server's stdout, so that pipe never
    // ends while it lives.
    let mut s = Session::start(&[], &["sh", "-c", "sleep 60 & echo $!; exit 4"]);
    let leftover = String::from_utf8(s.recv()).unwrap().trim().to_owned();
    let status = wait_with_patience(&mut s.child);
    Command::new("kill").arg(&leftover).status().unwrap();
    assert_eq!(status.code(), Some(4));
}

#[test]
fn what_the_server_left_running_in_its_group_is_stopped_when_the_session_ends() {
    // One helper stops at SIGTERM; the other shrugs it off and needs
    // SIGKILL. Neither may outlive the session.
    let stubborn = "trap '' TERM; while :; do sleep 0.05; done";
    let script = format!("sleep 60 & echo $!; sh -c \"{stubborn}\" & echo $!; exit 4");
    let mut s = Session::start(&[], &["sh", "-c", &script]);
    let mut pids = String::new();
    while pids.lines().count() < 2 {
        pids.push_str(&String::from_utf8(s.recv()).unwrap());
    }
    let helpers: Vec<u32> = pids.lines().map(|pid| pid.trim().parse().unwrap()).collect();
    let status = wait_with_patience(&mut s.child);
    let still_running: Vec<u32> = helpers.iter().copied().filter(|&pid| alive(pid)).collect();
    for pid in &still_running {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert_eq!(
        still_running,
        Vec::<u32>::new(),
        "left running after the proxy exited"
    );
    assert_eq!(status.code(), Some(4));
}

#[test]
fn a_process_the_server_left_writing_does_not_keep_the_proxy_alive() {
    // It keeps the server's stdout open and busy: there is never a pause to
    // take for the end of the output.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("ticker.pid");
    let script = format!(
        "(while :; do echo tick; sleep 0.1; done) & echo $! > '{}'; exit 4",
        pid_file.display()
    );
    let s = Session::start(&[], &["sh", "-c", &script]);
    let finished = s.finish();
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let _ = Command::new("kill").arg(pid.trim()).status();
    }
    assert_eq!(finished.status.code(), Some(4));
}

#[test]
fn signals_reach_what_the_server_started_too() {
    // The server waits for its own child; only a signal sent to the whole
    // group stops the child, and with it the server.
    let child = "trap 'echo child stopped; exit 0' TERM; echo ready; while :; do sleep 0.05; done";
    let script = format!("sh -c \"{child}\" & pid=$!; trap 'wait $pid; exit 7' TERM; wait $pid");
    let mut s = Session::start(&[], &["sh", "-c", &script]);
    assert_eq!(s.recv(), b"ready\n");
    let pid = s.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = wait_with_patience(&mut s.child);
    assert_eq!(s.recv(), b"child stopped\n");
    assert_eq!(status.code(), Some(7));
}

#[test]
fn a_server_killed_by_a_signal_gives_128_plus_the_signal() {
    let mut s = Session::start(&[], &["sh", "-c", "echo before; kill -SEGV $$"]);
    assert_eq!(s.recv(), b"before\n");
    let status = wait_with_patience(&mut s.child);
    assert_eq!(status.code(), Some(128 + 11));
}

#[test]
fn when_the_client_disconnects_the_server_sees_end_of_input_and_the_proxy_exits_with_it() {
    let mut s = Session::start(&[], &["sh", "-c", "cat >/dev/null; echo bye; exit 5"]);
    s.send("anything");
    let finished = s.finish();
    // Its own status, not 143: it exited on its own, without being terminated.
    assert_eq!(finished.status.code(), Some(5));
    assert_eq!(finished.stdout, b"bye\n");
}

#[test]
fn a_client_that_closes_stdin_still_gets_an_answer_that_takes_seconds() {
    // The client sends its last request and closes stdin while it waits:
    // the server sees the end of its input, and is left to finish.
    let mut s = Session::start(
        &[],
        &["sh", "-c", "read line; sleep 4.5; echo \"answer to $line\""],
    );
    s.send("the question");
    let finished = s.finish();
    assert_eq!(finished.stdout, b"answer to the question\n");
    assert!(finished.status.success(), "{:?}", finished.status);
}

#[test]
fn a_server_that_ignores_end_of_input_runs_until_the_host_stops_the_proxy() {
    // No timer stops the server: the host decides when the session ends.
    let mut proxy = proxy_command(&[], &["sleep", "97.125"]).spawn().unwrap();
    drop(proxy.stdin.take());
    thread::sleep(Duration::from_millis(3500));
    assert!(
        proxy.try_wait().unwrap().is_none(),
        "the proxy waits for the server"
    );
    assert!(process_running("sleep\097.125"));
    terminate(&mut proxy);
    assert!(!process_running("sleep\097.125"));
}

#[test]
fn a_command_that_cannot_be_started_is_one_clear_line_and_a_failure() {
    let output = proxy_command(&[], &["no-such-mcp-server-anywhere"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("mcp-unknown-keys: cannot start no-such-mcp-server-anywhere:"),
        "{stderr}"
    );
}

#[test]
fn an_unwritable_log_is_a_clear_failure_before_the_server_starts() {
    let output = proxy_command(
        &["--log", "/nonexistent-dir/warnings.jsonl"],
        &["sh", "-c", "echo started"],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "the server never started");
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot open the log"));
}

#[test]
fn the_server_inherits_the_environment_and_working_directory_and_its_stderr_passes_through() {
    let dir = tempfile::tempdir().unwrap();
    let output = proxy_command(
        &[],
        &["sh", "-c", "pwd; echo \"$MCP_UK_MARK\"; echo to-stderr >&2"],
    )
    .current_dir(dir.path())
    .env("MCP_UK_MARK", "inherited")
    .stdin(Stdio::null())
    .output()
    .unwrap();
    let expected = format!("{}\ninherited\n", dir.path().canonicalize().unwrap().display());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), expected);
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "to-stderr\n");
    assert!(output.status.success());
}

#[test]
fn a_server_that_stops_reading_makes_the_client_wait_instead_of_the_proxy_buffering() {
    let mut proxy = proxy_command(&[], &["sleep", "30"]).spawn().unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        let mut written = 0usize;
        for _ in 0..256 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    thread::sleep(Duration::from_millis(1500));
    let rss = resident_kib(proxy.id());
    assert!(!writer.is_finished(), "256 MiB cannot have been taken");
    assert!(rss < 32 * 1024, "the proxy holds {rss} KiB");
    terminate(&mut proxy);
    assert!(writer.join().unwrap() < 64 << 20);
}

#[test]
fn a_client_that_stops_reading_makes_the_server_wait_instead_of_the_proxy_buffering() {
    let mut proxy = proxy_command(
        &[],
        &[
            "yes",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}",
        ],
    )
    .spawn()
    .unwrap();
    thread::sleep(Duration::from_millis(1500));
    let rss = resident_kib(proxy.id());
    assert!(rss < 32 * 1024, "the proxy holds {rss} KiB");
    let mut some = [0u8; 4096];
    proxy.stdout.as_mut().unwrap().read_exact(&mut some).unwrap();
    assert!(some.starts_with(b"{\"jsonrpc\""));
    terminate(&mut proxy);
}

fn terminate(proxy: &mut std::process::Child) {
    Command::new("kill")
        .args(["-TERM", &proxy.id().to_string()])
        .status()
        .unwrap();
    let status = wait_with_patience(proxy);
    assert!(
        status.code() == Some(143) || status.signal() == Some(15),
        "{status:?}"
    );
}

/// The resident memory of a process, from /proc.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Whether some process has exactly this command line (NUL-separated).
fn process_running(cmdline: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|c| c.strip_suffix(b"\0").unwrap_or(&c) == cmdline.as_bytes())
    })
}
