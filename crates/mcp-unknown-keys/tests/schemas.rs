//! What the core reads in a schema, construct by construct, as servers and
//! schema generators write them: combinators, references, patterns, closed
//! and open schemas, and what it cannot read.

use crate::common;

use common::said::{audit, listed, undeclared};
use mcp_unknown_keys::audit::{Arguments, Call, Catalog, Coverage, Outcome, Problem, Skip};
use mcp_unknown_keys::{Provider, ToolCall, ToolDeclaration, UnknownKeys};
use serde_json::{Value, json};

fn tool(schema: Value) -> Value {
    json!({"name": "t", "inputSchema": schema})
}

/// The undeclared top-level keys of a call to a tool of schema `schema`.
fn undeclared_keys(schema: Value, arguments: &str) -> Vec<String> {
    let (auditor, _) = listed(&[tool(schema)]);
    undeclared(&auditor, "t", arguments).0
}

/// Why a call to a tool of schema `schema` was not audited, if it was not.
fn skipped(schema: Value) -> Option<Skip> {
    let (auditor, _) = listed(&[tool(schema)]);
    match audit(&auditor, "t", r#"{"anything":1}"#) {
        Outcome::Skipped(skip) => Some(skip),
        Outcome::Audited { .. } => None,
    }
}

#[test]
fn a_key_matching_a_pattern_property_is_declared() {
    let schema = json!({
        "properties": {"query": {}},
        "patternProperties": {"^x-[a-z]+$": {}, "^[A-Z]{2}\\d+$": {}},
    });
    let found = undeclared_keys(
        schema,
        r#"{"query":1,"x-trace":1,"AB12":1,"x-Trace":1,"trace":1}"#,
    );
    assert_eq!(found, ["trace", "x-Trace"]);
}

#[test]
fn patterns_are_ecma_262_and_not_anchored_unless_they_say_so() {
    // `\d` is ECMA-262's (ASCII); `id` matches anywhere in a key.
    let schema = json!({"patternProperties": {"id": {}, "^n\\d+$": {}}});
    let found = undeclared_keys(schema, r#"{"user_id":1,"idx":1,"n12":1,"nx":1,"n١٢":1}"#);
    assert_eq!(found, ["nx", "n١٢"]);
}

#[test]
fn a_pattern_no_linear_time_engine_matches_is_never_run_and_said_once() {
    // A lookahead wrapped around an exponential group: a backtracking engine
    // would take hours on a long key; it is taken to match every key
    // instead (no false warning), and the catalogue says so.
    let schema = json!({"properties": {"a": {}}, "patternProperties": {"^(?=(a+)+$)": {}}});
    let (auditor, said) = listed(&[tool(schema)]);
    let long = format!(r#"{{"a":1,"{}!":1,"other":1}}"#, "a".repeat(64));
    assert!(undeclared(&auditor, "t", &long).0.is_empty());
    let notes = said.notes.lock().unwrap().clone();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("cannot be matched in time linear in the key"),
        "{}",
        notes[0]
    );
}

#[test]
fn a_pattern_that_does_not_compile_matches_nothing_and_is_said_once() {
    let schema = json!({"properties": {"a": {}}, "patternProperties": {"([": {}, "^ok_": {}}});
    let (auditor, said) = listed(&[tool(schema.clone())]);
    assert_eq!(undeclared(&auditor, "t", r#"{"a":1,"ok_1":1,"([":1}"#).0, ["(["]);
    // Listed again: the same note is not said twice.
    auditor.replace_catalog(Catalog::from_mcp_tools(&[tool(schema)]));
    let notes = said.notes.lock().unwrap().clone();
    assert_eq!(
        notes,
        [r#"t: the patternProperties pattern "([" is not an ECMA-262 regular expression: it matches no key"#]
    );
}

#[test]
fn keys_declared_in_all_of_next_to_properties_are_declared() {
    let schema = json!({
        "properties": {"query": {}},
        "allOf": [{"properties": {"limit": {}}}, {"allOf": [{"properties": {"cursor": {}}}]}],
    });
    assert_eq!(
        undeclared_keys(schema, r#"{"query":1,"limit":1,"cursor":1,"page":1}"#),
        ["page"]
    );
}

#[test]
fn keys_declared_in_any_one_of_branch_are_declared() {
    let schema = json!({
        "properties": {"kind": {}},
        "oneOf": [{"properties": {"url": {}}}, {"properties": {"path": {}}}],
    });
    assert_eq!(
        undeclared_keys(schema, r#"{"kind":1,"url":1,"path":1,"uri":1}"#),
        ["uri"]
    );
}

#[test]
fn keys_declared_in_if_then_else_are_declared() {
    let schema = json!({
        "properties": {"mode": {}},
        "if": {"properties": {"mode": {"const": "remote"}, "probe": {}}},
        "then": {"properties": {"host": {}}},
        "else": {"properties": {"path": {}}},
    });
    assert_eq!(
        undeclared_keys(
            schema,
            r#"{"mode":"remote","probe":1,"host":1,"path":1,"port":1}"#
        ),
        ["port"]
    );
}

#[test]
fn keys_declared_in_dependent_schemas_are_declared() {
    let schema = json!({
        "properties": {"card": {}},
        "dependentSchemas": {"card": {"properties": {"billing_address": {}}}},
        "dependencies": {"bank": {"properties": {"iban": {}}}, "card": ["billing_address"]},
    });
    assert_eq!(
        undeclared_keys(schema, r#"{"card":1,"billing_address":1,"iban":1,"cvv":1}"#),
        ["cvv"]
    );
}

#[test]
fn a_top_level_ref_to_defs_is_audited() {
    for (defs, pointer) in [("$defs", "#/$defs/args"), ("definitions", "#/definitions/args")] {
        let schema = json!({
            "$ref": pointer,
            defs: {"args": {"type": "object", "properties": {"path": {}}}},
        });
        assert_eq!(
            undeclared_keys(schema, r#"{"path":1,"pth":1}"#),
            ["pth"],
            "{defs}"
        );
    }
}

#[test]
fn a_ref_to_an_anchor_or_to_the_root_id_is_local() {
    let schema = json!({
        "$id": "https://example.com/schemas/args.json",
        "allOf": [{"$ref": "#paging"}, {"$ref": "https://example.com/schemas/args.json#/$defs/q"}],
        "$defs": {
            "paging": {"$anchor": "paging", "properties": {"limit": {}}},
            "q": {"properties": {"query": {}}},
        },
    });
    assert_eq!(
        undeclared_keys(schema, r#"{"limit":1,"query":1,"lmit":1}"#),
        ["lmit"]
    );
}

#[test]
fn a_top_level_any_of_is_audited() {
    let schema = json!({"anyOf": [
        {"type": "object", "properties": {"id": {}}},
        {"type": "object", "properties": {"name": {}}},
    ]});
    assert_eq!(undeclared_keys(schema, r#"{"id":1,"name":1,"nme":1}"#), ["nme"]);
}

#[test]
fn json_pointer_escapes_and_percent_encoding_are_read() {
    let schema = json!({
        "allOf": [
            {"$ref": "#/$defs/a~1b"},
            {"$ref": "#/$defs/c~0d"},
            {"$ref": "#/$defs/with%20space"},
            {"$ref": "#/$defs/list/1"},
        ],
        "$defs": {
            "a/b": {"properties": {"slash": {}}},
            "c~d": {"properties": {"tilde": {}}},
            "with space": {"properties": {"space": {}}},
            "list": [{}, {"properties": {"indexed": {}}}],
        },
    });
    assert_eq!(
        undeclared_keys(schema, r#"{"slash":1,"tilde":1,"space":1,"indexed":1,"other":1}"#),
        ["other"]
    );
}

#[test]
fn a_ref_cycle_is_read_once() {
    let schema = json!({
        "$ref": "#/$defs/a",
        "$defs": {
            "a": {"properties": {"x": {}}, "allOf": [{"$ref": "#/$defs/b"}]},
            "b": {"properties": {"y": {}}, "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#"}]},
        },
    });
    assert_eq!(undeclared_keys(schema, r#"{"x":1,"y":1,"z":1}"#), ["z"]);
}

#[test]
fn a_remote_ref_is_never_fetched_and_leaves_the_tool_unaudited() {
    let schema = json!({"properties": {"a": {}}, "allOf": [{"$ref": "https://example.com/more.json"}]});
    let (auditor, said) = listed(&[tool(schema)]);
    assert_eq!(
        audit(&auditor, "t", r#"{"a":1,"b":1}"#),
        Outcome::Skipped(Skip::DeclaresNothing)
    );
    let catalog = auditor.catalog();
    let declared = catalog.get("t").unwrap();
    assert!(!declared.is_audited() && declared.is_empty());
    assert!(matches!(
        &declared.notes()[0].problem,
        Problem::RemoteRef { reference } if reference == "https://example.com/more.json"
    ));
    assert_eq!(
        *said.notes.lock().unwrap(),
        [
            r#"t: the $ref "https://example.com/more.json" is not local and is not fetched: the tool's arguments are not audited"#
        ]
    );
}

#[test]
fn a_local_ref_to_nothing_leaves_the_tool_unaudited() {
    let schema = json!({"$ref": "#/$defs/missing", "$defs": {}});
    assert_eq!(skipped(schema), Some(Skip::DeclaresNothing));
    let (_, said) = listed(&[tool(json!({"$ref": "#nowhere"}))]);
    assert_eq!(
        *said.notes.lock().unwrap(),
        [r##"t: the $ref "#nowhere" points at nothing in the schema: the tool's arguments are not audited"##]
    );
}

#[test]
fn a_schema_past_the_bounds_is_not_audited_and_says_so() {
    // An allOf chain deeper than MAX_COMPOSITION_DEPTH.
    let mut schema = json!({"properties": {"deep": {}}});
    for _ in 0..=mcp_unknown_keys::limits::MAX_COMPOSITION_DEPTH {
        schema = json!({"allOf": [schema]});
    }
    let (auditor, said) = listed(&[tool(schema)]);
    assert_eq!(
        audit(&auditor, "t", r#"{"x":1}"#),
        Outcome::Skipped(Skip::DeclaresNothing)
    );
    assert_eq!(
        *said.notes.lock().unwrap(),
        ["t: the schema is too large to read whole: the tool's arguments are not audited"]
    );
}

#[test]
fn a_closed_schema_that_declares_no_key_is_audited() {
    for schema in [
        json!({"type": "object", "additionalProperties": false}),
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        json!({"type": "object", "unevaluatedProperties": false}),
        json!({"allOf": [{"additionalProperties": false}]}),
    ] {
        assert_eq!(
            undeclared_keys(schema.clone(), r#"{"path":1,"b":1}"#),
            ["b", "path"],
            "{schema}"
        );
    }
    // ...and says what it declares: nothing.
    let (auditor, said) = listed(&[tool(json!({"additionalProperties": false}))]);
    audit(&auditor, "t", r#"{"path":1}"#);
    let line = said.warnings.lock().unwrap()[0].to_string();
    assert!(
        line.contains("undeclared argument(s) path; it declares none"),
        "{line}"
    );
}

#[test]
fn an_open_schema_that_declares_no_key_stays_silent() {
    for schema in [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        // Closed in one branch only: a value need not satisfy that branch.
        json!({"anyOf": [{"additionalProperties": false}, {}]}),
    ] {
        assert_eq!(skipped(schema.clone()), Some(Skip::DeclaresNothing), "{schema}");
    }
}

#[test]
fn additional_properties_does_not_change_what_is_reported() {
    for additional in [json!(true), json!({"type": "string"}), json!(false)] {
        let schema = json!({"properties": {"a": {}}, "additionalProperties": additional});
        assert_eq!(undeclared_keys(schema, r#"{"a":1,"b":1}"#), ["b"], "{additional}");
    }
}

#[test]
fn a_schema_that_cannot_be_read_leaves_its_tool_listed_declaring_nothing() {
    let (auditor, said) = listed(&[
        json!({"name": "string", "inputSchema": "object"}),
        json!({"name": "array_properties", "inputSchema": {"properties": ["a"]}}),
        json!({"name": "no_schema"}),
        // Inside a branch, properties that are not an object declare nothing.
        json!({"name": "branch", "inputSchema": {"properties": {"a": {}}, "allOf": [{"properties": ["b"]}]}}),
    ]);
    let catalog = auditor.catalog();
    assert_eq!(
        catalog.tool_names(),
        ["array_properties", "branch", "no_schema", "string"]
    );
    assert_eq!(catalog.get("branch").unwrap().keys().collect::<Vec<_>>(), ["a"]);
    assert!(catalog.get("branch").unwrap().has_schema());
    for tool in ["string", "array_properties", "no_schema"] {
        assert!(!catalog.get(tool).unwrap().has_schema(), "{tool}");
    }
    // Listed: its calls are not counted as calls to an unlisted tool.
    let mut coverage = Coverage::default();
    for tool in ["string", "array_properties", "no_schema"] {
        let call = Call::new(tool, Arguments::Json(r#"{"x":1}"#));
        let outcome = auditor.audit(&catalog, call);
        assert_eq!(outcome, Outcome::Skipped(Skip::DeclaresNothing), "{tool}");
        coverage.record(&call, &outcome);
    }
    assert!(coverage.unlisted_tools.is_empty());
    // Said once each, but for the tool given no schema at all (a tool
    // without arguments).
    let notes = said.notes.lock().unwrap();
    assert_eq!(
        *notes,
        [
            "array_properties: the schema is not an object schema (or its properties are not an object): the tool's arguments are not audited",
            "string: the schema is not an object schema (or its properties are not an object): the tool's arguments are not audited",
        ]
    );
}

#[test]
fn defaults_are_read_across_combinators_for_the_diagnosis() {
    let catalog = Catalog::from_mcp_tools(&[tool(json!({
        "allOf": [{"$ref": "#/$defs/paging"}],
        "$defs": {"paging": {"properties": {"limit": {"default": 20}, "offset": {"$ref": "#/$defs/zero"}}},
                  "zero": {"type": "integer", "default": 0}},
    }))]);
    let declared = catalog.get("t").unwrap();
    assert_eq!(declared.default_of("limit"), Some(&json!(20)));
    assert_eq!(declared.default_of("offset"), Some(&json!(0)));
}

#[test]
fn the_layer_reads_combinators_and_says_its_notes() {
    let said = std::sync::Arc::new(common::said::Said::default());
    let auditor = mcp_unknown_keys::audit::Auditor::new().with_shared_sink(said.clone());
    let files = common::Recorder::listing(vec![
        ToolDeclaration::new(
            "search",
            None,
            json!({"allOf": [{"$ref": "#/$defs/q"}], "$defs": {"q": {"properties": {"query": {}}}}}),
        ),
        ToolDeclaration::new("remote", None, json!({"$ref": "other.json#/args"})),
    ]);
    let layer = UnknownKeys::with_auditor(files, auditor);
    common::block_on(layer.tools_for_llm()).unwrap();
    common::block_on(layer.execute_tool_calls(vec![
        ToolCall::new("1", "search", r#"{"query":"a","qeury":"a"}"#),
        ToolCall::new("2", "remote", r#"{"anything":1}"#),
    ]))
    .unwrap();
    let warnings = said.warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].unknown_keys, ["qeury"]);
    let coverage: Value = serde_json::from_str(&layer.coverage().to_json_line()).unwrap();
    assert_eq!(coverage["coverage"]["unaudited"], json!({"declares_nothing": 1}));
    assert_eq!(said.notes.lock().unwrap().len(), 1);
}

#[test]
fn a_note_is_a_tracing_event_too() {
    let catalog = Catalog::from_mcp_tools(&[tool(json!({"$ref": "#/$defs/gone"}))]);
    let auditor = mcp_unknown_keys::audit::Auditor::new().with_sink(mcp_unknown_keys::audit::TracingSink);
    let fields = common::traced::traced(|| auditor.replace_catalog(catalog));
    assert!(
        fields.contains("tool=t\n") && fields.contains("at=\n"),
        "{fields}"
    );
    assert!(
        fields.contains(r##"note=the $ref "#/$defs/gone" points at nothing in the schema"##),
        "{fields}"
    );
}

#[test]
fn a_subschema_met_in_a_branch_and_through_all_of_still_closes_the_object() {
    let schema = json!({
        "anyOf": [{"$ref": "#/$defs/closed"}],
        "allOf": [{"$ref": "#/$defs/closed"}],
        "$defs": {"closed": {"additionalProperties": false}},
    });
    assert_eq!(undeclared_keys(schema, r#"{"a":1}"#), ["a"]);
}

#[test]
fn past_the_bound_on_shapes_nested_values_go_unread_but_the_tool_is_audited() {
    let shapes = mcp_unknown_keys::limits::MAX_SHAPES;
    let properties: serde_json::Map<String, Value> = (0..shapes + 10)
        .map(|i| (format!("p{i:05}"), json!({"properties": {format!("q{i}"): {}}})))
        .collect();
    let (auditor, said) = listed(&[tool(json!({ "properties": properties }))]);
    let first = format!(
        r#"{{"p00000":{{"x":1}},"p{:05}":{{"x":1}},"extra":1}}"#,
        shapes + 5
    );
    // The first property's value is read; one past the bound is not.
    assert_eq!(
        undeclared(&auditor, "t", &first),
        (vec!["extra".to_owned()], vec!["p00000.x".to_owned()])
    );
    let notes = said.notes.lock().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].ends_with("the nested values read after it are not audited"),
        "{notes:?}"
    );
}
