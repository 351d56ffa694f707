//! `audit` reads files as teams keep them: JSON Lines or one JSON document,
//! plain or compressed, with a byte order mark or old line ends; it refuses
//! what is not text once, whole; catalogues come in any of these too.

use crate::audit_support;

use crate::support::transcript;

use std::io::Write;
use std::process::{Command, Stdio};

use audit_support::*;
use serde_json::{Value, json};

/// A chat conversation whose assistant turns call `fs_read`, once with an
/// undeclared key.
fn conversation() -> Vec<Value> {
    vec![
        json!({"role": "user", "content": "Read the notes."}),
        json!({"role": "assistant", "content": null, "tool_calls": [
            openai_call("call_1", "fs_read", json!(r#"{"path":"notes.txt","ffset":3}"#))]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "…"}),
        json!({"role": "assistant", "content": null, "tool_calls": [
            openai_call("call_2", "fs_read", json!(r#"{"path":"todo.txt"}"#))]}),
    ]
}

fn catalogue_arg(dir: &tempfile::TempDir) -> String {
    std::fs::write(dir.path().join("tools.json"), mcp_catalogue().to_string()).unwrap();
    in_dir(dir, "tools.json")
}

/// Audits `bytes` written as `name`, against `mcp_catalogue()`.
fn audit_file(name: &str, bytes: &[u8]) -> Run {
    let dir = dir_with(&[(name, bytes)]);
    audit(&["--tools", &catalogue_arg(&dir), &in_dir(&dir, name)], "")
}

fn expected() -> (Vec<Said>, Covered) {
    (vec![fs_read_warning(&["ffset"], "call_1")], all_audited(2))
}

fn says_document_once(run: &Run) {
    let notes = run
        .stderr
        .lines()
        .filter(|l| l.contains("not JSON Lines: read element by element"))
        .count();
    assert_eq!(notes, 1, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

// ------------------------------------------------------------ documents

#[test]
fn a_file_that_is_one_json_array_is_read_element_by_element() {
    let pretty = serde_json::to_string_pretty(&conversation()).unwrap();
    let run = audit_file("trajectory.json", pretty.as_bytes());
    assert_eq!(output(&run), expected());
    says_document_once(&run);
}

#[test]
fn an_object_holding_an_array_of_records_is_read_element_by_element() {
    let logs = json!({"version": 2, "loglines": conversation()});
    let run = audit_file(
        "logs.json",
        serde_json::to_string_pretty(&logs).unwrap().as_bytes(),
    );
    assert_eq!(output(&run), expected());
    says_document_once(&run);
    // On one line, it is a line of JSON Lines, read the same way.
    let run = audit_file("logs.jsonl", format!("{logs}\n").as_bytes());
    assert_eq!(output(&run), expected());
}

#[test]
fn records_nested_in_a_results_file_are_found() {
    // A benchmark's results: an array of runs, each with its trajectory.
    let results = json!([
        {"task_id": 0, "reward": 1.0, "traj": conversation(), "info": {"source": "user"}},
        {"task_id": 1, "reward": 0.0, "traj": [json!({"role": "assistant", "tool_calls": [
            openai_call("call_3", "fs_read", json!(r#"{"path":"x","limit":1}"#))]})]},
    ]);
    let run = audit_file(
        "results.json",
        serde_json::to_string_pretty(&results).unwrap().as_bytes(),
    );
    assert_eq!(
        output(&run),
        (
            vec![
                fs_read_warning(&["ffset"], "call_1"),
                fs_read_warning(&["limit"], "call_3")
            ],
            all_audited(3)
        )
    );
}

#[test]
fn pretty_printed_records_one_after_another_are_read_one_by_one() {
    let text: String = conversation()
        .iter()
        .map(|record| serde_json::to_string_pretty(record).unwrap() + "\n")
        .collect();
    let run = audit_file("jq-output.json", text.as_bytes());
    assert_eq!(output(&run), expected());
    assert!(run.stderr.contains("is 4 JSON documents"), "{}", run.stderr);
}

#[test]
fn a_broken_document_is_read_as_lines_and_its_errors_named_sparingly() {
    // Opens like a document, never closes: every line is then a line.
    let mut text = String::from("[\n");
    for _ in 0..30 {
        text.push_str("  {\"role\": \"user\",\n");
    }
    let run = audit_file("broken.json", text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let named = run.stderr.lines().filter(|l| l.contains(": not JSON")).count();
    assert_eq!(named, 10, "{}", run.stderr);
    assert!(
        run.stderr.contains("21 more unreadable line(s)"),
        "{}",
        run.stderr
    );
}

// ------------------------------------------------------------ compression

fn jsonl(records: &[Value]) -> Vec<u8> {
    lines(records).into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

#[test]
fn gzip_and_zstd_inputs_are_read_by_their_first_bytes_whatever_their_name() {
    let plain = jsonl(&conversation());
    for (name, bytes) in [
        ("session.jsonl.gz", gzip(&plain)),
        ("session.jsonl.zst", zstd(&plain)),
        ("rotated.log", gzip(&plain)),
        ("archive", zstd(&plain)),
    ] {
        let run = audit_file(name, &bytes);
        assert_eq!(output(&run), expected(), "{name}");
        assert_eq!(run.stderr, "", "{name}");
    }
}

#[test]
fn concatenated_compressed_parts_read_as_one() {
    let records = conversation();
    let (first, second) = records.split_at(2);
    let mut gz = gzip(&jsonl(first));
    gz.extend(gzip(&jsonl(second)));
    assert_eq!(output(&audit_file("two.gz", &gz)), expected());
    let mut zst = zstd(&jsonl(first));
    zst.extend(zstd(&jsonl(second)));
    assert_eq!(output(&audit_file("two.zst", &zst)), expected());
}

#[test]
fn a_compressed_document_and_a_compressed_catalogue_are_read_too() {
    let pretty = serde_json::to_string_pretty(&conversation()).unwrap();
    let dir = dir_with(&[
        ("tools.json.gz", &gzip(mcp_catalogue().to_string().as_bytes())),
        ("trajectory.json.zst", &zstd(pretty.as_bytes())),
    ]);
    let run = audit(
        &[
            "--tools",
            &in_dir(&dir, "tools.json.gz"),
            &in_dir(&dir, "trajectory.json.zst"),
        ],
        "",
    );
    assert_eq!(output(&run), expected());
}

#[test]
fn a_corrupt_compressed_file_is_an_error_naming_it() {
    let mut bytes = gzip(&jsonl(&conversation()));
    let middle = bytes.len() / 2;
    bytes.truncate(middle);
    let run = audit_file("cut.gz", &bytes);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("cut.gz"), "{}", run.stderr);
}

// ------------------------------------------------------------ text

#[test]
fn a_byte_order_mark_and_any_line_ends_are_accepted() {
    let text = lines(&conversation());
    let crlf = text.replace('\n', "\r\n");
    let cr = text.replace('\n', "\r");
    for (name, body) in [("lf", text.clone()), ("crlf", crlf), ("cr", cr)] {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(body.as_bytes());
        let run = audit_file(&format!("{name}.jsonl"), &bytes);
        assert_eq!(output(&run), expected(), "{name}");
        assert_eq!(run.stderr, "", "{name}");
    }
    // Line numbers count line ends as a reader sees them.
    let run = audit_file("cr-errors.jsonl", b"{}\rnope\r\n{}\rnope");
    assert!(
        run.stderr.contains("cr-errors.jsonl:2: not JSON"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("cr-errors.jsonl:4: not JSON"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_catalogue_with_a_byte_order_mark_is_read() {
    let mut catalogue = b"\xef\xbb\xbf".to_vec();
    catalogue.extend(serde_json::to_string_pretty(&mcp_catalogue()).unwrap().as_bytes());
    let dir = dir_with(&[("tools.json", &catalogue)]);
    let run = audit(
        &["--tools", &in_dir(&dir, "tools.json"), "--fail-on-warning"],
        &lines(&conversation()),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(parse_output(&run.stdout), expected());
}

#[test]
fn a_file_that_is_not_text_is_refused_once_whole() {
    // Pseudo-random bytes, as a binary file holds.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let binary: Vec<u8> = (0..64 << 10)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let utf16: Vec<u8> = "\u{feff}{\"a\":1}\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    for (name, bytes) in [
        ("random.bin", binary.clone()),
        ("utf16.jsonl", utf16),
        ("random.gz", gzip(&binary)),
    ] {
        let run = audit_file(name, &bytes);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains(name) && run.stderr.contains("is not text"),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "{name}");
        // A gate does not pass it either.
        let dir = dir_with(&[(name, &bytes)]);
        assert_eq!(audit(&["--fail-on-warning", &in_dir(&dir, name)], "").code, 2);
    }
}

#[test]
fn a_line_that_is_not_utf8_is_said_to_be_so() {
    let mut bytes = lines(&conversation()[..2]).into_bytes();
    bytes.extend(b"{\"caf\xe9\": 1}\n");
    bytes.extend(lines(&conversation()[2..]).as_bytes());
    let run = audit_file("latin1.jsonl", &bytes);
    assert_eq!(output(&run), expected());
    assert!(run.stderr.contains("latin1.jsonl:3: not UTF-8"), "{}", run.stderr);
    assert!(!run.stderr.contains("not JSON"), "{}", run.stderr);
    let report = audit_file_text("latin1.jsonl", &bytes);
    assert_eq!(total(&report, "lines not UTF-8"), 1);
    assert_eq!(total(&report, "lines not JSON"), 0);
}

fn audit_file_text(name: &str, bytes: &[u8]) -> String {
    let dir = dir_with(&[(name, bytes)]);
    let run = audit(
        &[
            "--format",
            "text",
            "--tools",
            &catalogue_arg(&dir),
            &in_dir(&dir, name),
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

// ------------------------------------------------------------ catalogues

#[test]
fn the_tools_option_takes_every_catalogue_shape() {
    let tools = mcp_catalogue()["tools"].clone();
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    let schema = json!({"type": "object", "properties": {"path": {}, "offset": {}}});
    let shapes: Vec<(&str, String)> = vec![
        ("array.json", pretty(&tools)),
        ("object.json", pretty(&json!({"tools": tools}))),
        (
            "response.json",
            pretty(&json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}})),
        ),
        // One tool per line.
        (
            "tools.jsonl",
            tools
                .as_array()
                .unwrap()
                .iter()
                .map(|t| format!("{t}\n"))
                .collect(),
        ),
        // A recorded session: the catalogue is its tools/list response.
        (
            "session.jsonl",
            std::fs::read_to_string(fixture("proxy-session.jsonl")).unwrap(),
        ),
        (
            "anthropic.json",
            pretty(&json!([{"name": "fs_read", "input_schema": schema}])),
        ),
        (
            "responses.json",
            pretty(&json!([{"type": "function", "name": "fs_read", "parameters": schema}])),
        ),
        (
            "gemini.json",
            pretty(
                &json!({"tools": [{"functionDeclarations": [{"name": "fs_read", "parameters": schema}]}]}),
            ),
        ),
        (
            "bedrock.json",
            pretty(
                &json!({"toolConfig": {"tools": [{"toolSpec": {"name": "fs_read", "inputSchema": {"json": schema}}}]}}),
            ),
        ),
        (
            "request.json",
            pretty(
                &json!({"model": "m", "messages": [], "tools": [{"type": "function", "function": {"name": "fs_read", "parameters": schema}}]}),
            ),
        ),
    ];
    for (name, text) in shapes {
        let dir = dir_with(&[(name, text.as_bytes())]);
        let run = audit(
            &["--tools", &in_dir(&dir, name)],
            &lines(&[openai_call("c", "fs_read", json!(r#"{"ffset":1}"#))]),
        );
        assert_eq!(
            warnings(&run),
            [said("fs_read", &["ffset"], &["offset", "path"], "c")],
            "{name}"
        );
        assert_eq!(run.stderr, "", "{name}");
    }
}

#[test]
fn a_catalogue_with_no_readable_tool_exits_2_naming_the_shape_it_saw() {
    let cases = [
        (
            "tool.json",
            r#"{"tool": []}"#.to_owned(),
            "an object with members `tool`",
        ),
        (
            "builtin.json",
            r#"{"tools": [{"type": "web_search"}]}"#.to_owned(),
            "whose `tools` is an array of 1 element(s), the first an object with members `type`",
        ),
        (
            "numbers.json",
            "[1, 2, 3]".to_owned(),
            "an array of 3 element(s), the first a number",
        ),
        ("empty.json", String::new(), "nothing"),
        (
            "no-schema.jsonl",
            "{\"name\": \"fs_read\"}\n".to_owned(),
            "an object with members `name`",
        ),
    ];
    for (name, text, shape) in cases {
        let dir = dir_with(&[(name, text.as_bytes())]);
        let run = audit(&["--tools", &in_dir(&dir, name)], "");
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains(name)
                && run.stderr.contains("holds no readable tool")
                && run.stderr.contains(shape),
            "{name}: {}",
            run.stderr
        );
    }
}

#[test]
fn usage_errors_and_unusable_files_exit_2_saying_which_file_and_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.jsonl");
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

    let run = audit(&["--tools", missing.to_str().unwrap()], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot open the catalogue") && run.stderr.contains("missing.jsonl"),
        "{}",
        run.stderr
    );

    assert_eq!(audit(&["--format", "yaml"], "").code, 2);
    assert_eq!(audit(&["--no-such-flag"], "").code, 2);
}

#[test]
fn stdin_is_read_when_no_file_or_a_dash_is_given() {
    let text = lines(&[vec![mcp_catalogue()], conversation()].concat());
    assert_eq!(output(&audit(&[], &text)), expected());
    assert_eq!(output(&audit(&["-"], &text)), expected());
    // Compressed on stdin, too.
    assert_eq!(output(&audit_bytes(&[], &gzip(text.as_bytes()))), expected());
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
    assert_eq!(large.warnings, transcript::UNDECLARED_KEYS.len() + 1);
}

#[cfg(target_os = "linux")]
struct Peak {
    peak_kb: u64,
    warnings: usize,
}

#[cfg(target_os = "linux")]
fn audit_transcript_peak_kb(bytes: u64) -> Peak {
    use std::io::{BufRead, BufReader};

    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-unknown-keys"))
        .arg("audit")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run mcp-unknown-keys");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(&mut stdin);
        let written = transcript::write_transcript(&mut out, bytes).expect("write the transcript");
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
