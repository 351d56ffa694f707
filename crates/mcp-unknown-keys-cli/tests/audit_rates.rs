//! `audit --by`: the calls grouped by model, tool, key, cause or file, each
//! group with its rate of calls carrying undeclared keys, adding up to the
//! coverage; and `--format html`, whose every name is text.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

/// `search` declares `q` and `per_page`.
fn catalogue() -> Vec<u8> {
    json!({"tools": [{"name": "search", "inputSchema": {"type": "object", "properties": {"q": {}, "per_page": {}}}}]})
        .to_string()
        .into_bytes()
}

/// A Chat Completions response by `model` holding one call.
fn response(model: &str, id: &str, tool: &str, arguments: Value) -> Value {
    let call = openai_call(id, tool, json!(arguments.to_string()));
    json!({"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]})
}

/// A Claude Code line by `model` holding one call.
fn claude_code(model: &str, id: &str, arguments: Value) -> Value {
    json!({"type": "assistant", "message": {"model": model, "content": [
        {"type": "tool_use", "id": id, "name": "search", "input": arguments}
    ]}})
}

/// gpt-4o: 3 calls, 2 audited, 1 with a key (`perPage`); claude-sonnet-4: 2
/// audited, 1 with a key (`limit`); gemini-2.5 (an OpenTelemetry span): 1
/// audited, with `perPage`; a bare call naming no model: 1 audited, clean.
fn calls() -> (String, String) {
    let first = lines(&[
        response("gpt-4o", "c1", "search", json!({"q": "a", "perPage": 5})),
        response("gpt-4o", "c2", "search", json!({"q": "b"})),
        response("gpt-4o", "c3", "fetch", json!({"url": "u"})),
    ]);
    let second = lines(&[
        claude_code("claude-sonnet-4", "t1", json!({"q": "c", "per_page": 2})),
        claude_code("claude-sonnet-4", "t2", json!({"q": "d", "limit": 9})),
        json!({"name": "execute_tool search", "attributes": {
            "gen_ai.tool.name": "search",
            "gen_ai.tool.call.id": "s1",
            "gen_ai.tool.call.arguments": r#"{"q":"e","perPage":1}"#,
            "gen_ai.request.model": "gemini-2.5",
        }}),
        json!({"type": "tool_use", "id": "u1", "name": "search", "input": {"q": "f"}}),
    ]);
    (first, second)
}

/// Runs `audit ARGS` over the two files of [`calls`], with the catalogue.
fn audit_calls(args: &[&str]) -> (Run, tempfile::TempDir) {
    let (first, second) = calls();
    let dir = dir_with(&[
        ("tools.json", &catalogue()),
        ("first.jsonl", first.as_bytes()),
        ("second.jsonl", second.as_bytes()),
    ]);
    let tools = in_dir(&dir, "tools.json");
    let (first, second) = (in_dir(&dir, "first.jsonl"), in_dir(&dir, "second.jsonl"));
    let mut all = vec!["--tools", &tools];
    all.extend(args);
    all.extend([first.as_str(), second.as_str()]);
    let run = audit(&all, "");
    (run, dir)
}

fn said_of(key: &str, id: &str) -> Said {
    said("search", &[key], &["per_page", "q"], id)
}

/// The group lines of a jsonl run, in order, and its coverage line.
fn groups_of(run: &Run) -> (Vec<Value>, Value) {
    assert_eq!(run.code, 0, "{}", run.stderr);
    let values: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let (coverage, before) = values.split_last().expect("a coverage line");
    let groups = before
        .iter()
        .filter(|v| v.get("group").is_some())
        .cloned()
        .collect();
    (groups, coverage["coverage"].clone())
}

fn sum(groups: &[Value], field: &str) -> u64 {
    groups.iter().map(|group| group[field].as_u64().unwrap()).sum()
}

#[test]
fn by_model_one_line_per_group_before_the_coverage_line_highest_rate_first() {
    let (run, _dir) = audit_calls(&["--by", "model"]);
    let (groups, coverage) = groups_of(&run);
    let rows: Vec<(String, u64, u64, u64, Value)> = groups
        .iter()
        .map(|g| {
            (
                g["group"]["model"].as_str().unwrap().to_owned(),
                g["calls"].as_u64().unwrap(),
                g["audited"].as_u64().unwrap(),
                g["calls_with_unknown_keys"].as_u64().unwrap(),
                g["per_1000_audited"].clone(),
            )
        })
        .collect();
    let row = |model: &str, calls, audited, with, rate: Value| (model.to_owned(), calls, audited, with, rate);
    assert_eq!(
        rows,
        [
            row("gemini-2.5", 1, 1, 1, json!(1000.0)),
            row("gpt-4o", 3, 2, 1, json!(500.0)),
            row("claude-sonnet-4", 2, 2, 1, json!(500.0)),
            row("(unknown)", 1, 1, 0, json!(0.0)),
        ]
    );
    // The groups add up to the coverage.
    assert_eq!(sum(&groups, "calls"), coverage["calls"].as_u64().unwrap());
    assert_eq!(sum(&groups, "audited"), coverage["audited"].as_u64().unwrap());
    // Keys and their causes, per group: gemini's `perPage` is the pair gpt-4o's
    // call was warned of, counted under the cause diagnosed then.
    assert_eq!(groups[0]["unknown_keys"], json!({"perPage": 1}));
    assert_eq!(groups[0]["causes"], json!({"case_variant": 1}));
    assert_eq!(groups[2]["unknown_keys"], json!({"limit": 1}));
    // The warnings are still said, before the groups, and the coverage is
    // the same as without --by.
    let (said, covered) = output(&run);
    assert_eq!(said, [said_of("perPage", "c1"), said_of("limit", "t2")]);
    assert_eq!(covered, audit_support::coverage(&audit_calls(&[]).0));
    let first: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool"], "search");
}

#[test]
fn by_tool_and_by_file_add_up_to_the_coverage_and_by_key_counts_calls_without_a_key_as_none() {
    for by in ["tool", "file"] {
        let (run, _dir) = audit_calls(&["--by", by]);
        let (groups, coverage) = groups_of(&run);
        assert_eq!(sum(&groups, "calls"), 7, "--by {by}");
        assert_eq!(
            sum(&groups, "calls"),
            coverage["calls"].as_u64().unwrap(),
            "--by {by}"
        );
        assert_eq!(
            sum(&groups, "audited"),
            coverage["audited"].as_u64().unwrap(),
            "--by {by}"
        );
    }
    let (run, _dir) = audit_calls(&["--by", "tool"]);
    let (groups, _) = groups_of(&run);
    let fetch = groups.iter().find(|g| g["group"]["tool"] == "fetch").unwrap();
    // Never audited: no rate, rather than a rate of 0.
    assert_eq!(
        (fetch["calls"].as_u64(), fetch["per_1000_audited"].clone()),
        (Some(1), Value::Null)
    );
    let (run, _dir) = audit_calls(&["--by", "file"]);
    let (groups, _) = groups_of(&run);
    let file = |g: &Value| {
        g["group"]["file"]
            .as_str()
            .unwrap()
            .rsplit(['/', '\\'])
            .next()
            .unwrap()
            .to_owned()
    };
    let mut files: Vec<(String, u64)> = groups
        .iter()
        .map(|g| (file(g), g["calls"].as_u64().unwrap()))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [("first.jsonl".to_owned(), 3), ("second.jsonl".to_owned(), 4)]
    );

    let (run, _dir) = audit_calls(&["--by", "key"]);
    let (groups, _) = groups_of(&run);
    let mut keys: Vec<(&str, u64)> = groups
        .iter()
        .map(|g| (g["group"]["key"].as_str().unwrap(), g["calls"].as_u64().unwrap()))
        .collect();
    keys.sort();
    assert_eq!(keys, [("(none)", 4), ("limit", 1), ("perPage", 2)]);
}

#[test]
fn by_model_and_tool_groups_by_each_pair() {
    let (run, _dir) = audit_calls(&["--by", "model", "--by", "tool"]);
    let (groups, coverage) = groups_of(&run);
    let pairs: Vec<(&str, &str, u64)> = groups
        .iter()
        .map(|g| {
            let group = &g["group"];
            (
                group["model"].as_str().unwrap(),
                group["tool"].as_str().unwrap(),
                g["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(pairs.contains(&("gpt-4o", "fetch", 1)), "{pairs:?}");
    assert!(pairs.contains(&("gpt-4o", "search", 2)), "{pairs:?}");
    assert_eq!(pairs.len(), 5, "{pairs:?}");
    assert_eq!(sum(&groups, "calls"), coverage["calls"].as_u64().unwrap());
}

#[test]
fn a_call_carrying_two_keys_counts_under_each_key_and_each_cause() {
    let input = lines(&[
        mcp_catalogue(),
        openai_call("1", "fs_read", json!(r#"{"path":"a","ffset":1,"Path":"b"}"#)),
        openai_call("2", "fs_read", json!(r#"{"path":"a"}"#)),
    ]);
    let run = audit(&["--by", "key"], &input);
    let (groups, _) = groups_of(&run);
    let keys: Vec<(&str, u64)> = groups
        .iter()
        .map(|g| (g["group"]["key"].as_str().unwrap(), g["calls"].as_u64().unwrap()))
        .collect();
    assert_eq!(keys, [("Path", 1), ("ffset", 1), ("(none)", 1)]);
    let run = audit(&["--by", "cause"], &input);
    let (groups, _) = groups_of(&run);
    let causes: Vec<&str> = groups
        .iter()
        .map(|g| g["group"]["cause"].as_str().unwrap())
        .collect();
    assert_eq!(causes, ["case_variant", "truncated", "(none)"]);
}

#[test]
fn an_unknown_dimension_is_a_usage_error_naming_the_ones_there_are() {
    let run = audit(&["--by", "models"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("model, tool, key, cause or file"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_text_report_has_a_table_of_rates_sorted_by_rate() {
    let (run, _dir) = audit_calls(&["--format", "text", "--by", "model"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = &run.stdout;
    let table: Vec<&str> = report
        .lines()
        .skip_while(|line| !line.starts_with("Rates by model"))
        .take_while(|line| !line.is_empty())
        .collect();
    assert!(table.len() >= 6, "{report}");
    assert!(
        table[1].contains("calls") && table[1].contains("per 1000"),
        "{report}"
    );
    let models: Vec<&str> = table[2..6]
        .iter()
        .map(|row| row.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(models, ["gemini-2.5", "gpt-4o", "claude-sonnet-4", "(unknown)"]);
    let gpt: Vec<&str> = table[3].split_whitespace().collect();
    assert_eq!(gpt[1..5], ["3", "2", "1", "500.0"], "{}", table[3]);
    assert!(table[3].contains("perPage (1)"), "{}", table[3]);
    // Without --by, no table.
    let (run, _dir) = audit_calls(&["--format", "text"]);
    assert!(!run.stdout.contains("Rates by"), "{}", run.stdout);
}

/// A catalogue and calls whose names and keys are markup.
fn hostile() -> String {
    lines(&[
        json!({"tools": [{"name": "search", "inputSchema": {"properties": {"q": {}}}}]}),
        json!({"model": "<script>alert(2)</script>", "choices": [{"message": {"tool_calls": [
            openai_call("1", "search", json!(r#"{"q":"a","<b onmouseover=alert(3)>":1}"#)),
            openai_call("2", "<img src=x onerror=alert(1)>", json!(r#"{"q":"a"}"#)),
        ]}}]}),
    ])
}

#[test]
fn the_html_page_is_self_contained_and_shows_every_name_as_text() {
    let run = audit(&["--format", "html"], &hostile());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = &run.stdout;
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(2)&lt;/script&gt;"), "{page}");
    assert!(page.contains("&lt;b onmouseover=alert(3)&gt;"), "{page}");
    for markup in ["<img", "<script", "<b onmouseover", "onerror=alert(1)>"] {
        assert!(!page.contains(markup), "{markup} unescaped in {page}");
    }
    // Nothing fetched: no script, no external resource, and a policy that
    // forbids both.
    for fetch in ["src=\"", "href=\"http", "@import", "url("] {
        assert!(!page.contains(fetch), "{fetch} in {page}");
    }
    assert!(
        page.contains("Content-Security-Policy\" content=\"default-src 'none'"),
        "{page}"
    );
    // The coverage, both charts, the keys and the warnings.
    for part in [
        "<h2>Coverage</h2>",
        "<h2>Rates by model</h2>",
        "<h2>Rates by tool</h2>",
        "<h2>Undeclared keys</h2>",
        "<h2>Warnings</h2>",
    ] {
        assert!(page.contains(part), "{part} missing from {page}");
    }
}
