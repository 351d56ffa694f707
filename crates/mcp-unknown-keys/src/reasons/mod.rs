//! The `Reasons` provider layer: ask the model why it makes each call.
//!
//! On the way out, [`Reasons`] adds an optional `reason` parameter to every
//! tool the model is shown; on the way down, it takes the `reason` back out
//! of the calls, so the tools never see a parameter they did not declare, and
//! hands it to a callback of yours so a human reviewing the session can read
//! why each call was made.

mod layer;
mod schema;
mod strip;

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, PoisonError, RwLock};

pub use layer::ReasonsLayer;

use self::schema::{Augmented, augment};
use self::strip::strip_reason;
use crate::provider::{BoxError, Provider};
use crate::settle::settle;
use crate::wire::{ToolCall, ToolDeclaration, ToolResult};

/// The name of the parameter [`Reasons`] publishes: `"reason"`.
///
/// It is the very key every auditor tolerates, so that an
/// [`UnknownKeys`](crate::UnknownKeys) layer stays quiet about it with or
/// without a `Reasons` layer in the stack.
pub const REASON_PARAMETER: &str = crate::audit::REASON_KEY;

/// The description the `reason` property is published with, unless the
/// layer is given another ([`ReasonsLayer::description`]).
pub const DEFAULT_DESCRIPTION: &str =
    "In one sentence, why you are making this call, for the human reviewing this session.";

/// A reason taken out of a call, as [`ReasonsLayer::on_reason`] receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reason<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// The call's id as text (`""` when it has none).
    pub id: &'a str,
    /// The reason the model gave: a string as it is, any other JSON as its
    /// text.
    pub reason: &'a str,
}

/// Receives each reason taken out of a call. Any `Fn(&Reason)` closure is
/// one; one that panics is caught and swallowed, and the call goes on.
pub trait OnReason: Send + Sync + 'static {
    /// Takes one reason.
    fn on_reason(&self, reason: &Reason<'_>);
}

impl<F: Fn(&Reason<'_>) + Send + Sync + 'static> OnReason for F {
    fn on_reason(&self, reason: &Reason<'_>) {
        self(reason)
    }
}

/// A provider that asks the model for a `reason` on every call and takes it
/// out again before the call reaches the tool.
///
/// - [`tools_for_llm`](Provider::tools_for_llm) adds an optional `reason`
///   string property to every declaration it can read — one with a name and
///   a `parameters` object of type `object` whose `properties`, if present,
///   is an object — and never adds it to `required`. A declaration it cannot
///   read, or that already declares or requires `reason`, is left as it was,
///   and calls to that tool keep their `reason`. A failed listing fails, and
///   the previous listing's tools stay the ones stripped.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) takes `reason` out
///   of the calls to the tools its latest listing augmented: object arguments
///   stay an object; JSON text is re-serialised without the key, every other
///   member and value kept as written; empty, unparseable or non-object
///   arguments pass untouched. Every other call is forwarded as it came, in
///   the same batch, in order.
///
/// It never fails a batch: an inner failure becomes one error result per
/// call, and a call the inner provider left unanswered gets an error result.
///
/// ```
/// use mcp_unknown_keys::reasons::{Reason, REASON_PARAMETER};
/// use mcp_unknown_keys::{BoxError, Provider, ReasonsLayer, ToolCall, ToolDeclaration, ToolResult};
/// use serde_json::json;
/// use std::sync::{Arc, Mutex};
/// use tower::ServiceBuilder;
///
/// /// Echoes each call's arguments back.
/// struct Echo;
///
/// impl Provider for Echo {
///     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
///         let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
///         Ok(vec![ToolDeclaration::new("fs_read", Some("Read a file"), schema)])
///     }
///
///     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
///         Ok(calls.iter().map(|call| {
///             ToolResult::ok(call.id_text(), call.arguments().unwrap().as_str().unwrap())
///         }).collect())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let reasons = Arc::new(Mutex::new(Vec::new()));
/// let record = reasons.clone();
/// let stack = ServiceBuilder::new()
///     .layer(ReasonsLayer::new().on_reason(move |r: &Reason| {
///         record.lock().unwrap().push(format!("{} ({}): {}", r.tool, r.id, r.reason));
///     }))
///     .service(Echo);
///
/// // The model is asked for a reason...
/// let tools = stack.tools_for_llm().await?;
/// assert!(tools[0].parameters().unwrap()["properties"].get(REASON_PARAMETER).is_some());
///
/// // ...which the tool never sees, and the host records.
/// let call = ToolCall::new("call_1", "fs_read", r#"{"path":"a.txt","reason":"to check the config"}"#);
/// let results = stack.execute_tool_calls(vec![call]).await?;
/// assert_eq!(results[0].content, r#"{"path":"a.txt"}"#);
/// assert_eq!(*reasons.lock().unwrap(), ["fs_read (call_1): to check the config"]);
/// # Ok::<(), BoxError>(())
/// # }).unwrap();
/// ```
pub struct Reasons<P> {
    inner: P,
    description: Arc<str>,
    on_reason: Option<Arc<dyn OnReason>>,
    augmented: RwLock<Arc<HashSet<String>>>,
}

impl Reasons<()> {
    /// A [`ReasonsLayer`] for `tower::ServiceBuilder`.
    pub fn layer() -> ReasonsLayer {
        ReasonsLayer::new()
    }
}

impl<P> Reasons<P> {
    /// Wraps `inner` with the default description and no callback.
    pub fn new(inner: P) -> Reasons<P> {
        ReasonsLayer::new().wrap(inner)
    }

    /// The tools whose calls lose their `reason`: those the latest
    /// successful listing augmented, sorted.
    pub fn augmented_tools(&self) -> Vec<String> {
        let mut tools: Vec<String> = self.snapshot().iter().cloned().collect();
        tools.sort_unstable();
        tools
    }

    /// The wrapped provider.
    pub fn get_ref(&self) -> &P {
        &self.inner
    }

    /// Unwraps the wrapped provider.
    pub fn into_inner(self) -> P {
        self.inner
    }

    fn snapshot(&self) -> Arc<HashSet<String>> {
        self.augmented
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn remember(&self, augmented: HashSet<String>) {
        let augmented = Arc::new(augmented);
        let _old = std::mem::replace(
            &mut *self.augmented.write().unwrap_or_else(PoisonError::into_inner),
            augmented,
        );
    }

    fn hand_over(&self, reason: &Reason<'_>) {
        if let Some(on_reason) = &self.on_reason {
            let _ = catch_unwind(AssertUnwindSafe(|| on_reason.on_reason(reason)));
        }
    }
}

impl<P: Provider> Provider for Reasons<P> {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let mut declarations = self.inner.tools_for_llm().await?;
        let mut augmented = HashSet::new();
        for declaration in &mut declarations {
            // When a listing repeats a name, its last declaration decides.
            match augment(declaration, &self.description) {
                Augmented::Added(name) => augmented.insert(name),
                Augmented::Untouched(Some(name)) => augmented.remove(&name),
                Augmented::Untouched(None) => false,
            };
        }
        self.remember(augmented);
        Ok(declarations)
    }

    async fn execute_tool_calls(&self, mut calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        let augmented = self.snapshot();
        let ids: Vec<String> = calls.iter().map(ToolCall::id_text).collect();
        for (call, id) in calls.iter_mut().zip(&ids) {
            let Some(tool) = call.name().filter(|tool| augmented.contains(*tool)) else {
                continue;
            };
            let tool = tool.to_owned();
            if let Some(reason) = strip_reason(call) {
                self.hand_over(&Reason {
                    tool: &tool,
                    id,
                    reason: &reason,
                });
            }
        }
        Ok(settle(&ids, self.inner.execute_tool_calls(calls).await))
    }
}

impl<P: std::fmt::Debug> std::fmt::Debug for Reasons<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reasons")
            .field("inner", &self.inner)
            .field("augmented_tools", &self.augmented_tools())
            .finish_non_exhaustive()
    }
}
