//! A policy's configuration, as plain serde data, and its evaluation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::checks::Checks;
use super::floor::DangerFloor;
use super::paths::Lexical;
use super::patterns::{Dir, ToolPattern};
use super::rules::{Decision, Rule};

/// Everything a [`Policy`](super::Policy) decides by, as plain data that can
/// be read from JSON. Unknown members are refused, and so are bad tool
/// patterns and directories.
///
/// ```
/// use mcp_unknown_keys_policy::PolicyConfig;
///
/// let config = PolicyConfig::from_json(r#"{
///     "rules": [
///         {"tool": "fs_read", "decision": "allow"},
///         {"tool": "fs_write", "decision": "allow", "under": "notes"},
///         {"tool": "fs_*", "decision": "deny", "under": "secrets"},
///         {"tool": "shell_*", "decision": "deny"}
///     ],
///     "roots": {"fs_": "/srv/project"},
///     "path_arguments": {"fs_task": ["cwd"]},
///     "command_arguments": {"ci_*": {"command": "script"}},
///     "danger_floor": {"home": "/home/dev"}
/// }"#).unwrap();
/// assert_eq!(config.rules.len(), 4);
/// assert!(config.hide_denied);
///
/// assert!(PolicyConfig::from_json(r#"{"rulez": []}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// The rules, evaluated all together: deny over ask over allow; no match
    /// means ask.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Per tool-name prefix (`fs_`), the directory that server resolves
    /// relative paths against. A rule's `under` is joined onto the root of
    /// the tool called, and so are the call's relative paths; the longest
    /// matching prefix wins. A tool without a root compares paths as
    /// written.
    #[serde(default)]
    pub roots: BTreeMap<String, Dir>,
    /// Per tool name, the arguments that hold paths, in place of
    /// [`default_path_arguments`](PolicyConfig::default_path_arguments).
    #[serde(default)]
    pub path_arguments: BTreeMap<String, Vec<String>>,
    /// The arguments that hold paths for the other tools: `path`, `from`,
    /// `to` unless set. An argument may hold a path or an array of paths.
    #[serde(default = "default_path_arguments")]
    pub default_path_arguments: Vec<String>,
    /// Whether `tools_for_llm` hides the tools a blanket `deny` rule (one
    /// without `under`) refuses, so the model is not shown what it may never
    /// call. On unless set.
    #[serde(default = "yes")]
    pub hide_denied: bool,
    /// Per tool pattern (`shell_*`), the arguments that hold the command it
    /// runs, in place of `{"command": "command", "args": "args"}`. The most
    /// specific pattern wins: a tool name, then the longest prefix.
    #[serde(default)]
    pub command_arguments: BTreeMap<ToolPattern, CommandArguments>,
    /// The danger floor, when it is on: its rules go before `rules`, and the
    /// checks they name come with them (see [`DangerFloor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub danger_floor: Option<DangerFloor>,
}

/// The arguments of a tool that hold the command it runs.
///
/// The `command` argument holds a shell line (a string, read as `sh -c`
/// would read it) or an argv (an array of strings, run without a shell).
/// When the call also carries the `args` argument, `command` is a program's
/// name and `args` its arguments (an array).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandArguments {
    /// The argument holding the command.
    pub command: String,
    /// The argument holding the program's arguments, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
}

impl Default for CommandArguments {
    /// `command`, with `args`.
    fn default() -> Self {
        CommandArguments {
            command: "command".to_owned(),
            args: Some("args".to_owned()),
        }
    }
}

fn default_path_arguments() -> Vec<String> {
    ["path", "from", "to"].map(str::to_owned).to_vec()
}

fn yes() -> bool {
    true
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig::new(Vec::new())
    }
}

impl PolicyConfig {
    /// These rules, with the default path arguments, no roots, and denied
    /// tools hidden.
    pub fn new(rules: Vec<Rule>) -> PolicyConfig {
        PolicyConfig {
            rules,
            roots: BTreeMap::new(),
            path_arguments: BTreeMap::new(),
            default_path_arguments: default_path_arguments(),
            hide_denied: true,
            command_arguments: BTreeMap::new(),
            danger_floor: None,
        }
    }

    /// Reads a configuration from JSON; the error says which member is
    /// unknown or which pattern or directory is bad, and where.
    pub fn from_json(json: &str) -> Result<PolicyConfig, serde_json::Error> {
        serde_json::from_str(json)
    }
}

/// A configuration ready to evaluate calls against.
#[derive(Debug)]
pub(super) struct Compiled {
    /// The floor's rules, then the configured ones.
    pub(super) rules: Vec<Rule>,
    roots: Vec<(String, Lexical)>,
    path_arguments: BTreeMap<String, Vec<String>>,
    default_path_arguments: Vec<String>,
    /// Most specific first.
    command_arguments: Vec<(ToolPattern, CommandArguments)>,
    default_command_arguments: CommandArguments,
    pub(super) checks: Checks,
    pub(super) hide_denied: bool,
}

impl Compiled {
    /// The configuration with the host's checks; the floor's own checks
    /// replace any of the same name.
    pub(super) fn new(config: PolicyConfig, mut checks: Checks) -> Compiled {
        let mut roots: Vec<(String, Lexical)> = config
            .roots
            .iter()
            .map(|(prefix, dir)| (prefix.clone(), dir.lexical()))
            .collect();
        // Longest prefix first, so the first match is the most specific.
        roots.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        let mut command_arguments: Vec<_> = config.command_arguments.into_iter().collect();
        command_arguments
            .sort_by_key(|(pattern, _)| (!pattern.is_exact(), std::cmp::Reverse(pattern.as_str().len())));
        let mut rules = Vec::new();
        if let Some(floor) = &config.danger_floor {
            rules.extend(floor.rules());
            checks.extend(floor.checks());
        }
        rules.extend(config.rules);
        Compiled {
            rules,
            roots,
            path_arguments: config.path_arguments,
            default_path_arguments: config.default_path_arguments,
            command_arguments,
            default_command_arguments: CommandArguments::default(),
            checks,
            hide_denied: config.hide_denied,
        }
    }

    /// The root relative paths of `tool` resolve against.
    pub(super) fn root(&self, tool: &str) -> Option<&Lexical> {
        self.roots
            .iter()
            .find(|(prefix, _)| tool.starts_with(prefix.as_str()))
            .map(|(_, root)| root)
    }

    /// The arguments of `tool` that hold paths.
    pub(super) fn path_arguments(&self, tool: &str) -> &[String] {
        self.path_arguments
            .get(tool)
            .unwrap_or(&self.default_path_arguments)
    }

    /// The arguments of `tool` that hold its command.
    pub(super) fn command_arguments(&self, tool: &str) -> &CommandArguments {
        self.command_arguments
            .iter()
            .find(|(pattern, _)| pattern.matches(tool))
            .map_or(&self.default_command_arguments, |(_, arguments)| arguments)
    }

    /// Whether a blanket deny rule refuses every call to `tool`.
    pub(super) fn blanket_denied(&self, tool: &str) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.decision == Decision::Deny && rule.is_blanket() && rule.tool.matches(tool))
    }
}
