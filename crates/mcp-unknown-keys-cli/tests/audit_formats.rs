//! `audit --format sarif`, `junit` and `markdown`: where CI looks. SARIF is
//! validated against the OASIS 2.1.0 schema and JUnit against the schema
//! pytest validates its own reports with, by the pinned Python validators
//! scripts/test-deps installs.

use std::process::Command;

use crate::audit_support;
use crate::support::prerequisite;

use audit_support::*;
use serde_json::{Value, json};

/// `search` declares `q` and `per_page`; `fetch` declares nothing and is
/// open; `write` is in no catalogue.
fn catalogue(dir: &std::path::Path) -> String {
    let path = dir.join("tools.json");
    let tools = json!({"tools": [
        {"name": "search", "inputSchema": {"type": "object", "properties": {"q": {}, "per_page": {}, "options": {"type": "object", "properties": {"mode": {}}}}}},
        {"name": "fetch", "inputSchema": {"type": "object"}},
    ]});
    std::fs::write(&path, tools.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

/// A Chat Completions response holding one call.
fn response(id: &str, tool: &str, arguments: Value) -> Value {
    let call = openai_call(id, tool, json!(arguments.to_string()));
    json!({"model": "gpt-5", "choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]})
}

/// A log of five calls, in a file of the folder: a clean search, a search
/// with `perPage` (line 2) and a nested `options.mod` (line 3), `perPage`
/// again, a call to `fetch` (declares nothing) and one to `write` (listed
/// nowhere), and a tool name with markup and a pipe.
fn log(dir: &std::path::Path) -> String {
    let path = dir.join("calls.jsonl");
    let text = lines(&[
        response("c1", "search", json!({"q": "a"})),
        response("c2", "search", json!({"q": "b", "perPage": 5})),
        response("c3", "search", json!({"q": "c", "options": {"mod": 1}})),
        response("c4", "search", json!({"q": "d", "perPage": 2})),
        response("c5", "fetch", json!({"url": "u"})),
        response("c6", "write", json!({"path": "p"})),
        response("c7", "<b>x|y</b>", json!({"a": 1})),
    ]);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn run_format(format: &str) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tools = catalogue(dir.path());
    let log = log(dir.path());
    let run = audit(&["--format", format, "--by", "tool", "--tools", &tools, &log], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    (run, dir)
}

/// Runs the pinned Python `script` with the file `document` as `sys.argv[1]`
/// and `schema` as `sys.argv[2]`; panics with what it said if it fails.
fn validate(script: &str, document: &str, schema: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("document");
    std::fs::write(&path, document).unwrap();
    let python = prerequisite("MCP_UK_PYTHON");
    let output = Command::new(python)
        .args(["-c", script])
        .arg(&path)
        .arg(schema)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "not valid: {}\n{document}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn sarif_is_valid_and_locates_each_pair_at_its_first_call() {
    let (run, _dir) = run_format("sarif");
    validate(
        "import json, sys, jsonschema\n\
         schema = json.load(open(sys.argv[2]))\n\
         cls = jsonschema.validators.validator_for(schema)\n\
         cls(schema, format_checker=cls.FORMAT_CHECKER).validate(json.load(open(sys.argv[1])))",
        &run.stdout,
        &prerequisite("MCP_UK_SARIF_SCHEMA"),
    );
    let sarif: Value = serde_json::from_str(&run.stdout).unwrap();
    let run0 = &sarif["runs"][0];
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"invented") && rules.contains(&"nested"),
        "{rules:?}"
    );
    let results = run0["results"].as_array().unwrap();
    let result = |key: &str| results.iter().find(|r| r["properties"]["key"] == key).unwrap();
    let per_page = result("perPage");
    assert_eq!(per_page["properties"]["calls"], 2);
    assert_eq!(
        per_page["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert!(
        per_page["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("calls.jsonl")
    );
    assert_eq!(
        rules[per_page["ruleIndex"].as_u64().unwrap() as usize],
        per_page["ruleId"]
    );
    let nested = result("options.mod");
    assert_eq!(nested["ruleId"], "nested");
    assert_eq!(
        nested["locations"][0]["physicalLocation"]["region"]["startLine"],
        3
    );
    assert_eq!(run0["properties"]["coverage"]["calls"], 7);
}

#[test]
fn junit_is_valid_with_a_case_per_tool_failed_skipped_or_passed() {
    let (run, _dir) = run_format("junit");
    validate(
        "import sys, xmlschema\nxmlschema.XMLSchema(sys.argv[2]).validate(sys.argv[1])",
        &run.stdout,
        &prerequisite("MCP_UK_JUNIT_XSD"),
    );
    let xml = &run.stdout;
    assert!(
        xml.contains(
            r#"<testsuite name="mcp-unknown-keys audit" tests="4" failures="1" errors="0" skipped="3">"#
        ),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testcase classname="mcp-unknown-keys" name="search">"#),
        "{xml}"
    );
    assert!(
        xml.contains(
            r#"message="2 undeclared key(s) in 3 call(s)">perPage (case_variant): 2 call(s), first at "#
        ),
        "{xml}"
    );
    assert!(
        xml.contains("calls.jsonl:2\noptions.mod (nested): 1 call(s), first at "),
        "{xml}"
    );
    assert!(xml.contains(r#"<skipped message="declares_nothing:"#), "{xml}");
    assert!(xml.contains(r#"name="write">"#) && xml.contains(r#"<skipped message="unlisted_tool:"#));
    // A name with markup is text.
    assert!(xml.contains(r#"name="&lt;b&gt;x|y&lt;/b&gt;""#), "{xml}");
}

#[test]
fn markdown_is_short_and_a_name_never_breaks_a_table() {
    let (run, _dir) = run_format("markdown");
    let md = &run.stdout;
    assert!(md.starts_with("### mcp-unknown-keys audit\n"), "{md}");
    assert!(md.contains("**Coverage:** 7 call(s): 4 audited"), "{md}");
    assert!(
        md.contains("| <code>search</code> | <code>perPage</code> | case_variant | 2 |"),
        "{md}"
    );
    assert!(md.contains("**Rates by tool**"), "{md}");
    assert!(md.contains("<code>&lt;b&gt;x&#124;y&lt;/b&gt;</code>"), "{md}");
    // Every table row has as many cells as its header.
    for table in md.split("\n\n").filter(|block| block.starts_with('|')) {
        let cells = |row: &str| row.matches(" | ").count();
        let rows: Vec<&str> = table.lines().collect();
        assert!(rows.iter().all(|row| cells(row) == cells(rows[0])), "{table}");
    }
    assert!(md.len() < 1 << 20);
}
