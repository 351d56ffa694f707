//! Counting what a proxy's `--log` recorded: calls, not warning lines.
//!
//! A log holds a warning line per pair the first time it was said, a
//! verdict line per call that carried undeclared keys, and ends with a
//! summary: `{"summary":{"coverage":{…},"findings":[{"tool","key",
//! "calls","first_id","cause","nested","verdicts"}…],"declared_keys":{"<tool>":[…]}}}`
//! (an older proxy wrote `{"summary":[…findings…]}`, and no `nested`: a
//! nested key's path then reads as a key). While a log is read, each
//! warning line counts as one audited call carrying its keys, and each
//! verdict line as one verdict on each of its pairs; its summary, when it
//! comes, replaces those counts with the ones it records. A log cut short
//! before its summary keeps the counts of its lines.

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Cause, Coverage, Judged, VerdictCounts, Warning};
use serde::Deserialize;

/// One undeclared pair counted from logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoggedPair {
    /// Calls that carried it.
    pub calls: u64,
    /// The first call's id, as text.
    pub first_id: String,
    /// Its diagnosed cause, if the log gives one.
    pub cause: Option<Cause>,
    /// The verdicts on the calls that carried it.
    pub verdicts: VerdictCounts,
}

/// A logged pair's place: its tool, whether it is a required key calls
/// lacked, whether it is a nested key's path, and the key or path.
pub(crate) type PairKey = (String, bool, bool, String);

/// What logs recorded: pairs and declarations.
#[derive(Debug, Default)]
pub(crate) struct LogCounts {
    /// Per (tool, nested, key).
    pub pairs: BTreeMap<PairKey, LoggedPair>,
    /// What each tool declared, as the logs say.
    pub declared: BTreeMap<String, Vec<String>>,
}

impl LogCounts {
    fn add(&mut self, at: PairKey, found: LoggedPair) {
        match self.pairs.get_mut(&at) {
            Some(pair) => {
                pair.calls = pair.calls.saturating_add(found.calls);
                pair.cause = pair.cause.or(found.cause);
                add_counts(&mut pair.verdicts, &found.verdicts);
            }
            None => {
                self.pairs.insert(at, found);
            }
        }
    }

    fn merge(&mut self, other: LogCounts) {
        for (at, pair) in other.pairs {
            self.add(at, pair);
        }
        self.declared.extend(other.declared);
    }
}

/// The log being read: its warning lines, counted until its summary comes.
#[derive(Debug, Default)]
pub(crate) struct Segment {
    coverage: Coverage,
    counts: LogCounts,
}

impl Segment {
    /// Counts one warning line as one audited call carrying its keys and
    /// nested keys.
    pub(crate) fn warning(&mut self, warning: &Warning) {
        self.coverage.count_audited();
        let keys = warning.unknown_keys.iter().map(|key| (false, false, key));
        let paths = warning.unknown_paths.iter().map(|path| (false, true, path));
        let missing = warning.missing_required.iter().map(|path| (true, false, path));
        for (lost, nested, key) in keys.chain(paths).chain(missing) {
            let cause = match lost {
                true => warning.missing_cause,
                false => warning.hint(key).filter(|_| !nested).map(|hint| hint.cause),
            };
            let pair = LoggedPair {
                calls: 1,
                first_id: warning.id.clone(),
                cause,
                verdicts: VerdictCounts::new(),
            };
            self.counts
                .add((warning.tool.clone(), lost, nested, key.clone()), pair);
        }
        self.counts
            .declared
            .insert(warning.tool.clone(), warning.declared_keys.clone());
    }

    /// Counts one verdict line on each of its pairs the log warned of (a
    /// verdict always follows its call's warning in a proxy's log).
    pub(crate) fn verdict(&mut self, judged: &Judged) {
        let keys = judged.unknown_keys.iter().map(|key| (false, key));
        let paths = judged.unknown_paths.iter().map(|path| (true, path));
        for (nested, key) in keys.chain(paths) {
            let at = (judged.tool.clone(), false, nested, key.clone());
            if let Some(pair) = self.counts.pairs.get_mut(&at) {
                let counted = pair.verdicts.entry(judged.verdict).or_default();
                *counted = counted.saturating_add(1);
            }
        }
    }

    /// The log's summary: it replaces the counts of the log's warning lines
    /// (their coverage too, when it records one). The counts to keep are
    /// added to `coverage` and `counts`; `false` when `text` is no summary.
    pub(crate) fn summary(&mut self, text: &str, coverage: &mut Coverage, counts: &mut LogCounts) -> bool {
        let Some(summary) = Summary::parse(text) else {
            return false;
        };
        let segment = std::mem::take(self);
        // A summary whose figures disagree with one another was not written
        // by a proxy: the log's own lines are counted instead.
        let logged = summary.coverage.as_ref().filter(|logged| logged.is_consistent());
        coverage.merge(logged.unwrap_or(&segment.coverage));
        let mut read = LogCounts::default();
        for finding in summary.findings {
            if let Some(declared) = finding.declared_keys {
                read.declared.insert(finding.tool.clone(), declared);
            }
            let pair = LoggedPair {
                calls: finding.calls,
                first_id: finding.first_id,
                cause: finding.cause.as_deref().and_then(cause_named),
                verdicts: finding.verdicts,
            };
            read.add((finding.tool, finding.missing, finding.nested, finding.key), pair);
        }
        read.declared.extend(summary.declared_keys);
        counts.merge(read);
        true
    }

    /// The log ends without a summary: its warning lines' counts stand.
    pub(crate) fn end(&mut self, coverage: &mut Coverage, counts: &mut LogCounts) {
        let segment = std::mem::take(self);
        coverage.merge(&segment.coverage);
        counts.merge(segment.counts);
    }
}

/// Whether `text` is the whole of a proxy's summary: a list of findings (an
/// older proxy's), or an object recording its coverage or its findings. An
/// object of neither is some other log's `summary`.
pub(crate) fn is_summary(text: &str) -> bool {
    let Some(summary) = Summary::parse(text) else {
        return false;
    };
    text.trim_start().starts_with('[') || summary.coverage.is_some() || !summary.findings.is_empty()
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
    /// The key is a nested key's path.
    #[serde(default)]
    nested: bool,
    /// The key is a required key the calls lacked.
    #[serde(default)]
    missing: bool,
    /// What the server did with the calls that carried it.
    #[serde(default)]
    verdicts: VerdictCounts,
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

/// Adds the counts of `more` to `counts`. Counts saturate: a log read back
/// may hold any numbers.
pub(crate) fn add_counts(counts: &mut VerdictCounts, more: &VerdictCounts) {
    for (verdict, calls) in more {
        let counted = counts.entry(*verdict).or_default();
        *counted = counted.saturating_add(*calls);
    }
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

    fn pair_key(tool: &str, key: &str) -> PairKey {
        (tool.to_owned(), false, false, key.to_owned())
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
        let pair = &counts.pairs[&pair_key("fs_read", "ffset")];
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
        assert_eq!(counts.pairs[&pair_key("fs_read", "ffset")].calls, 3);
    }

    #[test]
    fn a_log_without_a_summary_counts_its_warning_lines() {
        let mut segment = Segment::default();
        segment.warning(&warning("fs_read", &["ffset", "limit"], "4"));
        segment.warning(&warning("fs_read", &["depth"], "5").with_unknown_paths(vec!["opts.x".to_owned()]));
        let (mut coverage, mut counts) = (Coverage::default(), LogCounts::default());
        segment.end(&mut coverage, &mut counts);
        assert_eq!((coverage.calls, coverage.audited), (2, 2));
        assert_eq!(counts.pairs.len(), 4);
        assert_eq!(
            counts.pairs[&("fs_read".to_owned(), false, true, "opts.x".to_owned())].calls,
            1
        );
    }

    #[test]
    fn a_summary_s_nested_findings_are_paths() {
        let (mut coverage, mut counts) = (Coverage::default(), LogCounts::default());
        let summary = r#"{"findings":[{"tool":"t","key":"a[].b","calls":2,"first_id":"1","nested":true}]}"#;
        assert!(Segment::default().summary(summary, &mut coverage, &mut counts));
        assert_eq!(
            counts.pairs[&("t".to_owned(), false, true, "a[].b".to_owned())].calls,
            2
        );
    }
}
