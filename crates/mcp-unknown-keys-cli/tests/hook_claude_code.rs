//! `mcp-unknown-keys hook claude-code`: the proxy keeps each server's last
//! listing (`--state-dir`), and the hook audits a Claude Code `PostToolUse`
//! input against it, printing `hookSpecificOutput.additionalContext` for
//! the model once per (tool, key) per session, and nothing, exit 0,
//! whenever it has nothing to say or cannot say it.

use crate::support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Instant;

use serde_json::Value;
use support::{PATIENCE, Session, list_request};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hook/claude-code");

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
}

/// A listing of `fs_read` (`path`, and `offset` with a default) and
/// `fs_search` (`pattern`).
pub const LISTING: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","default":0}},"required":["path"]}},{"name":"fs_search","inputSchema":{"type":"object","properties":{"pattern":{"type":"string"}}}}]}}"#;

/// Runs the hook with `input` on stdin: its exit code, stdout and stderr.
fn hook(state: &Path, input: &str) -> (Option<i32>, String, String) {
    let mut command = Command::new(support::binary());
    command.args(["hook", "claude-code", "--state-dir"]).arg(state);
    run(command, input)
}

pub fn run(mut command: Command, input: &str) -> (Option<i32>, String, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// A proxy named `files` keeping its catalogue under `state`, once it has
/// seen the listing.
fn listed(state: &Path) -> Session {
    let dir = state.to_str().unwrap();
    let mut s = Session::start(&["--quiet", "--name", "files", "--state-dir", dir], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(LISTING);
    wait_for(&state.join("catalogs/files.json"), true);
    s
}

pub fn wait_for(path: &Path, present: bool) {
    let deadline = Instant::now() + PATIENCE;
    while path.exists() != present {
        assert!(Instant::now() < deadline, "{} present: {present}", path.display());
        thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn with_session(input: &str, session: &str) -> String {
    let mut input: Value = serde_json::from_str(input).unwrap();
    input["session_id"] = session.into();
    input.to_string()
}

#[test]
fn the_model_is_told_the_undeclared_key_its_likely_intent_and_the_default_used() {
    let state = tempfile::tempdir().unwrap();
    let proxy = listed(state.path());
    let (code, stdout, stderr) = hook(state.path(), &fixture("post_tool_use_mcp.json"));
    assert_eq!(code, Some(0), "{stderr}");
    let output: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let expected: Value = serde_json::from_str(&fixture("expected_output.json")).unwrap();
    assert_eq!(output, expected);
    assert_eq!(output["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    proxy.finish();
}

#[test]
fn each_key_is_said_once_per_session() {
    let state = tempfile::tempdir().unwrap();
    let proxy = listed(state.path());
    let input = fixture("post_tool_use_mcp.json");
    assert!(!hook(state.path(), &input).1.is_empty());
    assert_eq!(
        hook(state.path(), &input),
        (Some(0), String::new(), String::new())
    );
    // The older input shape, another session: said again there.
    let older = fixture("post_tool_use_mcp_2025.json");
    let (_, stdout, _) = hook(state.path(), &older);
    assert!(stdout.contains("ffset"), "{stdout}");
    assert_eq!(hook(state.path(), &older).1, "");
    // A new key in the first session: only it is said.
    let more = input.replace(r#""ffset": 120"#, r#""ffset": 120, "pattern": "x""#);
    let (_, stdout, _) = hook(state.path(), &more);
    let context = serde_json::from_str::<Value>(&stdout).unwrap()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.contains("pattern is declared by another tool of this server, fs_search"),
        "{context}"
    );
    assert!(context.contains("passed the key pattern,"), "{context}");
    proxy.finish();
}

#[test]
fn nothing_is_printed_when_there_is_nothing_to_say_or_no_way_to_say_it() {
    let state = tempfile::tempdir().unwrap();
    let proxy = listed(state.path());
    let mcp = fixture("post_tool_use_mcp.json");
    let quiet = |input: &str| {
        assert_eq!(
            hook(state.path(), input),
            (Some(0), String::new(), String::new()),
            "{input}"
        );
    };
    quiet(&fixture("post_tool_use_write.json"));
    quiet(&mcp.replace("mcp__files__fs_read", "mcp__other__fs_read"));
    quiet(&mcp.replace("mcp__files__fs_read", "mcp__files__fs_delete"));
    quiet(&mcp.replace(r#""ffset": 120"#, r#""offset": 120"#));
    quiet(&mcp.replace("\"PostToolUse\"", "\"PostToolUseFailure\""));
    quiet(&with_session(&mcp, "../escape"));
    quiet("not json");
    quiet("");
    quiet(
        &mcp.replace(r#""path": "notes.txt","#, r#""path": ["notes.txt"],"#)
            .replace(r#""ffset": 120"#, ""),
    );
    let not_an_object = serde_json::json!({"session_id": "s", "hook_event_name": "PostToolUse",
        "tool_name": "mcp__files__fs_read", "tool_input": [1, 2]});
    quiet(&not_an_object.to_string());
    // And for a state directory that does not exist.
    let missing = state.path().join("nowhere");
    assert_eq!(hook(&missing, &mcp), (Some(0), String::new(), String::new()));
    proxy.finish();
}

#[test]
fn a_server_whose_tools_changed_is_not_audited_until_listed_again() {
    let state = tempfile::tempdir().unwrap();
    let mut proxy = listed(state.path());
    let file = state.path().join("catalogs/files.json");
    proxy.echo(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    wait_for(&file, false);
    let mcp = fixture("post_tool_use_mcp.json");
    assert_eq!(hook(state.path(), &mcp).1, "");
    proxy.echo(&list_request("2", None));
    proxy.echo(&LISTING.replace(r#""id":1"#, r#""id":2"#));
    wait_for(&file, true);
    assert!(hook(state.path(), &mcp).1.contains("ffset"));
    proxy.finish();
}

#[test]
fn the_hook_reads_the_proxy_s_allow_list() {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().to_str().unwrap();
    let mut s = Session::start(
        &[
            "--quiet",
            "--name",
            "files",
            "--allow",
            "ffset",
            "--state-dir",
            dir,
        ],
        &["cat"],
    );
    s.echo(&list_request("1", None));
    s.echo(LISTING);
    wait_for(&state.path().join("catalogs/files.json"), true);
    assert_eq!(hook(state.path(), &fixture("post_tool_use_mcp.json")).1, "");
    s.finish();
}

/// The plugin's hook, run as Claude Code runs it (exec form: its `command`
/// with its `args`), finds the state where the proxy keeps it
/// (`$MCP_UNKNOWN_KEYS_STATE_DIR` here) and answers every MCP tool.
#[test]
fn the_plugin_s_hook_runs_the_command_on_every_mcp_tool() {
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/claude-code");
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(plugin.join(path)).unwrap()).unwrap()
    };
    let manifest = read(".claude-plugin/plugin.json");
    let name = manifest["name"].as_str().unwrap();
    // The repository is its marketplace.
    let marketplace: Value = serde_json::from_str(
        &std::fs::read_to_string(plugin.join("../../.claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    let entry = &marketplace["plugins"][0];
    assert_eq!(
        (&entry["name"], &entry["source"]),
        (&name.into(), &"./plugins/claude-code".into())
    );
    assert!(
        name.split('-').all(
            |word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        ),
        "{name} is kebab-case"
    );
    let hooks = read("hooks/hooks.json");
    let groups = hooks["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(
        groups[0]["matcher"], "mcp__.*",
        "every MCP tool, as the docs write it"
    );
    let handler = &groups[0]["hooks"][0];
    assert_eq!(handler["type"], "command");
    // One shell line, the form every Claude Code runs (`args`, the exec
    // form, came in 2.1.139: an older one would run the program alone).
    let line = handler["command"].as_str().unwrap();
    assert_eq!(line, "mcp-unknown-keys hook claude-code", "found on PATH");
    assert!(handler.get("args").is_none());
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(support::binary(), bin.path().join("mcp-unknown-keys")).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();

    let state = tempfile::tempdir().unwrap();
    let proxy = listed(state.path());
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .env("PATH", path)
        .env("MCP_UNKNOWN_KEYS_STATE_DIR", state.path());
    let (code, stdout, _) = run(command, &fixture("post_tool_use_mcp.json"));
    assert_eq!(code, Some(0));
    let expected: Value = serde_json::from_str(&fixture("expected_output.json")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap(), expected);
    proxy.finish();
}
