//! What a strict server would have refused (`audit --strict-preview`).
//!
//! A server that rejects undeclared keys (a zod schema made `.strict()`, a
//! pydantic model with `extra="forbid"`, `additionalProperties: false`
//! enforced) refuses every call that carries one. Before an author turns
//! that on, the preview says, per server and tool, how many of the calls
//! the logs hold it would have refused, and who wrote the keys that would
//! have been refused: a host or middleware (a key hosts are known to add,
//! or one seen undeclared on calls to [`INJECTED_AFTER_TOOLS`] tools or
//! more), or the model (a declared key misspelt, cut short or shortened,
//! or one it invented). Where the logs hold the servers' answers, it says
//! what each server did with those calls today. And it writes what the
//! author can adopt first: the host keys to allow, and an alias map from
//! each misspelling the diagnosis traced to a declared key.
//!
//! A call is classified once the whole audit is read, by the keys it
//! carried, so a key found to be a host's on its third tool counts as one
//! on the calls before. Memory is bounded whatever the logs hold: at most
//! [`MAX_TOOLS`] tools (the calls of further ones counted under
//! [`OTHER`]), [`MAX_KEYS`] (tool, key) pairs, and [`MAX_KEY_SETS`]
//! distinct sets of keys, of at most [`MAX_KEYS_PER_SET`] keys each; a
//! call whose set is not kept is classified as it is read, by what is
//! known then. Names and keys are kept up to 256 bytes (cut there, ending
//! `…`); a cut key is never offered to adopt.

use std::collections::{BTreeMap, HashMap, HashSet};

use mcp_unknown_keys::audit::diagnosis::INJECTED_AFTER_TOOLS;
use mcp_unknown_keys::audit::{Cause, Judged, Outcome, VerdictCounts};
use serde::Serialize;

use crate::groups::{MAX_VALUE_BYTES, OTHER, shortened};
use crate::names::readings;

/// Keys hosts and agent frameworks are known to add to the arguments of
/// every tool they call, whatever the tool declares: MCP's own `_meta`,
/// call ids (`toolCallId`, `tool_call_id`), Cline's `task_progress`, and
/// the `security_context` and `adcp_version` of ad-tech agent protocols.
pub const KNOWN_HOST_KEYS: &[&str] = &[
    "_meta",
    "adcp_version",
    "security_context",
    "task_progress",
    "toolCallId",
    "tool_call_id",
];

/// The most tools the preview keeps apart.
pub const MAX_TOOLS: usize = 1000;
/// The most (tool, key) pairs it counts; further keys are counted under
/// [`OTHER`].
pub const MAX_KEYS: usize = 20_000;
/// The most distinct sets of keys it keeps to classify calls by at the end.
pub const MAX_KEY_SETS: usize = 4096;
/// The most keys of a set kept; a call carrying more is classified as it
/// is read.
pub const MAX_KEYS_PER_SET: usize = 16;

/// Who wrote an undeclared key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A host or middleware: a known host key, or one seen undeclared on
    /// calls to several tools.
    Host,
    /// The model.
    Model,
}

/// What a server that rejects undeclared keys would have refused, of the
/// calls audited ([`Report::strict_preview`](crate::Report::strict_preview)).
///
/// ```
/// use mcp_unknown_keys_logs::{Audit, Input, Options};
///
/// let log = br#"{"tools":[{"name":"fs_read","inputSchema":{"properties":{"path":{},"offset":{}}}}]}
/// {"type":"tool_use","id":"1","name":"fs_read","input":{"path":"a","ffset":12}}
/// {"type":"tool_use","id":"2","name":"fs_read","input":{"path":"a","_meta":{}}}
/// {"type":"tool_use","id":"3","name":"fs_read","input":{"path":"a"}}
/// "#;
/// let mut audit = Audit::new(&Options::default().strict_preview(true))?;
/// audit.read(Input::from_reader("log", &log[..])?)?;
/// let preview = audit.finish().strict_preview().unwrap();
/// assert_eq!((preview.audited, preview.refused), (3, 2));
/// assert_eq!((preview.refused_for_model_keys, preview.refused_for_host_keys_only), (1, 1));
/// assert_eq!(preview.adopt.allow, ["_meta"]);
/// assert_eq!(preview.adopt.aliases["fs_read"]["ffset"], "offset");
/// # Ok::<(), mcp_unknown_keys_logs::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StrictPreview {
    /// Calls audited.
    pub audited: u64,
    /// Calls that carried an undeclared key or nested key: those a strict
    /// server would have refused.
    pub refused: u64,
    /// Of those, calls that carried a key the model wrote.
    pub refused_for_model_keys: u64,
    /// Of those, calls refused only for keys a host or middleware added:
    /// allowing [`Adopt::allow`] lets them through.
    pub refused_for_host_keys_only: u64,
    /// Every tool with calls audited, most refused first.
    pub tools: Vec<StrictTool>,
    /// What a server author can adopt before going strict.
    pub adopt: Adopt,
}

/// One tool's part of a [`StrictPreview`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StrictTool {
    /// The server the calls named, when they named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The tool, as the calls named it.
    pub tool: String,
    /// Calls audited.
    pub audited: u64,
    /// Calls a strict server would have refused.
    pub refused: u64,
    /// Refused calls per 1000 audited.
    pub per_1000_audited: f64,
    /// Of the refused calls, those that carried a key the model wrote.
    pub model: u64,
    /// Of the refused calls, those refused only for keys a host added.
    pub host_only: u64,
    /// What the server did with the calls it would have refused, where
    /// their answers were in the logs: `ignored` today (the keys dropped in
    /// silence), or already `rejected`.
    pub verdicts: VerdictCounts,
    /// The undeclared keys, most calls first.
    pub keys: Vec<StrictKey>,
}

/// One undeclared key of a [`StrictTool`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StrictKey {
    /// The key, or a nested key's path (`options.recursve`).
    pub key: String,
    /// Whether `key` is a nested key's path.
    pub nested: bool,
    /// Who wrote it.
    pub origin: Origin,
    /// Its diagnosed cause, when one was (never for a nested key); for a
    /// key a host wrote, [`Cause::Injected`], whatever the diagnosis said
    /// before the key was seen on other tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// The declared key it probably stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Calls that carried it.
    pub calls: u64,
}

/// What a server author can adopt before going strict, as the JSON
/// `--adopt` writes: `{"allow":["_meta"],"aliases":{"fs_read":{"ffset":"offset"}}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Adopt {
    /// The top-level keys hosts added, sorted: to accept (or strip) on
    /// every tool.
    pub allow: Vec<String>,
    /// Per tool, each key the model wrote for a declared key (a case
    /// variant, plural, abbreviation, truncation or typo) → that key.
    pub aliases: BTreeMap<String, BTreeMap<String, String>>,
}

/// A key as the preview keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Name {
    nested: bool,
    key: Box<str>,
}

#[derive(Clone, Debug, Default)]
struct KeyTally {
    calls: u64,
    cause: Option<Cause>,
    suggestion: Option<String>,
}

/// One tool's counts.
#[derive(Clone, Debug, Default)]
struct ToolTally {
    server: Option<String>,
    audited: u64,
    refused: u64,
    /// The refused calls, by the set of keys each carried (sorted).
    sets: HashMap<Vec<Name>, u64>,
    /// Refused calls whose set was not kept, classified as read: (model,
    /// host only).
    classified_early: (u64, u64),
    keys: HashMap<Name, KeyTally>,
    verdicts: VerdictCounts,
}

/// The preview's counts, kept as calls are audited when it is asked for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Strictness {
    on: bool,
    tools: HashMap<String, ToolTally>,
    /// For each top-level key, the tools it was seen undeclared on, up to
    /// [`INJECTED_AFTER_TOOLS`].
    seen_on: HashMap<Box<str>, HashSet<String>>,
    keys_kept: usize,
    sets_kept: usize,
}

impl Strictness {
    /// Counts nothing unless `on`.
    pub(crate) fn new(on: bool) -> Strictness {
        Strictness {
            on,
            ..Strictness::default()
        }
    }

    /// Counts one call to `tool` (of `server`, when the call named one
    /// apart; a host's `mcp__SERVER__TOOL` names it too). Nothing is done
    /// unless the preview was asked for: the audit's path stays as it was.
    pub(crate) fn record(&mut self, tool: &str, server: Option<&str>, outcome: &Outcome) {
        if !self.on {
            return;
        }
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            warning,
            ..
        } = outcome
        else {
            return;
        };
        let server = server.or_else(|| {
            tool.starts_with("mcp__")
                .then(|| readings(tool).next().map(|(server, _)| server))
                .flatten()
        });
        let tool = shortened(tool);
        let tool = if self.tools.contains_key(&tool) || self.tools.len() < MAX_TOOLS {
            tool.as_str()
        } else {
            OTHER
        };
        let tally = self.tools.entry(tool.to_owned()).or_insert_with(|| ToolTally {
            server: server.map(str::to_owned),
            ..ToolTally::default()
        });
        tally.audited += 1;
        if undeclared.is_empty() && undeclared_paths.is_empty() {
            return;
        }
        tally.refused += 1;
        let names: Vec<Name> = undeclared
            .iter()
            .map(|key| (false, key))
            .chain(undeclared_paths.iter().map(|path| (true, path)))
            .map(|(nested, key)| Name {
                nested,
                key: shortened(key).into(),
            })
            .collect();
        for name in names.iter().filter(|name| !name.nested) {
            if !self.seen_on.contains_key(&name.key) && self.seen_on.len() >= MAX_KEYS {
                continue;
            }
            let tools = self.seen_on.entry(name.key.clone()).or_default();
            if tools.len() < INJECTED_AFTER_TOOLS {
                tools.insert(tool.to_owned());
            }
        }
        for name in &names {
            let kept = tally.keys.contains_key(name) || self.keys_kept < MAX_KEYS;
            let at = if kept {
                name.clone()
            } else {
                Name {
                    nested: name.nested,
                    key: OTHER.into(),
                }
            };
            if !tally.keys.contains_key(&at) {
                self.keys_kept += 1;
            }
            tally.keys.entry(at).or_default().calls += 1;
        }
        for hint in warning.iter().flat_map(|warning| &warning.hints) {
            let name = Name {
                nested: false,
                key: shortened(&hint.key).into(),
            };
            if let Some(key) = tally.keys.get_mut(&name) {
                key.cause.get_or_insert(hint.cause);
                if hint.cause.suggests_a_declared_key() && key.suggestion.is_none() {
                    key.suggestion.clone_from(&hint.suggestion);
                }
            }
        }
        let keep = names.len() <= MAX_KEYS_PER_SET
            && (tally.sets.contains_key(&names) || self.sets_kept < MAX_KEY_SETS);
        if keep {
            if !tally.sets.contains_key(&names) {
                self.sets_kept += 1;
            }
            *tally.sets.entry(names).or_default() += 1;
        } else if names
            .iter()
            .all(|name| is_host(name, tally.keys.get(name), &self.seen_on))
        {
            tally.classified_early.1 += 1;
        } else {
            tally.classified_early.0 += 1;
        }
    }

    /// Counts a server's answer to a call it would have refused.
    pub(crate) fn judged(&mut self, judged: &Judged) {
        if judged.unknown_keys.is_empty() && judged.unknown_paths.is_empty() {
            return;
        }
        if let Some(tally) = self.tools.get_mut(&judged.tool) {
            *tally.verdicts.entry(judged.verdict).or_default() += 1;
        }
    }

    /// The preview, when it was asked for.
    pub(crate) fn preview(&self) -> Option<StrictPreview> {
        if !self.on {
            return None;
        }
        let mut preview = StrictPreview::default();
        let mut allow = std::collections::BTreeSet::new();
        for (name, tally) in &self.tools {
            let tool = self.tool(name, tally);
            preview.audited += tool.audited;
            preview.refused += tool.refused;
            preview.refused_for_model_keys += tool.model;
            preview.refused_for_host_keys_only += tool.host_only;
            for key in &tool.keys {
                match (key.origin, &key.suggestion) {
                    _ if is_cut(&key.key) || key.key == OTHER => {}
                    (Origin::Host, _) if !key.nested => {
                        allow.insert(key.key.clone());
                    }
                    (Origin::Model, Some(declared)) if tool.tool != OTHER => {
                        let aliases = preview.adopt.aliases.entry(tool.tool.clone()).or_default();
                        aliases.insert(key.key.clone(), declared.clone());
                    }
                    _ => {}
                }
            }
            preview.tools.push(tool);
        }
        preview.adopt.allow = allow.into_iter().collect();
        preview
            .tools
            .sort_by(|a, b| b.refused.cmp(&a.refused).then_with(|| a.tool.cmp(&b.tool)));
        Some(preview)
    }

    /// One tool's part, its calls classified by what the whole audit knows.
    fn tool(&self, name: &str, tally: &ToolTally) -> StrictTool {
        let origin = |key: &Name| {
            if is_host(key, tally.keys.get(key), &self.seen_on) {
                Origin::Host
            } else {
                Origin::Model
            }
        };
        let (mut model, mut host_only) = tally.classified_early;
        for (set, calls) in &tally.sets {
            if set.iter().all(|key| origin(key) == Origin::Host) {
                host_only += calls;
            } else {
                model += calls;
            }
        }
        let mut keys: Vec<StrictKey> = tally
            .keys
            .iter()
            .map(|(key, counted)| {
                let origin = origin(key);
                StrictKey {
                    key: key.key.to_string(),
                    nested: key.nested,
                    origin,
                    cause: match origin {
                        Origin::Host => Some(Cause::Injected),
                        Origin::Model => counted.cause,
                    },
                    suggestion: counted.suggestion.clone().filter(|_| origin == Origin::Model),
                    calls: counted.calls,
                }
            })
            .collect();
        keys.sort_by(|a, b| {
            b.calls
                .cmp(&a.calls)
                .then_with(|| (a.nested, &a.key).cmp(&(b.nested, &b.key)))
        });
        StrictTool {
            server: tally.server.clone(),
            tool: name.to_owned(),
            audited: tally.audited,
            refused: tally.refused,
            per_1000_audited: per_1000(tally.refused, tally.audited),
            model,
            host_only,
            verdicts: tally.verdicts.clone(),
            keys,
        }
    }
}

/// Whether a host or middleware wrote `key`: a known host key, one seen
/// undeclared on calls to [`INJECTED_AFTER_TOOLS`] tools or more, or one
/// the diagnosis found injected. Never a nested key: hosts add theirs at
/// the top.
fn is_host(key: &Name, counted: Option<&KeyTally>, seen_on: &HashMap<Box<str>, HashSet<String>>) -> bool {
    !key.nested
        && (KNOWN_HOST_KEYS.contains(&&*key.key)
            || seen_on
                .get(&key.key)
                .is_some_and(|tools| tools.len() >= INJECTED_AFTER_TOOLS)
            || counted.is_some_and(|counted| counted.cause == Some(Cause::Injected)))
}

/// Whether `key`, as [`shortened`] left it, was cut: it ends with the `…`
/// a cut leaves, within a few bytes of the bound.
fn is_cut(key: &str) -> bool {
    key.len() > MAX_VALUE_BYTES - 2 * '…'.len_utf8() && key.ends_with('…')
}

/// `part` per 1000 of `whole`, rounded to two decimals; 0 for none.
fn per_1000(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 * 100_000.0 / whole as f64).round() / 100.0
}
