//! An in-process provider for the layers' tests: it publishes the
//! declarations it is given, records every batch it receives, and answers
//! each call with its arguments as text.

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult};
use serde_json::{Value, json};

/// How the toolkit answers a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answering {
    /// One result per call, its content the call's arguments as text.
    Every,
    /// Results for the first `n` calls only.
    First(usize),
    /// Fails the batch.
    Fail,
}

/// What the toolkit has received, shared with the test.
#[derive(Clone, Default)]
pub struct Received(Arc<Mutex<Vec<Vec<ToolCall>>>>);

impl Received {
    /// Every batch received, in order.
    pub fn batches(&self) -> Vec<Vec<ToolCall>> {
        self.0.lock().unwrap().clone()
    }

    /// Every call received, batches flattened.
    pub fn calls(&self) -> Vec<ToolCall> {
        self.batches().into_iter().flatten().collect()
    }
}

pub struct Toolkit {
    pub declarations: Vec<ToolDeclaration>,
    pub answering: Answering,
    pub fail_listing: Arc<Mutex<bool>>,
    pub received: Received,
}

impl Toolkit {
    pub fn new(declarations: Vec<ToolDeclaration>) -> (Toolkit, Received) {
        let received = Received::default();
        let toolkit = Toolkit {
            declarations,
            answering: Answering::Every,
            fail_listing: Arc::default(),
            received: received.clone(),
        };
        (toolkit, received)
    }

    /// The example server's tools: `fs_read`, `fs_list`, `fs_write`, `fs_task`.
    pub fn files() -> (Toolkit, Received) {
        Toolkit::new(files())
    }

    pub fn answering(self, answering: Answering) -> Toolkit {
        Toolkit { answering, ..self }
    }
}

/// The example server's tools, as declarations.
pub fn files() -> Vec<ToolDeclaration> {
    vec![
        declaration(
            "fs_read",
            json!({"path": {"type": "string"}, "offset": {"type": "integer"}}),
            &["path"],
        ),
        declaration("fs_list", json!({"path": {"type": "string"}}), &[]),
        declaration(
            "fs_write",
            json!({"path": {"type": "string"}, "content": {"type": "string"}}),
            &["path", "content"],
        ),
        declaration("fs_task", json!({"prompt": {"type": "string"}}), &["prompt"]),
    ]
}

pub fn declaration(name: &str, properties: Value, required: &[&str]) -> ToolDeclaration {
    ToolDeclaration::new(
        name,
        Some("a tool"),
        json!({"type": "object", "properties": properties, "required": required}),
    )
}

impl Provider for Toolkit {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        if *self.fail_listing.lock().unwrap() {
            return Err("the server is down".into());
        }
        Ok(self.declarations.clone())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        self.received.0.lock().unwrap().push(calls.clone());
        let answered = match self.answering {
            Answering::Fail => return Err("the server crashed".into()),
            Answering::First(n) => n.min(calls.len()),
            Answering::Every => calls.len(),
        };
        Ok(calls[..answered]
            .iter()
            .map(|call| ToolResult::ok(call.id_text(), arguments_text(call)))
            .collect())
    }
}

/// A call's arguments as text: a string as it is, anything else as JSON.
pub fn arguments_text(call: &ToolCall) -> String {
    call.arguments_text()
}
