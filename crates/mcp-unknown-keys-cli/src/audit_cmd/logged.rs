//! Counting what a proxy's `--log` recorded: calls, not warning lines.
//!
//! A log holds a warning line per pair the first time it was said, and ends
//! with a summary: `{"summary":{"coverage":{…},"findings":[{"tool","key",
//! "calls","first_id","cause"}…],"declared_keys":{"<tool>":[…]}}}` (an
//! older proxy wrote `{"summary":[…findings…]}`). While a log is read, each
//! warning line counts as one audited call carrying its keys; its summary,
//! when it comes, replaces those counts with the ones it records. A log cut
//! short before its summary keeps the counts of its warning lines.

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Cause, Coverage, Warning};
use serde::Deserialize;

/// One undeclared pair counted from logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// Calls that carried it.
    pub calls: u64,
    /// The first call's id, as text.
    pub first_id: String,
    /// Its diagnosed cause, if the log gives one.
    pub cause: Option<Cause>,
}

/// What logs recorded: pairs and declarations.
#[derive(Debug, Default)]
pub struct LogCounts {
    /// Per (tool, key).
    pub pairs: BTreeMap<(String, String), Pair>,
    /// What each tool declared, as the logs say.
    pub declared: BTreeMap<String, Vec<String>>,
}

impl LogCounts {
    fn add(&mut self, tool: &str, key: &str, found: Pair) {
        match self.pairs.get_mut(&(tool.to_owned(), key.to_owned())) {
            Some(pair) => {
                pair.calls += found.calls;
                pair.cause = pair.cause.or(found.cause);
            }
            None => {
                self.pairs.insert((tool.to_owned(), key.to_owned()), found);
            }
        }
    }

    fn merge(&mut self, other: LogCounts) {
        for ((tool, key), pair) in other.pairs {
            self.add(&tool, &key, pair);
        }
        self.declared.extend(other.declared);
    }
}

/// The log being read: its warning lines, counted until its summary comes.
#[derive(Debug, Default)]
pub struct Segment {
    coverage: Coverage,
    counts: LogCounts,
}

impl Segment {
    /// Counts one warning line as one audited call carrying its keys.
    pub fn warning(&mut self, warning: &Warning) {
        self.coverage.count_audited();
        for key in &warning.unknown_keys {
            let pair = Pair {
                calls: 1,
                first_id: warning.id.clone(),
                cause: warning.hint(key).map(|hint| hint.cause),
            };
            self.counts.add(&warning.tool, key, pair);
        }
        self.counts
            .declared
            .insert(warning.tool.clone(), warning.declared_keys.clone());
    }

    /// The log's summary: it replaces the counts of the log's warning lines
    /// (their coverage too, when it records one). The counts to keep are
    /// added to `coverage` and `counts`; `false` when `text` is no summary.
    pub fn summary(&mut self, text: &str, coverage: &mut Coverage, counts: &mut LogCounts) -> bool {
        let Some(summary) = Summary::parse(text) else {
            return false;
        };
        let segment = std::mem::take(self);
        coverage.merge(summary.coverage.as_ref().unwrap_or(&segment.coverage));
        let mut read = LogCounts::default();
        for finding in summary.findings {
            if let Some(declared) = finding.declared_keys {
                read.declared.insert(finding.tool.clone(), declared);
            }
            let pair = Pair {
                calls: finding.calls,
                first_id: finding.first_id,
                cause: finding.cause.as_deref().and_then(cause_named),
            };
            read.add(&finding.tool, &finding.key, pair);
        }
        read.declared.extend(summary.declared_keys);
        counts.merge(read);
        true
    }

    /// The log ends without a summary: its warning lines' counts stand.
    pub fn end(&mut self, coverage: &mut Coverage, counts: &mut LogCounts) {
        let segment = std::mem::take(self);
        coverage.merge(&segment.coverage);
        counts.merge(segment.counts);
    }
}

#[derive(Deserialize)]
struct Summary {
    #[serde(default)]
    coverage: Option<Coverage>,
    #[serde(default)]
    findings: Vec<LoggedFinding>,
    #[serde(default)]
    declared_keys: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct LoggedFinding {
    tool: String,
    key: String,
    calls: u64,
    #[serde(default)]
    first_id: String,
    #[serde(default)]
    cause: Option<String>,
    /// An older proxy's summary repeated them in each finding.
    #[serde(default)]
    declared_keys: Option<Vec<String>>,
}

impl Summary {
    fn parse(text: &str) -> Option<Summary> {
        if text.trim_start().starts_with('[') {
            let findings = serde_json::from_str(text).ok()?;
            return Some(Summary {
                coverage: None,
                findings,
                declared_keys: BTreeMap::new(),
            });
        }
        serde_json::from_str(text).ok()
    }
}

fn cause_named(name: &str) -> Option<Cause> {
    Cause::ALL.into_iter().find(|cause| cause.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(tool: &str, keys: &[&str], id: &str) -> Warning {
        Warning::new(
            tool,
            keys.iter().map(|k| k.to_string()).collect(),
            vec!["path".to_owned()],
            id,
        )
    }

    #[test]
    fn a_summary_replaces_the_counts_of_the_warning_lines() {
        let mut segment = Segment::default();
        segment.warning(&warning("fs_read", &["ffset"], "4"));
        let (mut coverage, mut counts) = (Coverage::default(), LogCounts::default());
        let summary = r#"{"coverage":{"calls":9,"audited":7,"unaudited":{"unlisted_tool":2},"unlisted_tools":{"x":2}},
            "findings":[{"tool":"fs_read","key":"ffset","calls":5,"first_id":"4","cause":"truncated"}],
            "declared_keys":{"fs_read":["offset","path"]},"later":"ignored"}"#;
        assert!(segment.summary(summary, &mut coverage, &mut counts));
        assert_eq!((coverage.calls, coverage.audited), (9, 7));
        let pair = &counts.pairs[&("fs_read".to_owned(), "ffset".to_owned())];
        assert_eq!((pair.calls, pair.first_id.as_str()), (5, "4"));
        assert_eq!(pair.cause, Some(Cause::Truncated));
        assert_eq!(counts.declared["fs_read"], ["offset", "path"]);
    }

    #[test]
    fn an_older_summary_is_a_list_of_findings() {
        let mut segment = Segment::default();
        segment.warning(&warning("fs_read", &["ffset"], "4"));
        let (mut coverage, mut counts) = (Coverage::default(), LogCounts::default());
        let summary =
            r#"[{"tool":"fs_read","key":"ffset","calls":3,"first_id":"4","declared_keys":["path"]}]"#;
        assert!(segment.summary(summary, &mut coverage, &mut counts));
        // No coverage recorded: the warning lines' stands.
        assert_eq!(coverage.calls, 1);
        assert_eq!(counts.pairs[&("fs_read".to_owned(), "ffset".to_owned())].calls, 3);
    }

    #[test]
    fn a_log_without_a_summary_counts_its_warning_lines() {
        let mut segment = Segment::default();
        segment.warning(&warning("fs_read", &["ffset", "limit"], "4"));
        segment.warning(&warning("fs_read", &["depth"], "5"));
        let (mut coverage, mut counts) = (Coverage::default(), LogCounts::default());
        segment.end(&mut coverage, &mut counts);
        assert_eq!((coverage.calls, coverage.audited), (2, 2));
        assert_eq!(counts.pairs.len(), 3);
    }
}
