//! The host's signals: each terminating one reaches the server, the proxy
//! writes its summary, and the server never outlives the proxy.

use crate::support;

use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use support::{PATIENCE, Session, alive, proxy_command, wait_with_patience};

/// Sends `signal` (a name such as `TERM`) to `pid`.
fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Whether `signal` is ignored in this process: its children inherit that,
/// and a shell cannot trap a signal ignored when it started.
fn ignored(signal: libc::c_int) -> bool {
    let mut action = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `action`.
    let read = unsafe { libc::sigaction(signal, std::ptr::null(), action.as_mut_ptr()) };
    // SAFETY: sigaction filled it in when it returned 0.
    read == 0 && unsafe { action.assume_init() }.sa_sigaction == libc::SIG_IGN
}

#[test]
fn every_terminating_signal_reaches_the_server_and_the_summary_is_written() {
    let signals = [
        ("HUP", libc::SIGHUP),
        ("INT", libc::SIGINT),
        ("QUIT", libc::SIGQUIT),
        ("TERM", libc::SIGTERM),
        ("USR1", libc::SIGUSR1),
        ("USR2", libc::SIGUSR2),
        ("ALRM", libc::SIGALRM),
    ];
    for (name, number) in signals {
        assert!(
            !ignored(number),
            "SIG{name} is ignored in the test process (run under nohup, or from a shell that ignores it), \
             so the test server's shell cannot trap it: run the tests where it is not ignored"
        );
    }
    for (signal, _) in signals {
        let mut s = Session::start(
            &[],
            &[
                "sh",
                "-c",
                "trap 'echo caught $0; exit 40' $0; echo ready; while :; do sleep 0.05; done",
                signal,
            ],
        );
        assert_eq!(s.recv(), b"ready\n");
        kill(signal, s.child.id());
        let status = wait_with_patience(&mut s.child);
        assert_eq!(s.recv(), format!("caught {signal}\n").as_bytes(), "SIG{signal}");
        assert_eq!(status.code(), Some(40), "SIG{signal}: the server's own status");
        let log = std::fs::read_to_string(&s.log).unwrap();
        assert!(
            log.lines()
                .last()
                .is_some_and(|l| l.starts_with(r#"{"summary":"#)),
            "SIG{signal}: the summary ends the log: {log:?}"
        );
    }
}

#[test]
fn a_server_that_ignores_the_signal_dies_with_the_proxy() {
    // The host's usual way out: SIGTERM, then SIGKILL to the proxy. The
    // server shrugs off SIGTERM and cannot be told of SIGKILL, yet must not
    // outlive the proxy.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let script = format!(
        "trap '' TERM; echo $$ > '{}'; echo ready; while :; do sleep 0.05; done",
        pid_file.display()
    );
    let mut s = Session::start(&[], &["sh", "-c", &script]);
    assert_eq!(s.recv(), b"ready\n");
    let server: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    kill("TERM", s.child.id());
    thread::sleep(Duration::from_millis(500));
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "the server ignored it; the proxy waits"
    );
    assert!(alive(server));
    kill("KILL", s.child.id());
    let _ = wait_with_patience(&mut s.child);
    let deadline = Instant::now() + PATIENCE;
    while alive(server) {
        if Instant::now() > deadline {
            let _ = Command::new("kill").args(["-KILL", &server.to_string()]).status();
            panic!("the server outlived the proxy");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_signal_after_the_server_exited_ends_a_proxy_whose_client_reads_no_more() {
    // The server wrote more than the client's pipe holds and exited; the client
    // reads nothing. 100,000 bytes: more than the client's pipe (64 KiB) and
    // less than it and the server's pipe together, so the server can exit
    // however little the relay holds in between. The host's signal ends the wait, with the server's
    // status and the summary.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut proxy = proxy_command(
        &["--log", log.to_str().unwrap()],
        &["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exit 6"],
    )
    .spawn()
    .unwrap();
    thread::sleep(Duration::from_millis(1500));
    assert!(
        proxy.try_wait().unwrap().is_none(),
        "the proxy waits for the client"
    );
    kill("TERM", proxy.id());
    assert_eq!(wait_with_patience(&mut proxy).code(), Some(6));
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.starts_with(r#"{"summary":"#), "{log:?}");
}
