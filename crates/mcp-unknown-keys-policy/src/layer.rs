use std::future::Future;
use std::sync::Arc;

use tower_layer::Layer;

use super::Policy;
use super::ask::Asker;
use super::ask::{Answer, Question};
use super::checks::Checks;
use super::checks::Tristate;
use super::command::Command;
use super::config::PolicyConfig;
use super::config::{CommandArguments, Compiled};
use super::floor::DangerFloor;
use super::grants::Grants;
use super::patterns::{Dir, ToolPattern};
use super::rules::Rule;

/// Called with a grant just remembered and every grant as they then stood.
pub(super) type OnGrant = dyn Fn(&Rule, &[Rule]) + Send + Sync;

/// Wraps providers in [`Policy`], as a [`tower_layer::Layer`].
///
/// Each provider it wraps starts with the grants given here and remembers
/// its own from then on — unless they are given one
/// [`grant_store`](PolicyLayer::grant_store) to share.
///
/// ```
/// use mcp_unknown_keys_policy::PolicyLayer;
/// use mcp_unknown_keys_policy::{Answer, Dir, Policy, Question};
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
    grants: GrantSource,
    asker: Asker,
    checks: Checks,
    on_grant: Option<Arc<OnGrant>>,
}

/// Where the policies a layer builds keep their grants.
#[derive(Clone, Debug)]
enum GrantSource {
    /// Each its own store, starting with these.
    Own(Vec<Rule>),
    /// One store for all.
    Shared(Grants),
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
            grants: GrantSource::Own(Vec::new()),
            asker: Asker::Nobody,
            checks: Checks::default(),
            on_grant: None,
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

    /// Reads the command of the tools `tools` matches from these arguments
    /// instead of `command` and `args` (see [`CommandArguments`]).
    pub fn command_arguments(mut self, tools: ToolPattern, arguments: CommandArguments) -> PolicyLayer {
        self.config.command_arguments.insert(tools, arguments);
        self
    }

    /// Puts the danger floor under the rules: its rules go first, with the
    /// checks they name (see [`DangerFloor`]).
    ///
    /// ```
    /// use mcp_unknown_keys_policy::PolicyLayer;
    /// use mcp_unknown_keys_policy::{DangerFloor, Dir, Rule};
    ///
    /// let home = Dir::new("/home/dev").unwrap();
    /// let layer = PolicyLayer::new(vec![Rule::allow("shell_run").unwrap()])
    ///     .danger_floor(DangerFloor::new(home));
    /// # drop(layer);
    /// ```
    pub fn danger_floor(mut self, floor: DangerFloor) -> PolicyLayer {
        self.config.danger_floor = Some(floor);
        self
    }

    /// Names a check that rules can use (`"check": "name"`): asked about
    /// each simple command a call runs, it answers [`Tristate::Yes`], `No`
    /// or `Unknown` (which fails closed). A check that panics answers
    /// `Unknown`, and so does a name no check has. The danger floor's checks
    /// (named `danger.…`) cannot be replaced.
    ///
    /// ```
    /// use mcp_unknown_keys_policy::PolicyLayer;
    /// use mcp_unknown_keys_policy::command::Command;
    /// use mcp_unknown_keys_policy::{Rule, Tristate};
    ///
    /// // Deny `make` targets outside the ones this project builds.
    /// let rules = vec![Rule::deny("shell_run").unwrap().command("make").unwrap().check("odd_make_target").unwrap()];
    /// let layer = PolicyLayer::new(rules).check("odd_make_target", |command: &Command| {
    ///     match command.is_complete() {
    ///         true if command.args.iter().all(|target| ["build", "test"].contains(&target.as_str())) => Tristate::No,
    ///         true => Tristate::Yes,
    ///         false => Tristate::Unknown,
    ///     }
    /// });
    /// # drop(layer);
    /// ```
    pub fn check(
        mut self,
        name: impl Into<String>,
        check: impl Fn(&Command) -> Tristate + Send + Sync + 'static,
    ) -> PolicyLayer {
        self.checks.insert(name, check);
        self
    }

    /// Starts with these grants, e.g. those an earlier policy remembered
    /// ([`Policy::grants`]); each provider wrapped gets a store of its own.
    /// A grant whose decision is `ask` changes nothing.
    pub fn grants(mut self, grants: Vec<Rule>) -> PolicyLayer {
        self.grants = GrantSource::Own(grants);
        self
    }

    /// Keeps every wrapped provider's grants in this one store, shared with
    /// every other policy given it: a human's "always" answered through one
    /// is in force for all at their next call.
    pub fn grant_store(mut self, grants: Grants) -> PolicyLayer {
        self.grants = GrantSource::Shared(grants);
        self
    }

    /// Calls `on_grant` each time an "always" answer is remembered, with
    /// the grant and every grant of the store right after it was added (to
    /// save them, say). It is called after the store's lock is released, on
    /// the task that asked; one that panics is ignored. Policies sharing a
    /// store may call it at the same time, in any order.
    pub fn on_grant(mut self, on_grant: impl Fn(&Rule, &[Rule]) + Send + Sync + 'static) -> PolicyLayer {
        self.on_grant = Some(Arc::new(on_grant));
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
    /// use mcp_unknown_keys_policy::PolicyLayer;
    /// use mcp_unknown_keys_policy::{Answer, Question};
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
        let grants = match &self.grants {
            GrantSource::Own(grants) => Grants::new(grants.clone()),
            GrantSource::Shared(store) => store.clone(),
        };
        Policy {
            inner,
            config: Arc::new(Compiled::new(self.config.clone(), self.checks.clone())),
            asker: self.asker.clone(),
            grants,
            on_grant: self.on_grant.clone(),
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
            .field("checks", &self.checks)
            .field("on_ask", &!self.asker.is_nobody())
            .field("on_grant", &self.on_grant.is_some())
            .finish()
    }
}
