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

use mcp_unknown_keys::audit::{Coverage, OTHER_UNLISTED_TOOLS};
use mcp_unknown_keys::limits::MAX_NAMED_UNLISTED_TOOLS;

use super::{Finding, MAX_NOTICES, ReportData};
use crate::groups::{Dimension, Group, MAX_GROUPS, MAX_KEYS_PER_GROUP, OTHER, sort_groups};
use crate::report::Lines;

/// `first` and `then` added up. Fails, saying why, when they cannot be:
/// their audits were given different options (a different catalogue,
/// `allow`, `top_level_only` or `by`), or one was written before reports
/// recorded their options and the other after; or a count would pass
/// `u64::MAX` (refused, not saturated: a saturated sum would make the
/// merged counts disagree with one another).
pub fn merge(first: &ReportData, then: &ReportData) -> Result<ReportData, String> {
    agree(first, then)?;
    let mut merged = first.clone();
    merged.warnings.extend(unsaid(first, then));
    merged.coverage = coverage(&first.coverage, &then.coverage)?;
    merged.findings = findings(&first.findings, &then.findings)?;
    merged.lines = lines(&first.lines, &then.lines)?;
    merged.incomplete_inputs = sum(
        first.incomplete_inputs,
        then.incomplete_inputs,
        "incomplete inputs",
    )?;
    let room = MAX_NOTICES.saturating_sub(merged.notices.len());
    merged.notices.extend(then.notices.iter().take(room).cloned());
    for ((_, groups), (_, more)) in merged.groups.iter_mut().zip(&then.groups) {
        add_groups(groups, more)?;
    }
    Ok(merged)
}

/// Whether the audits of `first` and `then` were given the same options;
/// the error names the one that differs.
fn agree(first: &ReportData, then: &ReportData) -> Result<(), String> {
    let groupings = |data: &ReportData| data.groups.iter().map(|(by, _)| by.clone()).collect::<Vec<_>>();
    if groupings(first) != groupings(then) {
        return Err(
            "the reports were grouped differently: merge reports of audits given the same by=".into(),
        );
    }
    let differs = match (&first.options, &then.options) {
        (Some(first), Some(then)) => first.differs_from(then),
        (None, None) => None,
        _ => {
            return Err(
                "one report was written before reports recorded the options of their audit \
                 (\"report\": 1) and the other after: such a report merges only with reports written \
                 before, whose options are not known either"
                    .into(),
            );
        }
    };
    match differs {
        Some(option) => Err(format!(
            "the reports' audits were given different options: {option} differs; merge reports of \
             audits given the same tools, allow and top_level_only"
        )),
        None => Ok(()),
    }
}

/// `a + b`, or the error of the count `what` passing `u64::MAX`.
fn sum(a: u64, b: u64, what: &str) -> Result<u64, String> {
    a.checked_add(b).ok_or_else(|| {
        format!(
            "the merged {what} would pass {}: counts past it are refused, not saturated",
            u64::MAX
        )
    })
}

/// Adds `more` to the count at `key` of `counts`.
fn add_to<K: Ord>(counts: &mut BTreeMap<K, u64>, key: K, more: u64, what: &str) -> Result<(), String> {
    let counted = counts.entry(key).or_default();
    *counted = sum(*counted, more, what)?;
    Ok(())
}

/// Two coverages added up, as [`Coverage::merge`] adds them (unlisted tools
/// past [`MAX_NAMED_UNLISTED_TOOLS`] names counted under
/// [`OTHER_UNLISTED_TOOLS`]), every count checked.
fn coverage(first: &Coverage, then: &Coverage) -> Result<Coverage, String> {
    let mut merged = first.clone();
    merged.calls = sum(first.calls, then.calls, "calls")?;
    merged.audited = sum(first.audited, then.audited, "audited calls")?;
    for (skip, calls) in &then.unaudited {
        add_to(&mut merged.unaudited, *skip, *calls, "unaudited calls")?;
    }
    for (tool, calls) in &then.unlisted_tools {
        let named = merged.unlisted_tools.len()
            - usize::from(merged.unlisted_tools.contains_key(OTHER_UNLISTED_TOOLS));
        let tool = match merged.unlisted_tools.contains_key(tool) || named < MAX_NAMED_UNLISTED_TOOLS {
            true => tool.clone(),
            false => OTHER_UNLISTED_TOOLS.to_owned(),
        };
        add_to(
            &mut merged.unlisted_tools,
            tool,
            *calls,
            "calls to an unlisted tool",
        )?;
    }
    Ok(merged)
}

/// Two reports' lines added up.
fn lines(first: &Lines, then: &Lines) -> Result<Lines, String> {
    let mut merged = *first;
    merged.read = sum(first.read, then.read, "lines read")?;
    merged.not_json = sum(first.not_json, then.not_json, "lines not JSON")?;
    merged.not_utf8 = sum(first.not_utf8, then.not_utf8, "lines not UTF-8")?;
    merged.too_deep = sum(first.too_deep, then.too_deep, "lines too deep")?;
    merged.too_long = sum(first.too_long, then.too_long, "lines too long")?;
    merged.idle = sum(first.idle, then.idle, "idle lines")?;
    Ok(merged)
}

/// Whether two reports say the same: audits given the same options, the
/// same coverage, lines and incomplete inputs, the same pairs said, the same findings (calls and
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
    a.options == b.options
        && a.coverage == b.coverage
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
fn findings(first: &[Finding], then: &[Finding]) -> Result<Vec<Finding>, String> {
    let mut merged: BTreeMap<(String, bool, String), Finding> = BTreeMap::new();
    for finding in first.iter().chain(then) {
        let at = (finding.tool.clone(), finding.nested, finding.key.clone());
        match merged.get_mut(&at) {
            None => {
                merged.insert(at, finding.clone());
            }
            Some(kept) => {
                kept.calls = sum(kept.calls, finding.calls, "calls of a finding")?;
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
    Ok(merged.into_values().collect())
}

/// The groups of `more` added to `groups` (those of the same values summed,
/// the others added), sorted again as a report sorts them: by rate, highest
/// first, then by calls, then by values. The bounds of one run hold: past
/// [`MAX_GROUPS`] groups, a new group's calls are counted in the group whose
/// every value is [`OTHER`], and past [`MAX_KEYS_PER_GROUP`] keys in a
/// group, a new key's calls under [`OTHER`], so that merging any number of
/// reports keeps a report's size bounded. (Past those bounds the split,
/// like one run's, depends on the order the groups came in.)
fn add_groups(groups: &mut Vec<Group>, more: &[Group]) -> Result<(), String> {
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
        add_group(&mut groups[place], group)?;
    }
    sort_groups(groups);
    Ok(())
}

/// The counts of `more` added to those of `kept`.
fn add_group(kept: &mut Group, more: &Group) -> Result<(), String> {
    kept.calls = sum(kept.calls, more.calls, "calls of a group")?;
    kept.audited = sum(kept.audited, more.audited, "audited calls of a group")?;
    kept.calls_with_unknown_keys = sum(
        kept.calls_with_unknown_keys,
        more.calls_with_unknown_keys,
        "calls with undeclared keys of a group",
    )?;
    for (key, calls) in &more.unknown_keys {
        let key = if kept.unknown_keys.contains_key(key) || kept.unknown_keys.len() < MAX_KEYS_PER_GROUP {
            key.clone()
        } else {
            OTHER.to_owned()
        };
        add_to(&mut kept.unknown_keys, key, *calls, "calls of a key in a group")?;
    }
    for (cause, calls) in &more.causes {
        add_to(
            &mut kept.causes,
            cause.clone(),
            *calls,
            "calls of a cause in a group",
        )?;
    }
    kept.from_proxy_log |= more.from_proxy_log;
    Ok(())
}
