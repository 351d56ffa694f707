//! What a call lost: the keys a schema lists in `required` that a call
//! lacked, reported once per (tool, key) beside the keys it added, and a
//! call that lost all its arguments (`emptied`).

use crate::common;

use common::said::{audit, listed};
use mcp_unknown_keys::ToolCall;
use mcp_unknown_keys::audit::{
    Arguments, Auditor, Call, Catalog, Cause, Coverage, Findings, Outcome, Skip, Verdicts,
};
use serde_json::{Value, json};

/// `fs_read` requires `path`; `offset` is optional.
fn fs_read() -> Value {
    json!({"name": "fs_read", "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}},
        "required": ["path"],
    }})
}

/// `search` requires `query`, and `options.mode` when `options` is given.
fn search() -> Value {
    json!({"name": "search", "inputSchema": {
        "properties": {
            "query": {"type": "string"},
            "options": {"type": "object", "properties": {"mode": {}, "depth": {}}, "required": ["mode"]},
            "filters": {"type": "array", "items": {
                "type": "object", "properties": {"field": {}, "value": {}}, "required": ["field"],
            }},
        },
        "required": ["query"],
    }})
}

/// `echo` requires nothing.
fn echo() -> Value {
    json!({"name": "echo", "inputSchema": {"properties": {"text": {}}}})
}

/// The required keys a call lacked (said before or not) and whether it was
/// emptied; panics when the call was not audited.
fn missing(auditor: &Auditor, tool: &str, arguments: &str) -> (Vec<String>, bool) {
    match audit(auditor, tool, arguments) {
        Outcome::Audited {
            missing_required,
            emptied,
            ..
        } => (missing_required, emptied),
        Outcome::Skipped(skip) => panic!("{tool} {arguments} was not audited: {skip}"),
    }
}

#[test]
fn a_call_without_a_required_key_warns_with_only_that() {
    let (auditor, said) = listed(&[fs_read()]);
    audit(&auditor, "fs_read", r#"{"offset":12}"#);
    let warnings = said.warnings.lock().unwrap();
    let [warning] = &warnings[..] else {
        panic!("one warning expected: {warnings:?}");
    };
    assert!(warning.unknown_keys.is_empty() && warning.unknown_paths.is_empty());
    assert_eq!(warning.missing_required, ["path"]);
    assert_eq!(warning.missing_cause, Some(Cause::MissingRequired));
    // Not the diagnosis's `missing_keys`: no undeclared key pointed at it.
    assert!(warning.missing_keys.is_empty());
    assert_eq!(
        warning.to_string(),
        "fs_read was called without required key(s) path (missing_required); it declares offset, path"
    );
    assert_eq!(
        warning.to_json_line(),
        r#"{"tool":"fs_read","unknown_keys":[],"declared_keys":["offset","path"],"id":"","hints":[],"missing_keys":[],"unknown_paths":[],"missing_required":["path"],"missing_cause":"missing_required"}"#
    );
}

#[test]
fn each_tool_and_missing_key_is_said_once_whatever_else_the_call_carries() {
    let (auditor, said) = listed(&[fs_read()]);
    audit(&auditor, "fs_read", r#"{"offset":1}"#);
    audit(&auditor, "fs_read", r#"{"offset":2}"#);
    audit(&auditor, "fs_read", r#"{"offset":3,"ffset":4}"#);
    let warnings = said.warnings.lock().unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(warnings[0].missing_required, ["path"]);
    // The second says the new undeclared key only; the outcome still
    // counts the missing one.
    assert_eq!(warnings[1].unknown_keys, ["ffset"]);
    assert!(warnings[1].missing_required.is_empty() && warnings[1].missing_cause.is_none());
    assert_eq!(
        missing(&auditor, "fs_read", r#"{"offset":5}"#),
        (vec!["path".to_owned()], false)
    );
}

#[test]
fn a_call_with_every_required_key_says_nothing_and_allow_does_not_excuse_a_missing_one() {
    let (auditor, said) = listed(&[fs_read()]);
    assert_eq!(
        missing(&auditor, "fs_read", r#"{"path":"a","path":"b"}"#).0,
        Vec::<String>::new()
    );
    let tolerant = Auditor::new().with_sink(()).allow("path");
    let catalog = Catalog::from_mcp_tools(&[fs_read()]);
    let call = Call::new("fs_read", Arguments::Json(r#"{"offset":1}"#));
    assert_eq!(
        tolerant.audit(&catalog, call).warning().unwrap().missing_required,
        ["path"]
    );
    assert!(said.warnings.lock().unwrap().is_empty());
}

#[test]
fn a_tool_that_requires_nothing_never_warns_for_it() {
    let (auditor, said) = listed(&[echo()]);
    assert_eq!(missing(&auditor, "echo", "{}"), (vec![], false));
    assert!(matches!(
        audit(&auditor, "echo", ""),
        Outcome::Skipped(Skip::UnreadableArguments)
    ));
    assert!(said.warnings.lock().unwrap().is_empty());
}

#[test]
fn nested_required_keys_are_paths_once_per_call_and_items_share_one() {
    let (auditor, said) = listed(&[search()]);
    let (lost, emptied) = missing(
        &auditor,
        "search",
        r#"{"query":"q","options":{"depth":1},"filters":[{"value":1},{"value":2},{"field":"a"}]}"#,
    );
    assert_eq!(lost, ["filters[].field", "options.mode"]);
    assert!(!emptied);
    // An optional object not sent loses none of its keys.
    assert_eq!(
        missing(&auditor, "search", r#"{"query":"q"}"#).0,
        Vec::<String>::new()
    );
    // A required top-level key beside nested ones.
    assert_eq!(
        missing(&auditor, "search", r#"{"options":{}}"#).0,
        ["options.mode", "query"]
    );
    let warnings = said.warnings.lock().unwrap();
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[1].missing_required, ["query"]);
}

#[test]
fn top_level_only_checks_the_top_level_keys_only() {
    let auditor = Auditor::new().with_sink(()).top_level_only(true);
    let catalog = Catalog::from_mcp_tools(&[search()]);
    let call = Call::new("search", Arguments::Json(r#"{"options":{}}"#));
    assert_eq!(
        auditor.audit(&catalog, call).warning().unwrap().missing_required,
        ["query"]
    );
}

#[test]
fn a_call_that_lost_all_its_arguments_is_emptied() {
    let (auditor, said) = listed(&[fs_read(), search()]);
    assert_eq!(
        missing(&auditor, "fs_read", "{}"),
        (vec!["path".to_owned()], true)
    );
    // No arguments at all, as text: empty, whitespace or `null`.
    for text in ["", "  \n", "null"] {
        assert_eq!(
            missing(&auditor, "search", text),
            (vec!["query".to_owned()], true),
            "{text:?}"
        );
    }
    // Text that is not an object is still the provider's to report.
    for text in ["[]", "{\"path\":", "12"] {
        assert!(matches!(
            audit(&auditor, "fs_read", text),
            Outcome::Skipped(Skip::UnreadableArguments)
        ));
    }
    let warnings = said.warnings.lock().unwrap();
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[0].missing_cause, Some(Cause::Emptied));
    assert_eq!(
        warnings[0].to_string(),
        "fs_read was called without required key(s) path (emptied); it declares offset, path"
    );
}

#[test]
fn an_openai_call_with_no_arguments_member_is_emptied() {
    let auditor = Auditor::new().with_sink(());
    auditor.replace_catalog(Catalog::from_mcp_tools(&[fs_read()]));
    let calls: Vec<ToolCall> = [
        json!({"id": "1", "function": {"name": "fs_read"}}),
        json!({"id": "2", "function": {"name": "fs_read", "arguments": null}}),
    ]
    .into_iter()
    .map(ToolCall::from)
    .collect();
    let mut coverage = Coverage::default();
    let warnings = auditor.audit_batch_counted(&calls, &mut coverage);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].missing_cause, Some(Cause::Emptied));
    assert_eq!(warnings[0].id, "1");
    assert_eq!(coverage.audited, 2);
}

#[test]
fn check_required_off_is_the_specification_s_first_behaviour() {
    let auditor = Auditor::new().with_sink(()).check_required(false);
    let catalog = Catalog::from_mcp_tools(&[fs_read(), search()]);
    let outcome = |text| auditor.audit(&catalog, Call::new("search", Arguments::Json(text)));
    assert!(matches!(outcome(""), Outcome::Skipped(Skip::UnreadableArguments)));
    assert!(matches!(
        outcome(r#"{"options":{}}"#),
        Outcome::Audited { ref missing_required, warning: None, .. } if missing_required.is_empty()
    ));
    assert!(
        auditor
            .claim_logged_missing("search", &["query".to_owned()])
            .is_empty()
    );
}

#[test]
fn a_schema_requiring_more_than_sixty_four_keys_is_read_whole() {
    let keys: Vec<String> = (0..100).map(|i| format!("k{i:03}")).collect();
    let properties: serde_json::Map<String, Value> = keys.iter().map(|k| (k.clone(), json!({}))).collect();
    let tool = json!({"name": "wide", "inputSchema": {"properties": properties, "required": keys}});
    let (auditor, _) = listed(&[tool]);
    let all_but: serde_json::Map<String, Value> = keys
        .iter()
        .filter(|k| !matches!(k.as_str(), "k003" | "k070" | "k099"))
        .map(|k| (k.clone(), json!(1)))
        .collect();
    let text = Value::Object(all_but).to_string();
    assert_eq!(missing(&auditor, "wide", &text).0, ["k003", "k070", "k099"]);
}

#[test]
fn findings_count_missing_pairs_with_their_cause_and_verdicts_await_them() {
    let auditor = Auditor::new().with_sink(());
    let catalog = Catalog::from_mcp_tools(&[fs_read()]);
    let mut findings = Findings::default();
    let mut verdicts: Verdicts<String> = Verdicts::default();
    for (id, text) in [("1", "{}"), ("2", r#"{"offset":1}"#), ("3", r#"{"path":"a"}"#)] {
        let id_value = json!(id);
        let call = Call::new("fs_read", Arguments::Json(text)).with_id(&id_value);
        let outcome = auditor.audit(&catalog, call);
        findings.record(&call, &outcome);
        assert!(verdicts.call(id.to_owned(), &call, &outcome).is_empty());
    }
    let found: Vec<_> = findings.iter().collect();
    assert_eq!(found.len(), 1);
    assert!(found[0].missing);
    assert_eq!(
        (found[0].key, found[0].calls, found[0].first_id),
        ("path", 2, "1")
    );
    assert_eq!(found[0].cause, Some(Cause::Emptied));
    let summary = serde_json::to_value(&findings).unwrap();
    assert_eq!(summary[0]["missing_required"]["path"]["calls"], 2);
    // The two calls that lacked `path` await their answers; the third not.
    let judged = verdicts.finish();
    assert_eq!(judged.len(), 2);
    assert_eq!(judged[0].missing_required, ["path"]);
    assert!(
        judged[0]
            .to_json_line()
            .ends_with(r#""missing_required":["path"]}"#)
    );
}

/// A tool of `n` properties `k0`…, requiring those named.
fn wide(n: usize, required: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        (0..n).map(|i| (format!("k{i:02}"), json!({}))).collect();
    json!({"name": "wide", "inputSchema": {"properties": properties, "required": required}})
}

#[test]
fn tools_of_up_to_64_keys_and_of_more_agree_on_what_a_call_lacked() {
    // Up to 64 keys a call's keys are bits of their indices; past 64, each
    // is looked up among the required ones. Both say the same.
    for n in [1, 2, 63, 64, 65, 130] {
        let last = format!("k{:02}", n - 1);
        let required = ["k00", last.as_str()];
        let (auditor, _) = listed(&[wide(n, &required)]);
        let missing = |arguments: &str| match audit(&auditor, "wide", arguments) {
            Outcome::Audited {
                missing_required,
                emptied,
                ..
            } => (missing_required, emptied),
            other => panic!("{n}: {other:?}"),
        };
        let both = format!(r#"{{"k00":1,"{last}":2}}"#);
        assert_eq!(missing(&both), (vec![], false), "{n}");
        let (lacked, emptied) = missing(r#"{"k00":1,"undeclared":2}"#);
        assert_eq!(lacked, if n == 1 { vec![] } else { vec![last.clone()] }, "{n}");
        assert!(!emptied);
        let (lacked, emptied) = missing(&format!(r#"{{"{last}":2}}"#));
        assert_eq!(
            lacked,
            if n == 1 { vec![] } else { vec!["k00".to_owned()] },
            "{n}"
        );
        assert!(!emptied);
        let (lacked, emptied) = missing("{}");
        let mut all = vec!["k00".to_owned(), last.clone()];
        all.dedup();
        assert_eq!((lacked, emptied), (all, true), "{n}");
        // A tolerated key is a key the call carried: not emptied.
        let (_, emptied) = missing(r#"{"reason":"r"}"#);
        assert!(!emptied, "{n}");
    }
}
