//! Rates: the calls of an audit grouped by model, tool, key, cause or file,
//! each group with how many of its audited calls carried undeclared keys.
//!
//! A grouping is asked for before the audit ([`Options::group_by`]), and
//! every call is counted in it as it is audited, so a report costs memory
//! in groups, never in calls. Model, tool and file give each call one
//! value: their groups add up to the coverage. Key and cause give a call
//! one value per undeclared key (or per cause) it carried, and `(none)`
//! when it carried none: a call carrying two keys is counted in both
//! groups.
//!
//! [`Options::group_by`]: crate::Options::group_by

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use mcp_unknown_keys::audit::{Cause, Outcome};

/// What calls are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// The model that made the call, as its record names it (a body's
    /// `model`, a span's `gen_ai.request.model` or
    /// `gen_ai.response.model`), or [`UNKNOWN`].
    Model,
    /// The tool called, as the call named it.
    Tool,
    /// Each undeclared key (or nested key's path) the call carried, and
    /// each required key it lacked as `missing:KEY` ([`MISSING_PREFIX`]),
    /// or [`NONE`].
    Key,
    /// Each cause diagnosed for the undeclared keys the call carried
    /// (`nested` for nested keys, which are not diagnosed), and the cause
    /// of the required keys it lacked (`missing_required`, `emptied`); for
    /// a call of a response cut at its length limit, `truncated_response`
    /// alone; or [`NONE`].
    Cause,
    /// The input the call was read from.
    File,
}

/// The model of a call whose records name none.
pub const UNKNOWN: &str = "(unknown)";

/// The key or cause of a call that carried no undeclared key and lacked no
/// required key.
pub const NONE: &str = "(none)";

/// What a required key a call lacked is grouped under by key, before its
/// path: `missing:path`, so that it is not taken for an undeclared `path`.
pub(crate) const MISSING_PREFIX: &str = "missing:";

/// Every dimension of the calls a proxy's `--log` counted but the file's
/// own: its summary counts calls, not what each one was.
pub const PROXY_LOG: &str = "(proxy log)";

/// The group of the calls past [`MAX_GROUPS`] distinct groups, and of the
/// keys past [`MAX_KEYS_PER_GROUP`] in a group.
pub const OTHER: &str = "(other)";

/// The most groups one grouping keeps: calls of further groups are counted
/// in one group whose every value is [`OTHER`]. A log full of invented
/// names costs bounded memory.
pub const MAX_GROUPS: usize = 1000;

/// The most distinct keys a group counts; further keys are counted under
/// [`OTHER`].
pub const MAX_KEYS_PER_GROUP: usize = 200;

/// The most values of a dimension one call is counted under (keys, causes):
/// further keys of the same call are counted under [`OTHER`].
const MAX_VALUES_PER_CALL: usize = 64;

/// The longest value kept, in bytes: a longer name is cut at a character
/// boundary and ends with `…`.
pub(crate) const MAX_VALUE_BYTES: usize = 256;

impl Dimension {
    /// A grouping's dimensions as a report names them: `model, tool`.
    pub(crate) fn names(by: &[Dimension]) -> String {
        by.iter()
            .map(|dimension| dimension.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every dimension, in the order `--by` lists them.
    pub const ALL: [Dimension; 5] = [
        Dimension::Model,
        Dimension::Tool,
        Dimension::Key,
        Dimension::Cause,
        Dimension::File,
    ];

    /// Its name: `model`, `tool`, `key`, `cause`, `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Model => "model",
            Dimension::Tool => "tool",
            Dimension::Key => "key",
            Dimension::Cause => "cause",
            Dimension::File => "file",
        }
    }

    /// Whether a call has one value of it (its groups add up to the
    /// coverage), not one per key or cause it carried.
    pub fn is_one_per_call(self) -> bool {
        matches!(self, Dimension::Model | Dimension::Tool | Dimension::File)
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dimension {
    type Err = String;

    /// Reads a dimension's name; the error says which names there are.
    fn from_str(name: &str) -> Result<Dimension, String> {
        Dimension::ALL
            .into_iter()
            .find(|dimension| dimension.as_str() == name)
            .ok_or_else(|| format!("no dimension {name:?}: group by model, tool, key, cause or file"))
    }
}

/// One group's counts, as a report lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Group {
    /// Its value in each dimension of the grouping, in the grouping's order.
    pub values: Vec<(Dimension, String)>,
    /// Calls found.
    pub calls: u64,
    /// Calls audited.
    pub audited: u64,
    /// Audited calls that carried at least one undeclared key or nested key,
    /// or lacked a required key: the calls flagged.
    pub calls_with_unknown_keys: u64,
    /// Per undeclared key (a nested key by its path), the calls that carried
    /// it.
    pub unknown_keys: BTreeMap<String, u64>,
    /// Per cause (`nested` for nested keys, `undiagnosed` for a key with no
    /// diagnosis), the calls that carried a key of it.
    pub causes: BTreeMap<String, u64>,
    /// Counted from a proxy's `--log` summary, which records calls but not
    /// what each carried: its rate is not known.
    pub from_proxy_log: bool,
}

impl Group {
    /// Calls with undeclared keys per 1000 audited calls; `None` when none
    /// was audited, or for calls a proxy's log counted.
    pub fn per_1000_audited(&self) -> Option<f64> {
        (self.audited > 0 && !self.from_proxy_log)
            .then(|| self.calls_with_unknown_keys as f64 * 1000.0 / self.audited as f64)
    }
}

/// A group serialises as the `audit --by` JSON line's object (and the
/// Python package's dict):
/// `{"group":{"model":"gpt-4o"},"calls":N,"audited":A,"calls_with_unknown_keys":W,
/// "per_1000_audited":R,"unknown_keys":{"per_page":n},"causes":{"case_variant":n}}`,
/// `per_1000_audited` rounded to two decimals, `null` when not known, and
/// `"from_proxy_log":true` for calls a proxy's log counted.
impl serde::Serialize for Group {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;

        /// The group's values, by dimension name.
        struct Values<'a>(&'a [(Dimension, String)]);
        impl serde::Serialize for Values<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(
                    self.0
                        .iter()
                        .map(|(dimension, value)| (dimension.as_str(), value)),
                )
            }
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("group", &Values(&self.values))?;
        map.serialize_entry("calls", &self.calls)?;
        map.serialize_entry("audited", &self.audited)?;
        map.serialize_entry("calls_with_unknown_keys", &self.calls_with_unknown_keys)?;
        let rate = self.per_1000_audited().map(|rate| (rate * 100.0).round() / 100.0);
        map.serialize_entry("per_1000_audited", &rate)?;
        map.serialize_entry("unknown_keys", &self.unknown_keys)?;
        map.serialize_entry("causes", &self.causes)?;
        if self.from_proxy_log {
            map.serialize_entry("from_proxy_log", &true)?;
        }
        map.end()
    }
}

/// Sorts groups as a report lists them: by rate, highest first (groups
/// with no rate last), then by calls, most first, then by values. Reports
/// added up (the Python package's `Report.merge`) sort their groups so too.
pub fn sort_groups(groups: &mut [Group]) {
    groups.sort_by(|a, b| {
        let rate = |group: &Group| group.per_1000_audited().unwrap_or(-1.0);
        rate(b)
            .total_cmp(&rate(a))
            .then(b.calls.cmp(&a.calls))
            .then_with(|| a.values.cmp(&b.values))
    });
}

/// The counts of one group, while the audit runs.
#[derive(Clone, Debug, Default)]
struct Counts {
    calls: u64,
    audited: u64,
    with_unknown: u64,
    keys: HashMap<String, u64>,
    causes: BTreeMap<&'static str, u64>,
    from_proxy_log: bool,
}

/// One grouping: its dimensions and its groups.
#[derive(Clone, Debug)]
struct Grouping {
    by: Vec<Dimension>,
    groups: HashMap<Vec<String>, Counts>,
}

/// What one call was, for grouping.
pub(crate) struct CallFacts<'a> {
    pub tool: &'a str,
    pub model: Option<&'a str>,
    pub outcome: &'a Outcome,
    /// The call was part of a response cut at its length limit.
    pub truncated: bool,
}

/// Every grouping asked for, counted as calls are audited.
#[derive(Clone, Debug, Default)]
pub(crate) struct Groups {
    groupings: Vec<Grouping>,
    /// The cause diagnosed for each (tool, key), as its warning said it:
    /// later calls carrying it are counted under that cause.
    causes: HashMap<(String, String), Cause>,
    /// The input being read.
    file: String,
    /// The calls and audited calls counted in groups so far: the rest of the
    /// coverage was counted from proxy logs.
    counted: (u64, u64),
}

impl Groups {
    /// Groups for each of `groupings` (each a list of dimensions; repeated
    /// groupings and empty ones are dropped).
    pub(crate) fn new(groupings: &[Vec<Dimension>]) -> Groups {
        let mut kept: Vec<Vec<Dimension>> = Vec::new();
        for by in groupings {
            let by = distinct(by);
            if !by.is_empty() && !kept.contains(&by) {
                kept.push(by);
            }
        }
        Groups {
            groupings: kept
                .into_iter()
                .map(|by| Grouping {
                    by,
                    groups: HashMap::new(),
                })
                .collect(),
            ..Groups::default()
        }
    }

    /// Whether any grouping was asked for.
    pub(crate) fn is_on(&self) -> bool {
        !self.groupings.is_empty()
    }

    /// The calls from here on are read from `file`.
    pub(crate) fn start_file(&mut self, file: &str) {
        if self.is_on() {
            self.file = shortened(file);
        }
    }

    /// Counts one call.
    pub(crate) fn record(&mut self, call: CallFacts<'_>) {
        if !self.is_on() {
            return;
        }
        self.counted.0 = self.counted.0.saturating_add(1);
        let (audited, keys, paths, missing) = match call.outcome {
            Outcome::Audited {
                undeclared,
                undeclared_paths,
                missing_required,
                warning,
                ..
            } => {
                for hint in warning.iter().flat_map(|warning| &warning.hints) {
                    let at = (call.tool.to_owned(), hint.key.clone());
                    self.causes.entry(at).or_insert(hint.cause);
                }
                (
                    true,
                    &undeclared[..],
                    &undeclared_paths[..],
                    &missing_required[..],
                )
            }
            Outcome::Skipped(_) => (false, &[][..], &[][..], &[][..]),
        };
        if audited {
            self.counted.1 = self.counted.1.saturating_add(1);
        }
        let mut causes: BTreeSet<&'static str> = BTreeSet::new();
        for key in keys {
            let cause = self.causes.get(&(call.tool.to_owned(), key.clone()));
            causes.insert(cause.map_or("undiagnosed", |cause| cause.as_str()));
        }
        if !paths.is_empty() {
            causes.insert("nested");
        }
        if let Some(cause) = call.outcome.missing_cause() {
            causes.insert(cause.as_str());
        }
        if call.truncated && !causes.is_empty() {
            causes = BTreeSet::from([Cause::TruncatedResponse.as_str()]);
        }
        // A top-level key and a nested key's path can be written alike
        // (`x.y`, and `y` under `x`): the call is counted once under it.
        let mut distinct = HashSet::new();
        let lost: Vec<String> = missing
            .iter()
            .map(|key| format!("{MISSING_PREFIX}{key}"))
            .collect();
        let carried: Vec<&str> = keys
            .iter()
            .chain(paths)
            .chain(&lost)
            .map(String::as_str)
            .filter(|key| distinct.insert(*key))
            .collect();
        let model = call.model.unwrap_or(UNKNOWN);
        let file = std::mem::take(&mut self.file);
        for grouping in &mut self.groupings {
            let values = |dimension: Dimension| -> Vec<&str> {
                match dimension {
                    Dimension::Model => vec![model],
                    Dimension::Tool => vec![call.tool],
                    Dimension::File => vec![&file],
                    Dimension::Key if carried.is_empty() => vec![NONE],
                    Dimension::Key => capped(carried.iter().copied()),
                    Dimension::Cause if causes.is_empty() => vec![NONE],
                    Dimension::Cause => capped(causes.iter().copied()),
                }
            };
            for group in product(grouping.by.iter().map(|d| values(*d))) {
                let counts = grouping.counts(group);
                counts.calls = counts.calls.saturating_add(1);
                if !audited {
                    continue;
                }
                counts.audited = counts.audited.saturating_add(1);
                if carried.is_empty() {
                    continue;
                }
                counts.with_unknown = counts.with_unknown.saturating_add(1);
                for key in carried.iter().take(MAX_VALUES_PER_CALL) {
                    counts.count_key(key);
                }
                for cause in &causes {
                    *counts.causes.entry(cause).or_default() += 1;
                }
            }
        }
        self.file = file;
    }

    /// An input ends: the calls its proxy logs counted (the coverage's
    /// `calls` and `audited` past what was counted here) are counted in
    /// [`PROXY_LOG`] groups, of this file.
    pub(crate) fn end_file(&mut self, calls: u64, audited: u64) {
        if !self.is_on() {
            return;
        }
        let more = (
            calls.saturating_sub(self.counted.0),
            audited.saturating_sub(self.counted.1),
        );
        self.counted = (calls, audited);
        if more == (0, 0) {
            return;
        }
        let file = std::mem::take(&mut self.file);
        for grouping in &mut self.groupings {
            let group = grouping
                .by
                .iter()
                .map(|dimension| match dimension {
                    Dimension::File => file.as_str(),
                    _ => PROXY_LOG,
                })
                .map(str::to_owned)
                .collect();
            let counts = grouping.counts_of(group);
            counts.calls = counts.calls.saturating_add(more.0);
            counts.audited = counts.audited.saturating_add(more.1);
            counts.from_proxy_log = true;
        }
        self.file = file;
    }

    /// The groups of the grouping by exactly `by`, sorted by rate (highest
    /// first), then by calls, then by values; `None` when that grouping was
    /// not asked for.
    pub(crate) fn of(&self, by: &[Dimension]) -> Option<Vec<Group>> {
        let by = distinct(by);
        let by = &by[..];
        let grouping = self.groupings.iter().find(|grouping| grouping.by == by)?;
        let mut groups: Vec<Group> = grouping
            .groups
            .iter()
            .map(|(values, counts)| Group {
                values: by.iter().copied().zip(values.iter().cloned()).collect(),
                calls: counts.calls,
                audited: counts.audited,
                calls_with_unknown_keys: counts.with_unknown,
                unknown_keys: counts.keys.iter().map(|(k, n)| (k.clone(), *n)).collect(),
                causes: counts.causes.iter().map(|(c, n)| ((*c).to_owned(), *n)).collect(),
                from_proxy_log: counts.from_proxy_log,
            })
            .collect();
        sort_groups(&mut groups);
        Some(groups)
    }

    /// The groupings asked for.
    pub(crate) fn groupings(&self) -> impl Iterator<Item = &[Dimension]> {
        self.groupings.iter().map(|grouping| grouping.by.as_slice())
    }
}

impl Grouping {
    /// The counts of the group of `values`, made when new: past
    /// [`MAX_GROUPS`], the [`OTHER`] group's.
    fn counts(&mut self, values: Vec<&str>) -> &mut Counts {
        let owned: Vec<String> = values.iter().map(|value| shortened(value)).collect();
        self.counts_of(owned)
    }

    fn counts_of(&mut self, values: Vec<String>) -> &mut Counts {
        if !self.groups.contains_key(&values) && self.groups.len() >= MAX_GROUPS {
            let other = vec![OTHER.to_owned(); self.by.len()];
            return self.groups.entry(other).or_default();
        }
        self.groups.entry(values).or_default()
    }
}

impl Counts {
    fn count_key(&mut self, key: &str) {
        if let Some(counted) = self.keys.get_mut(key) {
            *counted = counted.saturating_add(1);
            return;
        }
        let key = if self.keys.len() >= MAX_KEYS_PER_GROUP {
            OTHER.to_owned()
        } else {
            shortened(key)
        };
        let counted = self.keys.entry(key).or_default();
        *counted = counted.saturating_add(1);
    }
}

/// `by` with each dimension once, where it first comes: `--by model --by
/// model` groups by model.
fn distinct(by: &[Dimension]) -> Vec<Dimension> {
    let mut seen = BTreeSet::new();
    by.iter()
        .copied()
        .filter(|dimension| seen.insert(*dimension))
        .collect()
}

/// At most [`MAX_VALUES_PER_CALL`] values; the rest are one [`OTHER`].
fn capped<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut kept: Vec<&str> = values.collect();
    if kept.len() > MAX_VALUES_PER_CALL {
        kept.truncate(MAX_VALUES_PER_CALL);
        kept.push(OTHER);
    }
    kept
}

/// Every combination of one value from each list, in order.
fn product<'a>(lists: impl Iterator<Item = Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut combinations: Vec<Vec<&str>> = vec![Vec::new()];
    for list in lists {
        combinations = combinations
            .iter()
            .flat_map(|prefix| {
                list.iter().map(move |value| {
                    let mut combination = prefix.clone();
                    combination.push(*value);
                    combination
                })
            })
            .collect();
    }
    combinations
}

/// `value`, cut to [`MAX_VALUE_BYTES`] at a character boundary.
pub(crate) fn shortened(value: &str) -> String {
    if value.len() <= MAX_VALUE_BYTES {
        return value.to_owned();
    }
    let mut end = MAX_VALUE_BYTES - '…'.len_utf8();
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audited(keys: &[&str]) -> Outcome {
        Outcome::Audited {
            undeclared: keys.iter().map(|k| k.to_string()).collect(),
            undeclared_paths: Vec::new(),
            missing_required: Vec::new(),
            emptied: false,
            warning: None,
        }
    }

    #[test]
    fn a_call_with_two_keys_counts_in_both_key_groups_and_once_per_model() {
        let mut groups = Groups::new(&[vec![Dimension::Model], vec![Dimension::Key]]);
        let (two, none) = (audited(&["a", "b"]), audited(&[]));
        for outcome in [&two, &none] {
            groups.record(CallFacts {
                tool: "t",
                model: Some("m"),
                outcome,
                truncated: false,
            });
        }
        let by_model = groups.of(&[Dimension::Model]).unwrap();
        assert_eq!((by_model[0].calls, by_model[0].calls_with_unknown_keys), (2, 1));
        assert_eq!(by_model[0].per_1000_audited(), Some(500.0));
        let by_key = groups.of(&[Dimension::Key]).unwrap();
        let calls: Vec<(&str, u64)> = by_key.iter().map(|g| (g.values[0].1.as_str(), g.calls)).collect();
        assert_eq!(calls, [("a", 1), ("b", 1), (NONE, 1)]);
    }

    #[test]
    fn groups_past_the_limit_are_one_other_group() {
        let mut groups = Groups::new(&[vec![Dimension::Tool]]);
        let outcome = audited(&[]);
        for n in 0..MAX_GROUPS + 5 {
            groups.record(CallFacts {
                tool: &format!("tool{n}"),
                model: None,
                outcome: &outcome,
                truncated: false,
            });
        }
        let by_tool = groups.of(&[Dimension::Tool]).unwrap();
        assert_eq!(by_tool.len(), MAX_GROUPS + 1);
        let other = by_tool.iter().find(|g| g.values[0].1 == OTHER).unwrap();
        assert_eq!(other.calls, 5);
        assert_eq!(
            by_tool.iter().map(|g| g.calls).sum::<u64>(),
            MAX_GROUPS as u64 + 5
        );
    }

    #[test]
    fn a_dimension_is_read_by_name() {
        assert_eq!("cause".parse(), Ok(Dimension::Cause));
        let error = "models".parse::<Dimension>().unwrap_err();
        assert!(error.contains("model, tool, key, cause or file"), "{error}");
    }
}
