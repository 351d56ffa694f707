//! `--log FILE`: whole lines or nothing, a failure said once, and a log
//! that nobody reads never holds the session.

use crate::support;

use std::os::unix::process::CommandExt;
use std::process::Command;

use support::{Session, call, list_request, list_response, wait_with_patience};

const FS_READ: &[(&str, &[&str])] = &[("fs_read", &["path", "offset"])];

/// Lists `fs_read`, then makes `calls` calls, each with a new undeclared
/// key of about 100 bytes: one warning each.
fn session_of_warnings(s: &mut Session, calls: usize) {
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    for n in 0..calls {
        let key = format!("{n:03}{}", "k".repeat(100));
        s.echo(&call(
            &(n + 2).to_string(),
            "fs_read",
            &format!(r#"{{"path":"a","{key}":1}}"#),
        ));
    }
}

/// The proxy's stderr lines that say the log failed.
fn log_failures(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("the log") && l.contains("failed"))
        .collect()
}

#[test]
fn a_log_on_a_full_disk_is_said_once_on_stderr_even_when_quiet() {
    let mut s = Session::start_logging_to("/dev/full", &["--quiet"], &["cat"]);
    session_of_warnings(&mut s, 3);
    let finished = s.finish();
    assert!(finished.status.success());
    assert_eq!(
        log_failures(&finished.stderr),
        [
            "mcp-unknown-keys: the log /dev/full failed: No space left on device (os error 28); \
             warnings from the 1st on, and the summary, are not in it"
        ],
        "{}",
        finished.stderr
    );
}

#[test]
fn a_log_that_fills_up_keeps_whole_lines_and_says_from_which_warning_on_it_is_missing() {
    // A file-size limit stands in for a full disk: the write that crosses
    // it is cut short, as on a disk that fills up mid-line.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut s = Session::start_with(&log, &[], &["cat"], |command| {
        // SAFETY: setrlimit and signal are async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 1500,
                    rlim_max: 1500,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    });
    session_of_warnings(&mut s, 12);
    let finished = s.finish();
    let written = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert!(!lines.is_empty() && lines.len() < 12, "{written}");
    assert!(written.ends_with('\n'), "no line cut short: {written:?}");
    for line in &lines {
        serde_json::from_str::<serde_json::Value>(line).expect("whole JSON lines only");
    }
    let failures = log_failures(&finished.stderr);
    assert_eq!(failures.len(), 1, "{}", finished.stderr);
    let first_missing = lines.len() + 1;
    assert!(
        failures[0].contains(&format!("warnings from the {first_missing}")),
        "{} lines written: {}",
        lines.len(),
        failures[0]
    );
}

#[test]
fn a_log_that_is_a_fifo_nobody_reads_never_holds_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("log.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut s = Session::start_logging_to(fifo.to_str().unwrap(), &[], &["cat"]);
    session_of_warnings(&mut s, 2);
    let finished = s.finish();
    assert!(finished.status.success());
    assert_eq!(finished.warning_lines().len(), 2, "{}", finished.stderr);
    assert_eq!(log_failures(&finished.stderr).len(), 1, "{}", finished.stderr);
}

#[test]
fn a_log_that_cannot_be_opened_stops_the_proxy_before_the_server_starts() {
    let mut proxy = support::proxy_command(
        &["--log", "/nonexistent-dir/log.jsonl"],
        &["sh", "-c", "echo started"],
    )
    .spawn()
    .unwrap();
    let status = wait_with_patience(&mut proxy);
    assert_eq!(status.code(), Some(2));
}
