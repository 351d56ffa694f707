//! `audit` matches the names hosts give MCP tools to the catalogue's:
//! `mcp__SERVER__TOOL` (Claude Code), `SERVER__TOOL` (Codex), server and
//! tool apart (Codex `exec --json`); `--tools SERVER=FILE` binds a
//! catalogue to one server; `--tools` repeats and merges.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

fn catalogue_file(dir: &tempfile::TempDir, name: &str, tools: Value) -> String {
    std::fs::write(dir.path().join(name), tools.to_string()).expect("write a catalogue");
    in_dir(dir, name)
}

fn tool(name: &str, keys: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.to_string(), json!({}))).collect();
    json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
}

fn claude_code_call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": id, "name": name, "input": input}]}})
}

#[test]
fn every_host_form_of_a_name_matches_the_catalogue_name() {
    let dir = tempfile::tempdir().unwrap();
    let tools = catalogue_file(&dir, "fs.json", json!([tool("read_file", &["path"])]));
    let records = lines(&[
        claude_code_call("toolu_1", "mcp__fs__read_file", json!({"path": "a", "offset": 1})),
        json!({"type": "response_item", "payload": {"type": "function_call", "name": "fs__read_file",
               "arguments": "{\"path\":\"a\",\"limit\":2}", "call_id": "call_2"}}),
        json!({"type": "item.completed", "item": {"id": "item_3", "type": "mcp_tool_call", "server": "fs",
               "tool": "read_file", "arguments": {"path": "a", "depth": 3}, "status": "completed"}}),
        claude_code_call("toolu_4", "read_file", json!({"path": "a", "encoding": "utf8"})),
    ]);
    let run = audit(&["--tools", &tools], &records);
    // Each warning names the tool as the call did; each is audited.
    assert_eq!(
        output(&run),
        (
            vec![
                said("mcp__fs__read_file", &["offset"], &["path"], "toolu_1"),
                said("fs__read_file", &["limit"], &["path"], "call_2"),
                said("mcp__fs__read_file", &["depth"], &["path"], "item_3"),
                said("read_file", &["encoding"], &["path"], "toolu_4"),
            ],
            all_audited(4)
        )
    );
}

#[test]
fn a_server_whose_name_holds_underscores_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let tools = catalogue_file(&dir, "fs.json", json!([tool("read_file", &["path"])]));
    let run = audit(
        &["--tools", &format!("my__files={tools}")],
        &lines(&[claude_code_call(
            "t",
            "mcp__my__files__read_file",
            json!({"path": "a", "x": 1}),
        )]),
    );
    assert_eq!(
        output(&run),
        (
            vec![said("mcp__my__files__read_file", &["x"], &["path"], "t")],
            all_audited(1)
        )
    );
}

#[test]
fn bound_catalogues_tell_servers_with_clashing_tool_names_apart() {
    let dir = tempfile::tempdir().unwrap();
    let docs = catalogue_file(&dir, "docs.json", json!({"tools": [tool("search", &["query"])]}));
    let code = catalogue_file(
        &dir,
        "code.json",
        json!({"tools": [tool("search", &["pattern", "path"])]}),
    );
    let records = lines(&[
        claude_code_call("t1", "mcp__docs__search", json!({"query": "q", "pattern": "p"})),
        claude_code_call("t2", "mcp__code__search", json!({"pattern": "p", "query": "q"})),
        // The same key on the other server is said again: each server's
        // pairs are its own.
        claude_code_call("t3", "mcp__code__search", json!({"pattern": "p", "lang": "rs"})),
        claude_code_call("t4", "mcp__docs__search", json!({"query": "q", "lang": "en"})),
        // Which server? The call does not say, and both have `search`.
        claude_code_call("t5", "search", json!({"query": "q"})),
    ]);
    let run = audit(
        &[
            "--tools",
            &format!("docs={docs}"),
            "--tools",
            &format!("code={code}"),
        ],
        &records,
    );
    assert_eq!(
        output(&run),
        (
            vec![
                said("mcp__docs__search", &["pattern"], &["query"], "t1"),
                said("mcp__code__search", &["query"], &["path", "pattern"], "t2"),
                said("mcp__code__search", &["lang"], &["path", "pattern"], "t3"),
                said("mcp__docs__search", &["lang"], &["query"], "t4"),
            ],
            covered(5, 4, json!({"unlisted_tool": 1}), json!({"search": 1}))
        )
    );
    let report = audit(
        &[
            "--format",
            "text",
            "--tools",
            &format!("docs={docs}"),
            "--tools",
            &format!("code={code}"),
        ],
        &records,
    );
    let row = report
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("search "))
        .unwrap();
    assert!(
        row.ends_with("nearly matches search, on servers code, docs: bind one with --tools SERVER=FILE"),
        "{row}"
    );
}

#[test]
fn a_tool_only_one_bound_server_has_is_matched_by_its_name_never_under_another_server() {
    let dir = tempfile::tempdir().unwrap();
    let fs = catalogue_file(&dir, "fs.json", json!([tool("read_file", &["path"])]));
    let run = audit(
        &["--tools", &format!("fs={fs}")],
        &lines(&[
            claude_code_call("t1", "read_file", json!({"path": "a", "x": 1})),
            // Another server's read_file is another tool: never audited
            // against fs's.
            claude_code_call("t2", "mcp__filesystem__read_file", json!({"path": "a", "y": 1})),
        ]),
    );
    assert_eq!(
        coverage(&run),
        covered(
            2,
            1,
            json!({"unlisted_tool": 1}),
            json!({"mcp__filesystem__read_file": 1})
        )
    );
}

#[test]
fn repeated_catalogues_merge_and_a_later_one_wins_a_clash_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let first = catalogue_file(
        &dir,
        "first.json",
        json!([tool("read_file", &["path"]), tool("list", &["dir"])]),
    );
    let second = catalogue_file(
        &dir,
        "second.json",
        json!([tool("read_file", &["path", "offset"])]),
    );
    let run = audit(
        &["--tools", &first, "--tools", &second],
        &lines(&[
            openai_call("c1", "read_file", json!({"path": "a", "offset": 1, "x": 1})),
            openai_call("c2", "list", json!({"dir": "a", "y": 1})),
        ]),
    );
    assert_eq!(
        output(&run),
        (
            vec![
                said("read_file", &["x"], &["offset", "path"], "c1"),
                said("list", &["y"], &["dir"], "c2"),
            ],
            all_audited(2)
        )
    );
    assert!(
        run.stderr.contains("tool read_file in")
            && run.stderr.contains("second.json replaces the one in")
            && run.stderr.contains("first.json"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_catalogue_in_the_input_replaces_the_unbound_one_but_not_a_bound_one() {
    let dir = tempfile::tempdir().unwrap();
    let fs = catalogue_file(&dir, "fs.json", json!([tool("read_file", &["path"])]));
    let run = audit(
        &["--tools", &format!("fs={fs}")],
        &lines(&[
            json!({"tools": [tool("other", &["a"])]}),
            claude_code_call("t1", "mcp__fs__read_file", json!({"path": "a", "x": 1})),
            claude_code_call("t2", "other", json!({"a": 1, "b": 2})),
        ]),
    );
    assert_eq!(
        output(&run),
        (
            vec![
                said("mcp__fs__read_file", &["x"], &["path"], "t1"),
                said("other", &["b"], &["a"], "t2"),
            ],
            all_audited(2)
        )
    );
}

#[test]
fn unmatched_host_names_are_counted_under_the_name_the_call_gave() {
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            claude_code_call("t1", "mcp__fs__fs_write", json!({})),
            json!({"type": "item.completed", "item": {"id": "i", "type": "mcp_tool_call", "server": "db",
                   "tool": "query", "arguments": {}, "status": "completed"}}),
        ]),
    );
    assert_eq!(
        coverage(&run),
        covered(
            2,
            0,
            json!({"unlisted_tool": 2}),
            json!({"mcp__db__query": 1, "mcp__fs__fs_write": 1})
        )
    );
}
