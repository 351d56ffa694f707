//! How `audit` takes its inputs: stdin read once, and each file opened only
//! when its turn comes.

use crate::audit_support;

use std::process::Command;

use audit_support::*;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

#[test]
fn stdin_named_twice_is_refused_not_waited_on() {
    let text = lines(&[
        mcp_catalogue(),
        openai_call("c1", "fs_read", json!({"path": "a"})),
    ]);
    let mut command = Command::new(BIN);
    command.args(["audit", "-", "-"]);
    let run = audit_support::run(command, text.as_bytes());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("stdin (-) is given more than once"),
        "{}",
        run.stderr
    );
}

/// More files than the process may hold open at once: each is opened when
/// read, and closed before the next.
#[cfg(unix)]
#[test]
fn more_files_than_descriptors_are_read_one_at_a_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for at in 0..200 {
        let path = dir.path().join(format!("{at:03}.jsonl"));
        let call = openai_call(&format!("c{at}"), "fs_read", json!({"path": "a"}));
        std::fs::write(&path, lines(&[mcp_catalogue(), call])).expect("write a log");
        paths.push(path.display().to_string());
    }
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" audit "$@""#)
        .arg(BIN)
        .args(&paths);
    let run = audit_support::run(command, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(coverage(&run), all_audited(200));
    // Still checked before anything is read: a misspelt name fails first.
    let mut command = Command::new(BIN);
    command
        .arg("audit")
        .args(&paths)
        .arg(dir.path().join("missing.jsonl"));
    let run = audit_support::run(command, b"");
    assert_eq!((run.code, run.stdout.as_str()), (2, ""), "{}", run.stderr);
}

#[test]
fn a_document_cut_short_is_read_to_the_cut_said_and_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let calls = json!([
        mcp_catalogue(),
        openai_call("c1", "fs_read", json!({"path": "a", "ffset": 1})),
        openai_call("c2", "fs_read", json!({"path": "b", "limit": 2})),
    ]);
    let whole = serde_json::to_string_pretty(&calls).expect("JSON");
    let cut = &whole[..whole.find("limit").expect("limit")];
    let path = dir.path().join("cut.json");
    std::fs::write(&path, cut).expect("write");
    let run = audit(&[path.to_str().unwrap()], "");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        parse_output(&run.stdout),
        (vec![fs_read_warning(&["ffset"], "c1")], all_audited(1))
    );
    assert!(
        run.stderr
            .contains(&format!("cut.json is cut short at byte {}", cut.len())),
        "{}",
        run.stderr
    );

    let run = audit(&["--format", "text", path.to_str().unwrap()], "");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout.contains("1 input(s) read only in part"),
        "{}",
        run.stdout
    );
}

#[test]
fn over_no_calls_the_report_says_none_were_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cut.json");
    std::fs::write(
        &path,
        r#"[{"id":"c1","type":"function","function":{"name":"fs_read","argu"#,
    )
    .expect("write");
    let run = audit(
        &["--format", "text", "--fail-on-unaudited", path.to_str().unwrap()],
        "",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout.contains("Coverage: 0 tool calls found"),
        "{}",
        run.stdout
    );
    for said in ["all audited", "No undeclared keys"] {
        assert!(!run.stdout.contains(said), "{}", run.stdout);
    }
}

#[test]
fn a_record_too_deep_to_read_fails_the_unaudited_gate() {
    let deep = format!("{}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let run = audit(&["--fail-on-unaudited"], &deep);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("stdin:1: nested deeper than records are read"),
        "{}",
        run.stderr
    );
    assert_eq!(audit(&[], &deep).code, 0);
}

/// The line bound the audits below run with: lowered (a knob for tests
/// only), so a line "too long" costs kilobytes, not 64 MiB.
const TEST_LINE_BYTES: &str = "4096";

/// Runs `audit ARGS` over `stdin` with the line bound lowered.
fn audit_lowered(args: &[&str], stdin: &[u8]) -> Run {
    let mut command = Command::new(BIN);
    command
        .arg("audit")
        .args(args)
        .env("MCP_UNKNOWN_KEYS_TEST_MAX_LINE_BYTES", TEST_LINE_BYTES);
    run(command, stdin)
}

fn tool_use(at: usize, input: serde_json::Value) -> serde_json::Value {
    json!({"type": "tool_use", "id": format!("toolu_{at}"), "name": "mcp__fs__read_file", "input": input})
}

#[test]
fn a_one_line_document_longer_than_a_line_is_read_element_by_element() {
    // A minified trajectory file: one array of tool_use calls on one line,
    // far past the line bound, and one call carrying an undeclared key.
    let mut calls: Vec<_> = (0..2_000)
        .map(|at| tool_use(at, json!({"path": format!("src/file_{at}.rs")})))
        .collect();
    calls.push(tool_use(2_000, json!({"path": "a", "ffset": 3})));
    let line = serde_json::to_string(&calls).unwrap();
    assert!(line.len() > 40 * 4096);
    let tools = tools_arg();
    let run = audit_lowered(
        &["--format", "jsonl", "--fail-on-warning", "--tools", &tools],
        line.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("stdin is one JSON document, not JSON Lines: read element by element"),
        "{}",
        run.stderr
    );
    let (said_, covered_) = parse_output(&run.stdout);
    assert_eq!(
        said_,
        [said("mcp__fs__read_file", &["ffset"], READ_FILE, "toolu_2000")]
    );
    assert_eq!(covered_, all_audited(2_001));
    // So is the same document on a line of a JSON Lines file, between
    // others.
    let short = serde_json::to_string(&tool_use(9_999, json!({"path": "b", "lines": 1}))).unwrap();
    let text = format!("{short}\n{line}\n{short}\n");
    let run = audit_lowered(&["--format", "jsonl", "--tools", &tools], text.as_bytes());
    let (said_, covered_) = parse_output(&run.stdout);
    assert_eq!(said_.len(), 2, "{}", run.stdout);
    assert_eq!(covered_, all_audited(2_002));
}

#[test]
fn an_object_too_long_to_hold_is_read_by_its_parts_and_said_too_long() {
    // A request body on one line: its `messages` are read one by one; the
    // body itself (its tools) could not be read, and is counted.
    let messages: Vec<_> = (0..300)
        .map(|at| json!({"role": "assistant", "content": [tool_use(at, json!({"path": "x", "ffset": at}))]}))
        .collect();
    let body = json!({"model": "m", "tools": [], "messages": messages}).to_string();
    let tools = tools_arg();
    let run = audit_lowered(&["--format", "jsonl", "--tools", &tools], body.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (said_, covered_) = parse_output(&run.stdout);
    assert_eq!(said_.len(), 1);
    assert_eq!(covered_, all_audited(300));
    assert!(run.stderr.contains("stdin:1: longer than"), "{}", run.stderr);
}

#[test]
fn a_line_that_truly_cannot_be_read_is_counted_never_zero_calls_found() {
    // A line past the bound that is no JSON document: nothing can be read
    // of it, and the headline says what it may hold.
    let line = format!("[2026-11-30 INFO] {}\n", "x".repeat(10_000));
    let run = audit_lowered(&["--format", "text"], line.as_bytes());
    assert!(!run.stdout.contains("0 tool calls found"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("1 record(s) could not be read whole and may hold calls"),
        "{}",
        run.stdout
    );
    assert_eq!(audit_lowered(&["--fail-on-unaudited"], line.as_bytes()).code, 1);
}

#[test]
fn a_one_line_document_cut_short_is_read_to_the_cut_and_exits_2() {
    // A minified file truncated while it was written: the calls before the
    // cut are read, the cut is said, and the audit exits 2.
    let calls: Vec<_> = (0..500)
        .map(|at| tool_use(at, json!({"path": "a", "ffset": at})))
        .collect();
    let line = serde_json::to_string(&calls).unwrap();
    let cut = &line[..line.len() - 40];
    let tools = tools_arg();
    let run = audit_lowered(&["--format", "jsonl", "--tools", &tools], cut.as_bytes());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("stdin is cut short at byte"),
        "{}",
        run.stderr
    );
    // The value the cut falls in is cut, not too long.
    assert!(!run.stderr.contains("longer than"), "{}", run.stderr);
    let (said_, covered_) = parse_output(&run.stdout);
    assert_eq!(said_.len(), 1);
    assert_eq!(covered_, all_audited(499));
}
