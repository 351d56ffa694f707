//! The `Policy` provider layer: allow, deny or ask, per tool, directory,
//! website and command.
//!
//! [`Policy`] decides every call before it reaches the provider beneath:
//! [`Rule`]s name tools (`fs_read`, `fs_*`) and, optionally, a directory the
//! call's paths must lie under, the host its `url` names, the program its
//! command runs (taken apart by [`command`]) or a check the host supplies;
//! the rules are evaluated all together, deny over ask over allow, and a
//! call no rule matches is asked about. A human answers through an `on_ask`
//! callback, and what they say "always" to is remembered as a grant, in a
//! store several policies may share ([`Grants`]). The [`DangerFloor`] adds
//! the rules no grant lifts. The model is told in an error result when a
//! call was refused; the provider never sees it.

#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

mod ask;
mod checks;
pub mod command;
mod config;
mod decide;
mod error;
mod evaluate;
mod facts;
mod floor;
mod grants;
mod host;
mod layer;
mod paths;
mod patterns;
mod rules;

use std::sync::Arc;

pub use ask::{Answer, PathArgument, Question};
pub use checks::Tristate;
pub use config::{CommandArguments, PolicyConfig};
pub use error::RuleError;
pub use facts::UrlArgument;
pub use floor::DangerFloor;
pub use grants::Grants;
pub use host::{HostPattern, UrlProblem, url_host};
pub use layer::PolicyLayer;
pub use patterns::{CommandPattern, Dir, ToolPattern};
pub use rules::{Decision, Narrowing, Rule, Severity, default_rules};

use self::ask::Asker;
use self::config::Compiled;
use self::decide::Outcome;
use self::layer::OnGrant;
use mcp_unknown_keys::{BoxError, Provider, settle};

use mcp_unknown_keys::{ToolCall, ToolDeclaration, ToolResult};

/// A provider that runs only the calls its rules, its grants or a human
/// allow.
///
/// - [`tools_for_llm`](Provider::tools_for_llm) passes the listing through,
///   less the tools a blanket `deny` rule refuses (unless
///   [`PolicyConfig::hide_denied`] is off). A failed listing fails.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) decides each call
///   in order: by the rules; when they say ask, by the grants; when no grant
///   covers it, by asking `on_ask` (refused when there is no callback, or it
///   panics). The allowed calls are forwarded as one batch, in order and as
///   they came; each refused call gets an `is_error` result telling the
///   model why, and the provider never sees it. A call without a tool name
///   is refused. A batch with no call left to run (an empty one included)
///   is not forwarded.
///
/// It never fails a batch: an inner failure becomes one error result per
/// allowed call, and an allowed call the inner provider left unanswered gets
/// an error result.
///
/// ```
/// use mcp_unknown_keys_policy::{Answer, Question, Rule, default_rules};
/// use mcp_unknown_keys::{BoxError, Provider, ToolCall, ToolDeclaration, ToolResult};
/// use mcp_unknown_keys_policy::{PolicyLayer};
/// use serde_json::json;
/// use tower::ServiceBuilder;
///
/// /// The example server's tools, in process.
/// struct Files;
///
/// impl Provider for Files {
///     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
///         let schema = json!({"type": "object", "properties": {"path": {}, "content": {}}});
///         Ok(["fs_read", "fs_write", "shell_run"]
///             .map(|name| ToolDeclaration::new(name, None, schema.clone()))
///             .to_vec())
///     }
///
///     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
///         Ok(calls.iter().map(|call| ToolResult::ok(call.id_text(), "done")).collect())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut rules = default_rules(); // allow fs_read and fs_list
/// rules.push(Rule::deny("shell_*")?);
/// let stack = ServiceBuilder::new()
///     .layer(PolicyLayer::new(rules).on_ask(|question: &Question| {
///         // A host would prompt its user here.
///         if question.paths.iter().all(|p| p.path.starts_with("notes/")) {
///             Answer::AlwaysAllow(None) // remembers question.suggested_grant
///         } else {
///             Answer::DenyOnce
///         }
///     }))
///     .service(Files);
///
/// // shell_run is hidden from the model: a blanket rule denies it.
/// let tools = stack.tools_for_llm().await?;
/// assert_eq!(tools.iter().map(|t| t.name().unwrap()).collect::<Vec<_>>(), ["fs_read", "fs_write"]);
///
/// let results = stack.execute_tool_calls(vec![
///     ToolCall::new("1", "fs_read", r#"{"path": "src/main.rs"}"#),      // allowed by a rule
///     ToolCall::new("2", "fs_write", r#"{"path": "notes/plan.md"}"#),   // asked: always allow
///     ToolCall::new("3", "fs_write", r#"{"path": "src/main.rs"}"#),     // asked: deny once
///     ToolCall::new("4", "shell_run", r#"{"command": "ls"}"#),          // denied by a rule
/// ]).await?;
/// assert_eq!(results.iter().map(|r| r.is_error).collect::<Vec<_>>(), [false, false, true, true]);
/// assert_eq!(stack.grants(), [Rule::allow("fs_write")?.under("notes")?]);
/// # Ok::<(), BoxError>(())
/// # }).unwrap();
/// ```
pub struct Policy<P> {
    inner: P,
    config: Arc<Compiled>,
    asker: Asker,
    grants: Grants,
    on_grant: Option<Arc<OnGrant>>,
}

impl Policy<()> {
    /// A [`PolicyLayer`] with these rules, for `tower::ServiceBuilder`.
    pub fn layer(rules: Vec<Rule>) -> PolicyLayer {
        PolicyLayer::new(rules)
    }

    /// The rules for the example server's read-only tools: see
    /// [`default_rules`].
    pub fn default_rules() -> Vec<Rule> {
        default_rules()
    }

    /// The danger floor's rules for the user whose home is `home`: see
    /// [`DangerFloor`]. They name the floor's checks, which
    /// [`PolicyLayer::danger_floor`] installs with them.
    pub fn danger_floor(home: Dir) -> Vec<Rule> {
        DangerFloor::new(home).rules()
    }
}

impl<P> Policy<P> {
    /// Wraps `inner` with this configuration, no grants, and no one to ask:
    /// every call the rules would ask about is refused.
    pub fn new(inner: P, config: PolicyConfig) -> Policy<P> {
        PolicyLayer::from_config(config).wrap(inner)
    }

    /// The grants remembered so far, those it was given first. Hand them to
    /// a new policy with [`PolicyLayer::grants`] to carry them over.
    pub fn grants(&self) -> Vec<Rule> {
        self.grants.list()
    }

    /// The store its grants are kept in, shared with every policy given it.
    pub fn grant_store(&self) -> &Grants {
        &self.grants
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

impl<P: Provider> Provider for Policy<P> {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let mut declarations = self.inner.tools_for_llm().await?;
        if self.config.hide_denied {
            declarations.retain(|declaration| {
                declaration
                    .name()
                    .is_none_or(|tool| !self.config.blanket_denied(tool))
            });
        }
        Ok(declarations)
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        let mut refusals: Vec<Option<ToolResult>> = Vec::with_capacity(calls.len());
        let mut allowed = Vec::with_capacity(calls.len());
        let mut allowed_ids = Vec::with_capacity(calls.len());
        for call in calls {
            match self.decide(&call).await {
                Outcome::Run => {
                    refusals.push(None);
                    allowed_ids.push(call.id_text());
                    allowed.push(call);
                }
                Outcome::Refuse(message) => refusals.push(Some(ToolResult::error(call.id_text(), message))),
            }
        }
        let mut answers = if allowed.is_empty() {
            Vec::new()
        } else {
            settle(&allowed_ids, self.inner.execute_tool_calls(allowed).await)
        }
        .into_iter();
        // Each refusal in its place, the answers in order around them; any
        // answer beyond the calls stays, at the end.
        let mut results: Vec<ToolResult> = refusals
            .into_iter()
            .filter_map(|refusal| refusal.or_else(|| answers.next()))
            .collect();
        results.extend(answers);
        Ok(results)
    }
}

impl<P: std::fmt::Debug> std::fmt::Debug for Policy<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .field("grants", &self.grants())
            .finish_non_exhaustive()
    }
}
