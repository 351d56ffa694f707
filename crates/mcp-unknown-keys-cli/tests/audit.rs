//! `mcp-unknown-keys audit`, driven as a user drives it: the real binary,
//! JSON Lines on stdin or in files, warnings read back as JSON.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

/// What one run of `mcp-unknown-keys audit` did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `audit ARGS` with `stdin` as its input.
fn audit(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(BIN)
        .arg("audit")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp-unknown-keys");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        // The audit may exit before reading everything (a usage error).
        let _ = input.write_all(stdin.as_bytes());
    });
    let output = child.wait_with_output().expect("wait for mcp-unknown-keys");
    writer.join().expect("stdin writer");
    Run {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// The lines given, one per line.
fn lines(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// A warning as printed, read back through its four fields (more may be
/// added; they are not compared).
#[derive(Debug, PartialEq, Eq)]
struct Said {
    tool: String,
    unknown_keys: Vec<String>,
    declared_keys: Vec<String>,
    id: String,
}

fn said(tool: &str, unknown: &[&str], declared: &[&str], id: &str) -> Said {
    Said {
        tool: tool.to_owned(),
        unknown_keys: unknown.iter().map(|k| k.to_string()).collect(),
        declared_keys: declared.iter().map(|k| k.to_string()).collect(),
        id: id.to_owned(),
    }
}

fn warnings(run: &Run) -> Vec<Said> {
    assert_eq!(run.code, 0, "audit failed: {}", run.stderr);
    parse_warnings(&run.stdout)
}

fn parse_warnings(stdout: &str) -> Vec<Said> {
    stdout.lines().map(parse_warning).collect()
}

fn parse_warning(line: &str) -> Said {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line: {line:?}: {e}"));
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
fn mcp_catalogue() -> Value {
    json!({"tools": [
        {"name": "fs_read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}}}},
        {"name": "now", "inputSchema": {"type": "object"}},
    ]})
}

fn openai_call(id: &str, tool: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": tool, "arguments": arguments}})
}

fn fs_read_warning(unknown: &[&str], id: &str) -> Said {
    said("fs_read", unknown, &["offset", "path"], id)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixture_arg(name: &str) -> String {
    fixture(name).to_str().expect("UTF-8 path").to_owned()
}

// ---------------------------------------------------------------- shapes

#[test]
fn an_openai_call_is_audited_with_arguments_as_a_string_or_an_object() {
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            openai_call(
                "call_1",
                "fs_read",
                json!(r#"{"path":"a","ffset":12,"the rest":"…"}"#),
            ),
            openai_call("call_2", "fs_read", json!({"path": "a", "lenght": 3})),
        ]),
    );
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset", "the rest"], "call_1"),
            fs_read_warning(&["lenght"], "call_2")
        ]
    );
}

#[test]
fn escaped_argument_strings_are_unescaped_before_the_scan() {
    let arguments = r#"{"path":"C:\\dir\\\"x\".txt","k\u0065y":1}"#;
    let run = audit(
        &[],
        &lines(&[mcp_catalogue(), openai_call("c", "fs_read", json!(arguments))]),
    );
    assert_eq!(warnings(&run), [fs_read_warning(&["key"], "c")]);
}

#[test]
fn a_batch_is_a_json_array_of_calls_audited_in_order() {
    let batch = json!([
        openai_call("call_1", "fs_read", json!(r#"{"ffset":1}"#)),
        openai_call("call_2", "fs_read", json!(r#"{"ffset":2,"limit":3}"#)),
    ]);
    let run = audit(&[], &lines(&[mcp_catalogue(), batch]));
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset"], "call_1"),
            fs_read_warning(&["limit"], "call_2")
        ]
    );
}

#[test]
fn a_chat_message_with_tool_calls_is_one_batch() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        openai_call("call_1", "fs_read", json!(r#"{"path":"a","ffset":1}"#)),
        openai_call("call_2", "fs_read", json!(r#"{"path":"b","ffset":2}"#)),
    ]});
    let run = audit(&[], &lines(&[mcp_catalogue(), message]));
    // The same pair twice in one batch: said once, with the first call's id.
    assert_eq!(warnings(&run), [fs_read_warning(&["ffset"], "call_1")]);
}

#[test]
fn a_json_rpc_tools_call_uses_its_id_as_text() {
    let request = |id: Value, key: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "fs_read", "arguments": {"path": "a", key: 1}}})
    };
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            request(json!(7), "ffset"),
            request(json!("req-8"), "limit"),
        ]),
    );
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset"], "7"),
            fs_read_warning(&["limit"], "req-8")
        ]
    );
}

#[test]
fn a_claude_code_transcript_line_yields_its_tool_use_blocks() {
    let line = json!({
        "parentUuid": "p", "sessionId": "s", "type": "assistant", "uuid": "u",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "fs_read", "input": {"path": "a", "ffset": 1}},
            {"type": "tool_use", "id": "toolu_2", "name": "fs_read", "input": {"path": "b", "encoding": "utf8"}},
        ]},
    });
    let tool_result = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"type\":\"tool_use\"}"}]}});
    let run = audit(&[], &lines(&[mcp_catalogue(), line, tool_result]));
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset"], "toolu_1"),
            fs_read_warning(&["encoding"], "toolu_2")
        ]
    );
}

#[test]
fn a_codex_rollout_function_call_is_audited_wrapped_or_bare() {
    let item = |call_id: &str, key: &str| {
        json!({"type": "function_call", "name": "fs_read", "call_id": call_id,
               "arguments": format!(r#"{{"path":"a","{key}":1}}"#)})
    };
    let wrapped = json!({"timestamp": "2026-11-30T07:00:00Z", "type": "response_item", "payload": item("call_1", "ffset")});
    let run = audit(&[], &lines(&[mcp_catalogue(), wrapped, item("call_2", "limit")]));
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset"], "call_1"),
            fs_read_warning(&["limit"], "call_2")
        ]
    );
}

#[test]
fn catalogues_come_as_openai_declarations_mcp_tools_or_a_tools_list_response() {
    let declarations = json!({"tools": [{"type": "function", "function": {
        "name": "fs_read", "parameters": {"type": "object", "properties": {"path": {}, "offset": {}}}}}]});
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": mcp_catalogue()});
    for catalogue in [declarations, mcp_catalogue(), response] {
        let run = audit(
            &[],
            &lines(&[
                catalogue.clone(),
                openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
            ]),
        );
        assert_eq!(warnings(&run), [fs_read_warning(&["ffset"], "c")], "{catalogue}");
    }
}

#[test]
fn the_tools_option_gives_the_starting_catalogue_in_any_catalogue_shape() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tools = mcp_catalogue()["tools"].clone();
    let shapes = [
        ("array.json", tools.clone()),
        ("object.json", json!({"tools": tools})),
        (
            "response.json",
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}),
        ),
    ];
    for (name, catalogue) in shapes {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&catalogue).unwrap()).unwrap();
        let run = audit(
            &["--tools", path.to_str().unwrap()],
            &lines(&[openai_call("c", "fs_read", json!(r#"{"ffset":1}"#))]),
        );
        assert_eq!(warnings(&run), [fs_read_warning(&["ffset"], "c")], "{name}");
    }
}

#[test]
fn other_lines_are_skipped_and_unreadable_lines_named_on_stderr() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mixed.jsonl");
    let text = format!(
        "{}\nnot JSON at all\n{{\"role\":\"user\",\"content\":\"hi\"}}\n\n42\n{{\"truncated\":\n{{\"type\":\"system\",\"message\":\"compacted\"}}\n{}\n",
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
    );
    std::fs::write(&path, text).unwrap();
    let run = audit(&["--format", "text", path.to_str().unwrap()], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shown = path.display();
    assert!(
        run.stderr.contains(&format!("{shown}:2: not JSON")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("{shown}:6: not JSON")),
        "{}",
        run.stderr
    );
    assert_eq!(total(&run.stdout, "unreadable lines"), 2);
    assert_eq!(total(&run.stdout, "lines of no known shape"), 3);
    assert_eq!(total(&run.stdout, "calls read"), 1);
    assert_eq!(total(&run.stdout, "warnings raised"), 1);
}

// ---------------------------------------------------------- the rules

#[test]
fn a_catalogue_refresh_that_declares_a_key_quiets_it_and_keeps_said_pairs_said() {
    let declaring = |keys: &[&str]| {
        let properties: serde_json::Map<String, Value> =
            keys.iter().map(|k| (k.to_string(), json!({}))).collect();
        json!({"tools": [{"name": "fs_read", "inputSchema": {"type": "object", "properties": properties}}]})
    };
    let call = |id: &str, arguments: &str| openai_call(id, "fs_read", json!(arguments));
    let run = audit(
        &[],
        &lines(&[
            declaring(&["path"]),
            call("1", r#"{"path":"a","offset":1}"#),
            // The refresh declares `offset`, never said before, so it is now
            // declared; `limit` is new and said.
            declaring(&["path", "offset"]),
            call("2", r#"{"path":"a","offset":1,"limit":2}"#),
            // A later refresh drops `offset` again: said once, it stays said.
            declaring(&["path"]),
            call("3", r#"{"path":"a","offset":1,"depth":4}"#),
        ]),
    );
    assert_eq!(
        warnings(&run),
        [
            said("fs_read", &["offset"], &["path"], "1"),
            said("fs_read", &["limit"], &["offset", "path"], "2"),
            said("fs_read", &["depth"], &["path"], "3"),
        ]
    );
}

#[test]
fn quiet_cases_raise_nothing() {
    let call = |tool: &str, arguments: Value| openai_call("c", tool, arguments);
    let run = audit(
        &["--allow", "toolCallId", "--format", "text"],
        &lines(&[
            // Before any catalogue nothing is audited.
            call("fs_read", json!(r#"{"ffset":1}"#)),
            mcp_catalogue(),
            // `reason` is tolerated, as is an allowed key.
            call(
                "fs_read",
                json!(r#"{"path":"a","reason":"why","toolCallId":"x"}"#),
            ),
            // A tool that declares nothing is never audited.
            call("now", json!(r#"{"tz":"UTC"}"#)),
            // An unlisted tool.
            call("fs_write", json!(r#"{"x":1}"#)),
            // Arguments that are not an object are the provider's to report.
            call("fs_read", json!("not json")),
            call("fs_read", json!("")),
            call("fs_read", json!([1, 2])),
            call("fs_read", Value::Null),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("No undeclared keys."), "{}", run.stdout);
    assert_eq!(total(&run.stdout, "calls read"), 8);
    assert_eq!(total(&run.stdout, "calls audited"), 1);
    assert_eq!(total(&run.stdout, "tool not listed"), 2);
    assert_eq!(total(&run.stdout, "tool declares nothing"), 1);
    assert_eq!(total(&run.stdout, "arguments not an object"), 4);
    assert_eq!(total(&run.stdout, "warnings raised"), 0);
    let never_audited = run
        .stdout
        .split("declare nothing\n")
        .nth(1)
        .expect("a list of tools");
    assert!(never_audited.trim_start().starts_with("now"), "{}", run.stdout);
}

// ---------------------------------------------------------- the report

/// The count on the totals row labelled `label`.
fn total(report: &str, label: &str) -> u64 {
    let row = report
        .lines()
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
fn finding(report: &str, key: &str) -> (u64, String) {
    let row = report
        .lines()
        .find(|line| line.starts_with("  ") && line.trim_start().starts_with(&format!("{key} ")))
        .unwrap_or_else(|| panic!("no finding {key:?} in\n{report}"));
    let rest = row.trim_start()[key.len()..]
        .split_whitespace()
        .collect::<Vec<_>>();
    let calls = rest[0].parse().expect("a count");
    let first = row.rsplit("first call ").next().unwrap().to_owned();
    (calls, first)
}

#[test]
fn the_text_report_counts_every_call_that_carried_a_key() {
    let call = |id: &str, arguments: &str| openai_call(id, "fs_read", json!(arguments));
    let run = audit(
        &["--format", "text"],
        &lines(&[
            mcp_catalogue(),
            call("call_1", r#"{"path":"a","ffset":1}"#),
            call("call_2", r#"{"path":"a","ffset":2,"the rest":"x"}"#),
            call("call_3", r#"{"path":"a"}"#),
            // A key twice in one call is one call that carried it.
            call("call_4", r#"{"ffset":1,"ffset":2}"#),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = &run.stdout;
    assert!(report.contains("fs_read  (declares offset, path)"), "{report}");
    assert_eq!(finding(report, "ffset"), (3, "call_1".to_owned()));
    assert_eq!(finding(report, "the rest"), (1, "call_2".to_owned()));
    assert_eq!(total(report, "calls read"), 4);
    assert_eq!(total(report, "calls audited"), 4);
    assert_eq!(total(report, "calls skipped"), 0);
    assert_eq!(total(report, "warnings raised"), 2);
}

// ---------------------------------------------------------- exit codes

#[test]
fn fail_on_warning_exits_1_only_when_a_warning_was_raised() {
    let warned = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
    ]);
    let clean = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"path":"a"}"#)),
    ]);
    assert_eq!(audit(&[], &warned).code, 0);
    assert_eq!(audit(&["--fail-on-warning"], &warned).code, 1);
    assert_eq!(audit(&["--fail-on-warning", "--format", "text"], &warned).code, 1);
    assert_eq!(audit(&["--fail-on-warning"], &clean).code, 0);
    assert_eq!(audit(&["--fail-on-warning"], "").code, 0);
}

#[test]
fn usage_errors_and_unusable_files_exit_2_saying_which_file_and_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.jsonl");
    let not_json = dir.path().join("not-json.json");
    std::fs::write(&not_json, "{ tools: nope").unwrap();
    let no_tools = dir.path().join("no-tools.json");
    std::fs::write(&no_tools, r#"{"tool": []}"#).unwrap();

    let run = audit(&[missing.to_str().unwrap()], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("missing.jsonl") && run.stderr.contains("cannot open"),
        "{}",
        run.stderr
    );

    let run = audit(&[dir.path().to_str().unwrap()], "");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is a directory"), "{}", run.stderr);

    for (catalogue, why) in [
        (&missing, "cannot read"),
        (&not_json, "is not JSON"),
        (&no_tools, "holds no tools"),
    ] {
        let run = audit(&["--tools", catalogue.to_str().unwrap()], "");
        assert_eq!(run.code, 2, "{catalogue:?}");
        let name = catalogue.file_name().unwrap().to_str().unwrap();
        assert!(
            run.stderr.contains(name) && run.stderr.contains(why),
            "{}",
            run.stderr
        );
    }

    assert_eq!(audit(&["--format", "yaml"], "").code, 2);
    assert_eq!(audit(&["--no-such-flag"], "").code, 2);
}

// ---------------------------------------------------------- the proxy

/// A recorded proxy session: both directions of the JSON-RPC traffic, with
/// a paginated listing, a list-changed notification, a fresh listing, and
/// error responses.
#[test]
fn a_recorded_proxy_session_audits_as_the_proxy_did() {
    let run = audit(&[&fixture_arg("proxy-session.jsonl")], "");
    assert_eq!(
        warnings(&run),
        [
            // Before the listing, id 1 was quiet. The second page extended
            // the first: fs_read (page 1) is still audited.
            said("fs_read", &["ffset", "the rest"], &["offset", "path"], "4"),
            // `reason` is tolerated; `now` declares nothing; id 7 repeats a
            // pair already said.
            said("fs_list", &["recursive"], &["dir"], "five"),
            // After list_changed id 8 was quiet; the fresh listing replaced
            // the catalogue, so fs_read (id 11) is no longer audited; the
            // failed listing (id 12) kept the catalogue.
            said("fs_list", &["glob"], &["depth", "dir"], "10"),
            said("fs_list", &["follow"], &["depth", "dir"], "13"),
        ]
    );
}

#[test]
fn the_proxy_log_audits_again_into_the_same_warnings() {
    let log = fixture_arg("proxy-session.log.jsonl");
    let from_log = warnings(&audit(&[&log], ""));
    let from_traffic = warnings(&audit(&[&fixture_arg("proxy-session.jsonl")], ""));
    assert_eq!(from_log, from_traffic);

    // Two runs' logs: each pair is said once, but the report counts both.
    let twice = audit(&[&log, &log], "");
    assert_eq!(warnings(&twice), from_traffic);
    let report = audit(&["--format", "text", &log, &log], "");
    assert_eq!(finding(&report.stdout, "ffset"), (2, "4".to_owned()));
    assert_eq!(total(&report.stdout, "warnings re-read from a log"), 8);

    // Fields a later proxy adds are ignored, whatever their type.
    let later = r#"{"tool":"fs_read","unknown_keys":["ffset"],"declared_keys":["path"],"id":"1","message":"x","hints":[{"cause":"typo"}]}"#;
    assert_eq!(
        warnings(&audit(&[], &format!("{later}\n"))),
        [said("fs_read", &["ffset"], &["path"], "1")]
    );

    // An allowed key is tolerated in a logged warning too.
    let allowed = audit(&["--allow", "recursive", &log], "");
    assert!(!warnings(&allowed).iter().any(|w| w.id == "five"));
}

// ---------------------------------------------------------- scale

/// Tens of MB of generated transcript through stdin: the audit's peak memory
/// does not grow with the input's length. The run is held open after its last
/// line (a sentinel warning shows everything before it was audited) so its
/// high-water mark can be read from /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_long_transcript_is_audited_in_constant_memory() {
    let small = audit_transcript_peak_kb(2 << 20);
    let large = audit_transcript_peak_kb(40 << 20);
    eprintln!(
        "peak memory: {} kB for 2 MB, {} kB for 40 MB",
        small.peak_kb, large.peak_kb
    );
    assert!(
        large.peak_kb <= small.peak_kb + 4 * 1024,
        "peak memory grew from {} kB (2 MB input) to {} kB (40 MB input)",
        small.peak_kb,
        large.peak_kb
    );
    assert_eq!(large.warnings, support::transcript::UNDECLARED_KEYS.len() + 1);
}

#[cfg(target_os = "linux")]
struct Peak {
    peak_kb: u64,
    warnings: usize,
}

#[cfg(target_os = "linux")]
fn audit_transcript_peak_kb(bytes: u64) -> Peak {
    let mut child = Command::new(BIN)
        .arg("audit")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run mcp-unknown-keys");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(&mut stdin);
        let written = support::transcript::write_transcript(&mut out, bytes).expect("write the transcript");
        let sentinel = openai_call("sentinel", "Read", json!(r#"{"file_path":"x","sentinel":1}"#));
        writeln!(out, "{sentinel}").expect("write the sentinel");
        out.flush().expect("flush");
        drop(out);
        (written, stdin)
    });
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut warnings = 0;
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read a warning") > 0,
            "the audit ended early"
        );
        warnings += 1;
        if parse_warning(&line).id == "sentinel" {
            break;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("read /proc status");
    let peak_kb = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc status");
    let (written, stdin) = writer.join().expect("transcript writer");
    assert!(written.bytes >= bytes);
    drop(stdin);
    assert!(child.wait().expect("wait").success());
    Peak { peak_kb, warnings }
}
