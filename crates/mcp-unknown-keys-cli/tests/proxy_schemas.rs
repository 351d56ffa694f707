//! Schemas as servers write them, through the proxy: each construct that
//! declares keys, nested keys reported as paths, the notes a schema that
//! cannot be read whole gets (on stderr and in the log), and
//! `--top-level-only`. Against `cat` (a listing of our own) and the real
//! `@modelcontextprotocol/server-memory`.

use crate::support;

use serde_json::{Value, json};
use support::{Finished, Session, call, list_request, prerequisite, read_notes};

/// Lists one tool `t` with `schema`, makes one call with each of
/// `arguments`, and ends the session.
fn through_the_proxy(options: &[&str], schema: Value, arguments: &[&str]) -> Finished {
    let mut s = Session::start(options, &["cat"]);
    s.echo(&list_request("1", None));
    let listing =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t", "inputSchema": schema}]}});
    s.echo(&listing.to_string());
    for (n, arguments) in arguments.iter().enumerate() {
        s.echo(&call(&(n + 2).to_string(), "t", arguments));
    }
    s.finish()
}

/// (unknown keys, unknown paths) of each warning.
fn said(finished: &Finished) -> Vec<(Value, Value)> {
    finished
        .warnings
        .iter()
        .map(|w| (w["unknown_keys"].clone(), w["unknown_paths"].clone()))
        .collect()
}

fn keys(keys: &[&str]) -> (Value, Value) {
    (json!(keys), json!([]))
}

/// The reasons calls went unaudited, from the log's summary.
fn unaudited(finished: &Finished) -> Value {
    finished.logged_summary()["coverage"]["unaudited"].clone()
}

#[test]
fn each_combinator_declares_its_keys() {
    let cases = [
        (
            "allOf",
            json!({"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}),
        ),
        (
            "oneOf",
            json!({"oneOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}),
        ),
        (
            "if/then",
            json!({"properties": {"a": {}}, "if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"b": {}}}}),
        ),
        (
            "dependentSchemas",
            json!({"properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {}}}}}),
        ),
        (
            "a top-level $ref",
            json!({"$ref": "#/$defs/args", "$defs": {"args": {"properties": {"a": {}, "b": {}}}}}),
        ),
        (
            "a top-level anyOf",
            json!({"anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}),
        ),
        (
            "patternProperties",
            json!({"properties": {"a": {}}, "patternProperties": {"^b$": {}}}),
        ),
    ];
    for (construct, schema) in cases {
        let finished = through_the_proxy(&["--quiet"], schema, &[r#"{"a":1,"b":2,"c":3}"#]);
        assert_eq!(said(&finished), [keys(&["c"])], "{construct}");
        assert_eq!(unaudited(&finished), json!({}), "{construct}");
    }
}

#[test]
fn a_pattern_that_does_not_compile_is_a_note_on_stderr_and_in_the_log() {
    let schema = json!({"properties": {"a": {}}, "patternProperties": {"([": {}}});
    let finished = through_the_proxy(&["--name", "srv"], schema, &[r#"{"a":1,"b":2}"#]);
    assert_eq!(said(&finished), [keys(&["b"])]);
    let notes: Vec<&str> = finished
        .stderr
        .lines()
        .filter(|l| l.starts_with("mcp-unknown-keys [srv] note: "))
        .collect();
    assert_eq!(
        notes,
        [
            "mcp-unknown-keys [srv] note: t: the patternProperties pattern \"([\" is not an ECMA-262 regular \
             expression: it matches no key"
        ]
    );
    let logged: Vec<Value> = finished
        .log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("note").is_some())
        .collect();
    assert_eq!(logged.len(), 1);
    let note = &logged[0]["note"];
    assert_eq!(
        (&note["tool"], &note["at"], &note["problem"], &note["pattern"]),
        (&json!("t"), &json!(""), &json!("bad_pattern"), &json!("(["))
    );
    assert!(note["text"].as_str().unwrap().contains("matches no key"));
    assert_eq!(logged[0]["server"], "srv");
}

#[test]
fn a_remote_ref_is_a_note_and_its_calls_count_as_declaring_nothing() {
    let schema = json!({"$ref": "https://example.com/args.json"});
    let finished = through_the_proxy(&["--quiet"], schema, &[r#"{"a":1}"#]);
    assert!(finished.warnings.is_empty());
    assert_eq!(unaudited(&finished), json!({"declares_nothing": 1}));
    let log = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(log.path(), &finished.log).unwrap();
    let notes = read_notes(log.path());
    assert_eq!(notes[0]["problem"], "remote_ref");
    assert_eq!(notes[0]["reference"], "https://example.com/args.json");
}

#[test]
fn a_closed_empty_schema_is_audited_and_an_open_one_stays_silent() {
    let closed = json!({"type": "object", "additionalProperties": false});
    let finished = through_the_proxy(&["--quiet"], closed, &[r#"{"x":1}"#]);
    assert_eq!(said(&finished), [keys(&["x"])]);
    let open = json!({"type": "object"});
    let finished = through_the_proxy(&["--quiet"], open, &[r#"{"x":1}"#]);
    assert!(finished.warnings.is_empty());
    assert_eq!(unaudited(&finished), json!({"declares_nothing": 1}));
}

/// `options.recursive` declared; arrays of `items` objects too.
fn nested_schema() -> Value {
    json!({"type": "object", "properties": {
        "options": {"type": "object", "properties": {"recursive": {}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {}}}},
    }})
}

#[test]
fn nested_keys_are_paths_said_once_per_tool_and_path() {
    let finished = through_the_proxy(
        &["--quiet"],
        nested_schema(),
        &[
            r#"{"options":{"recursve":true},"items":[{"name":"a","age":1},{"name":"b","age":2}]}"#,
            r#"{"options":{"recursve":false},"items":[{"age":3}]}"#,
            r#"{"options":{"recursive":true,"depth":1}}"#,
        ],
    );
    assert_eq!(
        said(&finished),
        [
            (json!([]), json!(["items[].age", "options.recursve"])),
            (json!([]), json!(["options.depth"])),
        ]
    );
    let findings = finished.logged_summary()["findings"].clone();
    let nested: Vec<(&Value, &Value, &Value)> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (&f["key"], &f["calls"], &f["nested"]))
        .collect();
    assert_eq!(
        nested,
        [
            (&json!("items[].age"), &json!(2), &json!(true)),
            (&json!("options.depth"), &json!(1), &json!(true)),
            (&json!("options.recursve"), &json!(2), &json!(true)),
        ]
    );
    assert!(finished.stderr.is_empty(), "quiet: {}", finished.stderr);
}

#[test]
fn a_value_of_another_shape_than_declared_is_not_read_into() {
    let finished = through_the_proxy(
        &["--quiet"],
        nested_schema(),
        &[
            r#"{"options":"recursive","items":{"name":"a","age":1}}"#,
            r#"{"options":[{"x":1}]}"#,
        ],
    );
    assert!(finished.warnings.is_empty(), "{:?}", finished.warnings);
    assert_eq!(finished.logged_summary()["coverage"]["audited"], 2);
}

#[test]
fn top_level_only_reports_no_nested_key() {
    let finished = through_the_proxy(
        &["--quiet", "--top-level-only"],
        nested_schema(),
        &[r#"{"options":{"recursve":true},"extra":1}"#],
    );
    assert_eq!(said(&finished), [keys(&["extra"])]);
}

/// `@modelcontextprotocol/server-memory` (npm): `create_entities` declares
/// `entities[].name`, `entityType` and `observations`; an `age` inside an
/// entity is an undeclared nested key, and the server ignores it.
#[test]
fn server_memory_ignores_an_undeclared_key_inside_an_entity() {
    let server = prerequisite("MCP_UK_SERVER_MEMORY");
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory.jsonl");
    let log = dir.path().join("log.jsonl");
    let mut s = Session::start_with(&log, &["--quiet"], &[&server], |command| {
        command.env("MEMORY_FILE_PATH", &memory);
    });
    s.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#);
    s.recv();
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(&list_request("1", None));
    s.recv();
    let entities =
        r#"{"entities":[{"name":"Ada","entityType":"person","observations":["wrote notes"],"age":36}]}"#;
    s.send(&call("2", "create_entities", entities));
    let created: Value = serde_json::from_slice(&s.recv()).unwrap();
    assert_eq!(created["id"], 2);
    assert!(created.get("result").is_some(), "{created}");
    s.send(&call("3", "create_entities", &entities.replace("Ada", "Alan")));
    s.recv();
    let finished = s.finish();
    assert_eq!(said(&finished), [(json!([]), json!(["entities[].age"]))]);
    let summary = finished.logged_summary();
    assert_eq!(summary["findings"][0]["key"], "entities[].age");
    assert_eq!(summary["findings"][0]["verdicts"], json!({"ignored": 2}));
    // The server stored the entity, without the key it never declared.
    let stored = std::fs::read_to_string(&memory).unwrap();
    assert!(stored.contains("Ada") && !stored.contains("age"), "{stored}");
}
