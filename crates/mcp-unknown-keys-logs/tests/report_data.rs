//! Reports as plain data: every report an audit of the project's real
//! samples makes reads back from its JSON form as it was, passes the checks
//! a report read back must pass, and adds up with itself.

use std::path::{Path, PathBuf};

use mcp_unknown_keys_logs::report_data::{Fingerprint, ReportData, check, merge, same};
use mcp_unknown_keys_logs::{Audit, Dimension, Options, Tools};

/// The command line's samples: every shape `audit` reads, proxy logs
/// included.
fn samples() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-unknown-keys-cli/tests/fixtures");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures.join("audit"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.extend([
        fixtures.join("proxy-session.jsonl"),
        fixtures.join("proxy-session.log.jsonl"),
    ]);
    paths.sort();
    paths
}

fn options(tools: Option<&Path>) -> Options {
    let mut options = Options::default();
    for dimension in Dimension::ALL {
        options = options.group_by([dimension]);
    }
    let options = options.group_by([Dimension::Model, Dimension::Tool, Dimension::Key]);
    match tools {
        Some(tools) => options.tools(Tools::file(tools)),
        None => options,
    }
}

fn report(paths: &[PathBuf], options: &Options) -> ReportData {
    let mut audit = Audit::new(options).unwrap();
    for path in paths {
        audit.read_file(path).unwrap();
    }
    ReportData::from(audit.finish()).made_with(Fingerprint::of(options))
}

#[test]
fn every_report_of_the_samples_reads_back_and_adds_up() {
    let samples = samples();
    let tools = samples
        .iter()
        .find(|path| path.ends_with("tools.json"))
        .unwrap()
        .clone();
    let mut reports = Vec::new();
    for tools in [None, Some(tools.as_path())] {
        let options = options(tools);
        reports.push(report(&samples, &options));
        reports.extend(
            samples
                .iter()
                .map(|path| report(std::slice::from_ref(path), &options)),
        );
    }
    assert!(reports[0].coverage.calls > 50 && !reports[0].findings.is_empty());
    for data in &reports {
        check(data).unwrap();
        let back = ReportData::from_json(&data.to_json()).unwrap();
        assert!(same(&back, data));
        assert_eq!(back.to_json(), data.to_json());
        let twice = merge(data, &back).unwrap();
        check(&twice).unwrap();
        assert_eq!(twice.coverage.calls, 2 * data.coverage.calls);
    }
}

#[test]
fn a_report_past_its_bounds_reads_back_and_adds_up() {
    // 600 calls of 3 new keys each: past 1,000 key groups, a call's new
    // keys all fall in `(other)`, which then counts the call more than
    // once; and a call of 70 keys, one of them `(other)` itself.
    let mut log = String::from(r#"{"tools":[{"name":"f","inputSchema":{"properties":{"q":{}}}}]}"#);
    log.push('\n');
    for n in 0..600 {
        log.push_str(&format!(
            r#"{{"type":"tool_use","id":"{n}","name":"f","input":{{"a{n}":1,"b{n}":2,"c{n}":3}}}}"#
        ));
        log.push('\n');
    }
    let many: Vec<String> = (0..70)
        .map(|n| format!(r#""k{n}":1"#))
        .chain([r#""(other)":1"#.to_owned()])
        .collect();
    log.push_str(&format!(
        r#"{{"type":"tool_use","id":"x","name":"f","input":{{{}}}}}"#,
        many.join(",")
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, log).unwrap();
    let options = options(None);
    let data = report(&[path], &options);
    let by_key = &data
        .groups
        .iter()
        .find(|(by, _)| by == &[Dimension::Key])
        .unwrap()
        .1;
    assert_eq!(by_key.len(), 1001);
    check(&data).unwrap();
    let back = ReportData::from_json(&data.to_json()).unwrap();
    let mut merged = back.clone();
    for _ in 0..3 {
        merged = merge(&merged, &back).unwrap();
        check(&merged).unwrap();
    }
    assert_eq!(merged.coverage.calls, 4 * 601);
}
