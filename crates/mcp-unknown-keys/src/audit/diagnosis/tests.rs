//! The checks one by one, and the work a diagnosis does as calls and tools
//! grow.

use super::*;
use serde_json::json;

fn catalog() -> Catalog {
    Catalog::from_mcp_tools(&[
        json!({"name": "fs_read", "inputSchema": {"properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "default": 0},
            "limit": {"type": "integer"},
        }}}),
        json!({"name": "fs_search", "inputSchema": {"properties": {
            "pattern": {}, "filters": {}, "token_budget": {"default": 4000}, "file_path": {},
        }}}),
        json!({"name": "task", "inputSchema": {"properties": {
            "prompt": {}, "description": {}, "subagent_type": {},
        }}}),
        json!({"name": "chart", "inputSchema": {"properties": {
            "style_id": {}, "count": {}, "target_timezone": {}, "time_zone": {}, "query": {},
        }}}),
    ])
}

fn diagnose_in(
    catalog: &Catalog,
    tool: &str,
    arguments: &Value,
    seen: usize,
) -> (Vec<Hint>, Vec<MissingKey>, Work) {
    let declared = catalog.get(tool).unwrap();
    let arguments = arguments.as_object().unwrap();
    let unknown: Vec<(String, usize)> = arguments
        .keys()
        .filter(|key| !declared.declares(key))
        .map(|key| (key.clone(), seen))
        .collect();
    let diagnosed = Diagnosed {
        catalog,
        tool,
        declared,
        arguments: Some(arguments),
    };
    diagnosed.diagnose_counted(&unknown)
}

fn diagnose(tool: &str, arguments: Value, seen: usize) -> (Vec<Hint>, Vec<MissingKey>) {
    let (hints, missing, _) = diagnose_in(&catalog(), tool, &arguments, seen);
    (hints, missing)
}

fn cause_of(tool: &str, arguments: Value, key: &str) -> (Cause, Option<String>) {
    let (hints, _) = diagnose(tool, arguments, 1);
    let hint = hints.into_iter().find(|hint| hint.key == key).unwrap();
    (hint.cause, hint.suggestion)
}

fn expect(tool: &str, cases: &[(&str, Cause, &str)]) {
    for &(key, cause, meant) in cases {
        let found = cause_of(tool, json!({ key: 1 }), key);
        assert_eq!(found, (cause, Some(meant.to_owned())), "{key}");
    }
}

#[test]
fn a_cut_key_is_truncated_when_its_declared_key_was_not_sent() {
    expect(
        "fs_read",
        &[
            ("ffset", Cause::Truncated, "offset"),
            ("imit", Cause::Truncated, "limit"),
        ],
    );
    expect("task", &[("subagent_ty", Cause::Truncated, "subagent_type")]);
    let (cause, _) = cause_of("fs_read", json!({"offset": 1, "ffset": 12}), "ffset");
    assert_ne!(cause, Cause::Truncated);
}

#[test]
fn case_and_separator_variants_are_case_variants() {
    expect(
        "chart",
        &[
            ("styleId", Cause::CaseVariant, "style_id"),
            ("StyleId", Cause::CaseVariant, "style_id"),
            ("style-id", Cause::CaseVariant, "style_id"),
            ("timeZone", Cause::CaseVariant, "time_zone"),
        ],
    );
    expect(
        "fs_search",
        &[
            ("tokenBudget", Cause::CaseVariant, "token_budget"),
            ("Pattern", Cause::CaseVariant, "pattern"),
        ],
    );
}

#[test]
fn singulars_and_plurals_are_plurals_both_ways() {
    expect(
        "fs_search",
        &[
            ("filter", Cause::Plural, "filters"),
            ("Filter", Cause::Plural, "filters"),
        ],
    );
    expect(
        "chart",
        &[
            ("queries", Cause::Plural, "query"),
            ("styleIds", Cause::Plural, "style_id"),
        ],
    );
}

#[test]
fn shortened_words_and_initials_are_abbreviations() {
    expect(
        "chart",
        &[
            ("cnt", Cause::Abbreviation, "count"),
            ("target_tz", Cause::Abbreviation, "target_timezone"),
            ("tz", Cause::Abbreviation, "time_zone"),
        ],
    );
    expect("fs_read", &[("offs", Cause::Abbreviation, "offset")]);
    expect("task", &[("desc", Cause::Abbreviation, "description")]);
}

#[test]
fn typos_are_near_misses() {
    expect(
        "fs_search",
        &[
            ("patern", Cause::NearMiss, "pattern"),
            ("tokenBudgte", Cause::NearMiss, "token_budget"),
        ],
    );
    expect("fs_read", &[("ofset", Cause::NearMiss, "offset")]);
}

#[test]
fn far_keys_are_not_near_misses() {
    let (cause, _) = cause_of("fs_read", json!({"colour": 1}), "colour");
    assert_eq!(cause, Cause::Invented);
}

#[test]
fn text_that_is_not_a_name_or_comes_from_a_value_is_a_fragment() {
    let arguments = json!({"prompt": "Investigate the", "nvestigate": "…", "the rest": "…"});
    let (hints, missing) = diagnose("task", arguments, 1);
    assert!(
        hints.iter().all(|hint| hint.cause == Cause::Fragment),
        "{hints:?}"
    );
    assert!(missing.is_empty());
    for key in ["a, b", "{\"x\"", "", "12", "one_two_three_four_five_six"] {
        assert_eq!(
            cause_of("fs_read", json!({ key: 1 }), key).0,
            Cause::Fragment,
            "{key:?}"
        );
    }
}

#[test]
fn a_key_another_tool_declares_names_that_tool() {
    let (hints, _) = diagnose("fs_read", json!({"path": "a", "subagent_type": "x"}), 1);
    assert_eq!(
        hints,
        [Hint::new("subagent_type", Cause::OtherTool).with_declared_by("task")]
    );
}

#[test]
fn a_key_seen_on_three_tools_is_injected() {
    let (hints, _) = diagnose("fs_read", json!({"toolCallId": "x"}), 3);
    assert_eq!(
        hints,
        [Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(3)]
    );
    let (hints, _) = diagnose("fs_read", json!({"toolCallId": "x"}), 2);
    assert_eq!(hints[0].cause, Cause::Invented);
}

#[test]
fn missing_keys_carry_the_schema_default_and_only_keys_not_sent() {
    let (_, missing) = diagnose("fs_read", json!({"ffset": 1, "limt": 2, "Path": "x"}), 1);
    assert_eq!(
        missing,
        [
            MissingKey::new("limit", None),
            MissingKey::new("offset", Some(json!(0))),
            MissingKey::new("path", None),
        ]
    );
    let (_, missing) = diagnose("fs_read", json!({"path": "x", "Path": "y"}), 1);
    assert!(missing.is_empty());
    let (_, missing) = diagnose("chart", json!({"cnt": 1, "filters": 2, "styleIds": 3}), 1);
    assert_eq!(
        missing,
        [MissingKey::new("count", None), MissingKey::new("style_id", None)]
    );
}

/// A tool declaring `declared` keys `field_0000_value`, … (one length, one
/// shape: the worst case for an index by length or initials).
fn wide_catalog(declared: usize) -> Catalog {
    let properties: Map<String, Value> = (0..declared)
        .map(|i| (format!("field_{i:06}_value"), json!({})))
        .collect();
    Catalog::from_mcp_tools(&[
        json!({"name": "wide", "inputSchema": {"properties": properties}}),
        json!({"name": "other", "inputSchema": {"properties": {"shared_key": {}}}}),
    ])
}

/// A call to `wide` carrying `keys` keys, of which every `undeclared_every`th
/// is not declared (and made to look like a declared one).
fn wide_call(keys: usize, undeclared_every: usize) -> Value {
    let arguments: Map<String, Value> = (0..keys)
        .map(|i| match i % undeclared_every {
            0 => (format!("field_{i:06}_valeu"), json!(format!("text {i}"))),
            _ => (format!("field_{i:06}_value"), json!(i)),
        })
        .collect();
    Value::Object(arguments)
}

/// Everything a diagnosis did, as one count: a comparison or lookup each,
/// and a search of 64 bytes.
fn operations(work: Work) -> usize {
    work.comparisons + work.lookups + work.searched_bytes / 64
}

/// The most operations a warning may cost for each key its call carried:
/// a few dozen lookups (forms, plurals, prefixes, initials, lengths, other
/// tools), and each comparison the budget allows, with the lookup that
/// ranks its result.
const OPERATIONS_PER_KEY: usize = 64 + 2 * COMPARISONS_PER_KEY + SEARCHES_PER_WARNING * 32 / 64;

/// The most operations any warning may cost on top of those.
const OPERATIONS_PER_WARNING: usize = 2 * COMPARISONS_PER_WARNING + SEARCHED_BYTES_PER_WARNING / 64;

#[test]
fn the_work_of_a_diagnosis_grows_with_the_call_not_the_tool() {
    // The same call against a tool ten times larger: no more work.
    let call = wide_call(200, 1);
    let (_, _, small) = diagnose_in(&wide_catalog(1_000), "wide", &call, 1);
    let (_, _, large) = diagnose_in(&wide_catalog(10_000), "wide", &call, 1);
    assert!(operations(large) <= operations(small), "{small:?} then {large:?}");
}

#[test]
fn the_work_of_a_diagnosis_grows_at_most_linearly_with_the_call() {
    // Ten times the keys, all undeclared or one in ten, against a tool of
    // 10,000 keys of one shape: the work stays under the same line.
    let catalog = wide_catalog(10_000);
    for undeclared_every in [1, 10] {
        for keys in [1_000, 10_000] {
            let (hints, _, work) = diagnose_in(&catalog, "wide", &wide_call(keys, undeclared_every), 1);
            assert_eq!(hints.len(), keys / undeclared_every);
            assert!(work.lookups >= hints.len(), "{work:?}");
            let bound = OPERATIONS_PER_KEY * keys + OPERATIONS_PER_WARNING;
            assert!(operations(work) <= bound, "{keys} keys: {work:?}, over {bound}");
        }
    }
}

#[test]
fn past_the_budget_keys_are_undiagnosed_and_what_the_indexes_settle_is_not() {
    let catalog = wide_catalog(10_000);
    let mut call = wide_call(100, 1);
    call["field_000005_VALUE"] = json!(1);
    let (hints, _, work) = diagnose_in(&catalog, "wide", &call, 1);
    assert_eq!(hints.len(), 101);
    // Each typo would need 10,000 comparisons: none is affordable.
    assert!(work.comparisons <= COMPARISONS_PER_WARNING + 101 * COMPARISONS_PER_KEY);
    let undiagnosed = hints
        .iter()
        .filter(|hint| hint.cause == Cause::Undiagnosed)
        .count();
    assert_eq!(undiagnosed, 100);
    let variant = hints
        .iter()
        .find(|hint| hint.key == "field_000005_VALUE")
        .unwrap();
    assert_eq!(
        variant,
        &Hint::new("field_000005_VALUE", Cause::CaseVariant).with_suggestion("field_000005_value")
    );
}

#[test]
fn within_the_budget_a_large_tool_is_diagnosed_as_a_small_one() {
    let catalog = wide_catalog(100);
    let (hints, missing, _) = diagnose_in(&catalog, "wide", &json!({"field_000007_valeu": 1}), 1);
    assert_eq!(
        hints,
        [Hint::new("field_000007_valeu", Cause::NearMiss).with_suggestion("field_000007_value")]
    );
    assert_eq!(missing, [MissingKey::new("field_000007_value", None)]);
}

#[test]
fn the_indexes_are_built_once_on_the_first_warning_that_needs_them() {
    let catalog = catalog();
    let (tools, catalogs) = crate::audit::catalog::index::built::counts();
    let built = || {
        let (now_tools, now_catalogs) = crate::audit::catalog::index::built::counts();
        (now_tools - tools, now_catalogs - catalogs)
    };
    assert_eq!(built(), (0, 0));
    // A key settled before the other tools are looked at builds only the
    // tool's index.
    diagnose_in(&catalog, "fs_read", &json!({"Path": 1}), 1);
    assert_eq!(built(), (1, 0));
    diagnose_in(&catalog, "fs_read", &json!({"subagent_type": 1}), 1);
    diagnose_in(&catalog, "fs_read", &json!({"pattern": 1, "encoding": 2}), 1);
    assert_eq!(built(), (1, 1));
    // A tool inserted afterwards is seen: the catalogue's index is rebuilt.
    let mut catalog = catalog;
    catalog.insert("late", Some(&json!({"properties": {"late_key": {}}})));
    let (hints, _, _) = diagnose_in(&catalog, "fs_read", &json!({"late_key": 1}), 1);
    assert_eq!(
        hints,
        [Hint::new("late_key", Cause::OtherTool).with_declared_by("late")]
    );
    assert_eq!(built(), (1, 2));
}

#[test]
fn a_listing_indexes_each_tool_once_before_any_warning() {
    let (tools, catalogs) = crate::audit::catalog::index::built::counts();
    let built = || {
        let (now_tools, now_catalogs) = crate::audit::catalog::index::built::counts();
        (now_tools - tools, now_catalogs - catalogs)
    };
    let auditor = crate::audit::Auditor::new().with_sink(());
    let mut listing = crate::audit::Listing::default();
    let page = |name: &str| json!({"name": name, "inputSchema": {"properties": {"path": {}}}});
    auditor.replace_catalog(listing.page(&[page("a"), page("b")], true, true).unwrap());
    assert_eq!(built(), (2, 0), "each tool's index, built with the listing");
    auditor.replace_catalog(listing.page(&[page("c")], false, false).unwrap());
    assert_eq!(built(), (3, 0), "a later page indexes only its own tools");
    let catalog = auditor.catalog();
    let call = crate::audit::Call::new("a", crate::audit::Arguments::Json(r#"{"Path":1}"#));
    let warning = auditor.audit(&catalog, call).warning().unwrap();
    assert_eq!(warning.hints[0].cause, Cause::CaseVariant);
    assert_eq!(built(), (3, 0), "a warning builds none");
}

#[test]
fn each_key_a_case_or_plural_lookup_finds_is_charged_to_the_budget() {
    // Every case variant of one word: 4,096 keys of one normalised form.
    let word = "abcdefghijkl";
    let variants: Map<String, Value> = (0..1u32 << word.len())
        .map(|bits| {
            let key: String = word
                .chars()
                .enumerate()
                .map(|(at, c)| {
                    if bits >> at & 1 == 1 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            (key, json!({}))
        })
        .collect();
    let plurals: Map<String, Value> = variants
        .keys()
        .map(|key| (format!("{key}s"), json!({})))
        .collect();
    for (properties, key) in [(variants, "abcdef_ghijkl"), (plurals, "abcdef_ghijkl")] {
        let catalog =
            Catalog::from_mcp_tools(&[json!({"name": "t", "inputSchema": {"properties": properties}})]);
        let (hints, _, work) = diagnose_in(&catalog, "t", &json!({ key: 1 }), 1);
        assert_eq!(hints[0].cause, Cause::Undiagnosed, "{hints:?}");
        assert!(
            operations(work) <= OPERATIONS_PER_KEY + OPERATIONS_PER_WARNING,
            "{work:?}"
        );
    }
}

#[test]
fn the_search_of_values_stops_at_its_budget() {
    let long = "x".repeat(SEARCHED_BYTES_PER_WARNING);
    let arguments: Map<String, Value> = (0..40).map(|i| (format!("zz{i:02}q"), json!(long))).collect();
    let (hints, _, work) = diagnose_in(&catalog(), "fs_read", &Value::Object(arguments), 1);
    let budget = SEARCHED_BYTES_PER_WARNING + SEARCHES_PER_WARNING * 40 * (long.len() + 1);
    assert!(work.searched_bytes <= budget, "{work:?}");
    assert_eq!(hints[0].cause, Cause::Invented);
    assert_eq!(hints[39].cause, Cause::Undiagnosed);
}
