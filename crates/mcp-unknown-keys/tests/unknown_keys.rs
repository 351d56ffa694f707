//! The `UnknownKeys` layer, rule by rule: DESIGN.md "The audit rules" and
//! "Transparency of the provider layer".

use crate::common;

use std::sync::{Arc, Mutex};

use common::{Recorder, block_on, declares, fs_catalogue, recording_auditor};
use mcp_unknown_keys::audit::{Auditor, Skip, Warning};
use mcp_unknown_keys::{Provider, ToolCall, ToolDeclaration, UnknownKeys, UnknownKeysLayer};
use serde_json::{Value, json};
use tower_layer::Layer;

/// The layer over a recorder, and the warnings it delivered.
struct Harness {
    layer: UnknownKeys<Recorder>,
    warnings: Arc<Mutex<Vec<Warning>>>,
}

impl Harness {
    fn over(recorder: Recorder) -> Harness {
        let (auditor, warnings) = recording_auditor();
        Harness {
            layer: UnknownKeys::with_auditor(recorder, auditor),
            warnings,
        }
    }

    /// The layer over the specification's catalogue, already listed.
    fn listed() -> Harness {
        let harness = Harness::over(Recorder::listing(fs_catalogue()));
        harness.list();
        harness
    }

    fn list(&self) {
        block_on(self.layer.tools_for_llm()).expect("the listing succeeds");
    }

    fn call(&self, calls: Vec<ToolCall>) {
        block_on(self.layer.execute_tool_calls(calls)).expect("the batch succeeds");
    }

    fn warnings(&self) -> Vec<Warning> {
        self.warnings.lock().unwrap().clone()
    }

    /// Every warning's unknown keys, one list per warning.
    fn said(&self) -> Vec<Vec<String>> {
        self.warnings().into_iter().map(|w| w.unknown_keys).collect()
    }
}

fn read(id: &str, arguments: impl Into<Value>) -> ToolCall {
    ToolCall::new(id, "fs_read", arguments)
}

// --- What is audited -------------------------------------------------------

#[test]
fn the_specification_incident_is_reported_once_with_sorted_keys() {
    let harness = Harness::listed();
    harness.call(vec![read(
        "call_1",
        r#"{"path":"src/app.rs","ffset":12,"the rest":"…"}"#,
    )]);

    let warnings = harness.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].tool, "fs_read");
    assert_eq!(warnings[0].unknown_keys, ["ffset", "the rest"]);
    assert_eq!(warnings[0].declared_keys, ["offset", "path"]);
    assert_eq!(warnings[0].id, "call_1");
}

#[test]
fn nothing_is_audited_before_the_first_listing() {
    let harness = Harness::over(Recorder::listing(fs_catalogue()));
    harness.call(vec![read("c", r#"{"ffset":1}"#)]);
    assert!(harness.warnings().is_empty());
    assert_eq!(
        harness.layer.get_ref().received().len(),
        1,
        "the call is still forwarded"
    );
}

#[test]
fn a_tool_missing_from_the_listing_is_not_audited() {
    let harness = Harness::listed();
    harness.call(vec![ToolCall::new("c", "fs_delete", r#"{"anything":1}"#)]);
    assert!(harness.warnings().is_empty());
}

#[test]
fn every_call_is_counted_audited_or_unaudited_with_its_reason() {
    let harness = Harness::over(Recorder::listing(fs_catalogue()));
    harness.call(vec![read("before", r#"{"path":"a"}"#)]);
    harness.list();
    harness.call(vec![
        read("ok", r#"{"path":"a"}"#),
        ToolCall::new("c", "fs_delete", r#"{"path":"a"}"#),
        read("bad", "not json"),
    ]);
    let coverage = harness.layer.coverage();
    assert_eq!((coverage.calls, coverage.audited), (4, 1));
    let reasons: Vec<(&str, u64)> = coverage.unaudited.iter().map(|(s, n)| (s.as_str(), *n)).collect();
    assert_eq!(
        reasons,
        [
            ("no_catalogue", 1),
            ("unlisted_tool", 1),
            ("unreadable_arguments", 1)
        ]
    );
    assert_eq!(
        coverage.unlisted_tools.keys().collect::<Vec<_>>(),
        ["fs_delete", "fs_read"]
    );
}

#[test]
fn a_call_that_names_no_tool_is_counted_as_an_unlisted_tool_named_empty() {
    let harness = Harness::listed();
    harness.call(vec![
        ToolCall::from(json!({"id": "a", "function": {"arguments": r#"{"path":"a"}"#}})),
        ToolCall::from(json!({"id": "b", "function": {"name": 5, "arguments": "{}"}})),
    ]);
    let coverage = harness.layer.coverage();
    assert_eq!((coverage.calls, coverage.audited), (2, 0));
    assert_eq!(coverage.unaudited[&Skip::UnlistedTool], 2);
    assert_eq!(coverage.unlisted_tools[""], 2);
    assert!(harness.warnings().is_empty());
}

#[test]
fn a_tool_that_declares_no_properties_is_listed_but_not_audited() {
    let harness = Harness::over(Recorder::listing(vec![
        ToolDeclaration::new("no_properties", None, json!({"type": "object"})),
        ToolDeclaration::new(
            "empty_properties",
            None,
            json!({"type": "object", "properties": {}}),
        ),
    ]));
    harness.list();
    harness.call(vec![
        ToolCall::new("a", "no_properties", r#"{"x":1}"#),
        ToolCall::new("b", "empty_properties", r#"{"x":1}"#),
    ]);
    assert!(
        harness.warnings().is_empty(),
        "a tool that declares nothing is not audited"
    );
    assert_eq!(
        harness.layer.coverage().unaudited[&Skip::DeclaresNothing],
        2,
        "its calls are unaudited, declaring nothing"
    );
    assert_eq!(
        harness.layer.audited_tools(),
        ["empty_properties", "no_properties"],
        "but both were read from an object schema: the specification's audited-tools lists them"
    );
    assert_eq!(
        harness.layer.listed_tools(),
        ["empty_properties", "no_properties"]
    );
}

#[test]
fn a_tool_whose_schema_cannot_be_read_is_listed_declaring_nothing() {
    let harness = Harness::over(Recorder::listing(vec![
        ToolDeclaration::new("string_schema", None, json!("object")),
        ToolDeclaration::new("array_properties", None, json!({"properties": ["path"]})),
        ToolDeclaration::from(json!({"type": "function", "function": {"name": "no_parameters"}})),
        declares("fs_read", &["path"]),
    ]));
    harness.list();
    harness.call(vec![
        ToolCall::new("a", "string_schema", r#"{"x":1}"#),
        ToolCall::new("b", "array_properties", r#"{"x":1}"#),
        ToolCall::new("c", "no_parameters", r#"{"x":1}"#),
    ]);
    assert!(harness.warnings().is_empty());
    let coverage = harness.layer.coverage();
    assert_eq!(coverage.unaudited[&Skip::DeclaresNothing], 3);
    assert!(coverage.unlisted_tools.is_empty(), "they are listed");
    assert_eq!(harness.layer.audited_tools(), ["fs_read"]);
    assert_eq!(
        harness.layer.listed_tools(),
        ["array_properties", "fs_read", "no_parameters", "string_schema"]
    );
}

#[test]
fn audited_tools_is_the_set_the_last_listing_left_behind() {
    // The specification's `audited-tools` (its reference tests UK-3 and
    // UK-7): every declaration whose `parameters` is an object with
    // `properties` absent, null or an object, sorted; declaring nothing
    // keeps a tool in the set, never audited.
    let harness = Harness::over(Recorder::listing(vec![
        declares("fs_read", &["path"]),
        ToolDeclaration::new("fs_ping", None, json!({"type": "object"})),
        ToolDeclaration::new("fs_noop", None, json!({"type": "object", "properties": {}})),
        ToolDeclaration::new("null", None, json!({"type": "object", "properties": null})),
        ToolDeclaration::new(
            "closed",
            None,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
    ]));
    harness.list();
    assert_eq!(
        harness.layer.audited_tools(),
        ["closed", "fs_noop", "fs_ping", "fs_read", "null"]
    );
    harness.call(vec![
        ToolCall::new("1", "fs_ping", r#"{"x":1}"#),
        ToolCall::new("2", "fs_noop", r#"{"x":1}"#),
        ToolCall::new("3", "null", r#"{"x":1}"#),
    ]);
    assert!(harness.warnings().is_empty(), "listed, never audited");
    assert_eq!(harness.layer.coverage().unaudited[&Skip::DeclaresNothing], 3);
}

#[test]
fn audited_tools_leaves_out_declarations_it_cannot_read() {
    // Not an object, `function` not an object, `name` not a string,
    // `parameters` absent or not an object, `properties` not an object.
    let harness = Harness::over(Recorder::listing(vec![
        declares("fs_read", &["path"]),
        ToolDeclaration::from(json!("not even an object")),
        ToolDeclaration::from(json!({"weird": 1})),
        ToolDeclaration::from(json!({"type": "function", "function": "fs_string"})),
        ToolDeclaration::from(json!({"type": "function", "function": {"name": 7, "parameters": {}}})),
        ToolDeclaration::from(json!({"type": "function", "function": {"name": "no_parameters"}})),
        ToolDeclaration::new("string_parameters", None, json!("object")),
        ToolDeclaration::new("array_parameters", None, json!([{"properties": {}}])),
        ToolDeclaration::new("nope", None, json!({"type": "object", "properties": "nope"})),
        ToolDeclaration::new("array_properties", None, json!({"properties": ["path"]})),
    ]));
    harness.list();
    assert_eq!(harness.layer.audited_tools(), ["fs_read"]);
    assert_eq!(
        harness.layer.listed_tools(),
        [
            "array_parameters",
            "array_properties",
            "fs_read",
            "no_parameters",
            "nope",
            "string_parameters"
        ],
        "listed, so that their calls count as declaring nothing rather than unlisted"
    );
}

#[test]
fn audited_tools_follows_the_last_declaration_of_a_repeated_name() {
    let harness = Harness::over(Recorder::listing(vec![
        declares("readable_then_not", &["a"]),
        ToolDeclaration::new("readable_then_not", None, json!("unreadable")),
        ToolDeclaration::new("not_then_readable", None, json!({"properties": "nope"})),
        ToolDeclaration::new("not_then_readable", None, json!({"type": "object"})),
    ]));
    harness.list();
    assert_eq!(harness.layer.audited_tools(), ["not_then_readable"]);
}

#[test]
fn when_a_listing_repeats_a_name_the_last_declaration_wins() {
    let harness = Harness::over(Recorder::listing(vec![
        declares("fs_read", &["path"]),
        declares("fs_read", &["path", "offset"]),
    ]));
    harness.list();
    harness.call(vec![read("c", r#"{"path":"a","offset":1}"#)]);
    assert!(harness.warnings().is_empty());

    let unreadable_last = Harness::over(Recorder::listing(vec![
        declares("fs_read", &["path"]),
        ToolDeclaration::new("fs_read", None, json!(null)),
    ]));
    unreadable_last.list();
    let catalog = unreadable_last.layer.auditor().catalog();
    assert!(!catalog.get("fs_read").unwrap().is_audited());
}

#[test]
fn arguments_that_are_not_an_object_are_the_providers_to_report() {
    let harness = Harness::listed();
    let quiet = [
        json!(""),
        json!("   \n"),
        json!("{\"ffset\":"),
        json!("not json"),
        json!("[\"ffset\"]"),
        json!("\"{\\\"ffset\\\":1}\""),
        json!("12"),
        json!(null),
        json!(["ffset"]),
        json!(12),
    ];
    let calls: Vec<ToolCall> = quiet
        .iter()
        .map(|arguments| read("c", arguments.clone()))
        .collect();
    let absent = ToolCall::from(json!({"id": "c", "function": {"name": "fs_read"}}));
    harness.call(calls.into_iter().chain([absent]).collect());
    assert!(harness.warnings().is_empty());
}

#[test]
fn object_arguments_are_audited_like_strings() {
    let harness = Harness::listed();
    harness.call(vec![read("c", json!({"path": "a", "ffset": 12}))]);
    assert_eq!(harness.said(), [["ffset"]]);
}

#[test]
fn escaped_keys_are_compared_decoded() {
    let harness = Harness::listed();
    harness.call(vec![read("c", r#"{"pa\u0074h":"a","\u00f6ffset":1}"#)]);
    assert_eq!(harness.said(), [["öffset"]]);
}

#[test]
fn reason_is_tolerated_but_reasons_is_not() {
    let harness = Harness::listed();
    harness.call(vec![read("c", r#"{"path":"a","reason":"to see the config"}"#)]);
    assert!(harness.warnings().is_empty());
    harness.call(vec![read("d", r#"{"path":"a","reasons":"plural"}"#)]);
    assert_eq!(harness.said(), [["reasons"]]);
}

#[test]
fn allowed_keys_are_tolerated_on_every_tool() {
    let (auditor, warnings) = recording_auditor();
    let layer = UnknownKeys::with_auditor(Recorder::listing(fs_catalogue()), auditor.allow("toolCallId"));
    block_on(layer.tools_for_llm()).unwrap();
    block_on(layer.execute_tool_calls(vec![
        read("a", r#"{"path":"x","toolCallId":"t1"}"#),
        ToolCall::new(
            "b",
            "task",
            r#"{"prompt":"x","toolCallId":"t2","_auth_token":"x"}"#,
        ),
    ]))
    .unwrap();
    let said: Vec<_> = warnings
        .lock()
        .unwrap()
        .iter()
        .map(|w| w.unknown_keys.clone())
        .collect();
    assert_eq!(said, [["_auth_token"]]);
}

// --- Said once -------------------------------------------------------------

#[test]
fn a_pair_is_said_once_but_the_same_key_on_another_tool_is_new() {
    let harness = Harness::listed();
    harness.call(vec![read("1", r#"{"path":"a","recursive":true}"#)]);
    harness.call(vec![read("2", r#"{"path":"b","recursive":true}"#)]);
    harness.call(vec![ToolCall::new(
        "3",
        "fs_write",
        r#"{"path":"b","recursive":true}"#,
    )]);
    let warnings = harness.warnings();
    assert_eq!(warnings.len(), 2);
    assert_eq!(
        (warnings[0].tool.as_str(), warnings[0].id.as_str()),
        ("fs_read", "1")
    );
    assert_eq!(
        (warnings[1].tool.as_str(), warnings[1].id.as_str()),
        ("fs_write", "3")
    );
}

#[test]
fn a_call_with_one_old_and_one_new_key_reports_only_the_new_one() {
    let harness = Harness::listed();
    harness.call(vec![read("1", r#"{"ffset":1}"#)]);
    harness.call(vec![read("2", r#"{"ffset":1,"lenght":2}"#)]);
    assert_eq!(harness.said(), [vec!["ffset"], vec!["lenght"]]);
}

#[test]
fn the_same_pair_twice_in_one_batch_is_said_once_with_the_first_calls_id() {
    let harness = Harness::listed();
    harness.call(vec![
        read("first", r#"{"ffset":1}"#),
        read("second", r#"{"ffset":2}"#),
    ]);
    let warnings = harness.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].id, "first");
}

#[test]
fn a_key_repeated_in_one_call_is_listed_once() {
    let harness = Harness::listed();
    harness.call(vec![read("c", r#"{"ffset":1,"ffset":2,"a":0}"#)]);
    assert_eq!(harness.said(), [["a", "ffset"]]);
}

#[test]
fn a_refresh_that_declares_a_key_silences_it_and_forgets_nothing() {
    let harness = Harness::listed();
    harness.call(vec![read("1", r#"{"path":"a","encoding":"utf8"}"#)]);
    assert_eq!(harness.said(), [["encoding"]]);

    harness
        .layer
        .get_ref()
        .set_listing(Ok(vec![declares("fs_read", &["path", "offset", "encoding"])]));
    harness.list();
    harness.call(vec![read("2", r#"{"path":"a","encoding":"utf8","mode":"r"}"#)]);
    assert_eq!(harness.said(), [vec!["encoding"], vec!["mode"]]);
    assert_eq!(
        harness.warnings()[1].declared_keys,
        ["encoding", "offset", "path"]
    );

    // Undeclared again after another refresh: still said, never repeated.
    harness.layer.get_ref().set_listing(Ok(fs_catalogue()));
    harness.list();
    harness.call(vec![read("3", r#"{"path":"a","encoding":"utf8"}"#)]);
    assert_eq!(harness.warnings().len(), 2);
}

#[test]
fn keys_are_sorted_by_code_point() {
    let harness = Harness::listed();
    harness.call(vec![read("c", r#"{"éa":1,"Zed":1,"b":1,"_x":1,"A":1}"#)]);
    assert_eq!(harness.said(), [["A", "Zed", "_x", "b", "éa"]]);
}

#[test]
fn the_id_is_text_or_empty() {
    let harness = Harness::listed();
    harness.call(vec![
        ToolCall::from(json!({"id": 42, "function": {"name": "fs_read", "arguments": "{\"a\":1}"}})),
        ToolCall::from(json!({"function": {"name": "fs_read", "arguments": "{\"b\":1}"}})),
    ]);
    let ids: Vec<String> = harness.warnings().into_iter().map(|w| w.id).collect();
    assert_eq!(ids, ["42", ""]);
}

// --- Delivery --------------------------------------------------------------

#[test]
fn warnings_are_delivered_in_call_order_before_the_batch_is_forwarded() {
    let recorder = Recorder::listing(fs_catalogue());
    let events = recorder.events.clone();
    let sink_events = events.clone();
    let auditor = Auditor::new()
        .with_sink(move |w: &Warning| sink_events.lock().unwrap().push(format!("warn {}", w.id)));
    let layer = UnknownKeys::with_auditor(recorder, auditor);
    block_on(layer.tools_for_llm()).unwrap();
    block_on(layer.execute_tool_calls(vec![
        read("1", r#"{"a":1}"#),
        read("2", r#"{"path":"x"}"#),
        ToolCall::new("3", "task", r#"{"b":1}"#),
    ]))
    .unwrap();
    assert_eq!(*events.lock().unwrap(), ["warn 1", "warn 3", "forward 3"]);
}

#[test]
fn a_panicking_sink_is_swallowed_and_the_next_warning_still_delivered() {
    let delivered = Arc::new(Mutex::new(Vec::new()));
    let record = delivered.clone();
    let auditor = Auditor::new().with_sink(move |w: &Warning| {
        record.lock().unwrap().push(w.id.clone());
        if w.id == "1" {
            panic!("broken host bookkeeping");
        }
    });
    let layer = UnknownKeys::with_auditor(Recorder::listing(fs_catalogue()), auditor);
    block_on(layer.tools_for_llm()).unwrap();
    let results = block_on(layer.execute_tool_calls(vec![read("1", r#"{"a":1}"#), read("2", r#"{"b":1}"#)]))
        .expect("the batch is unaffected by the sink");
    assert_eq!(results.len(), 2);
    assert_eq!(*delivered.lock().unwrap(), ["1", "2"]);
}

#[test]
fn a_sink_may_call_back_into_the_layer_because_no_lock_is_held() {
    let layer: Arc<Mutex<Option<Arc<UnknownKeys<Recorder>>>>> = Arc::default();
    let reentry = layer.clone();
    let auditor = Auditor::new().with_sink(move |_: &Warning| {
        let layer = reentry.lock().unwrap().clone().unwrap();
        assert_eq!(layer.audited_tools().len(), 3);
        // Auditing again from inside the sink: claims the said-set again.
        let nested = layer.auditor().audit_batch(&[read("n", r#"{"nested":1}"#)]);
        assert_eq!(nested.len(), 1);
    });
    let audited = Arc::new(UnknownKeys::with_auditor(
        Recorder::listing(fs_catalogue()),
        auditor,
    ));
    *layer.lock().unwrap() = Some(audited.clone());
    block_on(audited.tools_for_llm()).unwrap();
    block_on(audited.execute_tool_calls(vec![read("1", r#"{"a":1}"#)])).unwrap();
}

// --- Transparency ----------------------------------------------------------

#[test]
fn the_batch_is_forwarded_as_the_very_same_allocation_unmodified() {
    let harness = Harness::listed();
    let calls = vec![
        read("1", r#"{"path":"a","ffset":1}"#),
        ToolCall::from(
            json!({"id": "2", "index": 0, "type": "function", "x-vendor": {"k": 1},
            "function": {"name": "fs_read", "arguments": {"path": "b"}, "extra": true}}),
        ),
    ];
    let sent = calls.clone();
    let buffer = calls.as_ptr() as usize;
    harness.call(calls);
    let batches = harness.layer.get_ref().batches.lock().unwrap();
    assert_eq!(batches[0].buffer, buffer);
    assert_eq!(batches[0].calls, sent);
}

#[test]
fn an_empty_batch_is_forwarded_too() {
    let harness = Harness::listed();
    harness.call(Vec::new());
    assert_eq!(harness.layer.get_ref().received(), [Vec::<ToolCall>::new()]);
}

#[test]
fn exotic_calls_pass_through_unaudited() {
    let harness = Harness::listed();
    let exotic: Vec<ToolCall> = [
        json!("a string"),
        json!(null),
        json!([1, 2]),
        json!({"id": "x"}),
        json!({"id": "y", "function": "fs_read"}),
        json!({"id": "z", "function": {"name": 12, "arguments": "{\"q\":1}"}}),
    ]
    .into_iter()
    .map(ToolCall::from)
    .collect();
    harness.call(exotic.clone());
    assert!(harness.warnings().is_empty());
    assert_eq!(harness.layer.get_ref().received(), [exotic]);
}

#[test]
fn an_inner_error_is_returned_as_it_came() {
    let harness = Harness::listed();
    *harness.layer.get_ref().fail_batches.lock().unwrap() = Some("server gone".into());
    let error = block_on(
        harness
            .layer
            .execute_tool_calls(vec![read("1", r#"{"ffset":1}"#)]),
    )
    .unwrap_err();
    assert_eq!(error.to_string(), "server gone");
    assert_eq!(
        harness.said(),
        [["ffset"]],
        "the audit still ran before the forward"
    );
}

#[test]
fn a_failed_listing_is_returned_and_keeps_the_previous_catalogue() {
    let harness = Harness::listed();
    harness.layer.get_ref().set_listing(Err("cannot list".into()));
    let error = block_on(harness.layer.tools_for_llm()).unwrap_err();
    assert_eq!(error.to_string(), "cannot list");
    assert_eq!(harness.layer.audited_tools(), ["fs_read", "fs_write", "task"]);
    harness.call(vec![read("1", r#"{"ffset":1}"#)]);
    assert_eq!(harness.said(), [["ffset"]]);
}

#[test]
fn the_listing_is_returned_as_it_came() {
    let listing = vec![
        declares("fs_read", &["path"]),
        ToolDeclaration::from(
            json!({"type": "function", "x-vendor": 1, "function": {"name": "odd", "parameters": 5}}),
        ),
    ];
    let harness = Harness::over(Recorder::listing(listing.clone()));
    assert_eq!(block_on(harness.layer.tools_for_llm()).unwrap(), listing);
}

#[test]
fn the_layer_builds_one_auditor_per_stack() {
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let record = warnings.clone();
    let layer = UnknownKeysLayer::new().on_warn(move |w: &Warning| record.lock().unwrap().push(w.clone()));
    let first = layer.layer(Recorder::listing(fs_catalogue()));
    let second = layer.layer(Recorder::listing(fs_catalogue()));
    for stack in [&first, &second] {
        block_on(stack.tools_for_llm()).unwrap();
        block_on(stack.execute_tool_calls(vec![read("1", r#"{"ffset":1}"#)])).unwrap();
    }
    assert_eq!(
        warnings.lock().unwrap().len(),
        2,
        "said once per stack, not across stacks"
    );
}

#[test]
fn the_layer_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<UnknownKeys<Recorder>>();
    assert_send_sync::<UnknownKeysLayer>();
    assert_send_sync::<Auditor>();
}
