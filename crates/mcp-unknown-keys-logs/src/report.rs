//! What an audit found and counted: warnings, notices, coverage, findings,
//! and the figures a report is made of.

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Catalog, Cause, Coverage, Findings, VerdictCounts, VerdictTally, Warning};

use crate::groups::{Dimension, Group, Groups};
use crate::logged::{LogCounts, add_counts};
use crate::names::Known;
use crate::observe::{Notice, Unreadable};
use crate::strict::{StrictPreview, Strictness};

/// Everything an audit found, counted, and said. Its size grows with the
/// distinct (tool, key) pairs, the tools listed and the notices (a few per
/// input), never with the number of lines read.
///
/// ```
/// use mcp_unknown_keys_logs::{Audit, Input, Options};
///
/// let log = br#"{"tools":[{"name":"fs_read","inputSchema":{"properties":{"path":{}}}}]}
/// {"type":"tool_use","id":"toolu_1","name":"fs_read","input":{"path":"a","ffset":12}}
/// {"type":"tool_use","id":"toolu_2","name":"fs_write","input":{"path":"a"}}
/// "#;
/// let mut audit = Audit::new(&Options::default())?;
/// audit.read(Input::from_reader("log", &log[..])?)?;
/// let report = audit.finish();
/// assert_eq!(report.warnings[0].unknown_keys, ["ffset"]);
/// assert_eq!((report.coverage.calls, report.coverage.audited), (2, 1));
/// assert_eq!(report.coverage.unlisted_tools["fs_write"], 1);
/// assert_eq!(report.lines.read, 3);
/// let pair = &report.pairs()[0];
/// assert_eq!((pair.tool, pair.key, pair.calls), ("fs_read", "ffset", 1));
/// # Ok::<(), mcp_unknown_keys_logs::Error>(())
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// Every warning raised, in order: each undeclared (tool, key) pair, and
    /// each (tool, path) pair, said once.
    pub warnings: Vec<Warning>,
    /// Where each warning was raised, in the same order: the input and line
    /// of the first call that carried its pairs.
    pub warning_sites: Vec<Site>,
    /// Everything said beside the warnings, in order.
    pub notices: Vec<Notice>,
    /// Every call found, audited or unaudited for a named reason (from a
    /// proxy's log, the calls its summary counted).
    pub coverage: Coverage,
    /// Every undeclared pair of the calls audited here, counted per call
    /// ([`Report::pairs`] adds those of proxy logs read back).
    pub findings: Findings,
    /// The lines read, and what became of them.
    pub lines: Lines,
    /// Inputs read only in part: a JSON document cut short, or a read that
    /// failed partway (each said in a notice); what came before the cut
    /// was read.
    pub incomplete_inputs: u64,
    /// Catalogues read: those given, and complete listings in the inputs.
    pub catalogues: u64,
    /// Warning lines read back from a proxy's `--log`.
    pub logged_warnings: u64,
    /// Every call judged, per verdict: JSON-RPC calls carrying undeclared
    /// keys paired with their answers here, and verdict lines read back from
    /// a proxy's `--log` ([`Pair::verdicts`] has them per pair).
    pub verdicts: VerdictCounts,
    /// Verdict lines read back from a proxy's `--log`.
    pub logged_verdicts: u64,
    /// Tools listed as declaring nothing (neither audited nor closed), with
    /// how many calls to them were therefore not audited.
    pub declares_nothing: BTreeMap<String, u64>,
    /// What proxy logs recorded, counted in calls.
    pub(crate) logged: LogCounts,
    /// Every tool name met in a catalogue, for near matches.
    pub(crate) known: Known,
    /// The verdicts of the JSON-RPC calls of the sessions ended, counted
    /// per pair: `(tool, missing, nested, key or path)`.
    pub(crate) paired: BTreeMap<(String, bool, bool, String), VerdictCounts>,
    /// The calls counted in the groupings asked for.
    pub(crate) groups: Groups,
    /// What a strict server would have refused, when asked.
    pub(crate) strict: Strictness,
}

/// Where a record was read: its input's name, and its line, counted from 1
/// (0 for a whole document, or a record handed over on its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Site {
    /// The input's name, as given (`-` for stdin).
    pub input: std::sync::Arc<str>,
    /// The line, from 1; 0 when the input is one document.
    pub line: u64,
}

/// The lines (or JSON values, for an input that is not JSON Lines) read,
/// and what became of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lines {
    /// Lines read, blank ones aside.
    pub read: u64,
    /// Lines that were not JSON.
    pub not_json: u64,
    /// Lines that were not UTF-8.
    pub not_utf8: u64,
    /// Lines nesting records deeper than they are read (hostile ones): read
    /// no deeper.
    pub too_deep: u64,
    /// Lines longer than the longest read
    /// ([`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES)): read past.
    pub too_long: u64,
    /// JSON lines holding nothing an audit uses: no call, catalogue, log
    /// line, stream event or JSON-RPC message that matters.
    pub idle: u64,
}

/// One undeclared pair, as a report lists it: what the calls audited here
/// found and what proxy logs recorded, together.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pair<'a> {
    /// The tool, as the calls named it.
    pub tool: &'a str,
    /// The undeclared key; when `nested`, the path to a nested key
    /// (`entities[].age`).
    pub key: &'a str,
    /// Whether `key` is a nested key's path.
    pub nested: bool,
    /// Whether `key` is a required key the calls lacked (a path, as in
    /// [`Warning::missing_required`](mcp_unknown_keys::audit::Warning::missing_required)),
    /// not one they carried: `calls` counts the calls that lacked it.
    pub missing: bool,
    /// How many calls carried it.
    pub calls: u64,
    /// The first call's id, as text (`""` for none).
    pub first_id: &'a str,
    /// Its diagnosed cause, when one was diagnosed (never for nested keys).
    pub cause: Option<Cause>,
    /// Every key the tool declared, as the latest warning about it said.
    pub declared_keys: &'a [String],
    /// What the servers did with the calls that carried it, where an
    /// answer could be paired with them (a recording of both directions of
    /// JSON-RPC traffic, or a proxy's log): `{ignored: 2, rejected: 1}`.
    pub verdicts: VerdictCounts,
}

impl Lines {
    /// Counts a line that could not be read (or not whole), as `why`.
    pub(crate) fn count(&mut self, why: Unreadable) {
        match why {
            Unreadable::NotUtf8 => self.not_utf8 += 1,
            Unreadable::NotJson => self.not_json += 1,
            Unreadable::TooDeep => self.too_deep += 1,
            Unreadable::TooLong => self.too_long += 1,
        }
    }
}

impl Lines {
    /// The lines read in part only, or not at all, that may have held
    /// calls: nested too deep or too long (a line that is not JSON or not
    /// UTF-8 is no record, and logs hold such lines).
    pub fn records_cut(&self) -> u64 {
        self.too_deep + self.too_long
    }
}

impl Report {
    /// Every undeclared pair, of the calls audited here and of proxy logs
    /// read back, merged: sorted by tool, then keys before paths, each
    /// sorted.
    pub fn pairs(&self) -> Vec<Pair<'_>> {
        let mut pairs: BTreeMap<(&str, bool, bool, &str), Pair<'_>> = BTreeMap::new();
        for finding in self.findings.iter() {
            let pair = Pair {
                tool: finding.tool,
                key: finding.key,
                nested: finding.nested,
                missing: finding.missing,
                calls: finding.calls,
                first_id: finding.first_id,
                cause: finding.cause,
                declared_keys: finding.declared_keys,
                verdicts: self
                    .paired
                    .get(&(
                        finding.tool.to_owned(),
                        finding.missing,
                        finding.nested,
                        finding.key.to_owned(),
                    ))
                    .cloned()
                    .unwrap_or_default(),
            };
            pairs.insert((finding.tool, finding.missing, finding.nested, finding.key), pair);
        }
        for ((tool, missing, nested, key), logged) in &self.logged.pairs {
            match pairs.get_mut(&(tool.as_str(), *missing, *nested, key.as_str())) {
                Some(pair) => {
                    pair.calls = pair.calls.saturating_add(logged.calls);
                    pair.cause = pair.cause.or(logged.cause);
                    add_counts(&mut pair.verdicts, &logged.verdicts);
                }
                None => {
                    let declared_keys = self.logged.declared.get(tool).map_or(&[][..], Vec::as_slice);
                    let pair = Pair {
                        tool,
                        key,
                        nested: *nested,
                        missing: *missing,
                        calls: logged.calls,
                        first_id: &logged.first_id,
                        cause: logged.cause,
                        declared_keys,
                        verdicts: logged.verdicts.clone(),
                    };
                    pairs.insert((tool, *missing, *nested, key), pair);
                }
            }
        }
        pairs.into_values().collect()
    }

    /// The calls grouped by exactly `by` (as given to
    /// [`Options::group_by`](crate::Options::group_by)), sorted by rate,
    /// highest first; `None` when that grouping was not asked for.
    ///
    /// ```
    /// use mcp_unknown_keys_logs::{Audit, Dimension, Input, Options};
    ///
    /// let log = br#"{"model":"gpt-4o","tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"q\":1,\"limt\":2}"}}]}]}
    /// {"model":"o3","tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"2","function":{"name":"f","arguments":"{\"q\":1}"}}]}]}
    /// "#;
    /// let mut audit = Audit::new(&Options::default().group_by([Dimension::Model]))?;
    /// audit.read(Input::from_reader("log", &log[..])?)?;
    /// let groups = audit.finish().groups(&[Dimension::Model]).unwrap();
    /// assert_eq!(groups[0].values, [(Dimension::Model, "gpt-4o".to_owned())]);
    /// assert_eq!((groups[0].calls, groups[0].calls_with_unknown_keys), (1, 1));
    /// assert_eq!(groups[0].per_1000_audited(), Some(1000.0));
    /// assert_eq!(groups[1].unknown_keys.len(), 0); // o3's call declared all it carried
    /// # Ok::<(), mcp_unknown_keys_logs::Error>(())
    /// ```
    pub fn groups(&self, by: &[Dimension]) -> Option<Vec<Group>> {
        self.groups.of(by)
    }

    /// The groupings asked for, in the order given.
    pub fn groupings(&self) -> impl Iterator<Item = &[Dimension]> {
        self.groups.groupings()
    }

    /// What a server that rejects undeclared keys would have refused of the
    /// calls audited here, per tool, and what to adopt before going strict;
    /// `None` unless [`Options::strict_preview`](crate::Options::strict_preview)
    /// asked for it.
    pub fn strict_preview(&self) -> Option<StrictPreview> {
        self.strict.preview()
    }

    /// The calls judged, of every verdict.
    pub fn judged_calls(&self) -> u64 {
        self.verdicts
            .values()
            .fold(0u64, |sum, calls| sum.saturating_add(*calls))
    }

    /// What to say of a tool name no catalogue matched: the catalogue name
    /// it stands for or nearly is (`mcp__fs__reed_file` → `read_file`), or
    /// that several bound servers have it; `None` when nothing comes near.
    pub fn near_match(&self, tool: &str) -> Option<String> {
        self.known.note(tool)
    }

    /// Adds the verdicts of a session's calls, per pair, to those of the
    /// sessions before.
    pub(crate) fn count_verdicts(&mut self, tally: &VerdictTally) {
        for (tool, key, nested, missing, counts) in tally.counts() {
            let pair = (tool.to_owned(), missing, nested, key.to_owned());
            add_counts(self.paired.entry(pair).or_default(), counts);
        }
    }

    /// Notes a catalogue: its tools that declare nothing, and its names.
    pub(crate) fn listed(&mut self, catalog: &Catalog, server: Option<&str>) {
        self.catalogues += 1;
        self.known.learn(catalog, server);
        for (tool, declared) in catalog.iter() {
            if !declared.is_audited() && !self.declares_nothing.contains_key(tool) {
                self.declares_nothing.insert(tool.to_owned(), 0);
            }
        }
    }
}
