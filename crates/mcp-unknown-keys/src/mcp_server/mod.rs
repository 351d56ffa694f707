//! `McpServer`: a provider over one MCP server, on rmcp (feature `mcp`).
//!
//! - this file: the connection and the [`Provider`] it answers as;
//! - `stdio`: a child process over stdio ([`StdioServer`]), with the tail
//!   of its stderr;
//! - `http`: a streamable HTTP endpoint (`HttpServer`, feature `http`),
//!   with its TLS;
//! - `convert`: declarations, arguments and results between MCP's forms and
//!   the wire's;
//! - `errors`: failures in words, and [`ConnectError`].

mod convert;
mod errors;
#[cfg(feature = "http")]
mod http;
mod stdio;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::{ClientCacheConfig, Peer, RoleClient, ServiceError, ServiceExt};

use crate::join::join_all;
use crate::provider::{BoxError, Provider};
use crate::wire::{ToolCall, ToolDeclaration, ToolResult};
use convert::{declaration, read_arguments, tool_result};
use errors::{append_tail, initialize_error_text, is_transport_error, seconds, service_error_text};
use stdio::StderrTail;

pub use errors::ConnectError;
#[cfg(feature = "http")]
pub use http::HttpServer;
pub use stdio::StdioServer;

/// How long a call, a listing or the handshake may take before it is given
/// up on, unless set otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A provider over one MCP server, spoken to with rmcp, the official Rust
/// SDK: a child process over stdio ([`McpServer::stdio`]) or, with the
/// `http` feature, a streamable HTTP endpoint (`McpServer::http`).
///
/// - [`tools_for_llm`](Provider::tools_for_llm) lists every page of
///   `tools/list` and declares each tool as an OpenAI function whose
///   `parameters` is its `inputSchema`, verbatim (an empty schema becomes
///   `{"type":"object","properties":{}}`). rmcp's response cache is turned
///   off: a listing that fails is an error, never a stale list.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) sends the calls
///   side by side and answers one result per call, in the caller's order. It
///   never fails the batch: arguments that are not a JSON object, an unknown
///   tool, a server error, a timeout or a dead server each become an
///   `is_error` result for that call. Content blocks become text (texts
///   joined by newlines, other blocks as bracketed placeholders such as
///   `[image: image/png]`), `isError` becomes `is_error` and
///   `structuredContent` becomes `structured_content`.
///
/// A server that dies is reported with the tail of its stderr, which is
/// otherwise passed on to this process's stderr line by line (see
/// [`StdioServer::forward_stderr`]). [`close`](McpServer::close) shuts a child
/// down the way the MCP specification asks: its stdin is closed, then it is
/// sent `SIGTERM`, then killed. Dropping an `McpServer` without closing it
/// does the same in the background, and the child is killed at the latest
/// when the async runtime goes away.
///
/// Cloning is cheap and the clones share one connection: hand one to a
/// [`Registry`](crate::Registry) and keep another to close it.
///
/// ```no_run
/// use mcp_unknown_keys::{BoxError, McpServer, Provider, ToolCall};
///
/// # async fn run() -> Result<(), BoxError> {
/// let time = McpServer::stdio("mcp-server-time")
///     .args(["--local-timezone", "UTC"])
///     .connect()
///     .await?;
/// for tool in time.tools_for_llm().await? {
///     println!("{}", tool.name().unwrap_or("?"));
/// }
/// let call = ToolCall::new("call_1", "get_current_time", r#"{"timezone":"Europe/Paris"}"#);
/// let results = time.execute_tool_calls(vec![call]).await?;
/// println!("{}", results[0].content);
/// time.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    name: String,
    peer: Peer<RoleClient>,
    service: Arc<tokio::sync::Mutex<Option<RunningService<RoleClient, ClientConfig>>>>,
    timeout: Duration,
    stderr: Option<StderrTail>,
    process_id: Option<u32>,
}

impl McpServer {
    /// The name errors call this server by: the program's file name, the
    /// URL, or what [`StdioServer::name`] set.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a call or a listing may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The child's process id (a child process only).
    pub fn process_id(&self) -> Option<u32> {
        self.process_id
    }

    /// The last lines the server wrote to stderr (a child process only).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.as_ref().map(StderrTail::lines).unwrap_or_default()
    }

    /// Shuts the connection down, for every clone, and waits for it: a child
    /// process has its stdin closed, and is sent `SIGTERM` and then killed if
    /// it does not exit within a few seconds of each. Calls made afterwards
    /// answer `is_error` results. Closing twice is harmless.
    pub async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            let _ = service.close().await;
        }
    }

    async fn start<T, E, A>(
        name: String,
        timeout: Duration,
        transport: T,
        stderr: Option<StderrTail>,
        process_id: Option<u32>,
    ) -> Result<McpServer, ConnectError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-unknown-keys", env!("CARGO_PKG_VERSION")),
        );
        let handshake = tokio::time::timeout(timeout, client.serve(transport)).await;
        let failure = match handshake {
            Ok(Ok(service)) => {
                // A failed re-listing must be an error, never the last good list.
                service
                    .set_response_cache_config(ClientCacheConfig::disabled())
                    .await;
                return Ok(McpServer {
                    name,
                    peer: service.peer().clone(),
                    service: Arc::new(tokio::sync::Mutex::new(Some(service))),
                    timeout,
                    stderr,
                    process_id,
                });
            }
            Ok(Err(error)) => initialize_error_text(&error),
            Err(_) => format!("no answer to `initialize` within {}", seconds(timeout)),
        };
        let stderr_tail = match &stderr {
            Some(tail) => tail.lines_at_exit().await,
            None => Vec::new(),
        };
        Err(ConnectError {
            name,
            reason: failure,
            stderr_tail,
        })
    }

    async fn call(&self, call: &ToolCall) -> ToolResult {
        let id = call.id_text();
        let Some(name) = call.name() else {
            return ToolResult::error(id, "malformed tool call: it has no `function.name` string");
        };
        let arguments = match read_arguments(call.arguments()) {
            Ok(arguments) => arguments,
            Err(problem) => return ToolResult::error(id, problem),
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match tokio::time::timeout(self.timeout, self.peer.call_tool(params)).await {
            Ok(Ok(result)) => tool_result(id, result),
            Ok(Err(error)) => ToolResult::error(id, self.describe(name, error).await),
            Err(_) => ToolResult::error(
                id,
                format!(
                    "`{name}` on MCP server `{}` did not answer within {}",
                    self.name,
                    seconds(self.timeout)
                ),
            ),
        }
    }

    /// Words for a failed request; a dead server comes with its last words.
    async fn describe(&self, tool: &str, error: ServiceError) -> String {
        match error {
            ServiceError::McpError(error) => format!(
                "MCP server `{}` refused `{tool}`: {} (error {})",
                self.name, error.message, error.code.0
            ),
            ServiceError::UnexpectedResponse => format!(
                "MCP server `{}` answered `{tool}` with something other than a tool result \
                 (input requests and tasks are not supported by this client)",
                self.name
            ),
            error if self.peer.is_transport_closed() || is_transport_error(&error) => {
                self.gone(&service_error_text(&error)).await
            }
            error => format!(
                "MCP server `{}` failed on `{tool}`: {}",
                self.name,
                service_error_text(&error)
            ),
        }
    }

    async fn gone(&self, error: &str) -> String {
        let state = match self.process_id {
            Some(_) => "is not running",
            None => "cannot be reached",
        };
        let mut message = format!("MCP server `{}` {state} ({error})", self.name);
        if let Some(stderr) = &self.stderr {
            append_tail(&mut message, &stderr.lines_at_exit().await);
        }
        message
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Provider for McpServer {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let listing = tokio::time::timeout(self.timeout, self.peer.list_all_tools()).await;
        let tools = match listing {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => {
                let message = match error {
                    ServiceError::McpError(error) => format!(
                        "MCP server `{}` could not list its tools: {} (error {})",
                        self.name, error.message, error.code.0
                    ),
                    error if self.peer.is_transport_closed() || is_transport_error(&error) => {
                        self.gone(&service_error_text(&error)).await
                    }
                    error => format!(
                        "MCP server `{}` could not list its tools: {}",
                        self.name,
                        service_error_text(&error)
                    ),
                };
                return Err(message.into());
            }
            Err(_) => {
                return Err(format!(
                    "MCP server `{}` did not list its tools within {}",
                    self.name,
                    seconds(self.timeout)
                )
                .into());
            }
        };
        Ok(tools.iter().map(declaration).collect())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        // Side by side: rmcp matches each answer to its request by id.
        let results = join_all(calls.iter().map(|call| self.call(call))).await;
        // A call that panicked is that call's failure, never the batch's.
        Ok(results
            .into_iter()
            .zip(&calls)
            .map(|(result, call)| {
                result.unwrap_or_else(|_| ToolResult::error(call.id_text(), "the call panicked in McpServer"))
            })
            .collect())
    }
}
