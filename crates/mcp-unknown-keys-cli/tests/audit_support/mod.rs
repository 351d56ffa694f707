//! Shared by the `audit_*` tests: run the real binary as a user does, read
//! its output back as warnings, a coverage line, or report rows.

#![allow(dead_code)] // each test file uses a part

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

/// What one run of `mcp-unknown-keys audit` did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `audit ARGS` with `stdin` (bytes) as its input.
pub fn audit_bytes(args: &[&str], stdin: &[u8]) -> Run {
    let mut command = Command::new(BIN);
    command.arg("audit").args(args);
    run(command, stdin)
}

/// Runs `command` with `stdin` as its input, killing it if it has not
/// ended within five minutes: a hang fails the test rather than holding it
/// forever.
pub fn run(mut command: Command, stdin: &[u8]) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-unknown-keys");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        // The audit may exit before reading everything (a usage error).
        let _ = input.write_all(&stdin);
    });
    let pid = child.id();
    let (done, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(output) = waited.recv_timeout(Duration::from_secs(300)) else {
        let _ = Command::new("kill").arg(pid.to_string()).status();
        panic!("mcp-unknown-keys did not end within five minutes");
    };
    let output = output.expect("wait for mcp-unknown-keys");
    writer.join().expect("stdin writer");
    Run {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// Runs `audit ARGS` with `stdin` as its input.
pub fn audit(args: &[&str], stdin: &str) -> Run {
    audit_bytes(args, stdin.as_bytes())
}

/// The lines given, one per line.
pub fn lines(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// A warning as printed, read back through the fields compared here (more
/// may be added; they are not compared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Said {
    pub tool: String,
    pub unknown_keys: Vec<String>,
    pub declared_keys: Vec<String>,
    pub id: String,
}

pub fn said(tool: &str, unknown: &[&str], declared: &[&str], id: &str) -> Said {
    Said {
        tool: tool.to_owned(),
        unknown_keys: unknown.iter().map(|k| k.to_string()).collect(),
        declared_keys: declared.iter().map(|k| k.to_string()).collect(),
        id: id.to_owned(),
    }
}

/// The coverage line `--format jsonl` ends with, as its object.
#[derive(Debug, PartialEq, Eq)]
pub struct Covered {
    pub calls: u64,
    pub audited: u64,
    pub unaudited: Value,
    pub unlisted_tools: Value,
}

/// What a jsonl run printed: its warnings, then its coverage line, which
/// must be last and alone of its kind.
pub fn output(run: &Run) -> (Vec<Said>, Covered) {
    assert_eq!(run.code, 0, "audit failed: {}", run.stderr);
    parse_output(&run.stdout)
}

pub fn parse_output(stdout: &str) -> (Vec<Said>, Covered) {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let last = lines.pop().unwrap_or_else(|| panic!("no output at all"));
    let coverage: Value = serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON: {last}: {e}"));
    let coverage = coverage
        .get("coverage")
        .unwrap_or_else(|| panic!("the last line is no coverage line: {last}"));
    let covered = Covered {
        calls: coverage["calls"].as_u64().expect("calls"),
        audited: coverage["audited"].as_u64().expect("audited"),
        unaudited: coverage["unaudited"].clone(),
        unlisted_tools: coverage["unlisted_tools"].clone(),
    };
    let warnings = lines
        .into_iter()
        .filter(|line| !is_verdict(line) && !is_group(line));
    (warnings.map(parse_warning).collect(), covered)
}

/// Whether a line of `--format jsonl` is a verdict:
/// `{"verdict":…,"tool":…,"id":…,"unknown_keys":[…]}`.
pub fn is_verdict(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|value| value.get("verdict").is_some())
}

/// Whether a line of `--format jsonl` is a group of `--by`:
/// `{"group":{…},"calls":…,…}`.
pub fn is_group(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|value| value.get("group").is_some())
}

/// The verdict lines of a jsonl run, as printed.
pub fn verdicts(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "audit failed: {}", run.stderr);
    run.stdout
        .lines()
        .filter(|line| is_verdict(line))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Only the warnings of a jsonl run.
pub fn warnings(run: &Run) -> Vec<Said> {
    output(run).0
}

/// Only the coverage of a jsonl run.
pub fn coverage(run: &Run) -> Covered {
    output(run).1
}

pub fn covered(calls: u64, audited: u64, unaudited: Value, unlisted_tools: Value) -> Covered {
    Covered {
        calls,
        audited,
        unaudited,
        unlisted_tools,
    }
}

/// Every call audited.
pub fn all_audited(calls: u64) -> Covered {
    covered(calls, calls, json!({}), json!({}))
}

pub fn parse_warning(line: &str) -> Said {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line: {line:?}: {e}"));
    assert!(
        value.get("coverage").is_none(),
        "a coverage line before the end: {line}"
    );
    let strings = |field: &str| -> Vec<String> {
        value[field]
            .as_array()
            .unwrap_or_else(|| panic!("{field} is not an array in {line}"))
            .iter()
            .map(|key| key.as_str().expect("a key is a string").to_owned())
            .collect()
    };
    Said {
        tool: value["tool"].as_str().expect("tool").to_owned(),
        unknown_keys: strings("unknown_keys"),
        declared_keys: strings("declared_keys"),
        id: value["id"].as_str().expect("id as text").to_owned(),
    }
}

/// MCP tools: `fs_read` declares `path` and `offset`, `now` declares nothing.
pub fn mcp_catalogue() -> Value {
    json!({"tools": [
        {"name": "fs_read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}}}},
        {"name": "now", "inputSchema": {"type": "object"}},
    ]})
}

pub fn openai_call(id: &str, tool: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": tool, "arguments": arguments}})
}

pub fn fs_read_warning(unknown: &[&str], id: &str) -> Said {
    said("fs_read", unknown, &["offset", "path"], id)
}

/// The declared keys of the fixtures' tools (`tests/fixtures/audit/tools.json`).
pub const READ_FILE: &[&str] = &["head", "path", "tail"];
pub const LIST_DIRECTORY: &[&str] = &["path"];
pub const SEARCH_FILES: &[&str] = &["excludePatterns", "path", "pattern"];

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn fixture_arg(name: &str) -> String {
    fixture(name).to_str().expect("UTF-8 path").to_owned()
}

/// The fixtures' catalogue, a `tools/list` response.
pub fn tools_arg() -> String {
    fixture_arg("audit/tools.json")
}

/// The count on the totals row labelled `label` of a text report.
pub fn total(report: &str, label: &str) -> u64 {
    let row = report
        .lines()
        .skip_while(|line| *line != "Totals")
        .find(|line| {
            line.trim_start().starts_with(label)
                && line
                    .split_whitespace()
                    .last()
                    .is_some_and(|n| n.parse::<u64>().is_ok())
        })
        .unwrap_or_else(|| panic!("no row {label:?} in\n{report}"));
    row.split_whitespace().last().unwrap().parse().unwrap()
}

/// The row of the findings for `key`: its calls and first call id.
pub fn finding(report: &str, key: &str) -> (u64, String) {
    let row = report
        .lines()
        .find(|line| {
            line.starts_with("  ")
                && line.trim_start().starts_with(&format!("{key} "))
                && line.contains("first call")
        })
        .unwrap_or_else(|| panic!("no finding {key:?} in\n{report}"));
    let rest = row.trim_start()[key.len()..]
        .split_whitespace()
        .collect::<Vec<_>>();
    let calls = rest[0].parse().expect("a count");
    let first = row.rsplit("first call ").next().unwrap();
    // What the server did with the calls, when it was seen, follows.
    let first = first.split(" — ").next().unwrap().to_owned();
    (calls, first)
}

/// A temporary directory with `files` written into it.
pub fn dir_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).expect("write a file");
    }
    dir
}

/// `name` in `dir`, as an argument.
pub fn in_dir(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().expect("UTF-8 path").to_owned()
}
