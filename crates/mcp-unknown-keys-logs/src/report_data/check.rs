//! Whether a report's counts agree with one another, as every report an
//! audit makes does: a report read back from text is checked before it is
//! believed or added to another.

use std::collections::HashSet;

use mcp_unknown_keys::audit::{Cause, Coverage, MAX_UNLISTED_NAME_BYTES};

use super::ReportData;
use super::form::names;
use crate::groups::MAX_VALUE_BYTES;
use crate::{Dimension, Group, Lines};

/// Whether `data`'s counts agree, as an audit makes them: the coverage's
/// audited calls within its calls and its unaudited reasons adding up to
/// the rest; the lines that could not be read, and the idle ones, within
/// the lines read; each group's audited calls within its calls, its calls
/// with undeclared keys within those, and each key's and each cause's
/// calls within those; no group with more calls than the coverage, and the
/// groups of a grouping by model, tool or file (one group a call) adding
/// up to the coverage; no two groups of a grouping, and no two findings,
/// for the same thing; the names a report bounds within their bounds. The
/// error names the first count that disagrees.
pub fn check(data: &ReportData) -> Result<(), String> {
    coverage(&data.coverage)?;
    lines(&data.lines)?;
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
                names(by)
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

fn lines(lines: &Lines) -> Result<(), String> {
    let Lines {
        read,
        not_json,
        not_utf8,
        too_deep,
        too_long,
        idle,
        ..
    } = *lines;
    let passed_over: u128 = [not_json, not_utf8, too_deep, too_long, idle]
        .into_iter()
        .map(u128::from)
        .sum();
    if passed_over > u128::from(read) {
        return Err(format!(
            "lines: {passed_over} lines unreadable or idle of {read} lines read"
        ));
    }
    Ok(())
}

/// One grouping's groups, each within its totals, and the grouping within
/// the coverage.
fn grouping(by: &[Dimension], groups: &[Group], coverage: &Coverage) -> Result<(), String> {
    let mut values = HashSet::new();
    let (mut calls, mut audited) = (0u128, 0u128);
    for group in groups {
        let named = || {
            format!(
                "groups: the group {:?} of a grouping by {}",
                group.values,
                names(by)
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
        if group.calls > coverage.calls {
            return Err(format!(
                "{}: {} calls, of {} calls found",
                named(),
                group.calls,
                coverage.calls
            ));
        }
        calls += u128::from(group.calls);
        audited += u128::from(group.audited);
    }
    let one_per_call = by.iter().all(|dimension| dimension.is_one_per_call());
    let found = (u128::from(coverage.calls), u128::from(coverage.audited));
    if one_per_call && (calls, audited) != found {
        return Err(format!(
            "groups: the groups of a grouping by {} count {calls} calls, {audited} audited, \
             where the coverage counts {}, {}",
            names(by),
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
    for (what, counts) in [("key", &group.unknown_keys), ("cause", &group.causes)] {
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
