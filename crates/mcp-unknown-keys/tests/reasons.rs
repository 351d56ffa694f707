//! The `Reasons` layer, rule by rule, over an in-process provider.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{Answering, Recorder, Toolkit, block_on, declaration, declares, files, recording_auditor};
use mcp_unknown_keys::reasons::{DEFAULT_DESCRIPTION, REASON_PARAMETER, Reason};
use mcp_unknown_keys::{Provider, Reasons, ReasonsLayer, ToolCall, ToolDeclaration, UnknownKeys};
use serde_json::{Value, json};
use tower_layer::Layer;

fn schema(declaration: &ToolDeclaration) -> &Value {
    declaration.parameters().unwrap()
}

/// Reasons over the example server's tools, already listed.
async fn listed() -> (Reasons<Toolkit>, common::Received) {
    let (toolkit, received) = Toolkit::files();
    let reasons = Reasons::new(toolkit);
    reasons.tools_for_llm().await.unwrap();
    (reasons, received)
}

#[test]
fn the_published_parameter_is_one_the_auditor_tolerates_without_a_reasons_layer() {
    let (auditor, warnings) = recording_auditor();
    let layer = UnknownKeys::with_auditor(Recorder::listing(vec![declares("fs_read", &["path"])]), auditor);
    block_on(layer.tools_for_llm()).unwrap();
    let arguments = json!({"path": "a", REASON_PARAMETER: "why", "ffset": 1}).to_string();
    block_on(layer.execute_tool_calls(vec![ToolCall::new("c1", "fs_read", arguments)])).unwrap();

    let warnings = warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0].unknown_keys,
        ["ffset"],
        "the reason is tolerated, the typo is not"
    );
}

#[tokio::test]
async fn every_readable_declaration_gets_an_optional_reason_string() {
    let (toolkit, _) = Toolkit::files();
    let tools = Reasons::new(toolkit).tools_for_llm().await.unwrap();

    assert_eq!(tools.len(), 4);
    for (tool, original) in tools.iter().zip(files()) {
        let reason = &schema(tool)["properties"][REASON_PARAMETER];
        assert_eq!(reason["type"], "string", "{:?}", tool.name());
        assert_eq!(reason["description"], DEFAULT_DESCRIPTION);
        // Optional: `required` is the tool's own, untouched.
        assert_eq!(schema(tool)["required"], schema(&original)["required"]);
        // Everything else is as the tool declared it.
        let mut without_reason = tool.clone();
        without_reason.function_mut().unwrap()["parameters"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove(REASON_PARAMETER);
        assert_eq!(without_reason, original);
    }
}

#[tokio::test]
async fn a_schema_without_properties_gets_them() {
    let bare = ToolDeclaration::new("now", None, json!({"type": "object"}));
    let untyped = ToolDeclaration::new("echo", None, json!({}));
    let (toolkit, _) = Toolkit::new(vec![bare, untyped]);
    let reasons = Reasons::new(toolkit);

    let tools = reasons.tools_for_llm().await.unwrap();
    for tool in &tools {
        assert_eq!(schema(tool)["properties"].as_object().unwrap().len(), 1);
        assert!(schema(tool)["properties"][REASON_PARAMETER].is_object());
    }
    assert_eq!(reasons.augmented_tools(), ["echo", "now"]);
}

#[tokio::test]
async fn declarations_it_cannot_read_or_that_own_a_reason_are_untouched_and_untracked() {
    let declarations: Vec<ToolDeclaration> = vec![
        json!({"type": "function", "function": {"name": "no_schema"}}).into(),
        ToolDeclaration::new("schema_not_object", None, json!("object")),
        ToolDeclaration::new("not_object_typed", None, json!({"type": "string"})),
        ToolDeclaration::new(
            "properties_array",
            None,
            json!({"type": "object", "properties": []}),
        ),
        json!({"type": "function", "function": {"parameters": {"type": "object"}}}).into(),
        json!({"type": "function", "function": "fs_read"}).into(),
        json!("not a declaration").into(),
        declaration("declares_reason", json!({"reason": {"type": "integer"}}), &[]),
        declaration("requires_reason", json!({"path": {}}), &["reason"]),
    ];
    let (toolkit, received) = Toolkit::new(declarations.clone());
    let reasons = Reasons::new(toolkit);

    assert_eq!(reasons.tools_for_llm().await.unwrap(), declarations);
    assert!(reasons.augmented_tools().is_empty());

    // Their calls keep their reason.
    let calls: Vec<ToolCall> = [
        "no_schema",
        "not_object_typed",
        "declares_reason",
        "requires_reason",
    ]
    .into_iter()
    .map(|tool| ToolCall::new("c", tool, r#"{"reason":"because","path":"a"}"#))
    .collect();
    reasons.execute_tool_calls(calls.clone()).await.unwrap();
    assert_eq!(received.calls(), calls);
}

#[tokio::test]
async fn the_inner_providers_declarations_are_never_changed() {
    let (toolkit, _) = Toolkit::files();
    let reasons = Reasons::new(toolkit);

    let first = reasons.tools_for_llm().await.unwrap();
    let second = reasons.tools_for_llm().await.unwrap();

    assert_eq!(reasons.get_ref().declarations, files());
    assert_eq!(first, second, "a second listing adds nothing more");
}

#[tokio::test]
async fn a_listing_that_repeats_a_name_is_decided_by_its_last_declaration() {
    let (toolkit, _) = Toolkit::new(vec![
        declaration("fs_read", json!({"path": {}}), &[]),
        declaration("fs_read", json!({"path": {}, "reason": {}}), &[]),
        declaration("fs_list", json!({"path": {}, "reason": {}}), &[]),
        declaration("fs_list", json!({"path": {}}), &[]),
    ]);
    let reasons = Reasons::new(toolkit);
    reasons.tools_for_llm().await.unwrap();
    assert_eq!(reasons.augmented_tools(), ["fs_list"]);
}

#[tokio::test]
async fn object_arguments_lose_reason_and_stay_an_object() {
    let (reasons, received) = listed().await;
    let calls = vec![
        ToolCall::new(
            "1",
            "fs_read",
            json!({"path": "a.txt", "reason": "to look", "offset": 3}),
        ),
        ToolCall::new("2", "fs_list", json!({"reason": "to see"})),
    ];
    reasons.execute_tool_calls(calls).await.unwrap();

    let received = received.calls();
    assert_eq!(
        received[0].arguments(),
        Some(&json!({"path": "a.txt", "offset": 3}))
    );
    assert_eq!(received[1].arguments(), Some(&json!({})));
}

#[tokio::test]
async fn string_arguments_are_reserialised_without_the_key_and_nothing_else_changes() {
    let (reasons, received) = listed().await;
    let arguments = r#"{ "path" : "a\"b.txt", "reason": "to \u0063heck", "offset": 123456789012345678901234567890, "zeta": [1.50, {"reason": 1}] , "reason": "last" }"#;
    reasons
        .execute_tool_calls(vec![ToolCall::new("1", "fs_read", arguments)])
        .await
        .unwrap();

    // Every reason member goes; the others keep their order and exact text
    // (a number too large for f64 is not rounded, `1.50` is not `1.5`), and
    // a nested `reason` is not the tool's to lose.
    assert_eq!(
        common::arguments_text(&received.calls()[0]),
        r#"{"path":"a\"b.txt","offset":123456789012345678901234567890,"zeta":[1.50, {"reason": 1}]}"#
    );
}

#[tokio::test]
async fn an_escaped_reason_key_is_stripped_too() {
    let (reasons, received) = listed().await;
    reasons
        .execute_tool_calls(vec![ToolCall::new(
            "1",
            "fs_read",
            r#"{"re\u0061son":"r","path":"a"}"#,
        )])
        .await
        .unwrap();
    assert_eq!(common::arguments_text(&received.calls()[0]), r#"{"path":"a"}"#);
}

#[tokio::test]
async fn arguments_without_a_reason_or_not_an_object_pass_untouched() {
    let (reasons, received) = listed().await;
    let calls = vec![
        ToolCall::new("1", "fs_read", r#"{ "path" : "a.txt" }"#),
        ToolCall::new("2", "fs_read", ""),
        ToolCall::new("3", "fs_read", "   "),
        ToolCall::new("4", "fs_read", r#"{"path":"a.txt","reason":"trunc"#),
        ToolCall::new("5", "fs_read", r#"["reason"]"#),
        ToolCall::new("6", "fs_read", r#""reason""#),
        ToolCall::new("7", "fs_read", r#"{"reason":"x"} trailing"#),
        ToolCall::new("8", "fs_read", json!(["reason"])),
        ToolCall::new("9", "fs_read", json!(42)),
        json!({"id": "10", "function": {"name": "fs_read"}}).into(),
        json!({"id": "11", "function": {"name": "fs_read", "arguments": null}}).into(),
    ];
    reasons.execute_tool_calls(calls.clone()).await.unwrap();
    assert_eq!(received.calls(), calls);
}

#[tokio::test]
async fn calls_to_tools_it_did_not_augment_are_forwarded_as_they_came() {
    let (toolkit, received) = Toolkit::new(vec![
        declaration("fs_read", json!({"path": {}}), &[]),
        declaration("own_reason", json!({"reason": {}}), &[]),
    ]);
    let reasons = Reasons::new(toolkit);
    let call = |tool: &str| -> ToolCall {
        json!({
            "id": "c", "type": "function", "index": 0, "x-vendor": {"k": 1},
            "function": {"name": tool, "arguments": r#"{"reason":"r"}"#},
        })
        .into()
    };

    // Before any listing nothing was augmented: nothing is stripped.
    reasons.execute_tool_calls(vec![call("fs_read")]).await.unwrap();
    reasons.tools_for_llm().await.unwrap();
    let batch = vec![
        call("own_reason"),
        call("never_listed"),
        json!("not a call").into(),
    ];
    reasons.execute_tool_calls(batch.clone()).await.unwrap();

    assert_eq!(received.batches(), [vec![call("fs_read")], batch]);
}

#[tokio::test]
async fn stripping_keeps_every_other_member_of_the_call() {
    let (reasons, received) = listed().await;
    let call: ToolCall = json!({
        "id": 7, "type": "function", "index": 2, "x-vendor": true,
        "function": {"name": "fs_read", "arguments": r#"{"reason":"r","path":"a"}"#, "x-extra": 1},
    })
    .into();
    reasons.execute_tool_calls(vec![call]).await.unwrap();

    let expected: ToolCall = json!({
        "id": 7, "type": "function", "index": 2, "x-vendor": true,
        "function": {"name": "fs_read", "arguments": r#"{"path":"a"}"#, "x-extra": 1},
    })
    .into();
    assert_eq!(received.calls(), [expected]);
}

#[tokio::test]
async fn each_stripped_reason_is_handed_over_in_call_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let (toolkit, _) = Toolkit::files();
    let reasons = ReasonsLayer::new()
        .on_reason(move |reason: &Reason| {
            record.lock().unwrap().push((
                reason.tool.to_owned(),
                reason.id.to_owned(),
                reason.reason.to_owned(),
            ));
        })
        .layer(toolkit);
    reasons.tools_for_llm().await.unwrap();

    reasons
        .execute_tool_calls(vec![
            ToolCall::new("a", "fs_read", r#"{"path":"x","reason":"to read x"}"#),
            ToolCall::new("b", "fs_list", r#"{"path":"x"}"#),
            ToolCall::new("c", "fs_write", json!({"reason": {"why": "structured"}})),
            json!({"function": {"name": "fs_task", "arguments": "{\"reason\":\"no id\"}"}}).into(),
        ])
        .await
        .unwrap();

    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("fs_read".into(), "a".into(), "to read x".into()),
            ("fs_write".into(), "c".into(), r#"{"why":"structured"}"#.into()),
            ("fs_task".into(), "".into(), "no id".into()),
        ] as [(String, String, String); 3]
    );
}

#[tokio::test]
async fn a_panicking_callback_changes_nothing() {
    let (toolkit, received) = Toolkit::files();
    let reasons = ReasonsLayer::new()
        .on_reason(|_: &Reason| panic!("host bookkeeping broke"))
        .layer(toolkit);
    reasons.tools_for_llm().await.unwrap();

    let results = reasons
        .execute_tool_calls(vec![ToolCall::new(
            "a",
            "fs_read",
            r#"{"path":"x","reason":"r"}"#,
        )])
        .await
        .unwrap();
    assert!(!results[0].is_error);
    assert_eq!(common::arguments_text(&received.calls()[0]), r#"{"path":"x"}"#);
}

#[tokio::test]
async fn an_inner_failure_becomes_one_error_result_per_call() {
    let (toolkit, _) = Toolkit::files();
    let reasons = Reasons::new(toolkit.answering(Answering::Fail));
    let results = reasons
        .execute_tool_calls(vec![
            ToolCall::new("a", "fs_read", "{}"),
            ToolCall::new("b", "fs_list", "{}"),
        ])
        .await
        .unwrap();

    assert_eq!(results.len(), 2);
    assert_eq!(
        results
            .iter()
            .map(|r| r.tool_call_id.as_str())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(
        results
            .iter()
            .all(|r| r.is_error && r.content.contains("the server crashed"))
    );
}

#[tokio::test]
async fn a_short_answer_gets_an_error_result_for_each_missing_call() {
    let (toolkit, _) = Toolkit::files();
    let reasons = Reasons::new(toolkit.answering(Answering::First(1)));
    let results = reasons
        .execute_tool_calls(vec![
            ToolCall::new("a", "fs_read", "{}"),
            ToolCall::new("b", "fs_list", "{}"),
            ToolCall::new("c", "fs_list", "{}"),
        ])
        .await
        .unwrap();

    assert_eq!(
        results
            .iter()
            .map(|r| r.tool_call_id.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert_eq!(
        results.iter().map(|r| r.is_error).collect::<Vec<_>>(),
        [false, true, true]
    );
}

#[tokio::test]
async fn a_failed_listing_fails_and_keeps_the_previous_augmented_tools() {
    let (reasons, received) = listed().await;
    *reasons.get_ref().fail_listing.lock().unwrap() = true;

    assert!(reasons.tools_for_llm().await.is_err());
    assert_eq!(
        reasons.augmented_tools(),
        ["fs_list", "fs_read", "fs_task", "fs_write"]
    );
    reasons
        .execute_tool_calls(vec![ToolCall::new("a", "fs_read", r#"{"reason":"r"}"#)])
        .await
        .unwrap();
    assert_eq!(common::arguments_text(&received.calls()[0]), "{}");
}

#[tokio::test]
async fn a_custom_description_is_published() {
    let (toolkit, _) = Toolkit::files();
    let reasons = ReasonsLayer::new().description("Why?").layer(toolkit);
    let tools = reasons.tools_for_llm().await.unwrap();
    assert_eq!(
        schema(&tools[0])["properties"][REASON_PARAMETER]["description"],
        "Why?"
    );
}
