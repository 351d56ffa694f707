//! In-process providers that record what reaches them, for the tests of
//! the layers above: `Recorder` for `UnknownKeys`, `Toolkit` for `Reasons`,
//! `Policy` and the whole stack.

#![allow(dead_code)] // each test binary uses its own part of this

pub mod said;
mod toolkit;
pub mod traced;

#[allow(unused_imports)] // each test binary uses its own part
pub use toolkit::{Answering, Received, Toolkit, arguments_text, declaration, files};

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::{Auditor, Warning};
use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult};
use serde_json::{Value, json};

/// What the next listing answers.
pub type Listing = Result<Vec<ToolDeclaration>, String>;

/// An in-process provider: lists what it is told to, answers each call with
/// `ok:<id>` (or fails when told to), and records every batch it receives.
#[derive(Default)]
pub struct Recorder {
    pub listing: Mutex<Option<Listing>>,
    pub fail_batches: Mutex<Option<String>>,
    pub batches: Mutex<Vec<Batch>>,
    pub events: Arc<Mutex<Vec<String>>>,
}

/// One batch as the provider received it.
pub struct Batch {
    /// The address of the batch's buffer, to check it is the caller's.
    pub buffer: usize,
    pub calls: Vec<ToolCall>,
}

impl Recorder {
    pub fn listing(declarations: Vec<ToolDeclaration>) -> Recorder {
        let recorder = Recorder::default();
        recorder.set_listing(Ok(declarations));
        recorder
    }

    pub fn set_listing(&self, listing: Listing) {
        *self.listing.lock().unwrap() = Some(listing);
    }

    pub fn received(&self) -> Vec<Vec<ToolCall>> {
        self.batches
            .lock()
            .unwrap()
            .iter()
            .map(|b| b.calls.clone())
            .collect()
    }
}

impl Provider for Recorder {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        match self.listing.lock().unwrap().clone() {
            Some(Ok(declarations)) => Ok(declarations),
            Some(Err(message)) => Err(message.into()),
            None => Ok(Vec::new()),
        }
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        self.events
            .lock()
            .unwrap()
            .push(format!("forward {}", calls.len()));
        let results = calls
            .iter()
            .map(|c| ToolResult::ok(c.id_text(), format!("ok:{}", c.id_text())))
            .collect();
        self.batches.lock().unwrap().push(Batch {
            buffer: calls.as_ptr() as usize,
            calls,
        });
        match self.fail_batches.lock().unwrap().clone() {
            Some(message) => Err(message.into()),
            None => Ok(results),
        }
    }
}

/// A declaration whose schema declares `keys`.
pub fn declares(name: &str, keys: &[&str]) -> ToolDeclaration {
    let properties: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| (k.to_string(), json!({"type": "string"})))
        .collect();
    ToolDeclaration::new(name, None, json!({"type": "object", "properties": properties}))
}

/// The catalogue of the specification's examples.
pub fn fs_catalogue() -> Vec<ToolDeclaration> {
    vec![
        declares("fs_read", &["path", "offset"]),
        declares("fs_write", &["path", "content"]),
        declares("task", &["prompt"]),
    ]
}

/// An auditor whose warnings land in the returned list.
pub fn recording_auditor() -> (Auditor, Arc<Mutex<Vec<Warning>>>) {
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let record = warnings.clone();
    let auditor = Auditor::new().with_sink(move |w: &Warning| record.lock().unwrap().push(w.clone()));
    (auditor, warnings)
}

/// Runs a future to completion on a small runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}
