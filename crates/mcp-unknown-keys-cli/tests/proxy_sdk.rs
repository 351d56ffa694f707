//! The proxy between the official Python MCP SDK client and real servers
//! nobody here wrote: mcp-server-time (PyPI) and
//! @modelcontextprotocol/server-filesystem (npm), all pinned and installed
//! by `scripts/test-deps`.

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{binary, prerequisite, read_warnings};

/// What the SDK client saw, and what the proxy logged and printed.
struct Run {
    report: Value,
    warnings: Vec<Value>,
    stderr: String,
}

/// Lists the tools through the proxy, then makes `call` twice.
fn drive(server: &[&str], call: Value) -> Run {
    let python = prerequisite("MCP_UK_PYTHON");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("warnings.jsonl");
    let stderr = dir.path().join("stderr.txt");
    let mut args = vec!["proxy", "--log", log.to_str().unwrap(), "--"];
    args.extend_from_slice(server);
    let spec = json!({
        "command": binary(),
        "args": args,
        "stderr": stderr,
        "log": log,
        "call": call,
        "repeat": 2,
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/sdk_client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(spec.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Run {
        report: serde_json::from_slice(&output.stdout).expect("the client prints its report"),
        warnings: read_warnings(&log),
        stderr: std::fs::read_to_string(stderr).unwrap(),
    }
}

fn assert_one_warning(run: &Run, tool: &str, key: &str) {
    for result in run.report["results"].as_array().unwrap() {
        assert_eq!(result["is_error"], false, "the call still succeeds: {result}");
    }
    assert_eq!(
        run.warnings.len(),
        1,
        "one warning, and none for the repeat: {:?}",
        run.warnings
    );
    let warning = &run.warnings[0];
    assert_eq!(warning["tool"], tool);
    assert_eq!(warning["unknown_keys"], json!([key]));
    assert!(!warning["id"].as_str().unwrap().is_empty(), "the JSON-RPC id");
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("mcp-unknown-keys: "))
        .collect();
    // One warning line; the summary on exit counts both calls.
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].contains(&format!("called with undeclared argument(s) {key};")));
    let row = format!("    {tool} `{key}`: 2 calls (");
    assert!(run.stderr.lines().any(|l| l.starts_with(&row)), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("mcp-unknown-keys summary: 2 call(s): all audited"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_python_sdk_through_the_proxy_to_mcp_server_time() {
    let server = prerequisite("MCP_UK_SERVER_TIME");
    let run = drive(
        &[&server, "--local-timezone", "UTC"],
        json!({"name": "get_current_time", "arguments": {"timezone": "Europe/Paris", "tz_fallback": "UTC"}}),
    );
    assert!(
        run.report["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("get_current_time"))
    );
    assert!(
        run.report["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Europe/Paris")
    );
    assert_one_warning(&run, "get_current_time", "tz_fallback");
    assert_eq!(run.warnings[0]["declared_keys"], json!(["timezone"]));
}

#[test]
fn the_python_sdk_through_the_proxy_to_server_filesystem() {
    let server = prerequisite("MCP_UK_SERVER_FILESYSTEM");
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "hello").unwrap();
    let root = root.path().canonicalize().unwrap();
    let root = root.to_str().unwrap();
    let run = drive(
        &[&server, root],
        json!({"name": "list_directory", "arguments": {"path": root, "recursive": true}}),
    );
    assert!(
        run.report["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("list_directory"))
    );
    assert!(
        run.report["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes.txt")
    );
    assert_one_warning(&run, "list_directory", "recursive");
    assert_eq!(run.warnings[0]["declared_keys"], json!(["path"]));
}
