//! Whether a report's counts agree with one another, as every report an
//! audit makes does: a report read back from text is checked before it is
//! believed or added to another.

use std::collections::HashSet;

use mcp_unknown_keys::audit::{Cause, Coverage};
use mcp_unknown_keys::limits::MAX_UNLISTED_NAME_BYTES;

use super::ReportData;
use crate::groups::MAX_VALUE_BYTES;
use crate::groups::{Dimension, Group, OTHER};

/// Whether `data`'s counts agree, as an audit makes them: the coverage's
/// audited calls within its calls and its unaudited reasons adding up to
/// the rest; the lines that could not be read, and the idle ones, within
/// the lines read; each group's audited calls within its calls, its calls
/// with undeclared keys within those, and each key's (but `(other)`'s,
/// which counts every key past the bound) and each cause's calls within
/// those; the groups of a grouping by model, tool or file (one group a
/// call) adding up to the coverage (a grouping by key or cause counts a
/// call in a group per key or cause, and its `(other)` group may count a
/// call several times, so its groups are not bounded by the coverage); no
/// two groups of a grouping, and no two findings, for the same thing; the
/// names a report bounds within their bounds. The error names the first
/// count that disagrees.
pub fn check(data: &ReportData) -> Result<(), String> {
    coverage(&data.coverage)?;
    lines(data)?;
    let mut pairs = HashSet::new();
    for finding in &data.findings {
        if !pairs.insert((&finding.tool, finding.nested, &finding.key)) {
            return Err(format!(
                "findings: {:?} of {:?} is found twice",
                finding.key, finding.tool
            ));
        }
    }
    let mut groupings = HashSet::new();
    for (by, groups) in &data.groups {
        let distinct: HashSet<&Dimension> = by.iter().collect();
        if by.is_empty() || distinct.len() != by.len() || !groupings.insert(by) {
            return Err(format!(
                "groups: a grouping by {:?} is no grouping a report has (none, or one said twice)",
                Dimension::names(by)
            ));
        }
        grouping(by, groups, &data.coverage)?;
    }
    Ok(())
}

fn coverage(coverage: &Coverage) -> Result<(), String> {
    if coverage.audited > coverage.calls {
        return Err(format!(
            "coverage: {} audited calls of {} calls",
            coverage.audited, coverage.calls
        ));
    }
    if !coverage.is_consistent() {
        return Err(format!(
            "coverage: the unaudited calls by reason do not add up to the {} calls not audited",
            coverage.calls - coverage.audited
        ));
    }
    if let Some(name) = coverage
        .unlisted_tools
        .keys()
        .find(|name| name.len() > MAX_UNLISTED_NAME_BYTES)
    {
        return Err(format!(
            "coverage: an unlisted tool's name of {} bytes (a report keeps {MAX_UNLISTED_NAME_BYTES})",
            name.len()
        ));
    }
    Ok(())
}

/// The lines unreadable or idle, within the lines read.
fn lines(data: &ReportData) -> Result<(), String> {
    let counts = data.line_counts();
    let read = counts["read"];
    let passed_over: u128 = counts
        .iter()
        .filter(|(name, _)| **name != "read")
        .map(|(_, lines)| u128::from(*lines))
        .sum();
    if passed_over > u128::from(read) {
        return Err(format!(
            "lines: {passed_over} lines unreadable or idle of {read} lines read"
        ));
    }
    Ok(())
}

/// One grouping's groups, each within its totals, and a grouping of one
/// group a call adding up to the coverage.
fn grouping(by: &[Dimension], groups: &[Group], coverage: &Coverage) -> Result<(), String> {
    let mut values = HashSet::new();
    let (mut calls, mut audited) = (0u128, 0u128);
    for group in groups {
        let named = || {
            format!(
                "groups: the group {:?} of a grouping by {}",
                group.values,
                Dimension::names(by)
            )
        };
        if !values.insert(&group.values) {
            return Err(format!("{}: said twice", named()));
        }
        if let Some((_, value)) = group
            .values
            .iter()
            .find(|(_, value)| value.len() > MAX_VALUE_BYTES)
        {
            return Err(format!(
                "{}: a value of {} bytes (a report keeps {MAX_VALUE_BYTES})",
                named(),
                value.len()
            ));
        }
        group_counts(group).map_err(|why| format!("{}: {why}", named()))?;
        calls += u128::from(group.calls);
        audited += u128::from(group.audited);
    }
    let one_per_call = by.iter().all(|dimension| dimension.is_one_per_call());
    let found = (u128::from(coverage.calls), u128::from(coverage.audited));
    if one_per_call && (calls, audited) != found {
        return Err(format!(
            "groups: the groups of a grouping by {} count {calls} calls, {audited} audited, \
             where the coverage counts {}, {}",
            Dimension::names(by),
            found.0,
            found.1
        ));
    }
    Ok(())
}

/// A group's counts, each within the one it is part of.
fn group_counts(group: &Group) -> Result<(), String> {
    if group.audited > group.calls {
        return Err(format!(
            "{} audited calls of {} calls",
            group.audited, group.calls
        ));
    }
    let carrying = group.calls_with_unknown_keys;
    if carrying > group.audited {
        return Err(format!(
            "{carrying} calls with undeclared keys of {} audited",
            group.audited
        ));
    }
    // `(other)` counts every key past the group's bound: a call carrying
    // several of them counts several times there.
    let named_keys = group.unknown_keys.iter().filter(|(key, _)| *key != OTHER);
    let counts: [(&str, Vec<(&String, &u64)>); 2] = [
        ("key", named_keys.collect()),
        ("cause", group.causes.iter().collect()),
    ];
    for (what, counts) in counts {
        if let Some((name, calls)) = counts.iter().find(|(_, calls)| **calls > carrying) {
            return Err(format!(
                "the {what} {name:?} carried by {calls} calls, of {carrying} with undeclared keys"
            ));
        }
    }
    if let Some(name) = group.unknown_keys.keys().find(|key| key.len() > MAX_VALUE_BYTES) {
        return Err(format!(
            "a key of {} bytes (a report keeps {MAX_VALUE_BYTES})",
            name.len()
        ));
    }
    let is_cause = |name: &str| name == "nested" || Cause::ALL.iter().any(|cause| cause.as_str() == name);
    if let Some(name) = group.causes.keys().find(|name| !is_cause(name)) {
        return Err(format!("no cause is named {name:?}"));
    }
    Ok(())
}
