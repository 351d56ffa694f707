//! What a session ended with, said once when it ends: every call counted
//! ([`Coverage`]), every pair found ([`Findings`]) with what the server did
//! with the calls that carried it ([`VerdictTally`]), and the lines the
//! door passed over unread ([`Unread`]). A door hands it to its sink
//! ([`Sink::summary`](super::sink::Sink::summary)), which says it in
//! words ([`Summary::to_text`]) or as one JSON line
//! ([`Summary::to_json_line`]), a contract the `audit` command reads back
//! from a proxy's log (one line; wrapped here):
//!
//! ```json
//! {"summary":{"coverage":{"calls":3,"audited":2,"unaudited":{"unlisted_tool":1},"unlisted_tools":{"x":1}},
//!  "findings":[{"tool":"fs_read","key":"ffset","calls":2,"first_id":"2","cause":"truncated","verdicts":{"ignored":2}},
//!              {"tool":"create_entities","key":"entities[].age","calls":1,"first_id":"3","nested":true,"verdicts":{"rejected":1}}],
//!  "declared_keys":{"fs_read":["offset","path"],"create_entities":["entities"]}}}
//! ```
//!
//! Each tool's declared keys appear once, not once per finding, so the
//! line grows with the distinct pairs found, not with their product with
//! the catalogue.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Serialize, Serializer};

use super::coverage::Coverage;
use super::diagnosis::hint::Cause;
use super::findings::{Finding, Findings};
use super::notice::Size;
use super::printable::Printable;
use super::verdicts::{VerdictCounts, VerdictTally, verdicts_text};
use crate::limits::{MAX_SAID_PAIRS, MAX_SHOWN_FINDINGS, MAX_SHOWN_UNLISTED};

/// What a session ended with. Serialised, the object of the JSON line's
/// `summary` member.
///
/// ```
/// use mcp_unknown_keys::audit::{Coverage, Findings, Summary, VerdictTally};
///
/// let mut coverage = Coverage::default();
/// coverage.count_audited();
/// let (findings, verdicts) = (Findings::default(), VerdictTally::default());
/// let summary = Summary::new(&coverage, &findings, &verdicts);
/// assert_eq!(summary.to_text(""), "mcp-unknown-keys summary: 1 call(s): all audited\n");
/// assert_eq!(
///     summary.to_json_line(),
///     r#"{"summary":{"coverage":{"calls":1,"audited":1,"unaudited":{},"unlisted_tools":{}},"findings":[],"declared_keys":{}}}"#
/// );
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Summary<'a> {
    /// Every call found, audited or not and why.
    pub coverage: &'a Coverage,
    /// Every pair found, counted per call.
    pub findings: &'a Findings,
    /// What the server did with the calls that carried each pair.
    pub verdicts: &'a VerdictTally,
    /// The lines the door passed over unread (none, by default).
    pub unread: Unread,
}

/// The lines a door that audits off its relay's path passed over unread:
/// too long to read, or met while its audit was behind or when the session
/// ended. The client lines among them that may have been calls are
/// counted in the [`Coverage`] as calls not audited
/// (`unreadable_arguments`); these counts say where those came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unread {
    /// The longest line the door reads, in bytes.
    pub limit: usize,
    /// Client lines longer than `limit`.
    pub too_long: u64,
    /// Of those, the lines that may have been `tools/call` requests.
    pub too_long_calls: u64,
    /// Client lines passed over while the audit's queue was full.
    pub behind: u64,
    /// Of those, the lines that may have been `tools/call` requests.
    pub behind_calls: u64,
    /// Server lines passed over while the audit's queue was full (a
    /// listing among them would be missed).
    pub server_behind: u64,
    /// Lines the audit had not read when the session ended.
    pub unsettled: u64,
    /// Of those, the client lines that may have been calls.
    pub unsettled_calls: u64,
}

impl Unread {
    /// Nothing passed over yet, by a door that reads lines of at most
    /// `limit` bytes.
    pub fn with_limit(limit: usize) -> Unread {
        Unread {
            limit,
            ..Unread::default()
        }
    }

    /// Client lines passed over unread on the way (too long, or while the
    /// audit was behind) that may have been calls: each is a call not
    /// audited. The lines still unread when the session ended
    /// (`unsettled_calls`) are not among them: the door counts those when
    /// it ends.
    pub fn calls(&self) -> u64 {
        self.too_long_calls.saturating_add(self.behind_calls)
    }
}

impl<'a> Summary<'a> {
    /// The summary of a session that passed over no line unread.
    pub fn new(coverage: &'a Coverage, findings: &'a Findings, verdicts: &'a VerdictTally) -> Summary<'a> {
        Summary {
            coverage,
            findings,
            verdicts,
            unread: Unread::default(),
        }
    }

    /// The same summary, with the lines the door passed over unread.
    pub fn with_unread(self, unread: Unread) -> Summary<'a> {
        Summary { unread, ..self }
    }

    /// Whether there is anything to say in words: no call, no finding and
    /// no line still waiting for the audit when the session ended is
    /// nothing.
    pub fn is_empty(&self) -> bool {
        self.coverage.calls == 0 && self.findings.is_empty() && self.unread.unsettled == 0
    }

    /// The JSON line, without the newline:
    /// `{"summary":{"coverage":…,"findings":[…],"declared_keys":{…}}}`.
    pub fn to_json_line(&self) -> String {
        #[derive(Serialize)]
        struct Line<'a> {
            summary: &'a Summary<'a>,
        }
        serde_json::to_string(&Line { summary: self }).expect("a summary serialises")
    }

    /// The words, each line ending in a newline: a heading with the
    /// coverage (`mcp-unknown-keys summary: …`, or
    /// `mcp-unknown-keys [NAME] summary: …` with `tag` ` [NAME]`), then
    /// indented details: the unlisted tools, the lines passed over, and at
    /// most [`MAX_SHOWN_FINDINGS`] findings with their verdicts.
    pub fn to_text(&self, tag: &str) -> String {
        let mut text = format!("mcp-unknown-keys{tag} summary: {}\n", self.coverage);
        self.unlisted(&mut text);
        self.passed_over(&mut text);
        self.found(&mut text);
        text
    }

    fn unlisted(&self, text: &mut String) {
        let unlisted = &self.coverage.unlisted_tools;
        if unlisted.is_empty() {
            return;
        }
        let names: Vec<String> = unlisted
            .iter()
            .take(MAX_SHOWN_UNLISTED)
            .map(|(tool, calls)| format!("{} ({calls})", Printable(tool)))
            .collect();
        let more = more(unlisted.len(), MAX_SHOWN_UNLISTED);
        let _ = writeln!(text, "  not in any listing: {}{more}", names.join(", "));
    }

    fn passed_over(&self, text: &mut String) {
        let unread = self.unread;
        if unread.too_long > 0 {
            let _ = writeln!(
                text,
                "  {} client line(s) over {} forwarded unread ({} that may be calls counted as calls not audited)",
                unread.too_long,
                Size(unread.limit),
                unread.too_long_calls
            );
        }
        let behind = unread.behind.saturating_add(unread.server_behind);
        if behind > 0 {
            let _ = writeln!(
                text,
                "  {behind} line(s) forwarded unread while the audit was behind ({} counted as calls not audited)",
                unread.behind_calls
            );
        }
        if unread.unsettled > 0 {
            let _ = writeln!(
                text,
                "  {} line(s) still waiting for the audit when the session ended ({} counted as calls not audited)",
                unread.unsettled, unread.unsettled_calls
            );
        }
    }

    fn found(&self, text: &mut String) {
        let findings = self.findings;
        if findings.is_empty() {
            return;
        }
        let _ = writeln!(
            text,
            "  {} undeclared key(s) on {} tool(s), with the calls that carried each:",
            findings.len(),
            findings.tools()
        );
        for finding in findings.iter().take(MAX_SHOWN_FINDINGS) {
            // The key in backticks: a model-written key may hold spaces or
            // colons of its own.
            let calls = if finding.calls == 1 { "call" } else { "calls" };
            let cause = finding
                .cause
                .map(|cause| format!(" ({cause})"))
                .unwrap_or_default();
            let nested = match (finding.nested, finding.missing) {
                (_, true) => " (required, not sent)",
                (true, false) => " (nested)",
                (false, false) => "",
            };
            let verdicts = self
                .verdicts
                .of_finding(&finding)
                .map(verdicts_text)
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "    {} `{}`{nested}: {} {calls}{cause}{verdicts}",
                Printable(finding.tool),
                Printable(finding.key),
                finding.calls
            );
        }
        let more = more(findings.len(), MAX_SHOWN_FINDINGS);
        if !more.is_empty() {
            let _ = writeln!(text, "   {more} (the log has them all)");
        }
        if findings.unkept() > 0 {
            let _ = writeln!(
                text,
                "  {} more occurrence(s) of pairs found past the {MAX_SAID_PAIRS} kept, counted only",
                findings.unkept(),
            );
        }
    }
}

/// The `summary` object: the coverage, every finding with its verdicts,
/// each tool's declared keys once, and the occurrences not kept (only when
/// some were not).
impl Serialize for Summary<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut declared_keys = BTreeMap::new();
        let findings = self
            .findings
            .iter()
            .map(|finding| {
                declared_keys.entry(finding.tool).or_insert(finding.declared_keys);
                Logged::of(finding, self.verdicts)
            })
            .collect();
        Object {
            coverage: self.coverage,
            findings,
            declared_keys,
            unkept_findings: self.findings.unkept(),
        }
        .serialize(serializer)
    }
}

/// The `summary` object as written, members in the order the `audit`
/// command and the README show them.
#[derive(Serialize)]
struct Object<'a> {
    coverage: &'a Coverage,
    findings: Vec<Logged<'a>>,
    declared_keys: BTreeMap<&'a str, &'a [String]>,
    /// How many times a call carried a pair found once the findings held
    /// as many as are kept ([`MAX_SAID_PAIRS`]); written only then.
    #[serde(skip_serializing_if = "is_zero")]
    unkept_findings: u64,
}

/// One finding as the JSON line lists it: its declared keys are the
/// line's, once per tool.
#[derive(Serialize)]
struct Logged<'a> {
    tool: &'a str,
    key: &'a str,
    calls: u64,
    first_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<Cause>,
    /// `key` is a nested key's path (`entities[].age`); written only then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    nested: bool,
    /// `key` is a required key the calls lacked; written only then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    missing: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdicts: Option<&'a VerdictCounts>,
}

impl<'a> Logged<'a> {
    fn of(finding: Finding<'a>, verdicts: &'a VerdictTally) -> Logged<'a> {
        Logged {
            tool: finding.tool,
            key: finding.key,
            calls: finding.calls,
            first_id: finding.first_id,
            cause: finding.cause,
            nested: finding.nested,
            missing: finding.missing,
            verdicts: verdicts.of_finding(&finding),
        }
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// `… and N more` when `all` exceeds `shown`, else nothing.
fn more(all: usize, shown: usize) -> String {
    if all > shown {
        format!(" … and {} more", all - shown)
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::auditor::Auditor;
    use crate::jsonrpc::{Line, read_line};
    use crate::session::{Session, Side};

    /// A session that listed `read`, called it twice with `ffset` (the
    /// server ignored the first call, and never answered the second) and
    /// once an unlisted tool.
    fn session() -> Session {
        let auditor = Auditor::new().with_sink(());
        let mut session = Session::new();
        for (from, line) in [
            (Side::Host, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            (
                Side::Server,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{"properties":{"path":{},"offset":{}}}}]}}"#,
            ),
            (
                Side::Host,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a","ffset":1}}}"#,
            ),
            (
                Side::Server,
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
            ),
            (
                Side::Host,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"b","ffset":2}}}"#,
            ),
            (
                Side::Host,
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write","arguments":{}}}"#,
            ),
        ] {
            let Line::Message(message) = read_line(line.as_bytes()) else {
                panic!("{line}")
            };
            session.read(&auditor, from, message);
        }
        session.finish();
        session
    }

    #[test]
    fn the_words_say_the_coverage_the_lines_passed_over_and_each_finding_with_its_verdicts() {
        let session = session();
        let unread = Unread {
            limit: 64 << 20,
            too_long: 2,
            too_long_calls: 1,
            unsettled: 3,
            ..Unread::default()
        };
        let summary = Summary::new(session.coverage(), session.findings(), session.verdicts().tally())
            .with_unread(unread);
        assert_eq!(
            summary.to_text(" [fs]"),
            "mcp-unknown-keys [fs] summary: 3 call(s): 2 audited, 1 unaudited (1 unlisted_tool)\n\
             \x20 not in any listing: write (1)\n\
             \x20 2 client line(s) over 64 MiB forwarded unread (1 that may be calls counted as calls not audited)\n\
             \x20 3 line(s) still waiting for the audit when the session ended (0 counted as calls not audited)\n\
             \x20 1 undeclared key(s) on 1 tool(s), with the calls that carried each:\n\
             \x20   read `ffset`: 2 calls (truncated) — ignored 1, unanswered 1\n"
        );
        assert!(!summary.is_empty());
    }

    #[test]
    fn the_json_line_lists_every_finding_with_its_verdicts_and_each_tool_s_keys_once() {
        let session = session();
        let summary = Summary::new(session.coverage(), session.findings(), session.verdicts().tally());
        assert_eq!(
            summary.to_json_line(),
            r#"{"summary":{"coverage":{"calls":3,"audited":2,"unaudited":{"unlisted_tool":1},"unlisted_tools":{"write":1}},"findings":[{"tool":"read","key":"ffset","calls":2,"first_id":"2","cause":"truncated","verdicts":{"ignored":1,"unanswered":1}}],"declared_keys":{"read":["offset","path"]}}}"#
        );
    }

    #[test]
    fn a_limit_under_a_mib_is_said_in_bytes_and_counts_near_the_top_do_not_overflow() {
        let coverage = Coverage::default();
        let (findings, verdicts) = (Findings::default(), VerdictTally::default());
        let unread = Unread {
            too_long: 1,
            behind: u64::MAX,
            server_behind: 1,
            ..Unread::with_limit(1000)
        };
        let text = Summary::new(&coverage, &findings, &verdicts)
            .with_unread(unread)
            .to_text("");
        assert!(
            text.contains("1 client line(s) over 1000 bytes forwarded unread"),
            "{text}"
        );
        assert!(
            text.contains(&format!("  {} line(s) forwarded unread while", u64::MAX)),
            "{text}"
        );
    }

    #[test]
    fn a_session_with_nothing_in_it_has_nothing_to_say_in_words() {
        let coverage = Coverage::default();
        let (findings, verdicts) = (Findings::default(), VerdictTally::default());
        let summary = Summary::new(&coverage, &findings, &verdicts);
        assert!(summary.is_empty());
        let unread = Unread {
            unsettled: 1,
            ..Unread::default()
        };
        assert!(!summary.with_unread(unread).is_empty());
    }

    #[test]
    fn a_sink_that_panics_on_the_summary_is_shielded() {
        struct Panics;
        impl crate::audit::sink::Sink for Panics {
            fn warn(&self, _: &crate::audit::warning::Warning) {}
            fn summary(&self, _: &Summary<'_>) {
                panic!("a host's bookkeeping failed");
            }
        }
        let session = session();
        let auditor = Auditor::new().with_sink(Panics);
        auditor.summarise(&Summary::new(
            session.coverage(),
            session.findings(),
            session.verdicts().tally(),
        ));
    }
}
