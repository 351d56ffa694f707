//! A [`Report`] as plain data: what an audit found and counted, in a form
//! that adds up across partitions ([`merge`]) and goes to JSON text and
//! back ([`ReportData::to_json`], [`ReportData::from_json`]), for a report
//! to travel between the workers of an engine (Ray Data, Spark) and the
//! driver that adds them up. The Python package's `Report` is one.
//!
//! A report read back is text from elsewhere, so nothing in it is trusted:
//! it is read without building more than its own values (no JSON tree),
//! within the bounds a report has ([`MAX_GROUPS`], [`MAX_KEYS_PER_GROUP`],
//! [`MAX_NAMED_UNLISTED_TOOLS`], [`MAX_NOTICES`]), and every count in it
//! must agree with the others ([`check`]). Reports merge only when their
//! audits were given the same options ([`Fingerprint`]), and a merge whose
//! counts would pass `u64::MAX` is refused rather than saturated, so a
//! merged report's counts still agree.
//!
//! ```
//! use mcp_unknown_keys_logs::report_data::{Fingerprint, ReportData, merge, same};
//! use mcp_unknown_keys_logs::{Audit, Dimension, Input, Options};
//!
//! let options = Options::default().group_by([Dimension::Tool]);
//! let report = |log: &'static [u8]| -> Result<ReportData, Box<dyn std::error::Error>> {
//!     let mut audit = Audit::new(&options)?;
//!     audit.read(Input::from_reader("log", log)?)?;
//!     Ok(ReportData::from(audit.finish()).made_with(Fingerprint::of(&options)))
//! };
//! let first = report(br#"{"tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"q\":1,\"limt\":2}"}}]}]}"#)?;
//! let then = report(br#"{"tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"2","function":{"name":"f","arguments":"{\"limt\":3}"}}]}]}"#)?;
//!
//! // A worker hands its report over as JSON text; the driver adds them up.
//! let back = ReportData::from_json(&then.to_json())?;
//! assert!(same(&back, &then));
//! let total = merge(&first, &back)?;
//! assert_eq!((total.coverage.calls, total.findings[0].calls), (2, 2));
//! assert_eq!(total.warnings.len(), 1); // `limt` said once
//!
//! // Counts that disagree are refused.
//! let forged = then.to_json().replace(r#""audited":1"#, r#""audited":7"#);
//! assert!(ReportData::from_json(&forged).unwrap_err().contains("audited"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`MAX_NAMED_UNLISTED_TOOLS`]: mcp_unknown_keys::limits::MAX_NAMED_UNLISTED_TOOLS

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Cause, Coverage, Warning};
use serde::{Deserialize, Serialize};

use crate::groups::{Dimension, Group};
#[cfg(doc)]
use crate::groups::{MAX_GROUPS, MAX_KEYS_PER_GROUP};
use crate::report::{Lines, Report};

mod check;
mod fingerprint;
mod form;
mod merge;

pub use check::check;
pub use fingerprint::Fingerprint;
pub use merge::{merge, said, same};

/// The most notices a report keeps, read back or merged: each partition
/// names its first unreadable records, and a thousand partitions must not
/// make a report of ten thousand notices.
pub const MAX_NOTICES: usize = 100;

/// Everything a report says, as plain data.
#[derive(Clone, Debug, Default)]
pub struct ReportData {
    /// What its audit was given, where it is known: `None` for a report
    /// read back from the JSON form written before reports recorded it
    /// (`"report": 1`), which merges only with reports like it.
    pub options: Option<Fingerprint>,
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
    /// The report's data, its options not known ([`ReportData::made_with`]
    /// says them).
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
            options: None,
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
    /// The same report, made by an audit given the options `options`
    /// fingerprint.
    pub fn made_with(self, options: Fingerprint) -> ReportData {
        ReportData {
            options: Some(options),
            ..self
        }
    }

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
}
