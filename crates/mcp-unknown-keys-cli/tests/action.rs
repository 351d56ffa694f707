//! The GitHub Action's script (`scripts/action/run`, run by `action.yml`),
//! end to end, with the environment GitHub gives a step: the step summary,
//! the outputs file and the runner's temporary folder.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::audit_support::{lines, openai_call};

fn response(id: &str, tool: &str, arguments: Value) -> Value {
    let call = openai_call(id, tool, json!(arguments.to_string()));
    json!({"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]})
}

/// A folder with `tools.json` (`search` declares `q`) and `logs/a.jsonl`
/// and `logs/deep/b.jsonl`: three calls, one with `perPage`, one to a tool
/// no catalogue lists.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let tools =
        json!({"tools": [{"name": "search", "inputSchema": {"type": "object", "properties": {"q": {}}}}]});
    std::fs::write(dir.path().join("tools.json"), tools.to_string()).unwrap();
    std::fs::create_dir_all(dir.path().join("logs/deep")).unwrap();
    let a = lines(&[
        response("c1", "search", json!({"q": "a"})),
        response("c2", "search", json!({"q": "b", "perPage": 5})),
    ]);
    std::fs::write(dir.path().join("logs/a.jsonl"), a).unwrap();
    let b = lines(&[response("c3", "fetch", json!({"url": "u"}))]);
    std::fs::write(dir.path().join("logs/deep/b.jsonl"), b).unwrap();
    dir
}

struct Step {
    status: i32,
    summary: String,
    outputs: String,
    stdout: String,
}

fn run_step(dir: &Path, fail_on: &str, paths: &str) -> Step {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/action/run");
    let temp = dir.join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    let summary = dir.join("summary.md");
    let outputs = dir.join("outputs");
    let output = Command::new("bash")
        .arg(script)
        .current_dir(dir)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("RUNNER_TEMP", &temp)
        .env("MUK_BIN", env!("CARGO_BIN_EXE_mcp-unknown-keys"))
        .env("MUK_PATHS", paths)
        .env("MUK_TOOLS", "tools.json\n")
        .env("MUK_BY", "tool")
        .env("MUK_FAIL_ON", fail_on)
        .output()
        .unwrap();
    Step {
        status: output.status.code().unwrap(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        outputs: std::fs::read_to_string(&outputs).unwrap_or_default(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    }
}

#[test]
fn the_step_writes_the_summary_the_sarif_and_the_outputs() {
    let dir = workspace();
    let step = run_step(dir.path(), "none", "logs/**/*.jsonl");
    assert_eq!(step.status, 0, "{}", step.stdout);
    assert!(
        step.summary.starts_with("### mcp-unknown-keys audit"),
        "{}",
        step.summary
    );
    assert!(step.summary.contains("<code>perPage</code>"), "{}", step.summary);
    for line in ["calls=3", "audited=2", "warnings=1", "failed=false"] {
        assert!(
            step.outputs.lines().any(|l| l == line),
            "{line} in {}",
            step.outputs
        );
    }
    let sarif_path = step
        .outputs
        .lines()
        .find_map(|line| line.strip_prefix("sarif-file="))
        .unwrap();
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif_path).unwrap()).unwrap();
    let uri = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(
        uri, "logs/a.jsonl",
        "relative to the workspace, as code scanning reads it"
    );
}

#[test]
fn fail_on_rules_fail_the_action_after_the_outputs_are_set() {
    let dir = workspace();
    let step = run_step(dir.path(), "warning", "logs/**/*.jsonl");
    assert_eq!(step.status, 0, "the step itself passes, so the SARIF upload runs");
    assert!(step.outputs.contains("failed=true"), "{}", step.outputs);
    assert!(step.stdout.contains("::warning::"), "{}", step.stdout);
    let unaudited = run_step(dir.path(), "unaudited", "logs/a.jsonl");
    assert!(
        unaudited.outputs.contains("failed=false"),
        "every call of a.jsonl is audited"
    );
    let both = run_step(dir.path(), "warning unaudited", "logs/deep/b.jsonl");
    assert!(both.outputs.contains("failed=true"), "{}", both.outputs);
}

#[test]
fn a_path_that_matches_nothing_is_an_error_not_an_empty_audit() {
    let dir = workspace();
    let step = run_step(dir.path(), "none", "nothing/*.jsonl");
    assert_eq!(step.status, 2);
    assert!(
        step.stdout
            .contains("::error::mcp-unknown-keys: no file matches nothing/*.jsonl"),
        "{}",
        step.stdout
    );
    let bad = run_step(dir.path(), "sometimes", "logs/a.jsonl");
    assert_eq!(bad.status, 2);
}
