//! Byte-exactness: what goes through the proxy is what would have gone
//! through without it, in both directions.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread;

use support::{binary, call, list_request, list_response, prerequisite, wait_with_patience};

/// Runs `server` directly, or behind the proxy, feeding it `input` while
/// reading everything it writes.
fn run(through_proxy: bool, server: &[&str], input: Vec<u8>) -> Vec<u8> {
    let mut command = if through_proxy {
        let mut c = Command::new(binary());
        c.args(["proxy", "--"]).args(server);
        c
    } else {
        let mut c = Command::new(server[0]);
        c.args(&server[1..]);
        c
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || stdin.write_all(&input).unwrap());
    let mut output = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut output).unwrap();
    writer.join().unwrap();
    assert!(wait_with_patience(&mut child).success());
    output
}

/// Everything awkward at once: a listing and calls the tap reads, lines it
/// cannot read, a 10 MiB line, CRLF, empty lines and a last line without
/// a newline.
fn awkward_stream() -> Vec<u8> {
    let mut input = Vec::new();
    for line in [
        list_request("1", None),
        list_response("1", &[("fs_read", &["path"])], None),
        call("2", "fs_read", r#"{"path":"a","ffset":1}"#),
        call(
            "3",
            "fs_read",
            &format!(r#"{{"path":"{}","more":1}}"#, "y".repeat(10 << 20)),
        ),
        r#"[{"jsonrpc":"2.0","id":4,"method":"tools/call"}]"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
        "not json".to_owned(),
        String::new(),
    ] {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(b"\xff\xfe\x00 not UTF-8 \r\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n");
    input.extend_from_slice(b"{\"partial\":");
    input
}

#[test]
fn every_byte_reaches_the_server_and_every_byte_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let direct_seen = dir.path().join("direct");
    let proxied_seen = dir.path().join("proxied");
    let input = awkward_stream();

    let direct = run(false, &["tee", direct_seen.to_str().unwrap()], input.clone());
    let proxied = run(true, &["tee", proxied_seen.to_str().unwrap()], input.clone());

    // Server to client: what the server wrote (an echo) came out unchanged.
    assert!(proxied == direct, "server-to-client bytes differ");
    // Client to server: the server received exactly what the client sent.
    let received = std::fs::read(&proxied_seen).unwrap();
    assert!(
        received == std::fs::read(&direct_seen).unwrap(),
        "client-to-server bytes differ"
    );
    assert!(received == input);
}

/// A scripted session with mcp-server-time, one request at a time so the
/// server's answers come in a fixed order.
fn time_session(through_proxy: bool) -> Vec<u8> {
    let server = prerequisite("MCP_UK_SERVER_TIME");
    let mut command = if through_proxy {
        let mut c = Command::new(binary());
        c.args(["proxy", "--", &server, "--local-timezone", "UTC"]);
        c
    } else {
        let mut c = Command::new(&server);
        c.args(["--local-timezone", "UTC"]);
        c
    };
    let mut child: Child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut transcript = Vec::new();
    let script: [(&str, bool); 6] = [
        (
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bytes-test","version":"1"}}}"#,
            true,
        ),
        (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false),
        (r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#, true),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"convert_time","arguments":{"source_timezone":"Europe/Paris","time":"16:30","target_timezone":"Asia/Tokyo","round":"up"}}}"#,
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"convert_time","arguments":{"source_timezone":"Nowhere/Atlantis","time":"16:30","target_timezone":"UTC"}}}"#,
            true,
        ),
        (r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#, true),
    ];
    for (line, answered) in script {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        if answered {
            let mut answer = Vec::new();
            stdout.read_until(b'\n', &mut answer).unwrap();
            assert!(!answer.is_empty(), "the server answers {line}");
            transcript.extend(answer);
        }
    }
    drop(stdin);
    stdout.read_to_end(&mut transcript).unwrap();
    wait_with_patience(&mut child);
    transcript
}

#[test]
fn a_session_with_a_real_server_is_byte_identical_through_the_proxy() {
    let direct = time_session(false);
    let proxied = time_session(true);
    assert!(String::from_utf8_lossy(&direct).contains("convert_time"));
    assert_eq!(
        String::from_utf8_lossy(&proxied),
        String::from_utf8_lossy(&direct)
    );
}
