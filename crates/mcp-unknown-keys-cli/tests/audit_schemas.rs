//! `audit` reads schemas as the core does, construct by construct:
//! combinators, references, patterns, closed and open schemas, nested keys
//! as paths; says each catalogue note once on stderr; and each (tool, path)
//! pair once.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

/// A catalogue line listing `tools`, each `(name, inputSchema)`.
fn catalogue(tools: &[(&str, Value)]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|(name, schema)| json!({"name": name, "inputSchema": schema}))
        .collect();
    json!({ "tools": tools })
}

/// An Anthropic `tool_use` block calling `tool` with `input`.
fn call(id: &str, tool: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": tool, "input": input})
}

/// The warnings of a jsonl run, whole.
fn said(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "audit failed: {}", run.stderr);
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    let last = lines.pop().expect("a coverage line");
    assert!(last.starts_with(r#"{"coverage":"#), "{last}");
    lines
        .into_iter()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The (unknown keys, unknown paths) of each warning.
fn found(run: &Run) -> Vec<(Vec<String>, Vec<String>)> {
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .expect("an array")
            .iter()
            .map(|s| s.as_str().expect("a string").to_owned())
            .collect()
    };
    said(run)
        .iter()
        .map(|w| (strings(&w["unknown_keys"]), strings(&w["unknown_paths"])))
        .collect()
}

/// The undeclared top-level keys a call with `arguments` to a tool of
/// schema `schema` is found to carry, through `audit`.
fn undeclared(schema: Value, arguments: Value) -> Vec<String> {
    let run = audit(
        &[],
        &lines(&[catalogue(&[("t", schema)]), call("c1", "t", arguments)]),
    );
    assert_eq!(coverage(&run), all_audited(1), "{}", run.stdout);
    found(&run).into_iter().flat_map(|(keys, _)| keys).collect()
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|k| k.to_string()).collect()
}

/// The notes `audit` said on stderr.
fn notes(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|line| line.starts_with("mcp-unknown-keys audit: note: "))
        .collect()
}

#[test]
fn pattern_properties_declare_what_they_match_and_a_bad_pattern_is_a_note() {
    let schema = json!({"properties": {"query": {}}, "patternProperties": {"^x-[a-z]+$": {}, "([": {}}});
    let arguments = json!({"query": 1, "x-trace": 1, "x-Trace": 1, "trace": 1});
    let run = audit(
        &[],
        &lines(&[
            catalogue(&[("t", schema.clone())]),
            call("c1", "t", arguments),
            // The same tools listed again, as a `tools/list` response: the
            // note is not said again.
            json!({"jsonrpc": "2.0", "id": 1, "result": catalogue(&[("t", schema)])}),
            call("c2", "t", json!({"query": 1, "other": 1})),
        ]),
    );
    assert_eq!(
        found(&run),
        [(keys(&["trace", "x-Trace"]), vec![]), (keys(&["other"]), vec![])]
    );
    assert_eq!(
        notes(&run),
        [
            r#"mcp-unknown-keys audit: note: t: the patternProperties pattern "([" is not an ECMA-262 regular expression: it matches no key"#
        ]
    );
}

#[test]
fn keys_declared_in_all_of_are_declared() {
    let schema =
        json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}, {"properties": {"c": {}}}]});
    assert_eq!(undeclared(schema, json!({"a": 1, "b": 1, "c": 1, "d": 1})), ["d"]);
}

#[test]
fn keys_declared_in_any_one_of_branch_are_declared() {
    let schema = json!({"oneOf": [{"properties": {"path": {}}}, {"properties": {"url": {}}}]});
    assert_eq!(
        undeclared(schema, json!({"path": 1, "url": 1, "uri": 1})),
        ["uri"]
    );
}

#[test]
fn keys_declared_in_if_then_else_are_declared() {
    let schema = json!({
        "properties": {"kind": {}},
        "if": {"properties": {"kind": {"const": "file"}}},
        "then": {"properties": {"path": {}}},
        "else": {"properties": {"url": {}}},
    });
    assert_eq!(
        undeclared(schema, json!({"kind": "file", "path": 1, "url": 1, "size": 1})),
        ["size"]
    );
}

#[test]
fn keys_declared_in_dependent_schemas_are_declared() {
    let schema =
        json!({"properties": {"card": {}}, "dependentSchemas": {"card": {"properties": {"billing": {}}}}});
    assert_eq!(
        undeclared(schema, json!({"card": 1, "billing": 1, "shipping": 1})),
        ["shipping"]
    );
}

#[test]
fn a_top_level_ref_is_followed() {
    let schema = json!({"$ref": "#/$defs/args", "$defs": {"args": {"properties": {"query": {}}}}});
    assert_eq!(undeclared(schema, json!({"query": 1, "qeury": 1})), ["qeury"]);
}

#[test]
fn a_top_level_any_of_is_read() {
    let schema = json!({"anyOf": [{"properties": {"id": {}}}, {"properties": {"name": {}}}]});
    assert_eq!(undeclared(schema, json!({"id": 1, "name": 1, "nme": 1})), ["nme"]);
}

#[test]
fn json_pointer_escapes_are_read() {
    let schema = json!({
        "allOf": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#/$defs/c~0d"}, {"$ref": "#/$defs/with%20space"}],
        "$defs": {
            "a/b": {"properties": {"slash": {}}},
            "c~d": {"properties": {"tilde": {}}},
            "with space": {"properties": {"space": {}}},
        },
    });
    assert_eq!(
        undeclared(schema, json!({"slash": 1, "tilde": 1, "space": 1, "other": 1})),
        ["other"]
    );
}

#[test]
fn a_reference_cycle_is_read_once() {
    let schema = json!({
        "$ref": "#/$defs/a",
        "$defs": {
            "a": {"properties": {"x": {}}, "allOf": [{"$ref": "#/$defs/b"}]},
            "b": {"properties": {"y": {}}, "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#"}]},
        },
    });
    assert_eq!(undeclared(schema, json!({"x": 1, "y": 1, "z": 1})), ["z"]);
}

#[test]
fn a_remote_ref_declares_nothing_is_counted_and_said_once() {
    let schema = json!({"properties": {"a": {}}, "allOf": [{"$ref": "https://example.com/more.json"}]});
    let dir = dir_with(&[(
        "tools.json",
        catalogue(&[("fetch", schema)]).to_string().as_bytes(),
    )]);
    let tools = in_dir(&dir, "tools.json");
    let input = lines(&[
        call("c1", "fetch", json!({"a": 1, "b": 1})),
        call("c2", "fetch", json!({"b": 2})),
    ]);
    let run = audit(&["--tools", &tools], &input);
    assert_eq!(
        output(&run),
        (vec![], covered(2, 0, json!({"declares_nothing": 2}), json!({})))
    );
    assert_eq!(
        notes(&run),
        [
            r#"mcp-unknown-keys audit: note: fetch: the $ref "https://example.com/more.json" is not local and is not fetched: the tool's arguments are not audited"#
        ]
    );
    let report = audit(&["--tools", &tools, "--format", "text"], &input).stdout;
    let declaring_nothing = report
        .split("Tools never audited because they declare nothing\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no tools declaring nothing in\n{report}"));
    assert!(
        declaring_nothing.contains("fetch") && declaring_nothing.contains("2 calls"),
        "{report}"
    );
}

#[test]
fn a_closed_empty_schema_is_audited_and_an_open_one_declares_nothing() {
    let run = |format: &[&str]| {
        let input = lines(&[
            catalogue(&[
                ("closed", json!({"type": "object", "additionalProperties": false})),
                ("open", json!({"type": "object"})),
            ]),
            call("c1", "closed", json!({"force": true})),
            call("c2", "open", json!({"force": true})),
        ]);
        audit(format, &input)
    };
    assert_eq!(
        output(&run(&[])),
        (
            vec![said_key("closed", &["force"], "c1")],
            covered(2, 1, json!({"declares_nothing": 1}), json!({}))
        )
    );
    let report = run(&["--format", "text"]).stdout;
    let declaring_nothing = report
        .split("Tools never audited because they declare nothing\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no tools declaring nothing in\n{report}"));
    let names: Vec<&str> = declaring_nothing
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(names, ["open"], "{report}");
}

fn said_key(tool: &str, unknown: &[&str], id: &str) -> Said {
    audit_support::said(tool, unknown, &[], id)
}

/// `search` with an `options` object, and `create_entities` of
/// `@modelcontextprotocol/server-memory`.
fn nested_tools() -> Value {
    catalogue(&[
        (
            "search",
            json!({"properties": {
                "query": {"type": "string"},
                "options": {"type": "object", "properties": {"recursive": {}, "depth": {}}},
            }}),
        ),
        (
            "create_entities",
            json!({"type": "object", "properties": {"entities": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {}, "entityType": {}, "observations": {}},
            }}}}),
        ),
    ])
}

#[test]
fn a_nested_key_is_reported_as_a_path() {
    let run = audit(
        &[],
        &lines(&[
            nested_tools(),
            call(
                "c1",
                "search",
                json!({"query": "a", "options": {"recursve": true, "depth": 2}}),
            ),
        ]),
    );
    let warnings = said(&run);
    assert_eq!(warnings[0]["unknown_keys"], json!([]));
    assert_eq!(warnings[0]["unknown_paths"], json!(["options.recursve"]));
}

#[test]
fn keys_of_array_items_are_reported_as_paths() {
    let entities = json!({"entities": [
        {"name": "Ada", "entityType": "person", "observations": [], "age": 36},
        {"name": "Bob", "entityType": "person", "observations": [], "age": 40, "email": "b@example.com"},
    ], "dryRun": true});
    let run = audit(
        &[],
        &lines(&[nested_tools(), call("c1", "create_entities", entities)]),
    );
    assert_eq!(
        found(&run),
        [(keys(&["dryRun"]), keys(&["entities[].age", "entities[].email"]))]
    );
}

#[test]
fn a_value_of_another_shape_is_not_read_further() {
    let run = audit(
        &[],
        &lines(&[
            nested_tools(),
            call("c1", "search", json!({"options": "fast"})),
            call("c2", "search", json!({"options": [{"recursve": true}]})),
            call("c3", "create_entities", json!({"entities": {"age": 1}})),
        ]),
    );
    assert_eq!(output(&run), (vec![], all_audited(3)));
}

#[test]
fn deep_values_are_read_to_a_bound_and_never_make_a_call_unreadable() {
    let tree = catalogue(&[(
        "tree",
        json!({
            "$ref": "#/$defs/node",
            "$defs": {"node": {"type": "object", "properties": {
                "name": {}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            }}},
        }),
    )]);
    let deep_tree = |depth: usize, key: &str| {
        let mut text = format!(r#"{{"{key}":1}}"#);
        for _ in 0..depth {
            text = format!(r#"{{"children":[{text}]}}"#);
        }
        text
    };
    // Each level of the tree is two of JSON: the deepest read is 32 down.
    let reachable = mcp_unknown_keys::limits::MAX_NESTED_DEPTH / 2;
    let line = |id: &str, depth: usize, key: &str| {
        format!(
            r#"{{"type":"tool_use","id":"{id}","name":"tree","input":{}}}"#,
            deep_tree(depth, key)
        )
    };
    let input = format!(
        "{tree}\n{}\n{}\n{}\n",
        line("c1", reachable, "nme"),
        line("c2", reachable + 1, "deeper"),
        line("c3", 5_000, "deepest"),
    );
    let run = audit(&[], &input);
    let expected = format!("{}nme", "children[].".repeat(reachable));
    assert_eq!(found(&run), [(vec![], vec![expected])]);
    assert_eq!(coverage(&run), all_audited(3));
}

#[test]
fn top_level_only_reads_no_nested_key() {
    let input = lines(&[
        nested_tools(),
        call(
            "c1",
            "search",
            json!({"qeury": "a", "options": {"recursve": true}}),
        ),
    ]);
    assert_eq!(
        found(&audit(&["--top-level-only"], &input)),
        [(keys(&["qeury"]), vec![])]
    );
    assert_eq!(
        found(&audit(&[], &input)),
        [(keys(&["qeury"]), keys(&["options.recursve"]))]
    );
}

#[test]
fn each_tool_and_path_pair_is_said_once_and_every_call_counted() {
    let search = nested_tools()["tools"][0]["inputSchema"].clone();
    let input = lines(&[
        catalogue(&[("search", search.clone()), ("find", search)]),
        call("c1", "search", json!({"options": {"recursve": true}})),
        call("c2", "search", json!({"options": {"recursve": false}})),
        call("c3", "find", json!({"options": {"recursve": true}})),
    ]);
    let run = audit(&[], &input);
    let warnings = said(&run);
    let tools: Vec<&str> = warnings.iter().map(|w| w["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["search", "find"]);
    assert_eq!(coverage(&run), all_audited(3));
    // The text report lists the path under its tool's nested keys, with the
    // calls that carried it.
    let report = audit(&["--format", "text"], &input).stdout;
    let search_rows = report
        .split("search  (declares options, query)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no search findings in\n{report}"));
    assert!(search_rows.starts_with("  nested keys\n"), "{report}");
    assert_eq!(finding(search_rows, "options.recursve"), (2, "c1".to_owned()));
    assert!(
        report.contains("Undeclared keys: 2 on 2 tool(s) (2 of them nested)"),
        "{report}"
    );
    assert!(
        report.contains("  nested            2 key(s)        3 calls"),
        "{report}"
    );
}

#[test]
fn nested_keys_a_proxy_logged_are_said_again_once() {
    let logged = json!({"tool": "create_entities", "unknown_keys": [], "declared_keys": ["entities"],
                        "id": "7", "unknown_paths": ["entities[].age"]});
    let log = lines(&[logged.clone(), logged]);
    let run = audit(&[], &log);
    let warnings = said(&run);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["unknown_paths"], json!(["entities[].age"]));
    assert_eq!(warnings[0]["id"], "7");
    // An allowed path is tolerated in a log too, and top-level only leaves
    // nested keys aside.
    assert!(said(&audit(&["--allow", "entities[].age"], &log)).is_empty());
    assert!(said(&audit(&["--top-level-only"], &log)).is_empty());
    // The text report counts the logged path as a nested key.
    let report = audit(&["--format", "text"], &log).stdout;
    assert!(report.contains("  nested keys\n    entities[].age"), "{report}");
}
