//! What a session found, counted: per (tool, key), how many calls carried
//! the key, which call carried it first, and why it probably did.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Call, Cause, Outcome, Warning};
use crate::wire::id_text;

/// Every undeclared (tool, key) pair seen, with how often calls carried it.
///
/// A warning says a pair once; `Findings` counts every call that carried
/// it, which is what a summary or a report wants. Feed it each
/// [`Outcome`] with [`Findings::record`]. The proxy's summary on exit and
/// the `audit` command's report are both read from it.
///
/// ```
/// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Cause, Findings};
/// use serde_json::json;
///
/// let auditor = Auditor::new().with_sink(());
/// let catalog = Catalog::from_mcp_tools(&[json!({"name": "fs_read", "inputSchema": {"properties": {"offset": {}}}})]);
/// let mut findings = Findings::default();
/// for (id, text) in [("1", r#"{"ffset":1}"#), ("2", r#"{"ffset":2}"#)] {
///     let id = json!(id);
///     let call = Call::new("fs_read", Arguments::Json(text)).with_id(&id);
///     findings.record(&call, &auditor.audit(&catalog, call));
/// }
/// let finding = findings.iter().next().unwrap();
/// assert_eq!((finding.tool, finding.key, finding.calls), ("fs_read", "ffset", 2));
/// assert_eq!(finding.first_id, "1");
/// assert_eq!(finding.cause, Some(Cause::Truncated));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Findings {
    tools: BTreeMap<String, ToolFindings>,
}

#[derive(Clone, Debug, Default)]
struct ToolFindings {
    /// What the tool declared, as the latest warning about it said: kept
    /// once per tool, however many keys were found on it.
    declared_keys: Vec<String>,
    keys: BTreeMap<String, KeyFindings>,
    /// Nested keys, by path, counted as keys are.
    paths: BTreeMap<String, KeyFindings>,
}

#[derive(Clone, Debug, Serialize)]
struct KeyFindings {
    calls: u64,
    first_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<Cause>,
}

/// One undeclared (tool, key) pair, or (tool, path) pair, and what is known
/// of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// The undeclared key; when `nested`, the path to a nested key
    /// (`entities[].age`, as in [`Warning::unknown_paths`]).
    pub key: &'a str,
    /// How many audited calls carried the key (every one, not only the
    /// first).
    pub calls: u64,
    /// The id of the first call that carried it, as text (`""` for none).
    pub first_id: &'a str,
    /// Why it probably reached the tool, as the warning that said it
    /// diagnosed; `None` when no warning of this session said it (said
    /// before the findings were kept), and for nested keys, which are not
    /// diagnosed.
    pub cause: Option<Cause>,
    /// Every key the tool declared, as the latest warning about it said.
    pub declared_keys: &'a [String],
    /// Whether `key` is a path to a nested key rather than a top-level key.
    /// Serialised only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
}

impl Findings {
    /// Counts what auditing `call` found: each undeclared key and path it
    /// carried, and the diagnosis of the warning it raised, if any.
    pub fn record(&mut self, call: &Call<'_>, outcome: &Outcome) {
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            warning,
        } = outcome
        else {
            return;
        };
        if undeclared.is_empty() && undeclared_paths.is_empty() {
            return;
        }
        let tool = match self.tools.get_mut(call.tool) {
            Some(tool) => tool,
            None => self.tools.entry(call.tool.to_owned()).or_default(),
        };
        count(&mut tool.keys, undeclared, call);
        count(&mut tool.paths, undeclared_paths, call);
        if let Some(warning) = warning {
            tool.note(warning);
        }
    }

    /// Every pair found, sorted by tool, then its keys, then its paths,
    /// each sorted.
    pub fn iter(&self) -> impl Iterator<Item = Finding<'_>> {
        self.tools.iter().flat_map(|(tool, found)| {
            let keys = found.keys.iter().map(|pair| (pair, false));
            let paths = found.paths.iter().map(|pair| (pair, true));
            keys.chain(paths).map(move |((key, key_found), nested)| Finding {
                tool,
                key,
                calls: key_found.calls,
                first_id: &key_found.first_id,
                cause: key_found.cause,
                declared_keys: &found.declared_keys,
                nested,
            })
        })
    }

    /// How many distinct pairs were found, paths included.
    pub fn len(&self) -> usize {
        self.tools
            .values()
            .map(|tool| tool.keys.len() + tool.paths.len())
            .sum()
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// How many distinct tools had undeclared keys.
    pub fn tools(&self) -> usize {
        self.tools.len()
    }
}

/// Serialised per tool, each tool's declared keys once, however many keys
/// were found on it (a summary's size is proportional to what was found,
/// not to its product with the catalogue):
///
/// ```json
/// [{"tool":"fs_read","declared_keys":["offset","path"],
///   "keys":{"ffset":{"calls":2,"first_id":"1","cause":"truncated"}},
///   "paths":{}}]
/// ```
impl Serialize for Findings {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tool<'a> {
            tool: &'a str,
            declared_keys: &'a [String],
            keys: &'a BTreeMap<String, KeyFindings>,
            paths: &'a BTreeMap<String, KeyFindings>,
        }
        serializer.collect_seq(self.tools.iter().map(|(tool, found)| Tool {
            tool,
            declared_keys: &found.declared_keys,
            keys: &found.keys,
            paths: &found.paths,
        }))
    }
}

/// Counts each of `found` as carried by `call`.
fn count(counted: &mut BTreeMap<String, KeyFindings>, found: &[String], call: &Call<'_>) {
    for key in found {
        match counted.get_mut(key.as_str()) {
            Some(found) => found.calls += 1,
            None => {
                let found = KeyFindings {
                    calls: 1,
                    first_id: id_text(call.id),
                    cause: None,
                };
                counted.insert(key.clone(), found);
            }
        }
    }
}

impl ToolFindings {
    fn note(&mut self, warning: &Warning) {
        // Compared before copied: a tool declaring thousands of keys is
        // copied once, not once per warning.
        if self.declared_keys != warning.declared_keys {
            self.declared_keys.clone_from(&warning.declared_keys);
        }
        for hint in &warning.hints {
            if let Some(found) = self.keys.get_mut(&hint.key) {
                found.cause.get_or_insert(hint.cause);
            }
        }
    }
}
