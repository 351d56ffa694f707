//! A policy's configuration, as plain serde data, and its evaluation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::paths::{CallPaths, Lexical};
use super::{Decision, Dir, Rule};

/// Everything a [`Policy`](super::Policy) decides by, as plain data that can
/// be read from JSON. Unknown members are refused, and so are bad tool
/// patterns and directories.
///
/// ```
/// use mcp_unknown_keys::policy::PolicyConfig;
///
/// let config = PolicyConfig::from_json(r#"{
///     "rules": [
///         {"tool": "fs_read", "decision": "allow"},
///         {"tool": "fs_write", "decision": "allow", "under": "notes"},
///         {"tool": "fs_*", "decision": "deny", "under": "secrets"},
///         {"tool": "shell_*", "decision": "deny"}
///     ],
///     "roots": {"fs_": "/srv/project"},
///     "path_arguments": {"fs_task": ["cwd"]}
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
    rules: Vec<Rule>,
    roots: Vec<(String, Lexical)>,
    path_arguments: BTreeMap<String, Vec<String>>,
    default_path_arguments: Vec<String>,
    pub(super) hide_denied: bool,
}

impl Compiled {
    pub(super) fn new(config: PolicyConfig) -> Compiled {
        let mut roots: Vec<(String, Lexical)> = config
            .roots
            .iter()
            .map(|(prefix, dir)| (prefix.clone(), Lexical::of_dir(dir)))
            .collect();
        // Longest prefix first, so the first match is the most specific.
        roots.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        Compiled {
            rules: config.rules,
            roots,
            path_arguments: config.path_arguments,
            default_path_arguments: config.default_path_arguments,
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

    /// The rules' verdict on a call, and the first rule that gave it (`None`
    /// when no rule matched, which means ask).
    pub(super) fn verdict(&self, tool: &str, paths: &CallPaths<'_>) -> (Decision, Option<&Rule>) {
        strongest(&self.rules, tool, paths, self.root(tool))
    }

    /// Whether a blanket deny rule refuses every call to `tool`.
    pub(super) fn blanket_denied(&self, tool: &str) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.decision == Decision::Deny && rule.is_blanket() && rule.tool.matches(tool))
    }
}

/// The strongest decision of the rules matching a call (deny over ask over
/// allow) and the first rule giving it; ask and `None` when none matches.
pub(super) fn strongest<'r>(
    rules: &'r [Rule],
    tool: &str,
    paths: &CallPaths<'_>,
    root: Option<&Lexical>,
) -> (Decision, Option<&'r Rule>) {
    let mut strongest: Option<&Rule> = None;
    for rule in rules.iter().filter(|rule| matches(rule, tool, paths, root)) {
        if strongest.is_none_or(|so_far| rule.decision > so_far.decision) {
            strongest = Some(rule);
        }
    }
    match strongest {
        Some(rule) => (rule.decision, Some(rule)),
        None => (Decision::Ask, None),
    }
}

/// Whether `rule` is about this call. With `under`, unknown fails closed:
/// it keeps an allow rule from matching and makes an ask or deny rule match.
fn matches(rule: &Rule, tool: &str, paths: &CallPaths<'_>, root: Option<&Lexical>) -> bool {
    if !rule.tool.matches(tool) {
        return false;
    }
    let Some(under) = &rule.under else {
        return true;
    };
    let dir = Lexical::of_dir(under).resolve(root);
    let placement = paths.placement(&dir);
    match rule.decision {
        Decision::Allow => placement.all_within && !placement.unknown,
        Decision::Ask | Decision::Deny => placement.any_within || placement.unknown,
    }
}
