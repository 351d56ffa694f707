//! The `UnknownKeys` provider layer: a smoke alarm, not a valve.

mod layer;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError};

pub use layer::UnknownKeysLayer;

use crate::audit::auditor::Auditor;
use crate::audit::catalog::Catalog;
use crate::audit::coverage::Coverage;
use crate::provider::{BoxError, Provider};
use crate::wire::{ToolCall, ToolDeclaration, ToolResult};

/// A provider that reports the arguments a call carries that its tool never
/// declared, and changes nothing.
///
/// - [`tools_for_llm`](Provider::tools_for_llm) passes the listing through
///   as it came and, when it succeeded, makes it the catalogue calls are
///   audited against. A failed listing keeps the previous catalogue.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) audits the whole
///   batch against one snapshot of the catalogue, delivers the warnings in
///   call order, then forwards the batch — the very same `Vec`, unmodified,
///   even when empty — and returns whatever the inner provider returned,
///   error included.
///
/// Nothing read from a call can make it fail or panic; no lock is held while
/// a sink runs or across the forward; it is `Send + Sync` and may be shared
/// by many tasks, each (tool, key) pair still being said once.
///
/// ```
/// # use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult};
/// # use serde_json::json;
/// # struct Files;
/// # impl Provider for Files {
/// #     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
/// #         Ok(vec![ToolDeclaration::new("fs_read", None,
/// #             json!({"type": "object", "properties": {"path": {}, "offset": {}}}))])
/// #     }
/// #     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
/// #         Ok(calls.iter().map(|c| ToolResult::ok(c.id_text(), "...")).collect())
/// #     }
/// # }
/// use mcp_unknown_keys::UnknownKeys;
///
/// # tokio_test_block_on(async {
/// let audited = UnknownKeys::new(Files);
/// audited.tools_for_llm().await?; // fills the catalogue
/// assert_eq!(audited.audited_tools(), ["fs_read"]);
///
/// // Warns once on stderr about `ffset` and `the rest`; the read still happens.
/// let results = audited
///     .execute_tool_calls(vec![ToolCall::new(
///         "call_1",
///         "fs_read",
///         r#"{"path":"src/app.rs","ffset":12,"the rest":"…"}"#,
///     )])
///     .await?;
/// assert!(!results[0].is_error);
/// # Ok::<(), BoxError>(())
/// # }).unwrap();
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct UnknownKeys<P> {
    inner: P,
    auditor: Auditor,
    coverage: Mutex<Coverage>,
}

impl<P> UnknownKeys<P> {
    /// Wraps `inner`; warnings go to stderr.
    pub fn new(inner: P) -> UnknownKeys<P> {
        UnknownKeys::with_auditor(inner, Auditor::new())
    }

    /// Wraps `inner` with an auditor of your making (its sink, its allowed
    /// keys).
    pub fn with_auditor(inner: P, auditor: Auditor) -> UnknownKeys<P> {
        UnknownKeys {
            inner,
            auditor,
            coverage: Mutex::default(),
        }
    }

    /// A [`UnknownKeysLayer`] for `tower::ServiceBuilder`.
    pub fn layer() -> UnknownKeysLayer {
        UnknownKeysLayer::new()
    }

    /// The tools the latest successful listing left to audit against,
    /// sorted: the answer to "why did this not warn?".
    pub fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// Every tool the latest successful listing named, sorted: the audited
    /// ones and those listed declaring nothing (their calls count as
    /// `declares_nothing`).
    pub fn listed_tools(&self) -> Vec<String> {
        self.auditor.listed_tools()
    }

    /// Every call this layer forwarded so far, audited or unaudited for a
    /// named reason: the answer to "what did the alarm not see?".
    ///
    /// A call without a tool name is not counted: it names no tool to audit.
    pub fn coverage(&self) -> Coverage {
        self.coverage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The auditor, to inspect its catalogue.
    pub fn auditor(&self) -> &Auditor {
        &self.auditor
    }

    /// The wrapped provider.
    pub fn get_ref(&self) -> &P {
        &self.inner
    }

    /// Unwraps the wrapped provider.
    pub fn into_inner(self) -> P {
        self.inner
    }
}

impl<P: Provider> Provider for UnknownKeys<P> {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let listing = self.inner.tools_for_llm().await;
        if let Ok(declarations) = &listing {
            self.auditor
                .replace_catalog(Catalog::from_declarations(declarations));
        }
        listing
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        // The audit reads model-written text; whatever happens in it, the
        // call goes on exactly as it would without this layer.
        let mut coverage = Coverage::default();
        let warnings = catch_unwind(AssertUnwindSafe(|| {
            self.auditor.audit_batch_counted(&calls, &mut coverage)
        }))
        .unwrap_or_default();
        self.coverage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .merge(&coverage);
        for warning in &warnings {
            self.auditor.warn(warning);
        }
        self.inner.execute_tool_calls(calls).await
    }
}
