//! The schema reader, on any JSON a server may list: the input's JSON
//! before its first NUL byte is read as a list of tools in every
//! declaration form (`Catalog::extend_tools`) and as one tool's schema
//! (`Declared::from_schema`), across combinators, `$ref`s and patterns;
//! then calls are audited against what was read: the arguments after the
//! NUL, if any, and arguments made of every key each tool declares, each
//! holding nested values, plus one undeclared key. Nothing may panic or
//! hang, every note can be said, and a declared key is never reported.
//!
//! And `patternProperties` patterns, which the core matches in linear time
//! by writing each again for another engine, match as ECMA-262 says: each
//! line after the NUL, as a key of a few characters (few enough for the
//! backtracking ECMA-262 engine regress to answer at once), is declared by
//! the schema exactly when it is one of its properties, regress finds one
//! of its patterns in it, or one of its patterns cannot be matched in
//! linear time (such a pattern is never run, and taken to match every key).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Declared, Outcome, Problem};
use serde_json::{Map, Value, json};

fuzz_target!(|data: &[u8]| {
    let (schema, arguments) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(String::from_utf8_lossy(&data[at + 1..]))),
        None => (data, None),
    };
    let Ok(value) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let mut catalog = Catalog::new();
    match &value {
        Value::Array(tools) => catalog.extend_tools(tools),
        tool => catalog.extend_tools([tool]),
    }
    catalog.insert("schema", Some(&value));
    for (tool, note) in catalog.notes() {
        let _ = format!("{tool}: {note}");
        let _ = note.leaves_tool_unaudited();
    }
    if let Some(declared) = Declared::from_schema(&value) {
        let _ = (declared.is_audited(), declared.is_closed(), declared.has_nested());
        // A top-level pattern no linear-time engine matches is never run.
        let unmatched = declared
            .notes()
            .iter()
            .any(|note| note.at.is_empty() && matches!(note.problem, Problem::UnmatchedPattern { .. }));
        if let Some(keys) = &arguments {
            matches_as_ecma_262(&declared, unmatched, keys.split('\n'));
        }
    }
    let auditor = Auditor::new().with_sink(());
    auditor.say_notes(&catalog);
    for tool in catalog.tool_names() {
        let declared = catalog.get(&tool).expect("a tool named is kept");
        let made = made_arguments(declared);
        for text in arguments.iter().map(|text| &**text).chain([made.as_str()]) {
            let outcome = auditor.audit(&catalog, Call::new(&tool, Arguments::Json(text)));
            if let Outcome::Audited {
                undeclared, warning, ..
            } = &outcome
            {
                for key in undeclared {
                    assert!(
                        !declared.declares(key),
                        "{tool}: the declared key {key:?} reported"
                    );
                }
                if let Some(warning) = warning {
                    let _ = warning.to_string();
                    let _ = warning.to_json_line();
                }
            }
        }
    }
});

/// The keys of at most this many characters are checked against regress.
const SHORT_KEY: usize = 8;

fn matches_as_ecma_262<'k>(declared: &Declared, unmatched: bool, keys: impl Iterator<Item = &'k str>) {
    let unicode = regress::Flags {
        unicode: true,
        ..regress::Flags::default()
    };
    let patterns: Vec<regress::Regex> = declared
        .patterns()
        .filter_map(|source| {
            regress::Regex::with_flags(source, unicode)
                .or_else(|_| regress::Regex::new(source))
                .ok()
        })
        .collect();
    assert_eq!(
        patterns.len(),
        declared.patterns().len(),
        "a pattern kept is ECMA-262"
    );
    for key in keys.filter(|key| key.chars().count() <= SHORT_KEY) {
        let expected = unmatched
            || declared.keys().any(|name| name == key)
            || patterns.iter().any(|regex| regex.find(key).is_some());
        assert_eq!(
            declared.declares(key),
            expected,
            "{key:?} against {:?}",
            declared.patterns().collect::<Vec<_>>()
        );
    }
}

/// Every declared key, each with an object, an array of objects and an
/// undeclared nested key inside, and one undeclared key of its own.
fn made_arguments(declared: &Declared) -> String {
    let mut object: Map<String, Value> = declared
        .keys()
        .map(|key| {
            let nested = json!({"zz_undeclared": 1, "items": [{"zz_undeclared": [1]}]});
            (key.to_owned(), nested)
        })
        .collect();
    object.insert("zz_undeclared".to_owned(), json!([{"zz_undeclared": {}}]));
    Value::Object(object).to_string()
}
