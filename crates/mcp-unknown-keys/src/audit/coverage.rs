//! How many calls a door audited, and why it did not audit the rest.
//!
//! A call the alarm cannot see is as bad as a wrong warning, so no door
//! passes one over in silence: the layer, the proxy and the `audit` command
//! each count every call they find in a [`Coverage`], under the reasons of
//! [`Skip`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::call::{Call, Outcome, Skip};
use crate::limits::{MAX_NAMED_UNLISTED_TOOLS, MAX_UNLISTED_NAME_BYTES};

/// The entry of [`Coverage::unlisted_tools`] that counts the calls to names
/// past [`MAX_NAMED_UNLISTED_TOOLS`].
pub const OTHER_UNLISTED_TOOLS: &str = "(other)";

/// Every call found, audited or unaudited for a named reason.
///
/// A listed tool is never counted as unlisted: one whose schema is absent
/// or cannot be read at all is counted as [`Skip::DeclaresNothing`]. A call
/// that names no tool is counted under the empty name `""`: as
/// [`Skip::UnlistedTool`] once a listing is known.
///
/// Serialised, it is the object a door reports (one line; wrapped here):
///
/// ```json
/// {"calls":12,"audited":9,"unaudited":{"unlisted_tool":2,"unreadable_arguments":1},
///  "unlisted_tools":{"mcp__fs__read_file":2}}
/// ```
///
/// ```
/// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Coverage, Skip};
/// use serde_json::json;
///
/// let auditor = Auditor::new().with_sink(());
/// let catalog = Catalog::from_mcp_tools(&[json!({"name": "read", "inputSchema": {"properties": {"path": {}}}})]);
/// let mut coverage = Coverage::default();
/// for (tool, text) in [("read", r#"{"path":"a"}"#), ("write", r#"{"path":"a"}"#), ("read", "not json")] {
///     let call = Call::new(tool, Arguments::Json(text));
///     coverage.record(&call, &auditor.audit(&catalog, call));
/// }
/// assert_eq!((coverage.calls, coverage.audited), (3, 1));
/// assert_eq!(coverage.unaudited[&Skip::UnlistedTool], 1);
/// assert_eq!(coverage.unaudited[&Skip::UnreadableArguments], 1);
/// assert_eq!(coverage.unlisted_tools["write"], 1);
/// assert_eq!(coverage.to_string(), "3 call(s): 1 audited, 2 unaudited (1 unlisted_tool, 1 unreadable_arguments)");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Coverage {
    /// Every call found.
    pub calls: u64,
    /// The calls audited: their keys were compared with a declaration.
    pub audited: u64,
    /// The calls not audited, by reason; reasons with no call are absent.
    #[serde(default)]
    pub unaudited: BTreeMap<Skip, u64>,
    /// The tool names of the calls unaudited because no listing named them
    /// ([`Skip::NoCatalogue`] or [`Skip::UnlistedTool`]), each with its
    /// number of calls; at most [`MAX_NAMED_UNLISTED_TOOLS`] names, each
    /// at most [`MAX_UNLISTED_NAME_BYTES`] long, and the calls to any
    /// further name under [`OTHER_UNLISTED_TOOLS`].
    #[serde(default)]
    pub unlisted_tools: BTreeMap<String, u64>,
    /// The calls, audited or not, of model responses cut at their length
    /// limit (`finish_reason: "length"`, `stop_reason: "max_tokens"`, …),
    /// whether they raised anything or not: counted by `audit`
    /// ([`Coverage::count_in_truncated_response`]), which reads the stop
    /// reasons a log keeps. Serialised only when not zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub in_truncated_responses: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Coverage {
    /// Counts one call and what auditing it found.
    pub fn record(&mut self, call: &Call<'_>, outcome: &Outcome) {
        match outcome {
            Outcome::Audited { .. } => self.count_audited(),
            Outcome::Skipped(skip) => self.count_unaudited(call.tool, *skip),
        }
    }

    /// Counts one audited call.
    pub fn count_audited(&mut self) {
        self.calls = self.calls.saturating_add(1);
        self.audited = self.audited.saturating_add(1);
    }

    /// Counts one call to `tool` that went unaudited for `skip`.
    pub fn count_unaudited(&mut self, tool: &str, skip: Skip) {
        self.calls = self.calls.saturating_add(1);
        let counted = self.unaudited.entry(skip).or_default();
        *counted = counted.saturating_add(1);
        if matches!(skip, Skip::NoCatalogue | Skip::UnlistedTool) {
            self.name_unlisted(tool, 1);
        }
    }

    /// Counts one call (counted already as audited or not) as part of a
    /// model response cut at its length limit.
    pub fn count_in_truncated_response(&mut self) {
        self.in_truncated_responses = self.in_truncated_responses.saturating_add(1);
    }

    /// Adds what `other` counted to this coverage.
    /// Counts saturate: a coverage read back from a file may hold any
    /// numbers.
    pub fn merge(&mut self, other: &Coverage) {
        self.calls = self.calls.saturating_add(other.calls);
        self.in_truncated_responses = self
            .in_truncated_responses
            .saturating_add(other.in_truncated_responses);
        self.audited = self.audited.saturating_add(other.audited);
        for (skip, calls) in &other.unaudited {
            let counted = self.unaudited.entry(*skip).or_default();
            *counted = counted.saturating_add(*calls);
        }
        for (tool, calls) in &other.unlisted_tools {
            self.name_unlisted(tool, *calls);
        }
    }

    fn name_unlisted(&mut self, tool: &str, calls: u64) {
        let tool = shortened(tool);
        if let Some(counted) = self.unlisted_tools.get_mut(&*tool) {
            *counted = counted.saturating_add(calls);
            return;
        }
        let named =
            self.unlisted_tools.len() - usize::from(self.unlisted_tools.contains_key(OTHER_UNLISTED_TOOLS));
        let tool = if named < MAX_NAMED_UNLISTED_TOOLS {
            tool.into_owned()
        } else {
            OTHER_UNLISTED_TOOLS.to_owned()
        };
        let counted = self.unlisted_tools.entry(tool).or_default();
        *counted = counted.saturating_add(calls);
    }

    /// How many calls went unaudited, whatever the reason.
    pub fn unaudited_calls(&self) -> u64 {
        self.calls.saturating_sub(self.audited)
    }

    /// Whether the figures agree with one another: no more audited than
    /// found, and the reasons adding up to the calls not audited. Always so
    /// of a coverage counted here; a reader of one written elsewhere (a
    /// proxy's `--log` summary, say) checks it before it trusts it.
    pub fn is_consistent(&self) -> bool {
        let reasons = self
            .unaudited
            .values()
            .try_fold(0u64, |sum, calls| sum.checked_add(*calls));
        self.audited <= self.calls && reasons == Some(self.calls - self.audited)
    }

    /// Whether every call found was audited (true when none was found).
    pub fn is_complete(&self) -> bool {
        self.audited == self.calls
    }

    /// The line a door ends its JSON output with:
    /// `{"coverage":{"calls":…,"audited":…,"unaudited":{…},"unlisted_tools":{…}}}`.
    pub fn to_json_line(&self) -> String {
        #[derive(Serialize)]
        struct Line<'a> {
            coverage: &'a Coverage,
        }
        serde_json::to_string(&Line { coverage: self }).expect("a coverage serialises")
    }
}

/// `name`, or its first bytes and `…` within [`MAX_UNLISTED_NAME_BYTES`]:
/// a name shortened already stays as it is.
fn shortened(name: &str) -> Cow<'_, str> {
    if name.len() <= MAX_UNLISTED_NAME_BYTES {
        return Cow::Borrowed(name);
    }
    let mut end = MAX_UNLISTED_NAME_BYTES - '…'.len_utf8();
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &name[..end]))
}

/// `12 call(s): 9 audited, 3 unaudited (2 unlisted_tool, 1 unreadable_arguments)`,
/// or `12 call(s): all audited`.
impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never "all audited" of calls that were not there.
        if self.calls == 0 {
            return f.write_str("0 tool calls found");
        }
        write!(f, "{} call(s): ", self.calls)?;
        if self.is_complete() {
            f.write_str("all audited")?;
        } else {
            write!(
                f,
                "{} audited, {} unaudited (",
                self.audited,
                self.unaudited_calls()
            )?;
            for (i, (skip, calls)) in self.unaudited.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{calls} {skip}")?;
            }
            f.write_str(")")?;
        }
        if self.in_truncated_responses > 0 {
            write!(f, "; {} in truncated responses", self.in_truncated_responses)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coverage_read_from_elsewhere_is_checked_and_merged_without_overflow() {
        let forged: Coverage = serde_json::from_str(
            r#"{"calls":1,"audited":5,"unaudited":{"no_catalogue":18446744073709551615}}"#,
        )
        .unwrap();
        assert!(!forged.is_consistent());
        let mut coverage = Coverage::default();
        coverage.count_unaudited("t", Skip::UnlistedTool);
        assert!(coverage.is_consistent());
        coverage.merge(&forged);
        coverage.merge(&forged);
        assert_eq!(coverage.unaudited_calls(), 0);
        assert_eq!(coverage.unaudited[&Skip::NoCatalogue], u64::MAX);
    }

    #[test]
    fn no_call_is_never_said_to_be_all_audited() {
        assert_eq!(Coverage::default().to_string(), "0 tool calls found");
        let mut coverage = Coverage::default();
        coverage.count_audited();
        assert_eq!(coverage.to_string(), "1 call(s): all audited");
    }

    #[test]
    fn the_json_line_names_reasons_in_snake_case_and_reads_back() {
        let mut coverage = Coverage::default();
        coverage.count_audited();
        coverage.count_unaudited("mcp__fs__read", Skip::NoCatalogue);
        coverage.count_unaudited("x", Skip::DeclaresNothing);
        let line = coverage.to_json_line();
        assert_eq!(
            line,
            r#"{"coverage":{"calls":3,"audited":1,"unaudited":{"no_catalogue":1,"declares_nothing":1},"unlisted_tools":{"mcp__fs__read":1}}}"#
        );
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let read: Coverage = serde_json::from_value(value["coverage"].clone()).unwrap();
        assert_eq!(read, coverage);
    }

    #[test]
    fn merging_adds_every_count() {
        let mut a = Coverage::default();
        a.count_unaudited("t", Skip::UnlistedTool);
        let mut b = Coverage::default();
        b.count_unaudited("t", Skip::UnlistedTool);
        b.count_audited();
        a.merge(&b);
        assert_eq!((a.calls, a.audited, a.unaudited[&Skip::UnlistedTool]), (3, 1, 2));
        assert_eq!(a.unlisted_tools["t"], 2);
        assert_eq!(
            a.to_string(),
            "3 call(s): 1 audited, 2 unaudited (2 unlisted_tool)"
        );
    }

    #[test]
    fn names_of_unlisted_tools_are_bounded_but_every_call_is_counted() {
        let mut coverage = Coverage::default();
        for i in 0..MAX_NAMED_UNLISTED_TOOLS + 10 {
            coverage.count_unaudited(&format!("tool_{i}"), Skip::UnlistedTool);
        }
        assert_eq!(coverage.unlisted_tools.len(), MAX_NAMED_UNLISTED_TOOLS + 1);
        assert_eq!(coverage.unlisted_tools[OTHER_UNLISTED_TOOLS], 10);
        assert_eq!(
            coverage.unaudited[&Skip::UnlistedTool],
            MAX_NAMED_UNLISTED_TOOLS as u64 + 10
        );
        // Merged, the calls past the bound stay counted under one entry.
        let mut merged = Coverage::default();
        merged.merge(&coverage);
        merged.merge(&coverage);
        assert_eq!(merged.unlisted_tools.len(), MAX_NAMED_UNLISTED_TOOLS + 1);
        assert_eq!(merged.unlisted_tools[OTHER_UNLISTED_TOOLS], 20);
        let named: u64 = merged.unlisted_tools.values().sum();
        assert_eq!(named, merged.unaudited[&Skip::UnlistedTool]);
    }

    #[test]
    fn a_long_unlisted_name_is_cut_at_a_character_boundary() {
        let mut coverage = Coverage::default();
        let long = "é".repeat(1_000);
        coverage.count_unaudited(&long, Skip::UnlistedTool);
        coverage.count_unaudited(&long, Skip::NoCatalogue);
        let (name, calls) = coverage.unlisted_tools.iter().next().unwrap();
        assert_eq!(*calls, 2);
        assert!(name.len() <= MAX_UNLISTED_NAME_BYTES, "{}", name.len());
        assert!(name.ends_with('…') && long.starts_with(name.trim_end_matches('…')));
        // Merging a coverage keeps the name as it was cut.
        let mut merged = Coverage::default();
        merged.merge(&coverage);
        assert_eq!(merged.unlisted_tools, coverage.unlisted_tools);
    }
}
