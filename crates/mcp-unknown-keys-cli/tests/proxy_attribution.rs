//! Attribution: every `--log` line says when (`ts`), which server
//! (`server`) and which run (`session`); stderr names the server when
//! `--name` is given. On every door.

use crate::support;

use serde_json::Value;
use support::{Session, call, list_request, list_response, read_lines};

const FS_READ: &[(&str, &[&str])] = &[("fs_read", &["path"])];

/// A session of `cat` with one warning, one verdict and the summary.
fn one_of_each(options: &[&str]) -> support::Finished {
    let mut s = Session::start(options, &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&call("2", "fs_read", r#"{"path":"a","ffset":1}"#));
    s.finish()
}

fn lines(finished: &support::Finished) -> Vec<Value> {
    finished
        .log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `2026-11-30T07:00:00.123Z`: RFC 3339, UTC, milliseconds.
fn is_rfc3339_millis(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| range.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

#[test]
fn every_log_line_says_when_which_server_and_which_run() {
    let finished = one_of_each(&["--name", "files"]);
    let lines = lines(&finished);
    let kinds: Vec<&str> = lines
        .iter()
        .map(|line| {
            ["verdict", "summary"]
                .into_iter()
                .find(|kind| line.get(kind).is_some())
                .unwrap_or("warning")
        })
        .collect();
    assert_eq!(kinds, ["warning", "verdict", "summary"]);
    let session = lines[0]["session"].as_str().unwrap().to_owned();
    assert_eq!(session.len(), 32);
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let this_year = 1970 + now / 31_556_952;
    for line in &lines {
        let ts = line["ts"].as_str().unwrap();
        assert!(is_rfc3339_millis(ts), "{ts}");
        assert!(ts.starts_with(&this_year.to_string()), "{ts}");
        assert_eq!(line["server"], "files");
        assert_eq!(line["session"], session.as_str());
    }
    // Stderr names the server, and stays greppable.
    assert!(
        finished.stderr.lines().any(|l| l
            .starts_with("mcp-unknown-keys [files]: fs_read was called with undeclared argument(s) ffset")),
        "{}",
        finished.stderr
    );
    assert!(
        finished
            .stderr
            .contains("mcp-unknown-keys [files] summary: 1 call(s): all audited"),
        "{}",
        finished.stderr
    );
}

#[test]
fn without_a_name_the_server_is_the_command_s_base_name_and_each_run_is_a_session() {
    let first = lines(&one_of_each(&[]));
    let second = lines(&one_of_each(&[]));
    assert_eq!(first[0]["server"], "cat");
    assert_ne!(first[0]["session"], second[0]["session"]);
}

#[test]
fn the_log_s_attributed_lines_still_read_back_with_audit() {
    let finished = one_of_each(&["--name", "files"]);
    let mut audit = std::process::Command::new(support::binary())
        .args(["audit", "--format", "text"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut audit.stdin.take().unwrap(), finished.log.as_bytes()).unwrap();
    let report = String::from_utf8(audit.wait_with_output().unwrap().stdout).unwrap();
    assert!(report.contains("fs_read"), "{report}");
    assert!(report.contains("ffset"), "{report}");
}

#[cfg(feature = "remote")]
mod remote {
    use super::*;
    use support::remote::{INITIALIZE, INITIALIZED, Server, bridge};

    #[test]
    fn the_bridge_names_the_server_by_its_url_s_host() {
        let server = Server::python(&[]);
        let mut s = bridge(&server.url(), &["--quiet"]);
        s.send(INITIALIZE);
        s.recv();
        s.send(INITIALIZED);
        s.send(&list_request("1", None));
        s.recv();
        s.send(&call("2", "echo", r#"{"text":"hi","verbose":true}"#));
        s.recv();
        let log = s.log.clone();
        support::remote::wait_for_lines(&log, 2);
        let lines = read_lines(&log);
        assert!(lines.len() >= 2, "{lines:?}");
        for line in lines {
            assert_eq!(line["server"], "127.0.0.1");
            assert!(line.get("upstream_session").is_none());
        }
    }
}
