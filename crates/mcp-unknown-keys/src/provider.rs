//! The provider contract every layer and every source of tools satisfies.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::wire::{ToolCall, ToolDeclaration, ToolResult};

/// The error a provider fails with: any error, boxed, as in `tower`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A boxed, sendable future, as [`DynProvider`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A source of tools for a model: it lists them and it runs calls to them.
///
/// Registries, MCP servers and every layer of a stack are providers, so a
/// layer stacks in wherever a provider goes. Implement it with `async fn`:
///
/// ```
/// use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult};
/// use serde_json::json;
///
/// struct Clock;
///
/// impl Provider for Clock {
///     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
///         Ok(vec![ToolDeclaration::new("now", None, json!({"type": "object", "properties": {}}))])
///     }
///
///     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
///         Ok(calls.iter().map(|call| ToolResult::ok(call.id_text(), "12:00")).collect())
///     }
/// }
/// ```
///
/// The methods are written as `-> impl Future + Send` so that generic code
/// can await them on any runtime; [`DynProvider`] is the object-safe twin for
/// holding providers of different kinds side by side.
pub trait Provider: Send + Sync {
    /// The catalogue as OpenAI function declarations. A provider that cannot
    /// list fails: a silently shorter catalogue hides a capability.
    fn tools_for_llm(&self) -> impl Future<Output = Result<Vec<ToolDeclaration>, BoxError>> + Send;

    /// Runs a batch of calls and answers one result per call, in the
    /// caller's order.
    fn execute_tool_calls(
        &self,
        calls: Vec<ToolCall>,
    ) -> impl Future<Output = Result<Vec<ToolResult>, BoxError>> + Send;
}

/// The object-safe twin of [`Provider`], implemented for every provider.
///
/// `Box<dyn DynProvider>` and `Arc<dyn DynProvider>` are providers again, so
/// a registry can hold an MCP server beside an in-process toolkit.
///
/// ```
/// use std::sync::Arc;
/// use mcp_unknown_keys::{DynProvider, Provider};
///
/// fn erase<P: Provider + 'static>(provider: P) -> Arc<dyn DynProvider> {
///     Arc::new(provider)
/// }
/// ```
pub trait DynProvider: Send + Sync {
    /// [`Provider::tools_for_llm`], boxed.
    fn tools_for_llm_boxed(&self) -> BoxFuture<'_, Result<Vec<ToolDeclaration>, BoxError>>;

    /// [`Provider::execute_tool_calls`], boxed.
    fn execute_tool_calls_boxed(
        &self,
        calls: Vec<ToolCall>,
    ) -> BoxFuture<'_, Result<Vec<ToolResult>, BoxError>>;
}

impl<P: Provider> DynProvider for P {
    fn tools_for_llm_boxed(&self) -> BoxFuture<'_, Result<Vec<ToolDeclaration>, BoxError>> {
        Box::pin(self.tools_for_llm())
    }

    fn execute_tool_calls_boxed(
        &self,
        calls: Vec<ToolCall>,
    ) -> BoxFuture<'_, Result<Vec<ToolResult>, BoxError>> {
        Box::pin(self.execute_tool_calls(calls))
    }
}

impl Provider for Box<dyn DynProvider> {
    fn tools_for_llm(&self) -> impl Future<Output = Result<Vec<ToolDeclaration>, BoxError>> + Send {
        (**self).tools_for_llm_boxed()
    }

    fn execute_tool_calls(
        &self,
        calls: Vec<ToolCall>,
    ) -> impl Future<Output = Result<Vec<ToolResult>, BoxError>> + Send {
        (**self).execute_tool_calls_boxed(calls)
    }
}

impl Provider for Arc<dyn DynProvider> {
    fn tools_for_llm(&self) -> impl Future<Output = Result<Vec<ToolDeclaration>, BoxError>> + Send {
        (**self).tools_for_llm_boxed()
    }

    fn execute_tool_calls(
        &self,
        calls: Vec<ToolCall>,
    ) -> impl Future<Output = Result<Vec<ToolResult>, BoxError>> + Send {
        (**self).execute_tool_calls_boxed(calls)
    }
}

impl<P: Provider> Provider for Arc<P> {
    fn tools_for_llm(&self) -> impl Future<Output = Result<Vec<ToolDeclaration>, BoxError>> + Send {
        (**self).tools_for_llm()
    }

    fn execute_tool_calls(
        &self,
        calls: Vec<ToolCall>,
    ) -> impl Future<Output = Result<Vec<ToolResult>, BoxError>> + Send {
        (**self).execute_tool_calls(calls)
    }
}
