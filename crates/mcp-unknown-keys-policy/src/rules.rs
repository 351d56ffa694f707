//! Rules: which calls a policy allows, denies or asks about.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::host::HostPattern;
use super::patterns::{CommandPattern, Dir, ToolPattern};
use crate::error::RuleError;

/// What a rule (or a grant) decides about the calls it matches.
///
/// Rules are evaluated all together: deny wins over ask, ask over allow, and
/// a call no rule matches is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run the call.
    Allow,
    /// Ask a human first.
    Ask,
    /// Refuse the call.
    Deny,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        })
    }
}

/// How loudly a rule should be shown to the human it asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A danger: shown in red, never answered by a grant (see
    /// [`DangerFloor`](super::DangerFloor)).
    Danger,
}

/// One rule: `{"tool", "decision"}` and what narrows it — `under`, `host`,
/// `command` (with `args` and `args_any`), `check` — with a `note` and a
/// `severity` for the human.
///
/// Without a narrowing member a rule matches every call to its tools. Each
/// member narrows it further, and a call must meet all of them:
///
/// - `under`: the paths a call names (see [`PolicyConfig`](super::PolicyConfig)
///   for which arguments are paths and what `under` is joined onto);
/// - `host`: the host of the call's `url` argument ([`HostPattern`]);
/// - `command`: the program of each simple command the call's command runs
///   ([`CommandPattern`]); `args`: the arguments it must begin with;
///   `args_any`: arguments one of which it must have anywhere;
/// - `check`: a function the host supplies, asked about each simple command
///   ([`PolicyLayer::check`](super::PolicyLayer::check)).
///
/// Each member is asked "yes", "no" or "cannot tell", and cannot tell fails
/// closed: an `allow` rule matches only when every path, URL and simple
/// command is known to meet it; a `deny` or `ask` rule matches when any one
/// meets it or cannot be told — a path that cannot be placed (`..`, a NUL, a
/// backslash, a URL, a relative path against an absolute directory or the
/// reverse, a value that is not text), a URL that cannot be read (see
/// [`url_host`](super::url_host)), a command that cannot be read (see
/// [`command`](super::command)), arguments that do not read as an object.
/// A call that names no path, URL or command is not about one: a rule with
/// `under`, `host` or `command` does not match it.
///
/// `allow` compares programs, arguments and the directories of `under`
/// exactly; `deny` and `ask` fold case, as a case-insensitive file system
/// (macOS's, Windows') would: `deny under secrets` also denies
/// `SECRETS/key`. Hosts are compared without case by every rule, and an IPv6
/// address in any spelling (see [`HostPattern`]).
///
/// Unknown members are refused when a rule is read, and so are bad
/// patterns, directories and hosts, and `args` without a `command`:
///
/// ```
/// use mcp_unknown_keys_policy::{Decision, Rule};
///
/// let rule: Rule = serde_json::from_str(r#"{"tool": "fs_*", "decision": "deny", "under": "secrets"}"#).unwrap();
/// assert_eq!(rule, Rule::deny("fs_*").unwrap().under("secrets").unwrap());
/// assert_eq!(rule.to_string(), "deny fs_* under secrets");
///
/// let push: Rule = serde_json::from_str(
///     r#"{"tool": "shell_run", "decision": "ask", "command": "git", "args": ["push"], "args_any": ["--force", "-f"]}"#,
/// ).unwrap();
/// assert_eq!(push.to_string(), "ask shell_run command git push (with any of --force, -f)");
///
/// assert!(serde_json::from_str::<Rule>(r#"{"tool": "fs_read", "decison": "allow"}"#).is_err());
/// assert!(serde_json::from_str::<Rule>(r#"{"tool": "*fs", "decision": "allow"}"#).is_err());
/// assert!(serde_json::from_str::<Rule>(r#"{"tool": "sh", "decision": "deny", "args": ["-rf"]}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RuleData")]
#[non_exhaustive]
pub struct Rule {
    /// The tools it is about.
    pub tool: ToolPattern,
    /// What it decides.
    pub decision: Decision,
    /// The directory it is about, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under: Option<Dir>,
    /// The websites, programs and checks it is about, when it is about some.
    #[serde(flatten)]
    pub narrowing: Box<Narrowing>,
    /// How loudly to show it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Why it exists, for the human and the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What narrows a [`Rule`] besides its tools and `under`. Most rules have
/// none of it, so a rule keeps it boxed and stays small.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Narrowing {
    /// The websites it is about, when it is about some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostPattern>,
    /// The programs it is about, when it is about some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandPattern>,
    /// The arguments the program must begin with (empty: any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Arguments one of which the program must have (empty: any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args_any: Vec<String>,
    /// The name of a host-supplied check each simple command must meet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

/// A rule as written, before its members are checked together.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleData {
    tool: ToolPattern,
    decision: Decision,
    under: Option<Dir>,
    host: Option<HostPattern>,
    command: Option<CommandPattern>,
    args: Option<Vec<String>>,
    args_any: Option<Vec<String>>,
    check: Option<String>,
    severity: Option<Severity>,
    note: Option<String>,
}

impl TryFrom<RuleData> for Rule {
    type Error = RuleError;

    fn try_from(data: RuleData) -> Result<Rule, RuleError> {
        let mut rule = Rule {
            tool: data.tool,
            decision: data.decision,
            under: data.under,
            narrowing: Box::new(Narrowing {
                host: data.host,
                command: data.command,
                ..Narrowing::default()
            }),
            severity: data.severity,
            note: data.note,
        };
        if let Some(args) = data.args {
            rule = rule.args(args)?;
        }
        if let Some(args_any) = data.args_any {
            rule = rule.args_any(args_any)?;
        }
        match data.check {
            Some(check) => rule.check(&check),
            None => Ok(rule),
        }
    }
}

impl Rule {
    /// A rule about every call to the tools `tool` names.
    pub fn new(decision: Decision, tool: &str) -> Result<Rule, RuleError> {
        Ok(Rule {
            tool: ToolPattern::new(tool)?,
            decision,
            under: None,
            narrowing: Box::default(),
            severity: None,
            note: None,
        })
    }

    /// Allows calls to `tool`.
    pub fn allow(tool: &str) -> Result<Rule, RuleError> {
        Rule::new(Decision::Allow, tool)
    }

    /// Denies calls to `tool`.
    pub fn deny(tool: &str) -> Result<Rule, RuleError> {
        Rule::new(Decision::Deny, tool)
    }

    /// Asks about calls to `tool`.
    pub fn ask(tool: &str) -> Result<Rule, RuleError> {
        Rule::new(Decision::Ask, tool)
    }

    /// The same rule, about the paths under `dir` only.
    pub fn under(self, dir: &str) -> Result<Rule, RuleError> {
        Ok(Rule {
            under: Some(Dir::new(dir)?),
            ..self
        })
    }

    /// The same rule, about the URLs on these hosts only.
    pub fn host(mut self, host: &str) -> Result<Rule, RuleError> {
        self.narrowing.host = Some(HostPattern::new(host)?);
        Ok(self)
    }

    /// The same rule, about the commands running this program only.
    pub fn command(mut self, program: &str) -> Result<Rule, RuleError> {
        self.narrowing.command = Some(CommandPattern::new(program)?);
        Ok(self)
    }

    /// The same rule, about the commands whose arguments begin with these.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Result<Rule, RuleError> {
        self.narrowing.args = self.tokens("args", args)?;
        Ok(self)
    }

    /// The same rule, about the commands with one of these arguments.
    pub fn args_any<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Result<Rule, RuleError> {
        self.narrowing.args_any = self.tokens("args_any", args)?;
        Ok(self)
    }

    /// The same rule, about the commands the named check says yes to.
    pub fn check(self, name: &str) -> Result<Rule, RuleError> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "_.:-".contains(c);
        if name.is_empty() || !name.chars().all(allowed) {
            return Err(RuleError::new(format!(
                "`{}` is not a check name: use letters, digits, `_`, `.`, `:` and `-`",
                name.escape_debug()
            )));
        }
        let mut rule = self;
        rule.narrowing.check = Some(name.to_owned());
        Ok(rule)
    }

    /// The same rule, with a note saying why it exists.
    pub fn note(self, note: &str) -> Rule {
        Rule {
            note: Some(note.to_owned()),
            ..self
        }
    }

    /// The same rule, marked a danger.
    pub fn danger(self) -> Rule {
        Rule {
            severity: Some(Severity::Danger),
            ..self
        }
    }

    /// Whether it is about every call to its tools, whatever they name.
    pub fn is_blanket(&self) -> bool {
        let narrowing = &self.narrowing;
        self.under.is_none()
            && narrowing.host.is_none()
            && narrowing.command.is_none()
            && narrowing.check.is_none()
    }

    /// Whether it is marked a danger.
    pub fn is_danger(&self) -> bool {
        self.severity == Some(Severity::Danger)
    }

    /// Argument tokens for `args` or `args_any`: a command is needed, and a
    /// non-empty list of non-empty tokens.
    fn tokens<S: Into<String>>(
        &self,
        member: &str,
        tokens: impl IntoIterator<Item = S>,
    ) -> Result<Vec<String>, RuleError> {
        if self.narrowing.command.is_none() {
            return Err(RuleError::new(format!(
                "`{member}` narrows a `command`: name the program too (e.g. \"command\": \"git\")"
            )));
        }
        let tokens: Vec<String> = tokens.into_iter().map(Into::into).collect();
        if tokens.is_empty() || tokens.iter().any(String::is_empty) {
            return Err(RuleError::new(format!(
                "`{member}` is a list of one or more arguments, none empty"
            )));
        }
        Ok(tokens)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.decision, self.tool)?;
        if let Some(under) = &self.under {
            write!(f, " under {under}")?;
        }
        let narrowing = &self.narrowing;
        if let Some(host) = &narrowing.host {
            write!(f, " host {host}")?;
        }
        if let Some(command) = &narrowing.command {
            write!(f, " command {command}")?;
        }
        for arg in &narrowing.args {
            write!(f, " {}", arg.escape_debug())?;
        }
        if !narrowing.args_any.is_empty() {
            let any: Vec<String> = narrowing
                .args_any
                .iter()
                .map(|arg| arg.escape_debug().to_string())
                .collect();
            write!(f, " (with any of {})", any.join(", "))?;
        }
        if let Some(check) = &narrowing.check {
            write!(f, " check {check}")?;
        }
        Ok(())
    }
}

/// The rules for the example server's read-only tools, as published under
/// the prefix `fs` (`mcp-unknown-keys example-server`): allow `fs_read` and
/// `fs_list`. Every other tool, `fs_write` and `fs_task` included, matches no
/// rule and is asked about.
///
/// These rules trust the server to keep paths inside its root, as the example
/// server does. To allow reads under one directory only, write the rules with
/// [`Rule::under`] instead.
///
/// ```
/// use mcp_unknown_keys_policy::{default_rules, Rule};
///
/// assert_eq!(default_rules(), [Rule::allow("fs_read").unwrap(), Rule::allow("fs_list").unwrap()]);
/// ```
pub fn default_rules() -> Vec<Rule> {
    ["fs_read", "fs_list"]
        .into_iter()
        .map(|tool| Rule::allow(tool).expect("a tool name is a valid pattern"))
        .collect()
}
