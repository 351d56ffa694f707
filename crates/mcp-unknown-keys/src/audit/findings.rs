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
    /// What the tool declared, as the latest warning about it said.
    declared_keys: Vec<String>,
    keys: BTreeMap<String, KeyFindings>,
}

#[derive(Clone, Debug)]
struct KeyFindings {
    calls: u64,
    first_id: String,
    cause: Option<Cause>,
}

/// One undeclared (tool, key) pair and what is known of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// The undeclared key.
    pub key: &'a str,
    /// How many audited calls carried the key (every one, not only the
    /// first).
    pub calls: u64,
    /// The id of the first call that carried it, as text (`""` for none).
    pub first_id: &'a str,
    /// Why it probably reached the tool, as the warning that said it
    /// diagnosed; `None` when no warning of this session said it (said
    /// before the findings were kept).
    pub cause: Option<Cause>,
    /// Every key the tool declared, as the latest warning about it said.
    pub declared_keys: &'a [String],
}

impl Findings {
    /// Counts what auditing `call` found: each undeclared key it carried, and
    /// the diagnosis of the warning it raised, if any.
    pub fn record(&mut self, call: &Call<'_>, outcome: &Outcome) {
        let Outcome::Audited { undeclared, warning } = outcome else {
            return;
        };
        if undeclared.is_empty() {
            return;
        }
        let tool = match self.tools.get_mut(call.tool) {
            Some(tool) => tool,
            None => self.tools.entry(call.tool.to_owned()).or_default(),
        };
        for key in undeclared {
            match tool.keys.get_mut(key.as_str()) {
                Some(found) => found.calls += 1,
                None => {
                    let found = KeyFindings {
                        calls: 1,
                        first_id: id_text(call.id),
                        cause: None,
                    };
                    tool.keys.insert(key.clone(), found);
                }
            }
        }
        if let Some(warning) = warning {
            tool.note(warning);
        }
    }

    /// Every pair found, sorted by tool, then key.
    pub fn iter(&self) -> impl Iterator<Item = Finding<'_>> {
        self.tools.iter().flat_map(|(tool, found)| {
            found.keys.iter().map(move |(key, key_found)| Finding {
                tool,
                key,
                calls: key_found.calls,
                first_id: &key_found.first_id,
                cause: key_found.cause,
                declared_keys: &found.declared_keys,
            })
        })
    }

    /// How many distinct pairs were found.
    pub fn len(&self) -> usize {
        self.tools.values().map(|tool| tool.keys.len()).sum()
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

impl ToolFindings {
    fn note(&mut self, warning: &Warning) {
        self.declared_keys.clone_from(&warning.declared_keys);
        for hint in &warning.hints {
            if let Some(found) = self.keys.get_mut(&hint.key) {
                found.cause.get_or_insert(hint.cause);
            }
        }
    }
}
