//! An input that ends, or fails, partway: what came before the cut is read
//! and counted, and the cut is said and counted, never passed for a whole
//! input.

use std::io::{self, Cursor, Read};

use mcp_unknown_keys_logs::{Audit, Input, Notice, Options, Report, Tools};
use serde_json::{Value, json};

fn options() -> Options {
    let fs_read = json!({"name": "fs_read", "inputSchema": {"properties": {"path": {}}}});
    Options::default().tools(Tools::declarations("tools", vec![fs_read]))
}

fn tool_use(id: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": "fs_read", "input": input})
}

fn audit(input: Input) -> Report {
    let mut audit = Audit::new(&options()).unwrap();
    audit.read(input).expect("read on past a cut");
    audit.finish()
}

fn cut_shorts(report: &Report) -> Vec<usize> {
    report
        .notices
        .iter()
        .filter_map(|notice| match notice {
            Notice::CutShort { input, at } if input == "cut.json" => Some(*at),
            _ => None,
        })
        .collect()
}

#[test]
fn a_document_cut_short_gives_the_calls_before_the_cut_and_says_where() {
    let calls = [
        tool_use("t1", json!({"path": "a", "ffset": 1})),
        tool_use("t2", json!({"path": "b", "limit": 2})),
        tool_use("t3", json!({"path": "c", "depth": 3})),
    ];
    let pretty = serde_json::to_string_pretty(&json!(calls)).unwrap();
    let compact =
        serde_json::to_string(&json!({"messages": [{"role": "assistant", "content": calls}]})).unwrap();
    for whole in [pretty, compact] {
        // Cut inside the third call's input.
        let at = whole.find("depth").unwrap();
        let text = whole[..at].to_owned();
        let report = audit(Input::from_reader("cut.json", Cursor::new(text.clone())).unwrap());
        assert_eq!((report.coverage.calls, report.coverage.audited), (2, 2), "{text}");
        let keys: Vec<&str> = report
            .warnings
            .iter()
            .map(|w| w.unknown_keys[0].as_str())
            .collect();
        assert_eq!(keys, ["ffset", "limit"]);
        assert_eq!(report.incomplete_inputs, 1);
        assert_eq!(cut_shorts(&report).len(), 1, "said once: {:?}", report.notices);
        assert!(cut_shorts(&report)[0] <= text.len());
    }
}

#[test]
fn a_document_cut_before_any_call_says_so_over_no_calls() {
    let report = audit(Input::from_reader("cut.json", Cursor::new(r#"[{"type":"tool_use","#)).unwrap());
    assert_eq!(report.coverage.calls, 0);
    assert_eq!(report.incomplete_inputs, 1);
    let said = format!("{}", report.notices.last().unwrap());
    assert!(said.contains("cut.json is cut short at byte"), "{said}");
}

/// Lines, then a read error: as a corrupt compressed stream or a failing
/// disk gives.
struct FailsAfter(Cursor<Vec<u8>>);

impl Read for FailsAfter {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf)? {
            0 => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt deflate stream",
            )),
            n => Ok(n),
        }
    }
}

#[test]
fn a_read_that_fails_partway_is_said_with_its_line_and_counted() {
    let lines = format!(
        "{}\n{}\n",
        tool_use("t1", json!({"ffset": 1})),
        tool_use("t2", json!({"path": "b"}))
    );
    let input = Input::from_reader("broken.gz", FailsAfter(Cursor::new(lines.into_bytes()))).unwrap();
    let report = audit(input);
    assert_eq!(report.coverage.calls, 2);
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.incomplete_inputs, 1);
    assert!(
        report.notices.contains(&Notice::ReadFailed {
            input: "broken.gz".to_owned(),
            line: 3,
            error: "corrupt deflate stream".to_owned(),
        }),
        "{:?}",
        report.notices
    );
}

#[test]
fn a_catalogue_cut_short_is_refused_not_used_in_part() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.json");
    std::fs::write(
        &path,
        r#"[{"name":"a","inputSchema":{"properties":{"x":{}}}},{"name":"b","#,
    )
    .unwrap();
    let error = Audit::new(&Options::default().tools(Tools::file(&path))).unwrap_err();
    assert!(error.to_string().contains("cut short at byte"), "{error}");
}

#[test]
fn audit_files_never_takes_part_of_a_file_for_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.json");
    std::fs::write(&path, format!("[{},", tool_use("t1", json!({"ffset": 1})))).unwrap();
    let error = mcp_unknown_keys_logs::audit_files([&path], &options()).unwrap_err();
    assert!(
        matches!(error, mcp_unknown_keys_logs::Error::Incomplete { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("cut short at byte"), "{error}");
}
