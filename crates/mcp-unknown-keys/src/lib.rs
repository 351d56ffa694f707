//! Report the arguments a model's tool call carries that the tool never
//! declared — without changing, rejecting or delaying the call.
//!
//! A model's tool call reaches a tool as a JSON object whose keys nobody
//! checked. A truncated generation closed into valid JSON, a provider that
//! re-serialised the arguments lossily, a model that invented a parameter:
//! each yields keys the tool never declared, and most MCP servers silently
//! drop them and run with defaults. The call "succeeds" and does four fifths
//! of the job.
//!
//! [`UnknownKeys`] is a provider layer that compares each call's argument
//! keys with the keys its tool's schema declared, and reports each
//! undeclared (tool, key) pair once. It is a smoke alarm, not a valve: the
//! batch is forwarded unchanged and the results come back as they came.
//!
//! # A stack
//!
//! Providers list tools and run calls ([`Provider`]); layers wrap providers
//! with the [`tower_layer::Layer`] trait, so `tower::ServiceBuilder` builds a
//! stack, outermost layer first:
//!
//! ```
//! use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult, UnknownKeysLayer};
//! use mcp_unknown_keys::audit::Warning;
//! use serde_json::json;
//! use std::sync::{Arc, Mutex};
//! use tower::ServiceBuilder;
//!
//! /// A toolkit whose `fs_read` declares `path` and `offset`.
//! struct Files;
//!
//! impl Provider for Files {
//!     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
//!         let schema = json!({"type": "object", "properties": {"path": {}, "offset": {}}});
//!         Ok(vec![ToolDeclaration::new("fs_read", Some("Read a file"), schema)])
//!     }
//!
//!     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
//!         Ok(calls.iter().map(|call| ToolResult::ok(call.id_text(), "fn main() {}")).collect())
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
//! let record = warnings.clone();
//! let stack = ServiceBuilder::new()
//!     .layer(UnknownKeysLayer::new().on_warn(move |w: &Warning| record.lock().unwrap().push(w.clone())))
//!     .service(Files);
//!
//! stack.tools_for_llm().await?; // fills the catalogue
//! let call = ToolCall::new("call_1", "fs_read", r#"{"path":"src/app.rs","ffset":12,"the rest":"…"}"#);
//! let results = stack.execute_tool_calls(vec![call]).await?;
//!
//! assert!(!results[0].is_error); // the read still happened
//! let warnings = warnings.lock().unwrap();
//! assert_eq!(warnings[0].unknown_keys, ["ffset", "the rest"]);
//! assert_eq!(warnings[0].declared_keys, ["offset", "path"]);
//! # Ok::<(), BoxError>(())
//! # }).unwrap();
//! ```
//!
//! # Where tools come from
//!
//! [`Registry`] publishes many providers under one namespace, each under a
//! prefix of its own (`fs` + `read` → `fs_read`), and routes every call back
//! to its provider; registries nest. With the feature `mcp`, `McpServer` is a
//! provider over one real MCP server (a child process over stdio, or
//! streamable HTTP with the feature `http`), spoken to with `rmcp`, the
//! official Rust SDK. `UnknownKeys(Registry(McpServer, McpServer))` is the
//! usual stack; see `examples/two_servers.rs`.
//!
//! # What is audited
//!
//! A call is audited only when its tool appeared in the latest successful
//! listing declaring at least one key (or with a closed schema), and its
//! arguments read as a JSON object (the JSON string a call travels as, or
//! an object). Anything else is the provider's to report. `reason` is always
//! tolerated, and hosts may tolerate more keys ([`UnknownKeysLayer::allow`]).
//!
//! A schema's declared keys are its `properties` with those its combinators
//! and local references add (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
//! `dependentSchemas`, `$ref`), and the keys its `patternProperties` match;
//! when a declared key's value is itself an object (or an array of objects)
//! whose schema declares keys, the keys inside are audited too and reported
//! as paths, `entities[].age` ([`audit::Catalog`] has the whole rule;
//! [`UnknownKeysLayer::top_level_only`] turns nested keys off). What a
//! schema holds that cannot be read (a remote `$ref`, a pattern that does
//! not compile) is said once, as a note beside the warnings.
//!
//! # Where warnings go
//!
//! To stderr by default ([`audit::StderrSink`]); to `tracing` with
//! [`audit::TracingSink`]; anywhere with a closure. The rules themselves live
//! in [`audit::Auditor`], which the `mcp-unknown-keys` command line's `proxy`
//! and `audit` share with this layer.
//!
//! # Its neighbours
//!
//! [`Reasons`] asks the model for a `reason` on every call and takes it out
//! before the call reaches the tool; `Policy` (the crate
//! `mcp-unknown-keys-policy`) allows, denies or asks a human about each
//! call, by tool and directory. Stacked as the seed
//! specification has it, `Policy(UnknownKeys(Reasons(registry)))`, the
//! auditor compares the keys the model wrote with the declarations the model
//! was shown, and sees only the calls the policy let through.

#![forbid(unsafe_code)]
#![warn(unreachable_pub)]
#![warn(missing_docs)]

pub mod audit;
mod join;
mod json_string;
pub mod jsonrpc;
pub mod limits;
#[cfg(feature = "mcp")]
mod mcp_server;
mod provider;
pub mod reasons;
mod registry;
pub mod session;
mod settle;
pub mod trace;
mod unknown_keys;
/// UTC timestamps for the doors' logs and wrap's backups: a helper the
/// workspace shares, not part of the alarm's API.
#[doc(hidden)]
pub mod utc;
mod wire;

#[cfg(feature = "http")]
pub use mcp_server::HttpServer;
#[cfg(feature = "mcp")]
pub use mcp_server::{ConnectError, DEFAULT_TIMEOUT, McpServer, StdioServer};
pub use provider::{BoxError, BoxFuture, DynProvider, Provider};
pub use reasons::{Reasons, ReasonsLayer};
pub use registry::{DEFAULT_SEPARATOR, Registry, RegistryError};
pub use settle::settle;
pub use unknown_keys::{UnknownKeys, UnknownKeysLayer};
pub use wire::{ToolCall, ToolDeclaration, ToolResult, id_text};
