//! Nothing the tap does holds the relay: a call that floods the audit with
//! undeclared keys delays no later message.

use crate::support;

use std::time::{Duration, Instant};

use support::{Session, call, list_request, list_response};

const FS_READ: &[(&str, &[&str])] = &[("fs_read", &["path", "offset"])];

/// A `tools/call` carrying `keys` undeclared keys.
fn flood(id: &str, keys: usize) -> String {
    let mut arguments = String::from(r#"{"path":"a""#);
    for n in 0..keys {
        arguments.push_str(&format!(r#","undeclared_{n}":{n}"#));
    }
    arguments.push('}');
    call(id, "fs_read", &arguments)
}

/// How long a ping takes to come back once `before` has been relayed
/// both ways (the server is `cat`).
fn ping_after(s: &mut Session, before: &str) -> Duration {
    s.send(before);
    assert_eq!(s.recv().len(), before.len() + 1);
    let ping = r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#;
    let started = Instant::now();
    s.send(ping);
    assert_eq!(s.recv(), format!("{ping}\n").as_bytes());
    started.elapsed()
}

#[test]
fn a_ping_after_a_call_with_a_hundred_thousand_undeclared_keys_is_not_delayed() {
    let mut s = Session::start(&["--quiet"], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    // The same bytes without an undeclared key: what relaying them costs.
    let plain = call(
        "2",
        "fs_read",
        &format!(r#"{{"path":"{}"}}"#, "p".repeat(flood("3", 100_000).len())),
    );
    let relayed = ping_after(&mut s, &plain);
    let flooded = ping_after(&mut s, &flood("3", 100_000));
    eprintln!("a ping after the bytes alone: {relayed:?}; after the flood: {flooded:?}");
    // Generous: a relay that waited for the audit of 100,000 keys took
    // seconds; one that does not is as fast as relaying the bytes.
    assert!(
        flooded < relayed * 3 + Duration::from_millis(500),
        "the flood delayed the ping: {flooded:?}, against {relayed:?} for the same bytes"
    );
    // The audit is done all the same, off the relay, within the bound on
    // the keys read of one call.
    s.wait_for_warnings(1);
    let finished = s.finish();
    assert!(finished.status.success());
    let found = finished.logged_summary();
    assert_eq!(
        found["findings"].as_array().map(Vec::len),
        Some(mcp_unknown_keys::limits::MAX_UNDECLARED_PER_CALL)
    );
}

/// A call to `fs_read` with the undeclared keys `k{from}` … `k{to - 1}`.
fn keys(id: usize, from: usize, to: usize) -> String {
    let members: Vec<String> = (from..to).map(|n| format!(r#""k{n}":1"#)).collect();
    call(&id.to_string(), "fs_read", &format!("{{{}}}", members.join(",")))
}

#[test]
fn past_the_pairs_remembered_new_pairs_are_counted_and_that_is_said_once() {
    use mcp_unknown_keys::limits::MAX_SAID_PAIRS;
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    let total = MAX_SAID_PAIRS + 1_500;
    // Each call until the memory is full says new pairs: waiting for its
    // warning keeps the audit in step, so that a loaded machine leaves no
    // more than the last calls, which say nothing, for the exit to count
    // unread (the session's end never waits long for the audit).
    let warned = MAX_SAID_PAIRS.div_ceil(1_000);
    for (n, from) in (0..total).step_by(1_000).enumerate() {
        s.echo(&keys(n + 2, from, (from + 1_000).min(total)));
        if n < warned {
            s.wait_for_warnings(n + 1);
        }
    }
    let finished = s.finish();
    assert!(finished.status.success());
    let full = finished
        .stderr
        .matches("distinct (tool, key) pairs have been said")
        .count();
    assert_eq!(full, 1, "{}", finished.stderr);
    let summary = finished.logged_summary();
    assert_eq!(summary["findings"].as_array().map(Vec::len), Some(MAX_SAID_PAIRS));
    assert_eq!(summary["unkept_findings"], 1_500);
    assert!(
        finished
            .stderr
            .contains("1500 more occurrence(s) of pairs found past the 65536 kept")
    );
}
