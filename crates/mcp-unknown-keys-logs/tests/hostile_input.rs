//! Input written to hurt the reader: nesting deeper than any log nests,
//! lines longer than any log writes. Each is read as far as it is read
//! safely, counted and said, and never crashes the audit.

use std::io::Cursor;

use mcp_unknown_keys_logs::{Audit, Input, Notice, Options, RecordKind, Tools, Unreadable, read_record};
use serde_json::json;

/// Runs `f` on a thread with a small stack (half a test thread's), which a
/// walk that recursed per level would overflow for certain (and a crash
/// fails the test); what is opened through serde_json stays within its 128
/// levels.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .expect("spawn a thread")
        .join()
        .expect("no crash")
}

const LEVELS: usize = 100_000;

fn nested_arrays() -> String {
    format!("{}{}", "[".repeat(LEVELS), "]".repeat(LEVELS))
}

fn nested_objects() -> String {
    format!("{}1{}", r#"{"a":"#.repeat(LEVELS), "}".repeat(LEVELS))
}

#[test]
fn arrays_nested_a_hundred_thousand_deep_are_too_deep_not_a_crash() {
    let kind = on_a_small_stack(|| read_record(nested_arrays().as_bytes()).kind);
    assert_eq!(kind, RecordKind::TooDeep);
    let report = on_a_small_stack(|| {
        let mut audit = Audit::new(&Options::default()).unwrap();
        let text = format!("{}\n{}\n", nested_arrays(), nested_arrays());
        audit
            .read(Input::from_reader("deep.jsonl", Cursor::new(text)).unwrap())
            .unwrap();
        audit.finish()
    });
    assert_eq!((report.lines.read, report.lines.too_deep), (2, 2));
    assert!(report.notices.contains(&Notice::UnreadableLine {
        input: "deep.jsonl".to_owned(),
        line: 1,
        why: Unreadable::TooDeep,
    }));
}

#[test]
fn a_document_nested_a_hundred_thousand_deep_is_read_without_a_crash() {
    for text in [nested_arrays(), nested_objects()] {
        // Pretty-printed: a document, not JSON Lines.
        let text = text.replacen('[', "[\n", 1).replacen('{', "{\n", 1);
        let report = on_a_small_stack(move || {
            let mut audit = Audit::new(&Options::default()).unwrap();
            audit
                .read(Input::from_reader("deep.json", Cursor::new(text)).unwrap())
                .unwrap();
            audit.finish()
        });
        assert_eq!(report.lines.read, 1);
        assert_eq!(report.lines.not_json, 0);
    }
}

#[test]
fn objects_nested_a_hundred_thousand_deep_as_arguments_or_records_are_no_crash() {
    let tools = Tools::declarations(
        "tools",
        vec![json!({"name": "t", "inputSchema": {"properties": {"a": {"type": "object"}}}})],
    );
    let report = on_a_small_stack(move || {
        let call = format!(
            r#"{{"type":"tool_use","id":"c","name":"t","input":{}}}"#,
            nested_objects()
        );
        // Members a shape opens, each in the other's value.
        let opened = r#"{"message":{"content":"#;
        let message = format!("{}1{}", opened.repeat(LEVELS / 2), "}".repeat(LEVELS));
        let text = format!("{call}\n{}\n{message}\n", nested_objects());
        let mut audit = Audit::new(&Options::default().tools(tools)).unwrap();
        audit
            .read(Input::from_reader("deep.jsonl", Cursor::new(text)).unwrap())
            .unwrap();
        audit.finish()
    });
    assert_eq!(report.coverage.calls, 1);
    // Records nested past what is read are said to be.
    assert_eq!(report.lines.too_deep, 1);
}

/// A line of `len` bytes that never ends until `len`, then `after`:
/// generated, never held.
struct LongLine {
    left: usize,
    after: std::io::Cursor<Vec<u8>>,
}

impl std::io::Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return self.after.read(buf);
        }
        let n = buf.len().min(self.left);
        buf[..n].fill(b'x');
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_line_past_the_longest_read_is_read_past_and_counted_too_long() {
    let call = json!({"type": "tool_use", "id": "t1", "name": "t", "input": {"a": 1}});
    let input = LongLine {
        left: mcp_unknown_keys_logs::MAX_LINE_BYTES + 1,
        after: Cursor::new(format!("\n{call}\n").into_bytes()),
    };
    let mut audit = Audit::new(&Options::default()).unwrap();
    audit
        .read(Input::from_reader("long.jsonl", input).unwrap())
        .unwrap();
    let report = audit.finish();
    assert_eq!((report.lines.read, report.lines.too_long), (2, 1));
    // The line after it is read.
    assert_eq!(report.coverage.calls, 1);
    assert!(report.notices.contains(&Notice::UnreadableLine {
        input: "long.jsonl".to_owned(),
        line: 1,
        why: Unreadable::TooLong,
    }));
}

/// A log carrying a new undeclared key on every call keeps findings for at
/// most `MAX_SAID_PAIRS` pairs: the pairs past it are counted, not
/// remembered; a pair kept before goes on being counted.
#[test]
fn findings_stop_growing_at_their_bound_and_count_the_rest() {
    use mcp_unknown_keys::limits::MAX_SAID_PAIRS as MAX_FINDINGS;
    let tools = Tools::declarations(
        "t",
        vec![json!({"name": "read", "inputSchema": {"properties": {"path": {}}}})],
    );
    let mut text = String::new();
    let call = |id: usize, key: usize| json!({"type": "tool_use", "id": format!("t{id}"), "name": "read", "input": {format!("k{key}"): 1}});
    for n in 0..MAX_FINDINGS + 2 {
        text.push_str(&format!("{}\n", call(n, n)));
    }
    // Key 0 again, past the bound: its finding is still counted.
    text.push_str(&format!("{}\n", call(MAX_FINDINGS + 2, 0)));
    let mut audit = Audit::new(&Options::default().tools(tools)).unwrap();
    audit
        .read(Input::from_reader("keys.jsonl", Cursor::new(text)).unwrap())
        .unwrap();
    let report = audit.finish();
    assert_eq!(report.coverage.calls, MAX_FINDINGS as u64 + 3);
    assert_eq!(report.findings.len(), MAX_FINDINGS);
    assert_eq!(report.findings.unkept(), 2);
    let k0 = report
        .findings
        .iter()
        .find(|finding| finding.key == "k0")
        .unwrap();
    assert_eq!(k0.calls, 2);
}
