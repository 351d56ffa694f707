//! The specification's synopsis, running: `Policy(UnknownKeys(Reasons(registry)))`
//! over an in-process toolkit, with a host log and a human who answers asks.
//!
//! ```sh
//! cargo run -p mcp-unknown-keys-policy --example synopsis
//! ```
//!
//! The same stack over real MCP servers is `mcp-unknown-keys demo`.

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::Warning;
use mcp_unknown_keys::{
    BoxError, Provider, ReasonsLayer, Registry, ToolCall, ToolDeclaration, ToolResult, UnknownKeysLayer,
};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, Question, default_rules};
use serde_json::json;
use tower::ServiceBuilder;

/// A toolkit that reads and writes pretend files.
struct Files;

impl Provider for Files {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let read = json!({"type": "object", "properties": {"path": {}, "offset": {"default": 0}}, "required": ["path"]});
        let write = json!({"type": "object", "properties": {"path": {}, "content": {}}, "required": ["path", "content"]});
        Ok(vec![
            ToolDeclaration::new("read", Some("Read a file"), read),
            ToolDeclaration::new("write", Some("Write a file"), write),
        ])
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        Ok(calls
            .iter()
            .map(|call| ToolResult::ok(call.id_text(), format!("{} done", call.name().unwrap_or("?"))))
            .collect())
    }
}

/// Runs the synopsis and returns the host's log: the policy asks first (it
/// sits on top), then the audit below it warns.
pub fn synopsis() -> Result<Vec<String>, BoxError> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (warn_log, ask_log) = (log.clone(), log.clone());

    let registry = Registry::new();
    registry.add(Files, "fs")?;
    let stack = ServiceBuilder::new()
        .layer(
            PolicyLayer::new(default_rules()).on_ask(move |question: &Question| {
                ask_log.lock().unwrap().push(format!("asked: {question}"));
                Answer::AllowOnce
            }),
        )
        .layer(UnknownKeysLayer::new().on_warn(move |warning: &Warning| {
            warn_log.lock().unwrap().push(format!(
                "{} was called with undeclared argument(s): {}",
                warning.tool,
                warning.unknown_keys.join(", ")
            ));
        }))
        .layer(ReasonsLayer::new())
        .service(registry);

    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    runtime.block_on(async {
        stack.tools_for_llm().await?;
        // A provider mangled a call into `task {"prompt": "Investigate the", ...}`;
        // here, a read closed into valid JSON and a write with a reason.
        let results = stack
            .execute_tool_calls(vec![
                ToolCall::new(
                    "call_1",
                    "fs_read",
                    r#"{"path":"src/app.rs","ffset":12,"the rest":"…"}"#,
                ),
                ToolCall::new(
                    "call_2",
                    "fs_write",
                    r#"{"path":"notes.txt","content":"ok","reason":"record it"}"#,
                ),
            ])
            .await?;
        // Both still ran exactly as they would have without the layer.
        assert!(results.iter().all(|result| !result.is_error));
        Ok::<(), BoxError>(())
    })?;
    let lines = log.lock().unwrap().clone();
    Ok(lines)
}

#[allow(dead_code)] // also compiled into a test, which calls `synopsis` itself
fn main() -> Result<(), BoxError> {
    for line in synopsis()? {
        println!("{line}");
    }
    Ok(())
}
