//! The seed's stack, `Policy(UnknownKeys(Reasons(provider)))`, built with
//! `tower::ServiceBuilder` over an in-process provider.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{Received, Toolkit, arguments_text};
use mcp_unknown_keys::audit::Warning;
use mcp_unknown_keys::reasons::{REASON_PARAMETER, Reason};
use mcp_unknown_keys::{Provider, Reasons, ReasonsLayer, ToolCall, UnknownKeys, UnknownKeysLayer};
use mcp_unknown_keys_policy::{Answer, Question, default_rules};
use mcp_unknown_keys_policy::{Policy, PolicyLayer};
use tower::ServiceBuilder;

type Stack = Policy<UnknownKeys<Reasons<Toolkit>>>;

/// What the host sees beside the results.
#[derive(Clone, Default)]
struct Host {
    warnings: Arc<Mutex<Vec<Warning>>>,
    questions: Arc<Mutex<Vec<Question>>>,
    reasons: Arc<Mutex<Vec<String>>>,
}

/// The stack over the example server's tools, every question answered
/// "allow once".
fn stack() -> (Stack, Host, Received) {
    let host = Host::default();
    let (toolkit, received) = Toolkit::files();
    let (warnings, questions, reasons) = (
        host.warnings.clone(),
        host.questions.clone(),
        host.reasons.clone(),
    );
    let stack = ServiceBuilder::new()
        .layer(
            PolicyLayer::new(default_rules()).on_ask(move |question: &Question| {
                questions.lock().unwrap().push(question.clone());
                Answer::AllowOnce
            }),
        )
        .layer(
            UnknownKeysLayer::new()
                .on_warn(move |warning: &Warning| warnings.lock().unwrap().push(warning.clone())),
        )
        .layer(ReasonsLayer::new().on_reason(move |reason: &Reason| {
            reasons
                .lock()
                .unwrap()
                .push(format!("{}: {}", reason.tool, reason.reason))
        }))
        .service(toolkit);
    (stack, host, received)
}

#[tokio::test]
async fn the_model_is_shown_a_reason_on_every_tool() {
    let (stack, _, _) = stack();
    let tools = stack.tools_for_llm().await.unwrap();

    assert_eq!(tools.len(), 4);
    for tool in &tools {
        let schema = tool.parameters().unwrap();
        assert_eq!(
            schema["properties"][REASON_PARAMETER]["type"],
            "string",
            "{:?}",
            tool.name()
        );
        assert!(
            !schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == REASON_PARAMETER)
        );
    }
    // The auditor's catalogue is the augmented one.
    assert_eq!(
        stack.get_ref().audited_tools(),
        ["fs_list", "fs_read", "fs_task", "fs_write"]
    );
}

#[tokio::test]
async fn a_call_with_a_reason_raises_no_warning_and_reaches_the_provider_without_it() {
    let (stack, host, received) = stack();
    stack.tools_for_llm().await.unwrap();

    let results = stack
        .execute_tool_calls(vec![ToolCall::new(
            "call_1",
            "fs_read",
            r#"{"path":"src/app.rs","offset":12,"reason":"to find the entry point"}"#,
        )])
        .await
        .unwrap();

    assert!(!results[0].is_error);
    assert!(host.warnings.lock().unwrap().is_empty());
    assert!(
        host.questions.lock().unwrap().is_empty(),
        "fs_read is allowed by the default rules"
    );
    assert_eq!(
        arguments_text(&received.calls()[0]),
        r#"{"path":"src/app.rs","offset":12}"#
    );
    assert_eq!(
        *host.reasons.lock().unwrap(),
        ["fs_read: to find the entry point"]
    );
}

#[tokio::test]
async fn a_misspelled_key_on_an_asked_about_call_warns_once_and_the_question_keeps_the_reason() {
    let (stack, host, received) = stack();
    stack.tools_for_llm().await.unwrap();

    let call = |id: &str| {
        ToolCall::new(
            id,
            "fs_write",
            r#"{"path":"notes/plan.md","contnet":"the plan","reason":"to save the plan"}"#,
        )
    };
    stack.execute_tool_calls(vec![call("call_1")]).await.unwrap();
    stack.execute_tool_calls(vec![call("call_2")]).await.unwrap();

    let warnings = host.warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].tool, "fs_write");
    assert_eq!(warnings[0].id, "call_1");
    assert_eq!(warnings[0].unknown_keys, ["contnet"]);
    assert_eq!(warnings[0].declared_keys, ["content", "path", "reason"]);

    let questions = host.questions.lock().unwrap();
    assert_eq!(questions.len(), 2, "fs_write is asked about each time");
    assert_eq!(questions[0].reason.as_deref(), Some("to save the plan"));
    assert_eq!(questions[0].arguments["reason"], "to save the plan");
    assert_eq!(questions[0].arguments["contnet"], "the plan");

    // The provider runs the call as the model wrote it, less the reason.
    let calls = received.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        arguments_text(&calls[0]),
        r#"{"path":"notes/plan.md","contnet":"the plan"}"#
    );
}

#[tokio::test]
async fn a_refused_call_is_neither_audited_nor_run() {
    let host = Host::default();
    let (toolkit, received) = Toolkit::files();
    let warnings = host.warnings.clone();
    let stack = ServiceBuilder::new()
        .layer(PolicyLayer::new(default_rules())) // no one to ask
        .layer(UnknownKeysLayer::new().on_warn(move |w: &Warning| warnings.lock().unwrap().push(w.clone())))
        .layer(ReasonsLayer::new())
        .service(toolkit);
    stack.tools_for_llm().await.unwrap();

    let results = stack
        .execute_tool_calls(vec![ToolCall::new(
            "call_1",
            "fs_write",
            r#"{"path":"a","contnet":"x"}"#,
        )])
        .await
        .unwrap();

    assert!(results[0].is_error);
    assert!(host.warnings.lock().unwrap().is_empty());
    assert!(received.calls().is_empty());
}
