//! Asking a human: the question, the answers, and who is asked.

use std::fmt;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::command::Command;
use super::facts::UrlArgument;
use super::rules::Rule;
use mcp_unknown_keys::BoxFuture;

/// What the human is asked about one call, as `on_ask` receives it.
///
/// It is plain data (and serialises to JSON) so a host can show it in a
/// terminal, send it to a user interface or record it with the session.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Question {
    /// The tool called.
    pub tool: String,
    /// The call's id as text (`""` when it has none).
    pub id: String,
    /// The call's arguments as the model wrote them, parsed: an object when
    /// they read as one (absent or empty arguments as `{}`), otherwise the
    /// value as it came. `reason` is still in them.
    pub arguments: Value,
    /// The `reason` the model gave for the call, when it gave one as text
    /// (see [`Reasons`](crate::Reasons)).
    pub reason: Option<String>,
    /// The `ask` rule that matched, or `None` when no rule matched. A rule
    /// marked a danger ([`Question::is_danger`]) should be shown loudly,
    /// with its note.
    pub rule: Option<Rule>,
    /// The path arguments of the call.
    pub paths: Vec<PathArgument>,
    /// The URL arguments of the call.
    pub urls: Vec<UrlArgument>,
    /// The simple commands the call runs (see [`command`](super::command)).
    pub commands: Vec<Command>,
    /// A grant that would cover calls like this one: this tool, under the
    /// directory holding its paths (the tool's root when a path could not be
    /// placed); else on the one host its URLs name; else running the one
    /// program its commands run, when they could all be read; else the tool
    /// alone. Answer [`Answer::AlwaysAllow`]`(None)` to remember it. `None`
    /// when the tool's name cannot be written as a pattern (it holds `*`,
    /// `?`, brackets or braces): an `Always` answer without a rule then
    /// remembers nothing.
    pub suggested_grant: Option<Rule>,
}

impl Question {
    /// Whether the rule asking is marked a danger: no grant answers it, and
    /// it should be shown loudly.
    pub fn is_danger(&self) -> bool {
        self.rule.as_ref().is_some_and(Rule::is_danger)
    }
}

/// One path argument of a call, as the policy placed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathArgument {
    /// The argument's name (`path`, `from`, `to`, ...).
    pub argument: String,
    /// The path as the model wrote it (its JSON text when not a string).
    pub path: String,
    /// The path resolved lexically against the tool's root, or `None` when
    /// it could not be placed (`..`, a NUL, a backslash, a URL, not text).
    pub resolved: Option<String>,
}

impl fmt::Display for Question {
    /// One line for a terminal prompt, e.g.
    /// `fs_write (call_7) path=notes/todo.md — "to save the plan"`, or
    /// `shell_run (call_8) $ git push --force [danger: rewrites git history …]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.tool)?;
        if !self.id.is_empty() {
            write!(f, " ({})", self.id)?;
        }
        for path in &self.paths {
            write!(f, " {}={}", path.argument, path.path.escape_debug())?;
        }
        for url in &self.urls {
            write!(f, " {}={}", url.argument, url.url.escape_debug())?;
        }
        if !self.commands.is_empty() {
            let commands: Vec<String> = self.commands.iter().map(ToString::to_string).collect();
            write!(f, " $ {}", commands.join(" ; "))?;
        }
        if let Some(reason) = &self.reason {
            write!(f, " — \"{}\"", reason.escape_debug())?;
        }
        if let Some(rule) = self.rule.as_ref().filter(|rule| rule.is_danger()) {
            write!(
                f,
                " [danger: {}]",
                rule.note.as_deref().unwrap_or("marked a danger")
            )?;
        }
        Ok(())
    }
}

/// The human's answer to a [`Question`].
///
/// The `Always` answers remember a grant — the rule given, or the question's
/// [`suggested_grant`](Question::suggested_grant) — with its decision set to
/// allow or deny. Grants are consulted for calls that the rules would ask
/// about, never to override an `allow` or a `deny` rule, nor to lift an ask
/// marked a danger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Run this call.
    AllowOnce,
    /// Refuse this call.
    DenyOnce,
    /// Run this call, and remember to allow calls the grant covers.
    AlwaysAllow(Option<Rule>),
    /// Refuse this call, and remember to refuse calls the grant covers.
    AlwaysDeny(Option<Rule>),
}

type SyncAsk = dyn Fn(&Question) -> Answer + Send + Sync;
type AsyncAsk = dyn Fn(Question) -> BoxFuture<'static, Answer> + Send + Sync;

/// Who answers questions.
#[derive(Clone, Default)]
pub(super) enum Asker {
    /// No one: every question is refused.
    #[default]
    Nobody,
    Sync(Arc<SyncAsk>),
    Async(Arc<AsyncAsk>),
}

impl Asker {
    pub(super) fn sync(ask: impl Fn(&Question) -> Answer + Send + Sync + 'static) -> Asker {
        Asker::Sync(Arc::new(ask))
    }

    pub(super) fn asynchronous<F, Fut>(ask: F) -> Asker
    where
        F: Fn(Question) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        Asker::Async(Arc::new(move |question| Box::pin(ask(question))))
    }

    /// The answer, or `None` when no one can answer: there is no callback,
    /// or it panicked.
    pub(super) async fn ask(&self, question: Question) -> Option<Answer> {
        match self {
            Asker::Nobody => None,
            Asker::Sync(ask) => catch_unwind(AssertUnwindSafe(|| ask(&question))).ok(),
            Asker::Async(ask) => {
                let mut answer = catch_unwind(AssertUnwindSafe(|| ask(question))).ok()?;
                poll_fn(
                    |cx| match catch_unwind(AssertUnwindSafe(|| answer.as_mut().poll(cx))) {
                        Ok(Poll::Ready(answer)) => Poll::Ready(Some(answer)),
                        Ok(Poll::Pending) => Poll::Pending,
                        Err(_) => Poll::Ready(None),
                    },
                )
                .await
            }
        }
    }

    pub(super) fn is_nobody(&self) -> bool {
        matches!(self, Asker::Nobody)
    }
}
