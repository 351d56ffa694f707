//! `wrap` and `unwrap` as hosts meet them: each host's files found under a
//! home and a project the test makes, and a wrapped server that really
//! runs through the proxy.

use crate::support;
use crate::wrap_support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{binary, wait_with_patience};
use wrap_support::{command, fixture, run, scratch, succeeded, text};

/// Where each host keeps its files on this platform, under a home and a
/// project the test makes, with the fixture each holds (and its golden file).
fn layout() -> [(&'static str, String, &'static str); 8] {
    let settings = if cfg!(target_os = "macos") {
        "home/Library/Application Support"
    } else {
        "home/.config"
    };
    [
        (
            "claude-desktop",
            format!("{settings}/Claude/claude_desktop_config.json"),
            "claude-desktop.json",
        ),
        ("claude-code", "home/.claude.json".into(), "claude-code-user.json"),
        (
            "claude-code",
            "project/.mcp.json".into(),
            "claude-code-project.json",
        ),
        ("cursor", "home/.cursor/mcp.json".into(), "cursor.json"),
        ("cursor", "project/.cursor/mcp.json".into(), "cursor.json"),
        ("vscode", format!("{settings}/Code/User/mcp.json"), "vscode.jsonc"),
        ("vscode", "project/.vscode/mcp.json".into(), "vscode.jsonc"),
        (
            "windsurf",
            "home/.codeium/windsurf/mcp_config.json".into(),
            "windsurf.json",
        ),
    ]
}

fn in_home(root: &Path, args: &[&str]) -> Output {
    command(args)
        .env("HOME", root.join("home"))
        .current_dir(root.join("project"))
        .output()
        .unwrap()
}

#[test]
fn each_hosts_files_are_found_under_the_home_and_the_project() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    fs::create_dir_all(root.join("project")).unwrap();
    for (_, at, name) in layout() {
        fs::create_dir_all(root.join(&at).parent().unwrap()).unwrap();
        fs::write(root.join(&at), fixture(name)).unwrap();
    }
    let report = succeeded(&in_home(root, &["wrap", "--command", "mcp-unknown-keys"]));
    for (host, at, name) in layout() {
        let real = fs::canonicalize(root.join(&at)).unwrap();
        assert!(
            report.contains(&format!("{} ({host})", real.display())),
            "{at} not named in\n{report}"
        );
        assert_eq!(text(&root.join(&at)), fixture(&format!("{name}.wrapped")), "{at}");
    }

    // One host at a time.
    succeeded(&in_home(root, &["unwrap", "--host", "cursor"]));
    for (host, at, name) in layout() {
        let expected = if host == "cursor" {
            fixture(name)
        } else {
            fixture(&format!("{name}.wrapped"))
        };
        assert_eq!(text(&root.join(&at)), expected, "{at}");
    }
    succeeded(&in_home(root, &["unwrap"]));
    for (_, at, name) in layout() {
        assert_eq!(text(&root.join(&at)), fixture(name), "{at}");
    }
}

#[test]
fn finding_nothing_says_where_it_looked_and_is_no_failure() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("home")).unwrap();
    fs::create_dir_all(root.path().join("project")).unwrap();
    let report = succeeded(&in_home(root.path(), &["wrap", "--host", "windsurf"]));
    assert!(
        report.contains("no MCP configuration found; looked for:"),
        "{report}"
    );
    assert!(
        report.contains("home/.codeium/windsurf/mcp_config.json"),
        "{report}"
    );
}

#[test]
fn a_wrapped_entry_runs_its_server_through_the_proxy() {
    let (dir, path) = scratch("example-server.json");
    let logs = dir.path().join("logs");
    succeeded(&run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
    ]));
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    let entry = &wrapped["mcpServers"]["files"];
    let program = entry["command"].as_str().unwrap();
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[args.len() - 2..], ["mcp-unknown-keys", "example-server"]);

    // Run it as a host would: the command line as configured, the server's
    // own command (`mcp-unknown-keys`) found on PATH.
    let binary = binary();
    let bin_dir = Path::new(&binary).parent().unwrap();
    let path_var = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let mut child = Command::new(program)
        .args(&args)
        .env("PATH", path_var)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut exchange = |request: Value| -> Value {
        writeln!(stdin, "{request}").unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    let initialized = exchange(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
    );
    assert_eq!(initialized["id"], 1);
    assert!(
        initialized["result"]["serverInfo"]["name"].is_string(),
        "{initialized}"
    );
    let listed = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty()),
        "{listed}"
    );
    let called = exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read", "arguments": {"path": "notes.txt", "ffset": 1}}}));
    assert_eq!(called["id"], 3, "{called}");
    drop(stdin);
    let status = wait_with_patience(&mut child);
    assert!(status.success(), "{status:?}");

    // The proxy logged the undeclared key where wrap said it would.
    let log = text(&logs.join("files.jsonl"));
    let warning: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(warning["tool"], "read");
    assert_eq!(warning["unknown_keys"], json!(["ffset"]));
}
