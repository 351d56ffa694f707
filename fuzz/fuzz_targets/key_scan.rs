//! The core's key scan of a call's arguments, on any text: through
//! `Auditor::audit` against a catalogue with nested shapes (objects, arrays
//! of objects, patterns, a recursive `$ref`), so the nested scan and the
//! diagnosis of a warning run too, and against a pattern a backtracking
//! engine takes exponential time on, which must answer at once. Nothing
//! may panic or hang, and whenever the text parses as a JSON object (as a
//! server's parser would read it), the audit reads it too and finds
//! exactly the undeclared top-level keys that `serde_json::Value` holds.

#![no_main]

use std::collections::BTreeSet;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
use serde_json::{Value, json};

/// `nested`: every kind of nested shape; `flat`: top-level keys only, the
/// scan without shapes.
static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    Catalog::from_mcp_tools(&[
        json!({"name": "nested", "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "default": 0},
                "options": {
                    "type": "object",
                    "properties": {"recursive": {"type": "boolean"}, "depth": {"type": "integer"}},
                    "additionalProperties": false,
                },
                "entities": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {}, "age": {}, "tags": {"type": "array", "items": {"type": "string"}}},
                }},
                "tree": {"$ref": "#/$defs/node"},
            },
            "patternProperties": {
                "^x-": {},
                "^meta_[0-9]+$": {"type": "object", "properties": {"k": {}}},
                // A backtracking engine takes 2^n steps on `v` and n
                // letters then a `!`: matched in linear time, it may not.
                "^v([a-z]+)+$": {},
            },
            "allOf": [{"properties": {"limit": {"type": "integer"}}}],
            "anyOf": [{"properties": {"cursor": {}}}, {"properties": {"page": {}}}],
            "$defs": {"node": {
                "type": "object",
                "properties": {"value": {}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }},
        }}),
        json!({"name": "flat", "inputSchema": {
            "type": "object",
            "properties": {"path": {}, "offset": {}, "limit": {}},
        }}),
    ])
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let as_value = serde_json::from_str::<Value>(&text).ok();
    for tool in ["nested", "flat"] {
        // A fresh auditor each time, so every undeclared pair raises a
        // warning and the diagnosis runs.
        let auditor = Auditor::new().with_sink(());
        let call = Call::new(tool, Arguments::Json(&text));
        let outcome = auditor.audit(&CATALOG, call);
        if let Outcome::Audited {
            warning: Some(warning),
            ..
        } = &outcome
        {
            let _ = warning.to_string();
            let _ = warning.to_json_line();
        }
        let Some(Value::Object(object)) = &as_value else {
            continue;
        };
        let declared = CATALOG.get(tool).expect("listed");
        let expected: BTreeSet<&str> = object
            .keys()
            .map(String::as_str)
            .filter(|key| !declared.declares(key) && !auditor.tolerates(key))
            .collect();
        let Outcome::Audited { undeclared, .. } = &outcome else {
            panic!("{tool}: a JSON object was not audited: {outcome:?}");
        };
        let found: BTreeSet<&str> = undeclared.iter().map(String::as_str).collect();
        assert_eq!(found, expected, "{tool}: the undeclared top-level keys");
        assert_eq!(found.len(), undeclared.len(), "{tool}: said once each");
    }
});
