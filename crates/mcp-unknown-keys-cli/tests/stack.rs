//! The specification's stack, `Policy(UnknownKeys(Reasons(Registry)))`, over
//! the example server as a real MCP server process.

use crate::support;

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::Warning;
use mcp_unknown_keys::{
    BoxError, McpServer, Provider, ReasonsLayer, Registry, ToolCall, ToolDeclaration, ToolResult,
    UnknownKeysLayer,
};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, Question, default_rules};
use serde_json::{Value, json};
use support::{ScratchDir, block_on};
use tower_layer::Layer;

/// Notes every call on its way into the server: after `Reasons` and the
/// registry had their say.
struct Wiretap<P> {
    inner: P,
    seen: Arc<Mutex<Vec<ToolCall>>>,
}

impl<P: Provider> Provider for Wiretap<P> {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        self.inner.tools_for_llm().await
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        self.seen.lock().unwrap().extend(calls.iter().cloned());
        self.inner.execute_tool_calls(calls).await
    }
}

#[derive(Default)]
struct Host {
    warnings: Arc<Mutex<Vec<Warning>>>,
    questions: Arc<Mutex<Vec<Question>>>,
    received: Arc<Mutex<Vec<ToolCall>>>,
}

#[test]
fn the_seed_stack_audits_calls_that_really_reach_the_example_server() {
    let root = ScratchDir::seeded();
    let host = Host::default();
    block_on(async {
        let server = McpServer::stdio(env!("CARGO_BIN_EXE_mcp-unknown-keys"))
            .args(["example-server", "--root"])
            .arg(root.path())
            .forward_stderr(false)
            .connect()
            .await
            .unwrap();
        let registry = Registry::new();
        registry
            .add(
                Wiretap {
                    inner: server.clone(),
                    seen: host.received.clone(),
                },
                "fs",
            )
            .unwrap();

        let (warnings, questions) = (host.warnings.clone(), host.questions.clone());
        let stack = PolicyLayer::new(default_rules())
            .on_ask(move |question: &Question| {
                questions.lock().unwrap().push(question.clone());
                Answer::AllowOnce
            })
            .layer(
                UnknownKeysLayer::new()
                    .on_warn(move |w: &Warning| warnings.lock().unwrap().push(w.clone()))
                    .layer(ReasonsLayer::new().layer(registry)),
            );

        // The catalogue the model sees has `reason` on every tool.
        let catalogue = stack.tools_for_llm().await.unwrap();
        assert_eq!(catalogue.len(), 4);
        for tool in &catalogue {
            assert_eq!(
                tool.parameters().unwrap()["properties"]["reason"]["type"],
                "string",
                "{tool:?}"
            );
        }

        // A call with a reason: no warning, and the server gets it without.
        let results = stack
            .execute_tool_calls(vec![ToolCall::new(
                "1",
                "fs_read",
                r#"{"path":"notes.txt","reason":"to check"}"#,
            )])
            .await
            .unwrap();
        assert!(!results[0].is_error, "{:?}", results[0]);
        assert!(host.warnings.lock().unwrap().is_empty());
        assert_eq!(
            host.received.lock().unwrap()[0].arguments(),
            Some(&json!(r#"{"path":"notes.txt"}"#))
        );

        // A misspelled key on a call the policy asks about, twice.
        let write = |id: &str| {
            ToolCall::new(
                id,
                "fs_write",
                json!({"path": "out.txt", "contnet": "hello", "reason": "to save it"}),
            )
        };
        let results = stack
            .execute_tool_calls(vec![write("2"), write("3")])
            .await
            .unwrap();
        // `content` is required: the server refuses, in its own words, as it
        // would without the layer.
        assert!(
            results
                .iter()
                .all(|r| r.is_error && r.content.contains("content")),
            "{results:?}"
        );

        let warnings = host.warnings.lock().unwrap().clone();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].tool, "fs_write");
        assert_eq!(warnings[0].unknown_keys, ["contnet"]);
        assert_eq!(warnings[0].declared_keys, ["content", "path", "reason"]);
        assert_eq!(warnings[0].id, "2");

        let questions = host.questions.lock().unwrap().clone();
        assert_eq!(questions.len(), 2);
        assert_eq!(questions[0].reason.as_deref(), Some("to save it"));
        assert_eq!(
            questions[0].arguments["contnet"],
            json!("hello"),
            "the question shows the model's own call"
        );

        // Both calls reached the server as the model wrote them, less `reason`.
        let received = host.received.lock().unwrap().clone();
        assert_eq!(received.len(), 3);
        let sent: Value = received[1].arguments().unwrap().clone();
        assert_eq!(sent, json!({"path": "out.txt", "contnet": "hello"}));
        assert!(!root.path().join("out.txt").exists());
        server.close().await;
    });
}
