//! A report's JSON form, written and read back.
//!
//! Read back, the text is deserialised straight into the report's own
//! values, never into a JSON tree (which costs tens of times the text), and
//! every list or map a report bounds is read within its bound: past it,
//! reading stops at once with an error saying which bound. The notices past
//! [`MAX_NOTICES`] are skipped unread, as a merge drops them. What is read
//! is then checked ([`check`]).

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use mcp_unknown_keys::audit::{Cause, Coverage, OTHER_UNLISTED_TOOLS, Skip, Warning};
use mcp_unknown_keys::limits::MAX_NAMED_UNLISTED_TOOLS;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::{Finding, Fingerprint, MAX_NOTICES, ReportData, check};
use crate::groups::{Dimension, Group, MAX_GROUPS, MAX_KEYS_PER_GROUP};

/// The version of the JSON form this writes: 2 records the options the
/// audit was given; 1, written before, did not, and is still read.
const FORM: u64 = 2;

/// The version written before reports recorded their options.
const FORM_WITHOUT_OPTIONS: u64 = 1;

/// The most causes one group counts: every cause, and `nested`.
const MAX_CAUSES: usize = Cause::ALL.len() + 1;

impl ReportData {
    /// The report as one JSON object: `report` (the form's version),
    /// `options` (what the audit was given, fingerprinted), `warnings`,
    /// `coverage`, `findings`, `lines`, `incomplete_inputs`, `notices` (the
    /// first [`MAX_NOTICES`]), and `groups` (each grouping `{"by": [...],
    /// "groups": [...]}`, its groups as `audit --by` prints them). A report
    /// read back from the form before options were recorded is written in
    /// that form again.
    pub fn to_json(&self) -> String {
        let written = Written {
            report: match self.options {
                Some(_) => FORM,
                None => FORM_WITHOUT_OPTIONS,
            },
            options: self.options.as_ref(),
            warnings: &self.warnings,
            coverage: &self.coverage,
            findings: &self.findings,
            lines: self.line_counts(),
            incomplete_inputs: self.incomplete_inputs,
            notices: &self.notices[..self.notices.len().min(MAX_NOTICES)],
            groups: self
                .groups
                .iter()
                .map(|(by, groups)| GroupingWritten {
                    by: by.iter().map(|dimension| dimension.as_str()).collect(),
                    groups,
                })
                .collect(),
        };
        serde_json::to_string(&written).expect("a report serialises")
    }

    /// Reads a report's JSON form back: what [`ReportData::to_json`] writes,
    /// in this form or the one before. The error says what is wrong: text
    /// that is not JSON, a member missing or of the wrong type, a list past
    /// its bound, or counts that disagree ([`check`]).
    pub fn from_json(text: &str) -> Result<ReportData, String> {
        if !text.trim_start().starts_with('{') {
            return Err(match serde_json::from_str::<IgnoredAny>(text) {
                Err(error) => format!("not JSON: {error}"),
                Ok(_) => "a report is a JSON object".to_owned(),
            });
        }
        let form: Form = serde_json::from_str(text).map_err(|error| match error.classify() {
            serde_json::error::Category::Data => error.to_string(),
            _ => format!("not JSON: {error}"),
        })?;
        let data = form.into_data()?;
        check(&data)?;
        Ok(data)
    }
}

/// The JSON form, as it is written: straight from the report, no JSON tree
/// built.
#[derive(Serialize)]
struct Written<'a> {
    report: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<&'a Fingerprint>,
    warnings: &'a [Warning],
    coverage: &'a Coverage,
    findings: &'a [Finding],
    lines: BTreeMap<&'static str, u64>,
    incomplete_inputs: u64,
    notices: &'a [String],
    groups: Vec<GroupingWritten<'a>>,
}

/// One grouping, as it is written.
#[derive(Serialize)]
struct GroupingWritten<'a> {
    by: Vec<&'static str>,
    groups: &'a [Group],
}

/// The JSON form, as it is read: each member optional here, so that a
/// missing one is named.
#[derive(Deserialize)]
struct Form {
    report: Option<u64>,
    options: Option<Fingerprint>,
    warnings: Option<Vec<Warning>>,
    coverage: Option<CoverageForm>,
    findings: Option<Vec<Finding>>,
    lines: Option<LinesForm>,
    incomplete_inputs: Option<u64>,
    #[serde(default, deserialize_with = "notices")]
    notices: Option<Vec<String>>,
    groups: Option<Vec<GroupingForm>>,
}

/// A member of the form, which a report has.
fn member<T>(value: Option<T>, name: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("a report's JSON form has `{name}`"))
}

impl Form {
    fn into_data(self) -> Result<ReportData, String> {
        let options = match self.report {
            Some(FORM) => Some(member(self.options, "options")?),
            Some(FORM_WITHOUT_OPTIONS) if self.options.is_none() => None,
            _ => {
                return Err(format!(
                    "not a report's JSON form (Report.to_json writes \"report\": {FORM}, with its \"options\")"
                ));
            }
        };
        let lines = member(self.lines, "lines")?;
        let mut data = ReportData {
            options,
            warnings: member(self.warnings, "warnings")?,
            coverage: member(self.coverage, "coverage")?.into_coverage(),
            findings: member(self.findings, "findings")?,
            incomplete_inputs: member(self.incomplete_inputs, "incomplete_inputs")?,
            notices: member(self.notices, "notices")?,
            ..ReportData::default()
        };
        data.lines.read = lines.read;
        data.lines.not_json = lines.not_json;
        data.lines.not_utf8 = lines.not_utf8;
        data.lines.too_deep = lines.too_deep;
        data.lines.too_long = lines.too_long;
        data.lines.idle = lines.idle;
        for grouping in member(self.groups, "groups")? {
            data.groups.push(grouping.into_groups()?);
        }
        Ok(data)
    }
}

/// A coverage as written, its unlisted tools within their bound.
#[derive(Deserialize)]
struct CoverageForm {
    calls: u64,
    audited: u64,
    #[serde(default)]
    unaudited: BTreeMap<Skip, u64>,
    #[serde(default, deserialize_with = "unlisted_tools")]
    unlisted_tools: BTreeMap<String, u64>,
}

impl CoverageForm {
    fn into_coverage(self) -> Coverage {
        let mut coverage = Coverage::default();
        coverage.calls = self.calls;
        coverage.audited = self.audited;
        coverage.unaudited = self.unaudited;
        coverage.unlisted_tools = self.unlisted_tools;
        coverage
    }
}

/// The lines' counts, by name; a name not written is 0.
#[derive(Default, Deserialize)]
#[serde(default)]
struct LinesForm {
    read: u64,
    not_json: u64,
    not_utf8: u64,
    too_deep: u64,
    too_long: u64,
    idle: u64,
}

/// One grouping as written.
#[derive(Deserialize)]
struct GroupingForm {
    #[serde(deserialize_with = "dimensions")]
    by: Vec<String>,
    #[serde(deserialize_with = "groups")]
    groups: Vec<GroupForm>,
}

impl GroupingForm {
    fn into_groups(self) -> Result<(Vec<Dimension>, Vec<Group>), String> {
        let by: Vec<Dimension> = self
            .by
            .iter()
            .map(|name| name.parse())
            .collect::<Result<_, _>>()?;
        let groups = self
            .groups
            .into_iter()
            .map(|group| group.into_group(&by))
            .collect::<Result<_, _>>()?;
        Ok((by, groups))
    }
}

/// One group as `audit --by` prints it (its rate, which follows from its
/// counts, is not read).
#[derive(Deserialize)]
struct GroupForm {
    #[serde(deserialize_with = "group_values")]
    group: BTreeMap<String, String>,
    calls: u64,
    audited: u64,
    calls_with_unknown_keys: u64,
    #[serde(deserialize_with = "group_keys")]
    unknown_keys: BTreeMap<String, u64>,
    #[serde(deserialize_with = "group_causes")]
    causes: BTreeMap<String, u64>,
    #[serde(default)]
    from_proxy_log: bool,
}

impl GroupForm {
    /// The group, its values in the order of `by`.
    fn into_group(mut self, by: &[Dimension]) -> Result<Group, String> {
        let mut values = Vec::with_capacity(by.len());
        for dimension in by {
            let value = self
                .group
                .remove(dimension.as_str())
                .ok_or_else(|| format!("a group of a grouping by {dimension} has a {dimension}"))?;
            values.push((*dimension, value));
        }
        if let Some(other) = self.group.keys().next() {
            return Err(format!(
                "a group of a grouping by {} has a value for {other:?}, which it is not grouped by",
                Dimension::names(by)
            ));
        }
        Ok(Group {
            values,
            calls: self.calls,
            audited: self.audited,
            calls_with_unknown_keys: self.calls_with_unknown_keys,
            unknown_keys: self.unknown_keys,
            causes: self.causes,
            from_proxy_log: self.from_proxy_log,
        })
    }
}

fn notices<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    deserializer
        .deserialize_seq(FirstOf::<String>::new(MAX_NOTICES))
        .map(Some)
}

fn unlisted_tools<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, u64>, D::Error> {
    deserializer.deserialize_map(AtMost::<BTreeMap<String, u64>>::new(
        MAX_NAMED_UNLISTED_TOOLS + 1,
        "unlisted tools named in a coverage",
        OTHER_UNLISTED_TOOLS,
    ))
}

fn dimensions<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_seq(AtMost::<Vec<String>>::new(
        Dimension::ALL.len(),
        "dimensions in a grouping",
        "",
    ))
}

fn groups<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<GroupForm>, D::Error> {
    deserializer.deserialize_seq(AtMost::<Vec<GroupForm>>::new(
        MAX_GROUPS + 1,
        "groups in a grouping",
        "(other)",
    ))
}

fn group_values<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    deserializer.deserialize_map(AtMost::<BTreeMap<String, String>>::new(
        Dimension::ALL.len(),
        "values of a group",
        "",
    ))
}

fn group_keys<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, u64>, D::Error> {
    deserializer.deserialize_map(AtMost::<BTreeMap<String, u64>>::new(
        MAX_KEYS_PER_GROUP + 1,
        "keys in a group",
        "(other)",
    ))
}

fn group_causes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, u64>, D::Error> {
    deserializer.deserialize_map(AtMost::<BTreeMap<String, u64>>::new(
        MAX_CAUSES,
        "causes in a group",
        "",
    ))
}

/// A list or a map of at most `max` items: reading stops at the one past.
struct AtMost<T> {
    max: usize,
    what: &'static str,
    /// The item that counts whatever is past the bound, if there is one.
    other: &'static str,
    read: PhantomData<T>,
}

impl<T> AtMost<T> {
    fn new(max: usize, what: &'static str, other: &'static str) -> AtMost<T> {
        AtMost {
            max,
            what,
            other,
            read: PhantomData,
        }
    }

    fn past_the_bound<E: de::Error>(&self) -> E {
        let beyond = match self.other {
            "" => String::new(),
            other => format!(" ({} and one {other})", self.max - 1),
        };
        E::custom(format!(
            "more than {} {}{beyond}: a report holds no more",
            self.max, self.what
        ))
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for AtMost<Vec<T>> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of at most {} {}", self.max, self.what)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            if items.len() == self.max {
                return Err(self.past_the_bound());
            }
            items.push(item);
        }
        Ok(items)
    }
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for AtMost<BTreeMap<String, V>> {
    type Value = BTreeMap<String, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object of at most {} {}", self.max, self.what)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BTreeMap<String, V>, A::Error> {
        let mut items = BTreeMap::new();
        while let Some((key, value)) = map.next_entry()? {
            if items.len() == self.max && !items.contains_key(&key) {
                return Err(self.past_the_bound());
            }
            items.insert(key, value);
        }
        Ok(items)
    }
}

/// The first `max` items of a list; the rest are skipped unread.
struct FirstOf<T> {
    max: usize,
    read: PhantomData<T>,
}

impl<T> FirstOf<T> {
    fn new(max: usize) -> FirstOf<T> {
        FirstOf {
            max,
            read: PhantomData,
        }
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for FirstOf<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut items = Vec::new();
        while items.len() < self.max {
            match seq.next_element()? {
                Some(item) => items.push(item),
                None => return Ok(items),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_past_its_bound_stops_the_reading() {
        let many = format!("[{}]", ["\"model\""; 6].join(","));
        let error = dimensions(&mut serde_json::Deserializer::from_str(&many)).unwrap_err();
        assert!(
            error.to_string().contains("more than 5 dimensions in a grouping"),
            "{error}"
        );
        let notices = format!("[{}]", ["\"n\""; 150].join(","));
        let read = super::notices(&mut serde_json::Deserializer::from_str(&notices)).unwrap();
        assert_eq!(read.unwrap().len(), MAX_NOTICES);
    }

    #[test]
    fn a_key_said_again_in_a_full_map_is_no_new_key() {
        let keys: Vec<String> = (0..=MAX_KEYS_PER_GROUP).map(|n| format!("\"k{n}\":1")).collect();
        let full = format!("{{{},\"k0\":2}}", keys.join(","));
        let read = group_keys(&mut serde_json::Deserializer::from_str(&full)).unwrap();
        assert_eq!((read.len(), read["k0"]), (MAX_KEYS_PER_GROUP + 1, 2));
        let past = format!("{{{},\"k_new\":2}}", keys.join(","));
        let error = group_keys(&mut serde_json::Deserializer::from_str(&past)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("more than 201 keys in a group (200 and one (other))"),
            "{error}"
        );
    }
}
