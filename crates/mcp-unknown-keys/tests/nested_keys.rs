//! Nested keys: the keys inside a declared key's value, audited against
//! that key's own schema and reported as paths (`options.recursve`,
//! `entities[].age`), once per (tool, path).

use crate::common;

use std::sync::{Arc, Mutex};

use common::said::{audit, listed, undeclared};
use mcp_unknown_keys::audit::{
    Arguments, Auditor, Call, Catalog, Findings, HostObject, NotAnObject, Outcome, Sink, TracingSink, Warning,
};
use mcp_unknown_keys::limits::MAX_NESTED_DEPTH;
use mcp_unknown_keys::{Provider, ToolCall, ToolDeclaration, UnknownKeysLayer};
use proptest::prelude::*;
use serde_json::{Value, json};
use tower_layer::Layer;

/// `create_entities` of `@modelcontextprotocol/server-memory`: an array of
/// entity objects.
fn create_entities() -> Value {
    json!({"name": "create_entities", "inputSchema": {
        "type": "object",
        "properties": {"entities": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The name of the entity"},
                "entityType": {"type": "string", "description": "The type of the entity"},
                "observations": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["name", "entityType", "observations"],
        }}},
        "required": ["entities"],
    }})
}

/// `search` with an `options` object.
fn search() -> Value {
    json!({"name": "search", "inputSchema": {"properties": {
        "query": {"type": "string"},
        "options": {"type": "object", "properties": {"recursive": {"type": "boolean"}, "depth": {}}},
    }}})
}

/// A tree: each node has a name and children that are nodes.
fn tree() -> Value {
    json!({"name": "tree", "inputSchema": {
        "$ref": "#/$defs/node",
        "$defs": {"node": {"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        }}},
    }})
}

fn paths(auditor: &Auditor, tool: &str, arguments: &str) -> Vec<String> {
    undeclared(auditor, tool, arguments).1
}

#[test]
fn a_nested_object_key_is_reported_as_a_path() {
    let (auditor, said) = listed(&[search()]);
    let (keys, paths) = undeclared(
        &auditor,
        "search",
        r#"{"query":"a","options":{"recursve":true,"depth":2}}"#,
    );
    assert!(keys.is_empty());
    assert_eq!(paths, ["options.recursve"]);
    let warning = &said.warnings.lock().unwrap()[0];
    assert!(warning.unknown_keys.is_empty());
    assert_eq!(warning.unknown_paths, ["options.recursve"]);
    assert_eq!(
        warning.to_string(),
        "search was called with undeclared nested key(s) options.recursve; it declares options, query"
    );
    assert!(
        warning
            .to_json_line()
            .ends_with(r#""unknown_paths":["options.recursve"]}"#)
    );
}

#[test]
fn array_items_are_read_as_their_items_schema_says() {
    let (auditor, said) = listed(&[create_entities()]);
    let arguments = r#"{"entities":[
        {"name":"Ada","entityType":"person","observations":["wrote notes"],"age":36},
        {"name":"Bob","entityType":"person","observations":[],"age":40,"email":"b@example.com"}]}"#;
    assert_eq!(
        paths(&auditor, "create_entities", arguments),
        ["entities[].age", "entities[].email"]
    );
    assert_eq!(
        said.warnings.lock().unwrap()[0].unknown_paths,
        ["entities[].age", "entities[].email"]
    );
}

#[test]
fn top_level_and_nested_keys_are_reported_together() {
    let (auditor, said) = listed(&[search()]);
    audit(&auditor, "search", r#"{"qeury":"a","options":{"recursve":true}}"#);
    let warning = &said.warnings.lock().unwrap()[0];
    assert_eq!(warning.unknown_keys, ["qeury"]);
    assert_eq!(warning.unknown_paths, ["options.recursve"]);
    assert!(warning.to_string().starts_with(
        "search was called with undeclared argument(s) qeury and nested key(s) options.recursve;"
    ));
}

#[test]
fn a_value_of_another_shape_is_not_read_further() {
    let (auditor, said) = listed(&[search(), create_entities()]);
    for (tool, arguments) in [
        ("search", r#"{"options":"fast"}"#),
        ("search", r#"{"options":[{"recursve":true}]}"#),
        ("search", r#"{"options":null}"#),
        ("create_entities", r#"{"entities":{"age":1}}"#),
        ("create_entities", r#"{"entities":[1,"two",null,[{"age":3}]]}"#),
    ] {
        assert!(paths(&auditor, tool, arguments).is_empty(), "{arguments}");
    }
    assert!(said.warnings.lock().unwrap().is_empty());
}

#[test]
fn a_recursive_schema_is_read_to_any_depth() {
    let (auditor, _) = listed(&[tree()]);
    assert!(auditor.catalog().get("tree").unwrap().has_nested());
    let arguments = r#"{"name":"root","children":[{"name":"a","children":[{"nme":"b","children":[]}]}]}"#;
    assert_eq!(paths(&auditor, "tree", arguments), ["children[].children[].nme"]);
}

/// A tree `depth` levels deep (the top level being 0), with `key` in its
/// deepest node.
fn deep_tree(depth: usize, key: &str) -> String {
    let mut text = format!(r#"{{"{key}":1}}"#);
    for _ in 0..depth {
        text = format!(r#"{{"children":[{text}]}}"#);
    }
    text
}

#[test]
fn deep_values_never_make_a_call_unreadable() {
    let (auditor, _) = listed(&[tree(), search()]);
    // Each level of the tree is two levels of JSON (an object, an array).
    let reachable = MAX_NESTED_DEPTH / 2;
    let expected = format!("{}nme", "children[].".repeat(reachable));
    assert_eq!(paths(&auditor, "tree", &deep_tree(reachable, "nme")), [expected]);
    // Past the bound, values are skipped, not read: the call is still
    // audited, without a word about keys it did not read.
    for depth in [reachable + 1, 200, 5_000] {
        assert!(
            paths(&auditor, "tree", &deep_tree(depth, "nme")).is_empty(),
            "{depth}"
        );
    }
    // A deep value where the schema says nothing deep is skipped whole, far
    // past serde_json's recursion limit.
    let deep = format!(
        r#"{{"options":{{"depth":{}1{}}},"qeury":1}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(
        undeclared(&auditor, "search", &deep),
        (vec!["qeury".to_owned()], vec![])
    );
}

#[test]
fn top_level_only_reads_no_nested_key() {
    let said = Arc::new(common::said::Said::default());
    let auditor = Auditor::new().with_shared_sink(said.clone()).top_level_only(true);
    auditor.replace_catalog(Catalog::from_mcp_tools(&[search(), create_entities()]));
    assert_eq!(
        undeclared(&auditor, "search", r#"{"qeury":1,"options":{"recursve":true}}"#),
        (vec!["qeury".to_owned()], vec![])
    );
    assert!(matches!(
        audit(&auditor, "create_entities", r#"{"entities":[{"age":1}]}"#),
        Outcome::Audited { warning: None, .. }
    ));
}

#[test]
fn the_layer_reads_nested_keys_unless_top_level_only() {
    for (top_level_only, expected) in [(false, vec!["entities[].age".to_owned()]), (true, vec![])] {
        let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
        let record = warnings.clone();
        let layer = UnknownKeysLayer::new()
            .on_warn(move |warning: &Warning| record.lock().unwrap().push(warning.clone()))
            .top_level_only(top_level_only);
        let declaration =
            ToolDeclaration::new("create_entities", None, create_entities()["inputSchema"].clone());
        let audited = layer.layer(common::Recorder::listing(vec![declaration]));
        common::block_on(audited.tools_for_llm()).unwrap();
        let call = ToolCall::new("1", "create_entities", r#"{"entities":[{"name":"a","age":1}]}"#);
        common::block_on(audited.execute_tool_calls(vec![call])).unwrap();
        let said: Vec<String> = warnings
            .lock()
            .unwrap()
            .iter()
            .flat_map(|w| w.unknown_paths.clone())
            .collect();
        assert_eq!(said, expected, "top_level_only: {top_level_only}");
    }
}

#[test]
fn each_tool_and_path_pair_is_said_once() {
    let other = json!({"name": "other", "inputSchema": search()["inputSchema"].clone()});
    let (auditor, said) = listed(&[search(), other]);
    for (tool, arguments) in [
        ("search", r#"{"options":{"recursve":true}}"#),
        ("search", r#"{"options":{"recursve":false,"dpth":1}}"#),
        ("search", r#"{"options":{"recursve":false}}"#),
        ("other", r#"{"options":{"recursve":false}}"#),
        // A top-level key spelled like the path is another pair.
        ("search", r#"{"options.recursve":1}"#),
    ] {
        audit(&auditor, tool, arguments);
    }
    let warnings = said.warnings.lock().unwrap();
    let said: Vec<(&str, &[String], &[String])> = warnings
        .iter()
        .map(|w| (w.tool.as_str(), &w.unknown_keys[..], &w.unknown_paths[..]))
        .collect();
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        said,
        [
            ("search", &[][..], &strings(&["options.recursve"])[..]),
            ("search", &[][..], &strings(&["options.dpth"])[..]),
            ("other", &[][..], &strings(&["options.recursve"])[..]),
            ("search", &strings(&["options.recursve"])[..], &[][..]),
        ]
    );
    // A warning read back from a log shares the same memory.
    let logged = strings(&["options.recursve", "options.sort"]);
    assert_eq!(auditor.claim_logged_paths("search", &logged), ["options.sort"]);
}

#[test]
fn a_path_is_a_call_of_its_own_in_the_findings() {
    let (auditor, _) = listed(&[create_entities()]);
    let mut findings = Findings::default();
    for (id, arguments) in [
        ("1", r#"{"entities":[{"age":1},{"age":2}]}"#),
        ("2", r#"{"entities":[{"age":3}],"dryRun":true}"#),
    ] {
        let id = json!(id);
        let call = Call::new("create_entities", Arguments::Json(arguments)).with_id(&id);
        findings.record(&call, &auditor.audit(&auditor.catalog(), call));
    }
    let found: Vec<(&str, u64, &str, bool)> = findings
        .iter()
        .filter(|f| !f.missing)
        .map(|f| (f.key, f.calls, f.first_id, f.nested))
        .collect();
    assert_eq!(
        found,
        [("dryRun", 1, "2", false), ("entities[].age", 2, "1", true)]
    );
    // The items lacked the keys the schema requires of them, too.
    let lost: Vec<&str> = findings.iter().filter(|f| f.missing).map(|f| f.key).collect();
    assert_eq!(
        lost,
        [
            "entities[].entityType",
            "entities[].name",
            "entities[].observations"
        ]
    );
    assert_eq!(findings.len(), 5);
    // Serialised per tool, its declared keys once.
    let summary = serde_json::to_value(&findings).unwrap();
    assert_eq!(summary[0]["declared_keys"], json!(["entities"]));
    assert_eq!(summary[0]["paths"]["entities[].age"]["calls"], json!(2));
    assert_eq!(summary[0]["keys"]["dryRun"]["first_id"], json!("2"));
}

#[test]
fn nested_keys_are_in_the_tracing_event() {
    let (auditor, said) = listed(&[search()]);
    audit(&auditor, "search", r#"{"options":{"recursve":true}}"#);
    let warning = said.warnings.lock().unwrap()[0].clone();
    let fields = common::traced::traced(|| TracingSink.warn(&warning));
    assert!(
        fields.contains(r#"unknown_paths=["options.recursve"]"#),
        "{fields}"
    );
}

#[test]
fn keys_read_by_pattern_and_keys_that_read_as_syntax() {
    let tool = json!({"name": "t", "inputSchema": {"properties": {
        "headers": {"patternProperties": {"^x-": {"properties": {"value": {}}}}},
        "config": {"properties": {"a.b": {"properties": {"c": {}}}}},
        "grid": {"items": {"items": {"properties": {"x": {}}}}},
    }}});
    let (auditor, _) = listed(&[tool]);
    let arguments = r#"{"headers":{"x-trace":{"value":1,"vlue":2},"y":{}},
        "config":{"a.b":{"c":1,"d":2},"[e]":1},
        "grid":[[{"x":1,"y":2}]]}"#;
    assert_eq!(
        paths(&auditor, "t", arguments),
        [
            r#"config["[e]"]"#,
            r#"config["a.b"].d"#,
            "grid[][].y",
            "headers.x-trace.vlue",
            "headers.y"
        ]
    );
}

/// A host's object that keeps its arguments as a JSON object and lets the
/// core's default convert it for the nested scan.
#[derive(Debug)]
struct HostCopy(serde_json::Map<String, Value>);

impl HostObject for HostCopy {
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
        self.0.keys().for_each(|key| on_key(key));
        Ok(())
    }

    fn to_object(&self) -> Option<serde_json::Map<String, Value>> {
        Some(self.0.clone())
    }
}

#[test]
fn a_hosts_object_is_read_as_its_json_text_is() {
    let arguments = json!({"entities": [{"name": "a", "age": 1}], "extra": 1, "reason": "x"});
    let host = HostCopy(arguments.as_object().unwrap().clone());
    let text = arguments.to_string();
    let (by_host, _) = listed(&[create_entities()]);
    let (by_text, _) = listed(&[create_entities()]);
    let from_host = by_host.audit(
        &by_host.catalog(),
        Call::new("create_entities", Arguments::Host(&host)),
    );
    let from_text = by_text.audit(
        &by_text.catalog(),
        Call::new("create_entities", Arguments::Json(&text)),
    );
    assert_eq!(from_host, from_text);
    let warning = from_host.warning().expect("a warning");
    assert_eq!(
        (warning.unknown_keys, warning.unknown_paths),
        (vec!["extra".to_owned()], vec!["entities[].age".to_owned()])
    );
}

#[test]
fn arguments_already_parsed_are_read_the_same_way() {
    let (auditor, _) = listed(&[create_entities()]);
    let arguments = json!({"entities": [{"name": "a", "age": 1}], "extra": 1});
    let call = Call::new(
        "create_entities",
        Arguments::Object(arguments.as_object().unwrap()),
    );
    let Outcome::Audited {
        undeclared,
        undeclared_paths,
        ..
    } = auditor.audit(&auditor.catalog(), call)
    else {
        panic!("audited");
    };
    assert_eq!(
        (undeclared, undeclared_paths),
        (vec!["extra".into()], vec!["entities[].age".into()])
    );
}

#[test]
fn an_allowed_path_is_tolerated() {
    let auditor = Auditor::new().with_sink(()).allow("entities[].age");
    auditor.replace_catalog(Catalog::from_mcp_tools(&[create_entities()]));
    assert_eq!(
        paths(
            &auditor,
            "create_entities",
            r#"{"entities":[{"age":1,"email":""}]}"#
        ),
        ["entities[].email"]
    );
}

#[test]
fn a_closed_nested_object_declaring_nothing_is_audited_and_an_open_one_is_not() {
    let tool = json!({"name": "t", "inputSchema": {"properties": {
        "closed": {"type": "object", "additionalProperties": false},
        "open": {"type": "object"},
    }}});
    let (auditor, _) = listed(&[tool]);
    assert_eq!(
        paths(&auditor, "t", r#"{"closed":{"a":1},"open":{"b":1}}"#),
        ["closed.a"]
    );
}

#[test]
fn a_nested_remote_ref_leaves_that_value_unaudited_and_says_so() {
    let tool = json!({"name": "t", "inputSchema": {"properties": {
        "local": {"properties": {"a": {}}},
        "remote": {"$ref": "https://example.com/remote.json"},
    }}});
    let (auditor, said) = listed(&[tool]);
    assert_eq!(
        undeclared(&auditor, "t", r#"{"local":{"b":1},"remote":{"c":1},"other":1}"#),
        (vec!["other".to_owned()], vec!["local.b".to_owned()])
    );
    assert_eq!(
        *said.notes.lock().unwrap(),
        [
            r#"t: the $ref "https://example.com/remote.json" is not local and is not fetched: the keys inside remote are not audited"#
        ]
    );
}

/// A value of any JSON type, nested a little.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<i32>().prop_map(Value::from),
        "[a-z\\\\\"]{0,4}".prop_map(Value::from)
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys declared by `create_entities` or not, some that read as path syntax.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "name",
        "entityType",
        "observations",
        "entities",
        "age",
        "a.b",
        "",
        "x[0]",
    ])
    .prop_map(str::to_owned)
}

/// What the reading of `create_entities` must find, worked out on the
/// parsed value: the top-level keys other than `entities`, and the keys of
/// each object item of an `entities` array other than its three.
fn expected(arguments: &serde_json::Map<String, Value>) -> (Vec<String>, Vec<String>) {
    let mut keys: Vec<String> = arguments.keys().filter(|k| *k != "entities").cloned().collect();
    let mut paths = Vec::new();
    if let Some(Value::Array(items)) = arguments.get("entities") {
        for item in items.iter().filter_map(Value::as_object) {
            for key in item
                .keys()
                .filter(|k| !["name", "entityType", "observations"].contains(&k.as_str()))
            {
                let quoted = key.is_empty() || key.contains(['.', '[', ']', '"', '\\']);
                paths.push(if quoted {
                    format!("entities[][{}]", serde_json::to_string(key).unwrap())
                } else {
                    format!("entities[].{key}")
                });
            }
        }
    }
    for list in [&mut keys, &mut paths] {
        list.sort();
        list.dedup();
    }
    (keys, paths)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_scan_finds_what_the_schema_says_in_any_arguments(
        top in prop::collection::btree_map(key(), any_value(), 0..4),
        entities in prop::collection::vec(any_value(), 0..4),
        entities_is_array in any::<bool>(),
    ) {
        let mut arguments: serde_json::Map<String, Value> = top.into_iter().collect();
        if entities_is_array {
            arguments.insert("entities".into(), Value::Array(entities));
        }
        let (auditor, _) = listed(&[create_entities()]);
        let text = Value::Object(arguments.clone()).to_string();
        prop_assert_eq!(undeclared(&auditor, "create_entities", &text), expected(&arguments));
        // Read as text or as a parsed object, the same.
        let call = Call::new("create_entities", Arguments::Object(&arguments));
        let Outcome::Audited { undeclared, undeclared_paths, .. } = auditor.audit(&auditor.catalog(), call) else {
            panic!("audited");
        };
        prop_assert_eq!((undeclared, undeclared_paths), expected(&arguments));
    }
}
