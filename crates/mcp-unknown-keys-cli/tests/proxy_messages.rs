//! The proxy reads each message as the server's JSON parser does, so a call
//! the server runs is a call the proxy audits: escaped methods, repeated
//! members, arguments sent as a JSON string, ids equal by value, batches.
//! And the `audit` command reads the same lines the same way.

mod support;

use std::io::{BufRead, BufReader, Write};

use support::{
    ScratchDir, Session, call, list_request, list_response, prerequisite, proxy_command, summary,
    wait_with_patience,
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
    let mut s = Session::start(&[], &["cat"]);
    let mut recording = vec![list_request("1", None), list_response("1", FS_READ, None)];
    // Escapes and arguments sent as a string. (Repeated members: the audit
    // command does not read those as the server does yet.)
    recording.extend([0, 1, 4].map(|n| UNUSUAL_CALLS[n].to_owned()));
    for line in &recording {
        s.echo(line);
    }
    // The warnings, without the attribution the log adds to each line.
    let logged: Vec<serde_json::Value> = s
        .finish()
        .warnings
        .into_iter()
        .map(|mut warning| {
            for attribution in ["ts", "server", "session"] {
                warning.as_object_mut().unwrap().remove(attribution);
            }
            warning
        })
        .collect();
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
    let offline: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(r#"{"coverage""#))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(offline, logged);
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
