//! What the policy tests share (beside `common`): a policy over an in-process toolkit whose
//! human is recorded, and how a call fared through it.

#![allow(dead_code)] // each test binary uses its own part of this

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::{Provider, ToolCall};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, Policy, Question, Rule};
use serde_json::Value;
use tower_layer::Layer;

pub use crate::common::{Received, Toolkit};

/// Rules from JSON.
pub fn rules(json: &str) -> Vec<Rule> {
    serde_json::from_str(json).unwrap()
}

/// How a call fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Run without asking.
    Allowed,
    /// Asked about (and declined, so not run).
    Asked,
    /// Refused without asking.
    Denied,
}

/// A policy whose human answers every question with `answer`, and every
/// question asked.
pub struct Harness {
    pub policy: Policy<Toolkit>,
    pub asked: Arc<Mutex<Vec<Question>>>,
    pub received: Received,
}

impl Harness {
    /// `layer` with a human who declines each call once.
    pub fn new(layer: PolicyLayer) -> Harness {
        Harness::answering(layer, Answer::DenyOnce)
    }

    pub fn answering(layer: PolicyLayer, answer: Answer) -> Harness {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let record = asked.clone();
        let layer = layer.on_ask(move |question: &Question| {
            record.lock().unwrap().push(question.clone());
            answer.clone()
        });
        let (toolkit, received) = Toolkit::new(Vec::new());
        Harness {
            policy: layer.layer(toolkit),
            asked,
            received,
        }
    }

    /// Runs one call; how it fared and what the model was told.
    pub async fn run(&self, tool: &str, arguments: Value) -> (Fate, String) {
        let questions = self.asked.lock().unwrap().len();
        let results = self
            .policy
            .execute_tool_calls(vec![ToolCall::new("c", tool, arguments)])
            .await
            .unwrap();
        let asked = self.asked.lock().unwrap().len() > questions;
        let fate = match (asked, results[0].is_error) {
            (true, _) => Fate::Asked,
            (false, false) => Fate::Allowed,
            (false, true) => Fate::Denied,
        };
        (fate, results[0].content.clone())
    }

    pub async fn fate(&self, tool: &str, arguments: Value) -> Fate {
        self.run(tool, arguments).await.0
    }

    /// The last question asked.
    pub fn last_question(&self) -> Question {
        self.asked
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a question was asked")
    }
}
