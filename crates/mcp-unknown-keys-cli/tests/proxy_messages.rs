//! The proxy reads each message as the server's JSON parser does, so a call
//! the server runs is a call the proxy audits: escaped methods, repeated
//! members, arguments sent as a JSON string, ids equal by value, batches.
//! And the `audit` command reads the same lines the same way: for any
//! recorded session, the recording audits into the warnings, the verdicts
//! and the coverage the proxy logged.

use crate::support;

use std::io::{BufRead, BufReader, Write};

use support::{
    ScratchDir, Session, call, list_request, list_response, prerequisite, proxy_command, summary,
    unattributed, wait_with_patience,
};

const FS_READ: &[(&str, &[&str])] = &[("fs_read", &["path", "offset"])];

fn says(tool: &str, keys: &[&str], id: &str) -> (String, Vec<String>, String) {
    (
        tool.into(),
        keys.iter().map(|k| k.to_string()).collect(),
        id.into(),
    )
}

/// Calls that a server's parser reads as `tools/call` with an undeclared
/// key, though written unusually; each is audited.
const UNUSUAL_CALLS: [&str; 6] = [
    // The method written with an escape.
    r#"{"jsonrpc":"2.0","id":2,"method":"\u0074ools/call","params":{"name":"fs_read","arguments":{"path":"a","k2":1}}}"#,
    // Member names written with escapes.
    r#"{"jsonrpc":"2.0","\u0069d":3,"method":"tools/call","par\u0061ms":{"n\u0061me":"fs_read","\u0061rguments":{"k3":1}}}"#,
    // A repeated method: the last one counts.
    r#"{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/call","params":{"name":"fs_read","arguments":{"k4":1}}}"#,
    // A repeated name and arguments: the last ones count.
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"other","arguments":{"path":"a"},"name":"fs_read","arguments":{"k5":1}}}"#,
    // Arguments sent as a JSON string.
    r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fs_read","arguments":"{\"path\":\"a\",\"k6\":1}"}}"#,
    // A repeated id: the last one counts.
    r#"{"jsonrpc":"2.0","id":70,"method":"tools/call","id":7,"params":{"name":"fs_read","arguments":{"k7":1}}}"#,
];

#[test]
fn calls_written_unusually_are_audited_as_the_server_reads_them() {
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    for line in UNUSUAL_CALLS {
        s.echo(line);
    }
    let finished = s.finish();
    assert_eq!(
        summary(&finished.warnings),
        [
            says("fs_read", &["k2"], "2"),
            says("fs_read", &["k3"], "3"),
            says("fs_read", &["k4"], "4"),
            says("fs_read", &["k5"], "5"),
            says("fs_read", &["k6"], "6"),
            says("fs_read", &["k7"], "7"),
        ]
    );
}

#[test]
fn a_batch_is_read_message_by_message() {
    let mut s = Session::start(&[], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", FS_READ, None));
    s.echo(&format!(
        "[{},{}]",
        call("2", "fs_read", r#"{"path":"a","in_a_batch":1}"#),
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#
    ));
    assert_eq!(
        summary(&s.finish().warnings),
        [says("fs_read", &["in_a_batch"], "2")]
    );
}

#[test]
fn the_audit_command_reads_the_same_lines_the_same_way() {
    let mut recording = vec![list_request("1", None), list_response("1", FS_READ, None)];
    recording.extend(UNUSUAL_CALLS.map(str::to_owned));
    let (proxy, offline) = proxy_and_audit(&recording);
    assert_eq!(proxy.warnings.len(), UNUSUAL_CALLS.len());
    assert_eq!(offline, proxy);
}

/// What a door said of a session: its warnings and verdicts (attribution
/// aside), and its coverage.
#[derive(Debug, PartialEq)]
struct Said {
    warnings: Vec<serde_json::Value>,
    verdicts: Vec<serde_json::Value>,
    coverage: serde_json::Value,
}

/// Plays `recording` (each line once) through the proxy in front of `cat`,
/// which echoes each line back as the server's, so the proxy sees it in
/// both directions, as a real session's two sides; then audits the
/// recording with `audit`. What each said.
fn proxy_and_audit(recording: &[String]) -> (Said, Said) {
    let mut s = Session::start(&["--quiet"], &["cat"]);
    for line in recording {
        s.echo(line);
    }
    let finished = s.finish();
    let proxy = Said {
        warnings: finished.warnings.iter().cloned().map(unattributed).collect(),
        verdicts: finished.verdicts().into_iter().map(unattributed).collect(),
        coverage: finished.logged_summary()["coverage"].clone(),
    };
    let mut audit = std::process::Command::new(support::binary())
        .arg("audit")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    audit
        .stdin
        .take()
        .unwrap()
        .write_all((recording.join("\n") + "\n").as_bytes())
        .unwrap();
    let output = audit.wait_with_output().unwrap();
    assert!(output.status.success());
    let mut lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.pop().expect("a coverage line");
    let (verdicts, warnings) = lines.into_iter().partition(|line| line.get("verdict").is_some());
    let offline = Said {
        warnings,
        verdicts,
        coverage: last["coverage"].clone(),
    };
    (proxy, offline)
}

#[test]
fn a_listing_answered_with_an_id_equal_by_value_is_learned() {
    // @modelcontextprotocol/server-filesystem answers the id `1.0` as `1`.
    let server = prerequisite("MCP_UK_SERVER_FILESYSTEM");
    let root = ScratchDir::seeded();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let mut proxy = proxy_command(
        &["--log", log.to_str().unwrap(), "--quiet"],
        &[&server, root.path().to_str().unwrap()],
    )
    .spawn()
    .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
    let mut exchange = |line: &str, answered: bool| -> String {
        writeln!(stdin, "{line}").unwrap();
        let mut answer = String::new();
        if answered {
            stdout.read_line(&mut answer).unwrap();
        }
        answer
    };
    exchange(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ids-test","version":"1"}}}"#,
        true,
    );
    exchange(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false);
    let listing = exchange(r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}"#, true);
    assert!(
        listing.contains(r#""id":1}"#) || listing.contains(r#""id":1,"#),
        "{listing}"
    );
    exchange(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_directory","arguments":{"path":".","recursive":true}}}"#,
        true,
    );
    drop(stdin);
    assert!(wait_with_patience(&mut proxy).success());
    let warnings = support::read_warnings(&log);
    assert_eq!(summary(&warnings), [says("list_directory", &["recursive"], "2")]);
}

/// Any session of `tools/list` requests and responses (paginated, failed,
/// answered under ids equal by value or not), calls written every way a
/// server's parser reads them, batches, cancellations and list changes:
/// the proxy and `audit` of its recording say the same warnings, in the
/// same order, and count the same coverage.
///
/// Through the real doors, not their parts in-process: the proxy's relay,
/// tap and log, and `audit` reading a file, are what users run, and the
/// tap is private to the binary. A session opens with a `tools/list`
/// request, as clients' do: a recording with no request at all (a
/// server's side alone) is read more leniently by `audit`
/// (docs/audit.md), so the two are compared on recordings of both sides.
mod any_session {
    use super::*;
    use proptest::prelude::*;

    /// An id: its value and how it is written (`1`, `1.0`, `"1"`,
    /// `"\u0031"`); the first two are one id, as are the last two.
    fn id() -> impl Strategy<Value = String> {
        (1u8..=3, 0..4).prop_map(|(n, form)| match form {
            0 => n.to_string(),
            1 => format!("{n}.0"),
            2 => format!("\"{n}\""),
            _ => format!("\"\\u003{n}\""),
        })
    }

    /// A tool as a listing declares it: `now` declares nothing.
    fn tool() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            r#"{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{},"offset":{}}}}"#,
            r#"{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{}}}}"#,
            r#"{"name":"fs_list","inputSchema":{"type":"object","properties":{"dir":{},"depth":{}}}}"#,
            r#"{"name":"now","inputSchema":{"type":"object"}}"#,
        ])
        .prop_map(str::to_owned)
    }

    fn arguments() -> impl Strategy<Value = Option<String>> {
        let keys = prop::collection::btree_set(
            prop::sample::select(vec![
                "path",
                "offset",
                "dir",
                "depth",
                "ffset",
                "recursive",
                "reason",
                "the rest",
            ]),
            0..4,
        )
        .prop_map(|keys| {
            let members: Vec<String> = keys.iter().map(|k| format!(r#""{k}":1"#)).collect();
            format!("{{{}}}", members.join(","))
        });
        prop_oneof![
            8 => keys.prop_map(Some),
            1 => Just(None),
            1 => Just(Some("[1]".to_owned())),
        ]
    }

    fn call() -> impl Strategy<Value = String> {
        let name = prop::sample::select(vec!["fs_read", "fs_list", "now", "ghost", ""]);
        (id(), name, arguments(), 0..9).prop_map(|(id, name, arguments, style)| {
            let arguments_member = arguments
                .as_ref()
                .map(|a| format!(r#","arguments":{a}"#))
                .unwrap_or_default();
            let params = format!(r#"{{"name":"{name}"{arguments_member}}}"#);
            match style {
                1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"\u0074ools/call","params":{params}}}"#),
                2 => format!(
                    r#"{{"jsonrpc":"2.0","\u0069d":{id},"method":"tools/call","par\u0061ms":{{"n\u0061me":"{name}"{arguments_member}}}}}"#
                ),
                3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","method":"tools/call","params":{params}}}"#),
                4 => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"other","arguments":{{"x":1}},"name":"{name}"{arguments_member}}}}}"#
                ),
                5 => {
                    let text = serde_json::to_string(&arguments.unwrap_or_default()).unwrap();
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{text}}}}}"#)
                }
                6 => format!(r#"{{"jsonrpc":"2.0","id":999,"method":"tools/call","id":{id},"params":{params}}}"#),
                7 => format!(
                    r#"[{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}},{{"jsonrpc":"2.0","id":50,"method":"ping"}}]"#
                ),
                8 => format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{params}}}"#),
                _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#),
            }
        })
    }

    fn list_request() -> impl Strategy<Value = String> {
        (id(), any::<bool>()).prop_map(|(id, cursor)| {
            let params = if cursor {
                r#","params":{"cursor":"p2"}"#
            } else {
                ""
            };
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#)
        })
    }

    fn list_response() -> impl Strategy<Value = String> {
        (id(), prop::collection::vec(tool(), 0..3), any::<bool>()).prop_map(|(id, tools, more)| {
            let next = if more { r#","nextCursor":"p2""# } else { "" };
            format!(
                r#"{{"result":{{"tools":[{}]{next}}},"jsonrpc":"2.0","id":{id}}}"#,
                tools.join(",")
            )
        })
    }

    fn event() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => list_request(),
            3 => list_response(),
            1 => id().prop_map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"failed"}}}}"#)),
            6 => call(),
            1 => Just(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned()),
            1 => id().prop_map(|id| format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#)),
        ]
    }

    fn session() -> impl Strategy<Value = Vec<String>> {
        (list_request(), prop::collection::vec(event(), 1..14)).prop_map(|(first, rest)| {
            let mut session = vec![first];
            session.extend(rest);
            session
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn the_proxy_and_audit_agree_on_any_recorded_session(session in session()) {
            let (proxy, offline) = proxy_and_audit(&session);
            prop_assert_eq!(offline, proxy, "{}", session.join("\n"));
        }
    }
}
