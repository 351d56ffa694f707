//! Rules: which tools a policy allows, denies or asks about, and where.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::paths::Lexical;

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

/// The tools a rule is about: a tool name (`fs_read`), or a prefix followed
/// by `*` (`fs_*`; `*` alone is every tool).
///
/// A `*` anywhere but at the end, and the glob characters `?`, `[`, `]`,
/// `{` and `}`, are refused: a pattern that looks like a richer glob than it
/// is would match other tools than its author meant.
///
/// ```
/// use mcp_unknown_keys::policy::ToolPattern;
///
/// let files = ToolPattern::new("fs_*").unwrap();
/// assert!(files.matches("fs_write"));
/// assert!(!files.matches("git_commit"));
/// assert!(ToolPattern::new("fs_*_file").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolPattern(String);

impl ToolPattern {
    /// Reads a pattern; fails on an empty one and on anything but a name or
    /// a prefix followed by `*`.
    pub fn new(pattern: impl Into<String>) -> Result<ToolPattern, RuleError> {
        let pattern = pattern.into();
        let body = pattern.strip_suffix('*').unwrap_or(&pattern);
        if pattern.is_empty() {
            return Err(RuleError::new("a tool pattern cannot be empty"));
        }
        if body.contains('*') {
            return Err(RuleError::new(format!(
                "`{pattern}` is not a tool pattern: `*` may only end one (write a tool name, or a prefix followed by `*`)"
            )));
        }
        if let Some(glob) = body.chars().find(|c| matches!(c, '?' | '[' | ']' | '{' | '}')) {
            return Err(RuleError::new(format!(
                "`{pattern}` is not a tool pattern: `{glob}` is not supported (write a tool name, or a prefix followed by `*`)"
            )));
        }
        Ok(ToolPattern(pattern))
    }

    /// Whether the pattern matches the tool of this name.
    pub fn matches(&self, tool: &str) -> bool {
        match self.0.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => tool == self.0,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ToolPattern {
    type Error = RuleError;

    fn try_from(pattern: String) -> Result<ToolPattern, RuleError> {
        ToolPattern::new(pattern)
    }
}

impl From<ToolPattern> for String {
    fn from(pattern: ToolPattern) -> String {
        pattern.0
    }
}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A directory a rule is about, or a root relative paths resolve against:
/// a `/`-separated path, absolute or relative (`.` for the root itself).
///
/// Checks are lexical, so a directory that could mean two places is refused:
/// an empty one, or one holding `..`, a NUL, a backslash or `://`.
///
/// ```
/// use mcp_unknown_keys::policy::Dir;
///
/// assert!(Dir::new("src/generated").is_ok());
/// assert!(Dir::new("/srv/project").is_ok());
/// assert!(Dir::new("src/../secrets").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Dir(String);

impl Dir {
    /// Reads a directory; fails on one that lexical checks cannot place.
    pub fn new(dir: impl Into<String>) -> Result<Dir, RuleError> {
        let dir = dir.into();
        if dir.is_empty() {
            return Err(RuleError::new(
                "a directory cannot be empty (write `.` for the root)",
            ));
        }
        // The very check a call's paths go through, so a Dir always places.
        match Lexical::parse(&dir) {
            Ok(_) => Ok(Dir(dir)),
            Err(problem) => Err(RuleError::new(format!(
                "`{}` is not a usable directory: {problem}",
                dir.escape_debug()
            ))),
        }
    }

    /// The directory as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Dir {
    type Error = RuleError;

    fn try_from(dir: String) -> Result<Dir, RuleError> {
        Dir::new(dir)
    }
}

impl From<Dir> for String {
    fn from(dir: Dir) -> String {
        dir.0
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One rule: `{"tool", "decision", "under"?}`.
///
/// Without `under` a rule matches every call to its tools. With `under`, it
/// is about the paths a call names (see [`PolicyConfig`](super::PolicyConfig)
/// for which arguments are paths and what `under` is joined onto):
///
/// - an `allow` rule matches only when the call names at least one path and
///   every path is known to lie under the directory;
/// - a `deny` or `ask` rule matches when any path lies under it, or when a
///   path cannot be placed (`..`, a NUL, a backslash, a URL, a relative path
///   against an absolute directory or the reverse, a value that is not text,
///   arguments that do not read as an object). Unknown fails closed.
///
/// Unknown members are refused when a rule is read, and so are bad
/// patterns and directories:
///
/// ```
/// use mcp_unknown_keys::policy::{Decision, Rule};
///
/// let rule: Rule = serde_json::from_str(r#"{"tool": "fs_*", "decision": "deny", "under": "secrets"}"#).unwrap();
/// assert_eq!(rule, Rule::deny("fs_*").unwrap().under("secrets").unwrap());
/// assert_eq!(rule.to_string(), "deny fs_* under secrets");
///
/// assert!(serde_json::from_str::<Rule>(r#"{"tool": "fs_read", "decison": "allow"}"#).is_err());
/// assert!(serde_json::from_str::<Rule>(r#"{"tool": "*fs", "decision": "allow"}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The tools it is about.
    pub tool: ToolPattern,
    /// What it decides.
    pub decision: Decision,
    /// The directory it is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<Dir>,
}

impl Rule {
    /// A rule about every call to the tools `tool` names.
    pub fn new(decision: Decision, tool: &str) -> Result<Rule, RuleError> {
        Ok(Rule {
            tool: ToolPattern::new(tool)?,
            decision,
            under: None,
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

    /// Whether it is about every call to its tools, whatever the paths.
    pub fn is_blanket(&self) -> bool {
        self.under.is_none()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.decision, self.tool)?;
        if let Some(under) = &self.under {
            write!(f, " under {under}")?;
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
/// use mcp_unknown_keys::policy::{default_rules, Rule};
///
/// assert_eq!(default_rules(), [Rule::allow("fs_read").unwrap(), Rule::allow("fs_list").unwrap()]);
/// ```
pub fn default_rules() -> Vec<Rule> {
    ["fs_read", "fs_list"]
        .into_iter()
        .map(|tool| Rule::allow(tool).expect("a tool name is a valid pattern"))
        .collect()
}

/// A rule, pattern, directory or configuration that cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    message: String,
}

impl RuleError {
    fn new(message: impl Into<String>) -> RuleError {
        RuleError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuleError {}
