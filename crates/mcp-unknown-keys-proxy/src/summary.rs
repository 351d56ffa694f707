//! The session's summary on exit: what was audited, and what was found.
//!
//! On stderr (unless `--quiet`), a few readable lines that open with the
//! coverage and list at most [`MAX_SHOWN_FINDINGS`] findings. In the log,
//! one last line, a contract the `audit` command reads back:
//!
//! ```json
//! {"summary":{"coverage":{"calls":3,"audited":2,"unaudited":{"unlisted_tool":1},"unlisted_tools":{"x":1}},
//!  "findings":[{"tool":"fs_read","key":"ffset","calls":2,"first_id":"2","cause":"truncated","verdicts":{"ignored":2}},
//!              {"tool":"create_entities","key":"entities[].age","calls":1,"first_id":"3","nested":true,"verdicts":{"rejected":1}}],
//!  "declared_keys":{"fs_read":["offset","path"],"create_entities":["entities"]}}}
//! ```
//!
//! with `"otlp":{"collector":…,"sent":…,"dropped":…}` after
//! `declared_keys` when `--otlp` is given, and the attribution members.
//!
//! Each tool's declared keys appear once, not once per finding, so the
//! line grows with the distinct pairs found, not with their product with
//! the catalogue.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mcp_unknown_keys::audit::{Cause, Coverage, Findings, Printable, VerdictCounts, Verdicts, verdicts_text};
use serde::Serialize;

use super::MAX_TAPPED_LINE;
use mcp_unknown_keys::jsonrpc::Id;

/// What the exporter sent and dropped, as the summary reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OtlpCounts {
    /// The collector, as given (without userinfo or query).
    pub collector: String,
    /// Records the collector took.
    pub sent: u64,
    /// Records dropped: the queue was full, or the collector did not take
    /// them.
    pub dropped: u64,
}

/// The most findings the stderr summary lists; the log has them all.
pub(crate) const MAX_SHOWN_FINDINGS: usize = 50;

/// The most unlisted tool names the stderr summary names.
pub(crate) const MAX_SHOWN_UNLISTED: usize = 20;

/// Lines the tap could not read, by why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unread {
    /// Client lines longer than [`MAX_TAPPED_LINE`].
    pub too_long: u64,
    /// Of those, the lines that may have been `tools/call` requests (their
    /// first bytes name no other method): each is counted as a call not
    /// audited.
    pub too_long_calls: u64,
    /// Client lines passed over while the audit queue was full.
    pub behind: u64,
    /// Of those, the lines that may have been `tools/call` requests: each
    /// is counted as a call not audited.
    pub behind_calls: u64,
    /// Server lines passed over while the audit queue was full (a listing
    /// among them would be missed).
    pub server_behind: u64,
}

impl Unread {
    /// Client lines counted as calls not audited.
    pub fn calls(&self) -> u64 {
        self.too_long_calls.saturating_add(self.behind_calls)
    }
}

/// What the session found, as the tap counted it.
#[derive(Clone)]
pub struct Summary<'a> {
    pub coverage: &'a Coverage,
    pub findings: &'a Findings,
    /// What the server did with the calls that carried undeclared keys.
    pub verdicts: &'a Verdicts<Id>,
    pub unread: Unread,
    /// Lines the audit had not read when the session ended.
    pub unsettled: u64,
    /// Of those, the client lines that may be calls: each is counted in
    /// `coverage` as a call not audited.
    pub unsettled_calls: u64,
    /// What `--otlp` sent and dropped, when given.
    pub otlp: Option<&'a OtlpCounts>,
}

/// One finding as the log's summary lists it.
#[derive(Serialize)]
struct LoggedFinding<'a> {
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

#[derive(Serialize)]
struct Logged<'a> {
    coverage: &'a Coverage,
    findings: Vec<LoggedFinding<'a>>,
    declared_keys: BTreeMap<&'a str, &'a [String]>,
    /// How many times a call carried a pair found once the findings held
    /// as many as are kept (`limits::MAX_SAID_PAIRS`); written only then.
    #[serde(skip_serializing_if = "is_zero")]
    unkept_findings: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    otlp: Option<&'a OtlpCounts>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Summary<'_> {
    /// Whether there is anything to say on stderr.
    pub fn is_empty(&self) -> bool {
        self.coverage.calls == 0 && self.findings.is_empty() && self.unsettled == 0
    }

    /// The log's last line: `{"summary":{"coverage":…,"findings":[…],"declared_keys":{…}}}`.
    pub fn to_json_line(&self) -> String {
        let mut declared_keys = BTreeMap::new();
        let findings = self
            .findings
            .iter()
            .map(|finding| {
                declared_keys.entry(finding.tool).or_insert(finding.declared_keys);
                LoggedFinding {
                    tool: finding.tool,
                    key: finding.key,
                    calls: finding.calls,
                    first_id: finding.first_id,
                    cause: finding.cause,
                    nested: finding.nested,
                    missing: finding.missing,
                    verdicts: self.verdicts_of(&finding),
                }
            })
            .collect();
        let logged = Logged {
            coverage: self.coverage,
            findings,
            declared_keys,
            unkept_findings: self.findings.unkept(),
            otlp: self.otlp,
        };
        #[derive(Serialize)]
        struct Line<'a> {
            summary: Logged<'a>,
        }
        serde_json::to_string(&Line { summary: logged }).expect("a summary serialises")
    }

    /// The readable lines for stderr, each ending in a newline: a heading
    /// with the coverage (`mcp-unknown-keys summary: …`, or
    /// `mcp-unknown-keys [NAME] summary: …` with `tag` ` [NAME]`), then
    /// indented details.
    pub fn to_text(&self, tag: &str) -> String {
        let mut text = format!("mcp-unknown-keys{tag} summary: {}\n", self.coverage);
        self.unlisted(&mut text);
        let unread = self.unread;
        if unread.too_long > 0 {
            let _ = writeln!(
                text,
                "  {} client line(s) over {} MiB forwarded unread ({} that may be calls counted as calls not audited)",
                unread.too_long,
                MAX_TAPPED_LINE >> 20,
                unread.too_long_calls
            );
        }
        if unread.behind + unread.server_behind > 0 {
            let _ = writeln!(
                text,
                "  {} line(s) forwarded unread while the audit was behind ({} counted as calls not audited)",
                unread.behind + unread.server_behind,
                unread.behind_calls
            );
        }
        if self.unsettled > 0 {
            let _ = writeln!(
                text,
                "  {} line(s) still waiting for the audit when the session ended ({} counted as calls not audited)",
                self.unsettled, self.unsettled_calls
            );
        }
        if let Some(otlp) = self.otlp.filter(|otlp| otlp.dropped > 0) {
            let _ = writeln!(
                text,
                "  {} OTLP record(s) dropped: the collector at {} did not take them ({} sent)",
                otlp.dropped, otlp.collector, otlp.sent
            );
        }
        self.found(&mut text);
        text
    }

    /// The verdicts on the calls that carried a finding's key (or lacked
    /// its required key).
    fn verdicts_of(&self, finding: &mcp_unknown_keys::audit::Finding<'_>) -> Option<&VerdictCounts> {
        self.verdicts
            .counts_of(finding.tool, finding.key, finding.nested, finding.missing)
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
            let verdicts = self.verdicts_of(&finding).map(verdicts_text).unwrap_or_default();
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
                "  {} more occurrence(s) of pairs found past the {} kept, counted only",
                findings.unkept(),
                mcp_unknown_keys::limits::MAX_SAID_PAIRS
            );
        }
    }
}

/// `… and N more` when `all` exceeds `shown`, else nothing.
fn more(all: usize, shown: usize) -> String {
    if all > shown {
        format!(" … and {} more", all - shown)
    } else {
        String::new()
    }
}
