//! What a session found, counted: per (tool, key), how many calls carried
//! the key (or lacked it, for a required key), which call did first, and
//! why it probably did.

use std::collections::BTreeMap;

use serde::Serialize;

use super::call::{Call, Outcome};
use super::diagnosis::hint::Cause;
use super::warning::Warning;
use crate::limits::MAX_SAID_PAIRS;
use crate::wire::id_text;

/// Every undeclared (tool, key) pair seen, with how often calls carried it,
/// and every (tool, required key) pair calls lacked, with how often.
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
///
/// At most [`MAX_SAID_PAIRS`] pairs are kept; a pair found past that is
/// counted ([`Findings::unkept`]), not kept.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    tools: BTreeMap<String, ToolFindings>,
    /// How many pairs are kept.
    pairs: usize,
    /// How many times a call carried a pair not kept.
    unkept: u64,
}

#[derive(Clone, Debug, Default)]
struct ToolFindings {
    /// What the tool declared, as the latest warning about it said: kept
    /// once per tool, however many keys were found on it.
    declared_keys: Vec<String>,
    keys: BTreeMap<String, KeyFindings>,
    /// Nested keys, by path, counted as keys are.
    paths: BTreeMap<String, KeyFindings>,
    /// Required keys calls lacked, by path, counted as keys are.
    missing: BTreeMap<String, KeyFindings>,
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
    /// Whether `key` is a required key the calls lacked (a path, as in
    /// [`Warning::missing_required`]) rather than one they carried;
    /// `calls` counts the calls that lacked it, and `cause` is
    /// [`Cause::MissingRequired`], [`Cause::Emptied`] or
    /// [`Cause::TruncatedResponse`]. Serialised only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

impl Findings {
    /// Counts what auditing `call` found: each undeclared key and path it
    /// carried, each required key it lacked, and the diagnosis of the
    /// warning it raised, if any.
    pub fn record(&mut self, call: &Call<'_>, outcome: &Outcome) {
        self.record_as(call, outcome, None);
    }

    /// [`Findings::record`], each pair new here given `cause` (when some)
    /// rather than the one its warning diagnosed: for `audit`, which gives
    /// the calls of a truncated response [`Cause::TruncatedResponse`].
    pub fn record_as(&mut self, call: &Call<'_>, outcome: &Outcome, cause: Option<Cause>) {
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            missing_required,
            warning,
            ..
        } = outcome
        else {
            return;
        };
        if !outcome.is_flagged() {
            return;
        }
        if !self.tools.contains_key(call.tool) {
            if self.pairs >= MAX_SAID_PAIRS {
                self.unkept += (undeclared.len() + undeclared_paths.len() + missing_required.len()) as u64;
                return;
            }
            self.tools.insert(call.tool.to_owned(), ToolFindings::default());
        }
        let tool = self.tools.get_mut(call.tool).expect("inserted above");
        let mut room = Room {
            kept: &mut self.pairs,
            unkept: &mut self.unkept,
        };
        count(&mut tool.keys, undeclared, call, cause, &mut room);
        count(&mut tool.paths, undeclared_paths, call, cause, &mut room);
        let lost = cause.or(outcome.missing_cause());
        count(&mut tool.missing, missing_required, call, lost, &mut room);
        if let Some(warning) = warning {
            tool.note(warning);
        }
    }

    /// How many times a call carried a pair found once
    /// [`MAX_SAID_PAIRS`] pairs were kept: counted, not kept.
    pub fn unkept(&self) -> u64 {
        self.unkept
    }

    /// Every pair found, sorted by tool, then its keys, then its paths,
    /// then the required keys lacked, each sorted.
    pub fn iter(&self) -> impl Iterator<Item = Finding<'_>> {
        self.tools.iter().flat_map(|(tool, found)| {
            let keys = found.keys.iter().map(|pair| (pair, false, false));
            let paths = found.paths.iter().map(|pair| (pair, true, false));
            let missing = found.missing.iter().map(|pair| (pair, false, true));
            keys.chain(paths)
                .chain(missing)
                .map(move |((key, key_found), nested, missing)| Finding {
                    tool,
                    key,
                    calls: key_found.calls,
                    first_id: &key_found.first_id,
                    cause: key_found.cause,
                    declared_keys: &found.declared_keys,
                    nested,
                    missing,
                })
        })
    }

    /// How many distinct pairs were found, paths and required keys lacked
    /// included.
    pub fn len(&self) -> usize {
        self.tools
            .values()
            .map(|tool| tool.keys.len() + tool.paths.len() + tool.missing.len())
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
///   "paths":{},"missing_required":{"path":{"calls":1,"first_id":"3","cause":"emptied"}}}]
/// ```
///
/// (`missing_required` only when calls lacked a required key).
impl Serialize for Findings {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tool<'a> {
            tool: &'a str,
            declared_keys: &'a [String],
            keys: &'a BTreeMap<String, KeyFindings>,
            paths: &'a BTreeMap<String, KeyFindings>,
            #[serde(skip_serializing_if = "BTreeMap::is_empty")]
            missing_required: &'a BTreeMap<String, KeyFindings>,
        }
        serializer.collect_seq(self.tools.iter().map(|(tool, found)| Tool {
            tool,
            declared_keys: &found.declared_keys,
            keys: &found.keys,
            paths: &found.paths,
            missing_required: &found.missing,
        }))
    }
}

/// The count of pairs kept against [`MAX_SAID_PAIRS`], and of those not.
struct Room<'a> {
    kept: &'a mut usize,
    unkept: &'a mut u64,
}

/// Counts each of `found` as carried (or lacked) by `call`, a new pair with
/// `cause` when known; a new pair once the room is full is counted as not
/// kept.
fn count(
    counted: &mut BTreeMap<String, KeyFindings>,
    found: &[String],
    call: &Call<'_>,
    cause: Option<Cause>,
    room: &mut Room<'_>,
) {
    for key in found {
        match counted.get_mut(key.as_str()) {
            Some(found) => found.calls += 1,
            None if *room.kept >= MAX_SAID_PAIRS => *room.unkept += 1,
            None => {
                *room.kept += 1;
                let found = KeyFindings {
                    calls: 1,
                    first_id: id_text(call.id),
                    cause,
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
