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
