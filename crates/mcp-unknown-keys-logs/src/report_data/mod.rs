//! A [`Report`] as plain data: what an audit found and counted, in a form
//! that adds up across partitions ([`merge`]) and goes to JSON text and
//! back, for a report to travel between the workers of an engine (Ray
//! Data, Spark) and the driver that adds them up. The Python package's
//! `Report` is one.

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Cause, Coverage, Warning};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{Dimension, Group, Lines, Report};

mod merge;

pub use merge::{merge, said, same};

/// The version of the JSON form: a report read back must have been written
/// in it.
const FORM: u64 = 1;

/// Everything a report says, as plain data.
#[derive(Clone, Debug, Default)]
pub struct ReportData {
    /// Every warning, in order: each undeclared pair said once.
    pub warnings: Vec<Warning>,
    /// Every call found.
    pub coverage: Coverage,
    /// Every undeclared pair, counted per call, sorted by tool, then keys
    /// before paths, each sorted.
    pub findings: Vec<Finding>,
    /// The lines (records) read, and what became of them.
    pub lines: Lines,
    /// Inputs read only in part.
    pub incomplete_inputs: u64,
    /// Everything said beside the warnings.
    pub notices: Vec<String>,
    /// Each grouping counted, with its groups, highest rate first.
    pub groups: Vec<(Vec<Dimension>, Vec<Group>)>,
}

/// One undeclared (tool, key) pair and the calls that carried it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The tool, as the calls named it.
    pub tool: String,
    /// The key, or a nested key's path when `nested`.
    pub key: String,
    /// Whether `key` is a nested key's path.
    #[serde(default)]
    pub nested: bool,
    /// How many calls carried it.
    pub calls: u64,
    /// The id of a call that carried it (the first read where it was read
    /// first), as text; `""` for none.
    #[serde(default)]
    pub first_id: String,
    /// Its diagnosed cause, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// Every key the tool declared.
    #[serde(default)]
    pub declared_keys: Vec<String>,
}

impl From<Report> for ReportData {
    fn from(report: Report) -> ReportData {
        let groups = report
            .groupings()
            .map(|by| (by.to_vec(), report.groups(by).unwrap_or_default()))
            .collect();
        let findings = report
            .pairs()
            .into_iter()
            .map(|pair| Finding {
                tool: pair.tool.to_owned(),
                key: pair.key.to_owned(),
                nested: pair.nested,
                calls: pair.calls,
                first_id: pair.first_id.to_owned(),
                cause: pair.cause,
                declared_keys: pair.declared_keys.to_vec(),
            })
            .collect();
        ReportData {
            groups,
            findings,
            notices: report.notices.iter().map(ToString::to_string).collect(),
            warnings: report.warnings,
            coverage: report.coverage,
            lines: report.lines,
            incomplete_inputs: report.incomplete_inputs,
        }
    }
}

impl ReportData {
    /// The lines as a map of their counts, by name.
    pub fn line_counts(&self) -> BTreeMap<&'static str, u64> {
        let Lines {
            read,
            not_json,
            not_utf8,
            too_deep,
            too_long,
            idle,
            ..
        } = self.lines;
        BTreeMap::from([
            ("read", read),
            ("not_json", not_json),
            ("not_utf8", not_utf8),
            ("too_deep", too_deep),
            ("too_long", too_long),
            ("idle", idle),
        ])
    }

    /// The report as one JSON object: `warnings`, `coverage`, `findings`,
    /// `lines`, `incomplete_inputs`, `notices`, and `groups` (each grouping
    /// `{"by": [...], "groups": [...]}`, its groups as `audit --by` prints
    /// them).
    pub fn to_json(&self) -> String {
        let groups: Vec<Value> = self
            .groups
            .iter()
            .map(|(by, groups)| {
                let by: Vec<&str> = by.iter().map(|dimension| dimension.as_str()).collect();
                json!({"by": by, "groups": groups})
            })
            .collect();
        json!({
            "report": FORM,
            "warnings": self.warnings,
            "coverage": self.coverage,
            "findings": self.findings,
            "lines": self.line_counts(),
            "incomplete_inputs": self.incomplete_inputs,
            "notices": self.notices,
            "groups": groups,
        })
        .to_string()
    }

    /// Reads a report's JSON form back; the error says what is wrong.
    pub fn from_json(text: &str) -> Result<ReportData, String> {
        let value: Value = serde_json::from_str(text).map_err(|error| format!("not JSON: {error}"))?;
        let object = value.as_object().ok_or("a report is a JSON object")?;
        if object.get("report").and_then(Value::as_u64) != Some(FORM) {
            return Err(format!(
                "not a report's JSON form (Report.to_json writes \"report\": {FORM})"
            ));
        }
        let lines = member::<BTreeMap<String, u64>>(object, "lines")?;
        let mut data = ReportData {
            warnings: member(object, "warnings")?,
            coverage: member(object, "coverage")?,
            findings: member(object, "findings")?,
            incomplete_inputs: member(object, "incomplete_inputs")?,
            notices: member(object, "notices")?,
            ..ReportData::default()
        };
        let count = |name: &str| lines.get(name).copied().unwrap_or(0);
        data.lines.read = count("read");
        data.lines.not_json = count("not_json");
        data.lines.not_utf8 = count("not_utf8");
        data.lines.too_deep = count("too_deep");
        data.lines.too_long = count("too_long");
        data.lines.idle = count("idle");
        for grouping in member::<Vec<Map<String, Value>>>(object, "groups")? {
            let by: Vec<Dimension> = member::<Vec<String>>(&grouping, "by")?
                .iter()
                .map(|name| name.parse())
                .collect::<Result<_, _>>()?;
            let groups = member::<Vec<Map<String, Value>>>(&grouping, "groups")?
                .iter()
                .map(|group| group_of(&by, group))
                .collect::<Result<_, _>>()?;
            data.groups.push((by, groups));
        }
        Ok(data)
    }
}

/// A member of a report's JSON object, read as `T`.
fn member<T: serde::de::DeserializeOwned>(object: &Map<String, Value>, name: &str) -> Result<T, String> {
    let value = object
        .get(name)
        .ok_or_else(|| format!("a report's JSON form has `{name}`"))?;
    T::deserialize(value).map_err(|error| format!("`{name}`: {error}"))
}

/// One group read back, as `audit --by` prints it, its values in the order
/// of `by`.
fn group_of(by: &[Dimension], object: &Map<String, Value>) -> Result<Group, String> {
    let values = member::<BTreeMap<String, String>>(object, "group")?;
    let mut group = Group {
        values: Vec::new(),
        ..Group::default()
    };
    for dimension in by {
        let value = values
            .get(dimension.as_str())
            .ok_or_else(|| format!("a group of a grouping by {dimension} has a {dimension}"))?;
        group.values.push((*dimension, value.clone()));
    }
    group.calls = member(object, "calls")?;
    group.audited = member(object, "audited")?;
    group.calls_with_unknown_keys = member(object, "calls_with_unknown_keys")?;
    group.unknown_keys = member(object, "unknown_keys")?;
    group.causes = member(object, "causes")?;
    group.from_proxy_log = object
        .get("from_proxy_log")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(group)
}
