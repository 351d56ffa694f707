//! Said, not silent: a call the proxy could not audit (no listing yet, or
//! after `list_changed` until the next one; a tool no listing names…) is
//! counted per reason in the summary and the log's `coverage`, and the
//! first such call of each reason is said once on stderr. On every door.

use crate::support;

use serde_json::json;
use support::{Session, call, list_request, list_response};

/// The stderr lines that say a call was not audited.
fn said_unaudited(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("was not audited")).collect()
}

#[test]
fn calls_before_the_first_listing_and_after_list_changed_are_counted_and_said_once() {
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&call("1", "fs_read", r#"{"path":"a","ffset":1}"#));
    s.echo(&call("2", "fs_read", r#"{"path":"a"}"#));
    s.echo(&list_request("3", None));
    s.echo(&list_response("3", &[("fs_read", &["path"])], None));
    s.echo(&call("4", "fs_read", r#"{"path":"a"}"#));
    s.echo(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    s.echo(&call("5", "fs_read", r#"{"path":"a","ffset":1}"#));
    s.echo(&call("6", "fs_write", r#"{"path":"a"}"#));
    let finished = s.finish();
    assert_eq!(
        said_unaudited(&finished.stderr),
        [
            "mcp-unknown-keys: the call to fs_read was not audited: no tools/list answer seen yet (or the \
             server's tools changed since the last one); calls are audited once the client lists the tools; \
             the summary counts each call not audited (no_catalogue)"
        ]
    );
    assert_eq!(
        finished.logged_summary()["coverage"],
        json!({"calls": 5, "audited": 1, "unaudited": {"no_catalogue": 4}, "unlisted_tools": {"fs_read": 3, "fs_write": 1}})
    );
    assert!(
        finished.warnings.is_empty(),
        "nothing was said about the unaudited keys"
    );
}

#[test]
fn each_reason_is_said_once_and_quiet_says_none() {
    for quiet in [false, true] {
        let options: &[&str] = if quiet { &["--quiet"] } else { &[] };
        let mut s = Session::start(options, &["cat"]);
        s.echo(&list_request("1", None));
        s.echo(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{}}}},{"name":"open","inputSchema":{"type":"object"}}]}}"#);
        for id in ["2", "3"] {
            s.echo(&call(id, "b", "{}"));
            s.echo(&call(id, "open", r#"{"x":1}"#));
            s.echo(&call(id, "a", r#""not an object""#));
        }
        let finished = s.finish();
        let said = said_unaudited(&finished.stderr);
        if quiet {
            assert!(said.is_empty(), "{said:?}");
        } else {
            let reasons: Vec<&str> = said.iter().map(|l| l.rsplit('(').next().unwrap()).collect();
            assert_eq!(
                reasons,
                ["unlisted_tool)", "declares_nothing)", "unreadable_arguments)"]
            );
        }
        assert_eq!(
            finished.logged_summary()["coverage"]["unaudited"],
            json!({"unlisted_tool": 2, "declares_nothing": 2, "unreadable_arguments": 2})
        );
    }
}

#[cfg(feature = "remote")]
mod remote {
    use super::*;
    use support::block_on;
    use support::remote::{INITIALIZE, INITIALIZED, Server, bridge, post};

    #[test]
    fn the_bridge_counts_and_says_a_call_made_before_any_listing() {
        let server = Server::python(&[]);
        let mut s = bridge(&server.url(), &[]);
        s.send(INITIALIZE);
        s.recv();
        s.send(INITIALIZED);
        s.send(&call("1", "echo", r#"{"text":"hi","verbose":true}"#));
        s.recv();
        let finished = s.finish();
        assert_eq!(said_unaudited(&finished.stderr).len(), 1, "{}", finished.stderr);
        assert!(finished.stderr.contains("no_catalogue"), "{}", finished.stderr);
        assert_eq!(
            finished.logged_summary()["coverage"]["unaudited"],
            json!({"no_catalogue": 1})
        );
    }

    #[test]
    fn the_reverse_proxy_counts_and_says_a_call_made_before_any_listing() {
        let server = Server::python(&[]);
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log.jsonl");
        let port = support::remote::free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut proxy = std::process::Command::new(support::binary())
            .args(["proxy", "--listen", &listen, "--upstream", &server.url()])
            .args(["--log", log.to_str().unwrap()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let url = format!("http://{listen}/mcp");
        block_on(async {
            let deadline = std::time::Instant::now() + support::PATIENCE;
            while std::net::TcpStream::connect(&listen).is_err() {
                assert!(std::time::Instant::now() < deadline, "the proxy listens");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            let opened = post(&url, &[], INITIALIZE).await;
            let session = opened.headers["mcp-session-id"].to_str().unwrap().to_owned();
            let headers = [
                ("mcp-session-id", session.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
            ];
            post(&url, &headers, INITIALIZED).await;
            let called = post(&url, &headers, &call("1", "echo", r#"{"text":"hi"}"#)).await;
            assert_eq!(called.status, 200);
        });
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &proxy.id().to_string()])
            .status();
        let output = std::mem::take(&mut proxy.stderr).unwrap();
        assert!(support::wait_with_patience(&mut proxy).success());
        let stderr = std::io::read_to_string(output).unwrap();
        assert_eq!(said_unaudited(&stderr).len(), 1, "{stderr}");
        let summary = support::read_lines(&log).pop().unwrap();
        assert_eq!(
            summary["summary"]["coverage"]["unaudited"],
            json!({"no_catalogue": 1})
        );
    }
}
