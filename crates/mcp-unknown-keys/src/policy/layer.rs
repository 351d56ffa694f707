use std::future::Future;
use std::sync::{Arc, Mutex};

use tower_layer::Layer;

use super::ask::Asker;
use super::config::Compiled;
use super::{Answer, Dir, Policy, PolicyConfig, Question, Rule};

/// Wraps providers in [`Policy`], as a [`tower_layer::Layer`].
///
/// Each provider it wraps starts with the grants given here and remembers
/// its own from then on.
///
/// ```
/// use mcp_unknown_keys::PolicyLayer;
/// use mcp_unknown_keys::policy::{Answer, Dir, Policy, Question};
///
/// let layer = PolicyLayer::new(Policy::default_rules())
///     .root("fs_", Dir::new("/srv/project").unwrap())
///     .path_arguments("fs_task", ["cwd"])
///     .on_ask(|question: &Question| {
///         eprintln!("allow {question}? (no)");
///         Answer::DenyOnce
///     });
/// # drop(layer);
/// ```
#[derive(Clone)]
pub struct PolicyLayer {
    config: PolicyConfig,
    grants: Vec<Rule>,
    asker: Asker,
}

impl PolicyLayer {
    /// A layer with these rules and no one to ask: every call the rules
    /// would ask about is refused until [`on_ask`](PolicyLayer::on_ask) is
    /// set.
    pub fn new(rules: Vec<Rule>) -> PolicyLayer {
        PolicyLayer::from_config(PolicyConfig::new(rules))
    }

    /// A layer with this configuration and no one to ask.
    pub fn from_config(config: PolicyConfig) -> PolicyLayer {
        PolicyLayer {
            config,
            grants: Vec::new(),
            asker: Asker::Nobody,
        }
    }

    /// Resolves the relative paths of the tools named `prefix…` (and the
    /// `under` of the rules about them) against `root`.
    pub fn root(mut self, prefix: impl Into<String>, root: Dir) -> PolicyLayer {
        self.config.roots.insert(prefix.into(), root);
        self
    }

    /// Reads the paths of `tool` from these arguments instead of `path`,
    /// `from` and `to`.
    pub fn path_arguments<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        arguments: impl IntoIterator<Item = S>,
    ) -> PolicyLayer {
        let arguments = arguments.into_iter().map(Into::into).collect();
        self.config.path_arguments.insert(tool.into(), arguments);
        self
    }

    /// Whether the tools a blanket `deny` rule refuses are hidden from the
    /// listing (they are unless turned off).
    pub fn hide_denied(mut self, hide: bool) -> PolicyLayer {
        self.config.hide_denied = hide;
        self
    }

    /// Starts with these grants, e.g. those an earlier policy remembered
    /// ([`Policy::grants`]). A grant whose decision is `ask` changes nothing.
    pub fn grants(mut self, grants: Vec<Rule>) -> PolicyLayer {
        self.grants = grants;
        self
    }

    /// Asks `on_ask` about the calls the rules and grants leave undecided.
    /// It runs on the task executing the batch, one question at a time in
    /// call order; one that panics refuses the call.
    pub fn on_ask(mut self, on_ask: impl Fn(&Question) -> Answer + Send + Sync + 'static) -> PolicyLayer {
        self.asker = Asker::sync(on_ask);
        self
    }

    /// Asks an async `on_ask` instead, for a host whose user answers
    /// elsewhere (a user interface, a chat) while the batch waits.
    ///
    /// ```
    /// use mcp_unknown_keys::PolicyLayer;
    /// use mcp_unknown_keys::policy::{Answer, Question};
    ///
    /// let layer = PolicyLayer::new(Vec::new()).on_ask_async(|question: Question| async move {
    ///     // e.g. send the question to the user interface and await its answer
    ///     if question.reason.is_some() { Answer::AllowOnce } else { Answer::DenyOnce }
    /// });
    /// # drop(layer);
    /// ```
    pub fn on_ask_async<F, Fut>(mut self, on_ask: F) -> PolicyLayer
    where
        F: Fn(Question) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Answer> + Send + 'static,
    {
        self.asker = Asker::asynchronous(on_ask);
        self
    }

    pub(super) fn wrap<P>(&self, inner: P) -> Policy<P> {
        Policy {
            inner,
            config: Arc::new(Compiled::new(self.config.clone())),
            asker: self.asker.clone(),
            grants: Mutex::new(self.grants.clone()),
        }
    }
}

impl<P> Layer<P> for PolicyLayer {
    type Service = Policy<P>;

    fn layer(&self, inner: P) -> Policy<P> {
        self.wrap(inner)
    }
}

impl std::fmt::Debug for PolicyLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyLayer")
            .field("config", &self.config)
            .field("grants", &self.grants)
            .field("on_ask", &!self.asker.is_nobody())
            .finish()
    }
}
