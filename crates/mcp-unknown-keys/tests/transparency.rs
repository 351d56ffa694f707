//! Property tests: whatever the batch, the inner provider receives exactly
//! what was sent and the caller receives exactly what the inner provider
//! returned.

use crate::common;

use common::{Recorder, block_on, fs_catalogue};
use mcp_unknown_keys::audit::Auditor;
use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult, UnknownKeys};
use proptest::prelude::*;
use serde_json::{Value, json};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_ ]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Arguments of every kind: object text (valid, mangled, truncated), objects,
/// and other JSON.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::btree_map("[a-z_ ]{0,8}|path|offset|reason", json_value(), 0..5)
            .prop_map(|m| Value::from(serde_json::to_string(&m).unwrap())),
        (
            prop::collection::btree_map("[a-z]{1,6}", json_value(), 1..4),
            0usize..40
        )
            .prop_map(|(m, cut)| {
                let text = serde_json::to_string(&m).unwrap();
                let cut = text.char_indices().map(|(i, _)| i).nth(cut).unwrap_or(text.len());
                Value::from(&text[..cut])
            }),
        prop::collection::btree_map("[a-z]{1,6}", json_value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        json_value(),
    ]
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    let name = prop_oneof![Just("fs_read"), Just("fs_write"), Just("task"), Just("unlisted")];
    prop_oneof![
        4 => (".{0,6}", name, arguments()).prop_map(|(id, name, arguments)| ToolCall::new(id, name, arguments)),
        1 => json_value().prop_map(ToolCall::from),
    ]
}

/// A provider that answers whatever it was given to answer.
struct Scripted {
    answer: Result<Vec<ToolResult>, String>,
    received: std::sync::Mutex<Vec<(usize, Vec<ToolCall>)>>,
}

impl Provider for Scripted {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        Ok(fs_catalogue())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        self.received
            .lock()
            .unwrap()
            .push((calls.as_ptr() as usize, calls));
        self.answer.clone().map_err(Into::into)
    }
}

fn tool_result() -> impl Strategy<Value = ToolResult> {
    (".{0,6}", ".{0,20}", any::<bool>(), prop::option::of(json_value())).prop_map(
        |(id, content, failed, structured)| {
            let mut result = if failed {
                ToolResult::error(id, content)
            } else {
                ToolResult::ok(id, content)
            };
            result.structured_content = structured;
            result.extra.insert("x-vendor".into(), json!(1));
            result
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_inner_provider_receives_exactly_the_batch_sent(calls in prop::collection::vec(tool_call(), 0..8)) {
        let layer = UnknownKeys::with_auditor(Recorder::listing(fs_catalogue()), Auditor::new().with_sink(()));
        block_on(layer.tools_for_llm()).unwrap();
        let sent = calls.clone();
        let buffer = calls.as_ptr() as usize;
        block_on(layer.execute_tool_calls(calls)).unwrap();
        let batches = layer.get_ref().batches.lock().unwrap();
        prop_assert_eq!(batches.len(), 1);
        prop_assert_eq!(batches[0].buffer, buffer);
        prop_assert_eq!(&batches[0].calls, &sent);
    }

    #[test]
    fn the_caller_receives_exactly_what_the_inner_provider_returned(
        calls in prop::collection::vec(tool_call(), 0..6),
        answer in prop_oneof![
            prop::collection::vec(tool_result(), 0..6).prop_map(Ok),
            ".{0,12}".prop_map(Err),
        ],
    ) {
        let scripted = Scripted { answer: answer.clone(), received: Default::default() };
        let layer = UnknownKeys::with_auditor(scripted, Auditor::new().with_sink(()));
        block_on(layer.tools_for_llm()).unwrap();
        let sent = calls.clone();
        let outcome = block_on(layer.execute_tool_calls(calls));
        match (outcome, answer) {
            (Ok(results), Ok(expected)) => prop_assert_eq!(results, expected),
            (Err(error), Err(expected)) => prop_assert_eq!(error.to_string(), expected),
            (outcome, answer) => prop_assert!(false, "got {:?}, inner answered {:?}", outcome.is_ok(), answer.is_ok()),
        }
        prop_assert_eq!(&layer.get_ref().received.lock().unwrap()[0].1, &sent);
    }
}
