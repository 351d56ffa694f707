//! Reports that add up: the report of partitions of records, merged, is the
//! report of one run over all of them.
//!
//! A partition audits its records with an auditor of its own, so a pair it
//! finds it says once, whether another partition said it or not: merged,
//! the warnings say each (tool, key) once, the later report's warnings
//! losing the pairs the earlier one said. Every count (coverage, findings'
//! calls, groups, lines) is a sum. What depends on which partition came
//! first (the order of warnings, which call's id a warning or a finding
//! names, the notices) is no part of equality ([`same`]), so merging is
//! associative and commutative in everything a report is compared by.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{Finding, ReportData};
use crate::{Dimension, Group, MAX_GROUPS, MAX_KEYS_PER_GROUP, OTHER, sort_groups};

/// The most notices a merged report keeps: each partition names its first
/// unreadable records, and a thousand partitions must not make a report of
/// ten thousand notices.
const MAX_NOTICES: usize = 100;

/// `first` and `then` added up. Fails when they were grouped differently
/// (audits given different `by`), whose groups cannot be added.
pub fn merge(first: &ReportData, then: &ReportData) -> Result<ReportData, String> {
    let groupings = |data: &ReportData| data.groups.iter().map(|(by, _)| by.clone()).collect::<Vec<_>>();
    if groupings(first) != groupings(then) {
        return Err(
            "the reports were grouped differently: merge reports of audits given the same by=".into(),
        );
    }
    let mut merged = first.clone();
    merged.warnings.extend(unsaid(first, then));
    merged.coverage.merge(&then.coverage);
    merged.findings = findings(&first.findings, &then.findings);
    let (lines, more) = (&mut merged.lines, &then.lines);
    lines.read = lines.read.saturating_add(more.read);
    lines.not_json = lines.not_json.saturating_add(more.not_json);
    lines.not_utf8 = lines.not_utf8.saturating_add(more.not_utf8);
    lines.too_deep = lines.too_deep.saturating_add(more.too_deep);
    lines.too_long = lines.too_long.saturating_add(more.too_long);
    lines.idle = lines.idle.saturating_add(more.idle);
    merged.incomplete_inputs = merged.incomplete_inputs.saturating_add(then.incomplete_inputs);
    let room = MAX_NOTICES.saturating_sub(merged.notices.len());
    merged.notices.extend(then.notices.iter().take(room).cloned());
    for ((_, groups), (_, more)) in merged.groups.iter_mut().zip(&then.groups) {
        add_groups(groups, more);
    }
    Ok(merged)
}

/// Whether two reports say the same: the same coverage, lines and
/// incomplete inputs, the same pairs said, the same findings (calls and
/// cause per pair) and the same groups. Not compared: the order of
/// warnings, which call each names, and the notices.
pub fn same(a: &ReportData, b: &ReportData) -> bool {
    let findings = |data: &ReportData| -> BTreeMap<(String, bool, String), (u64, Option<&'static str>)> {
        data.findings
            .iter()
            .map(|f| {
                (
                    (f.tool.clone(), f.nested, f.key.clone()),
                    (f.calls, f.cause.map(|c| c.as_str())),
                )
            })
            .collect()
    };
    let groups = |data: &ReportData| {
        data.groups
            .iter()
            .map(|(by, groups)| {
                let groups: BTreeSet<String> = groups
                    .iter()
                    .map(|group| serde_json::to_string(group).expect("a group serialises"))
                    .collect();
                (by.clone(), groups)
            })
            .collect::<Vec<_>>()
    };
    a.coverage == b.coverage
        && a.lines == b.lines
        && a.incomplete_inputs == b.incomplete_inputs
        && said(a) == said(b)
        && findings(a) == findings(b)
        && groups(a) == groups(b)
}

/// Every pair the warnings said: (tool, nested, key).
pub fn said(data: &ReportData) -> BTreeSet<(String, bool, String)> {
    let mut said = BTreeSet::new();
    for warning in &data.warnings {
        for key in &warning.unknown_keys {
            said.insert((warning.tool.clone(), false, key.clone()));
        }
        for path in &warning.unknown_paths {
            said.insert((warning.tool.clone(), true, path.clone()));
        }
    }
    said
}

/// The warnings of `then` less the pairs `first` said (and the hints and
/// missing keys of those pairs); a warning left saying nothing is dropped.
fn unsaid<'a>(
    first: &ReportData,
    then: &'a ReportData,
) -> impl Iterator<Item = mcp_unknown_keys::audit::Warning> + 'a {
    let mut said: HashSet<(String, bool, String)> = self::said(first).into_iter().collect();
    then.warnings.iter().filter_map(move |warning| {
        let mut warning = warning.clone();
        let tool = warning.tool.clone();
        warning
            .unknown_keys
            .retain(|key| said.insert((tool.clone(), false, key.clone())));
        warning
            .unknown_paths
            .retain(|path| said.insert((tool.clone(), true, path.clone())));
        warning
            .hints
            .retain(|hint| warning.unknown_keys.contains(&hint.key));
        let suggested: HashSet<&str> = warning
            .hints
            .iter()
            .filter_map(|hint| hint.suggestion.as_deref())
            .collect();
        let suggested: HashSet<String> = suggested.into_iter().map(str::to_owned).collect();
        warning
            .missing_keys
            .retain(|missing| suggested.contains(&missing.key));
        let says = !warning.unknown_keys.is_empty() || !warning.unknown_paths.is_empty();
        says.then_some(warning)
    })
}

/// Findings added per pair: calls summed; the first report's id, cause and
/// declared keys kept where it has them.
fn findings(first: &[Finding], then: &[Finding]) -> Vec<Finding> {
    let mut merged: BTreeMap<(String, bool, String), Finding> = BTreeMap::new();
    for finding in first.iter().chain(then) {
        let at = (finding.tool.clone(), finding.nested, finding.key.clone());
        match merged.get_mut(&at) {
            None => {
                merged.insert(at, finding.clone());
            }
            Some(kept) => {
                kept.calls = kept.calls.saturating_add(finding.calls);
                if kept.first_id.is_empty() {
                    kept.first_id.clone_from(&finding.first_id);
                }
                kept.cause = kept.cause.or(finding.cause);
                if kept.declared_keys.is_empty() {
                    kept.declared_keys.clone_from(&finding.declared_keys);
                }
            }
        }
    }
    merged.into_values().collect()
}

/// The groups of `more` added to `groups` (those of the same values summed,
/// the others added), sorted again as a report sorts them: by rate, highest
/// first, then by calls, then by values. The bounds of one run hold: past
/// [`MAX_GROUPS`] groups, a new group's calls are counted in the group whose
/// every value is [`OTHER`], and past [`MAX_KEYS_PER_GROUP`] keys in a
/// group, a new key's calls under [`OTHER`], so that merging any number of
/// reports keeps a report's size bounded. (Past those bounds the split,
/// like one run's, depends on the order the groups came in.)
fn add_groups(groups: &mut Vec<Group>, more: &[Group]) {
    // Where each group is, by its values: a merge is linear in the groups.
    let mut at: HashMap<Vec<(Dimension, String)>, usize> = groups
        .iter()
        .enumerate()
        .map(|(place, group)| (group.values.clone(), place))
        .collect();
    for group in more {
        let place = match at.get(&group.values) {
            Some(&place) => place,
            None => {
                let values = if at.len() >= MAX_GROUPS {
                    group
                        .values
                        .iter()
                        .map(|(dimension, _)| (*dimension, OTHER.to_owned()))
                        .collect()
                } else {
                    group.values.clone()
                };
                *at.entry(values.clone()).or_insert_with(|| {
                    groups.push(Group {
                        values,
                        ..Group::default()
                    });
                    groups.len() - 1
                })
            }
        };
        add_group(&mut groups[place], group);
    }
    sort_groups(groups);
}

/// The counts of `more` added to those of `kept`.
fn add_group(kept: &mut Group, more: &Group) {
    kept.calls = kept.calls.saturating_add(more.calls);
    kept.audited = kept.audited.saturating_add(more.audited);
    kept.calls_with_unknown_keys = kept
        .calls_with_unknown_keys
        .saturating_add(more.calls_with_unknown_keys);
    for (key, calls) in &more.unknown_keys {
        let key = if kept.unknown_keys.contains_key(key) || kept.unknown_keys.len() < MAX_KEYS_PER_GROUP {
            key.clone()
        } else {
            OTHER.to_owned()
        };
        let counted = kept.unknown_keys.entry(key).or_default();
        *counted = counted.saturating_add(*calls);
    }
    for (cause, calls) in &more.causes {
        let counted = kept.causes.entry(cause.clone()).or_default();
        *counted = counted.saturating_add(*calls);
    }
    kept.from_proxy_log |= more.from_proxy_log;
}
