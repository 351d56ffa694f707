//! Where the proxy's findings go, on every door: stderr (unless
//! `--quiet`), `--log` (each line with its [attribution]), `--otlp`
//! ([otlp]), and the catalogue kept for the hook (`--state-dir`,
//! [`crate::state`]).
//!
//! [`Reports`] holds the outputs of one run; each tap (one per session:
//! the stdio proxy and the bridge have one, the reverse proxy one per
//! upstream session) reports through a [`SessionReport`] of its own, which
//! knows which upstream session it speaks for. A `SessionReport` is its
//! tap's auditor's sink, the core's `Sink`, and nothing else delivers:
//! each warning and verdict carries its call's trace context for
//! `--otlp`, each catalogue installed its listing page for `--state-dir`,
//! and the session's summary, once it ends, what `--otlp` sent.
//!
//! The log's lines, each one JSON object ending with the attribution
//! members `"ts"`, `"server"`, `"session"` (and, from the reverse proxy,
//! `"upstream_session"`):
//!
//! - a warning: [`Warning`]'s fields;
//! - a verdict: `{"verdict":"ignored","tool":…,"id":…,"unknown_keys":[…]}`,
//!   with `"unknown_paths":[…]` when nested keys were undeclared;
//! - a note: `{"note":{"tool":…,"at":…,"problem":…,…,"text":…}}`;
//! - the summary, last: `{"summary":{…}}` (the core's `Summary`), with
//!   `"otlp":{"collector":…,"sent":…,"dropped":…}` after its members when
//!   `--otlp` is given.

pub(crate) mod attribution;
mod log;
pub(crate) mod otlp;

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use mcp_unknown_keys::audit::{Auditor, Catalog, Judged, Note, Notice, Printable, Sink, Summary, Warning};
use serde::Serialize;

use self::attribution::Attribution;
use self::log::Log;
use super::state::CatalogState;
use super::tap::Tap;
use super::{LOG_AT_EXIT, SETTLE_AT_EXIT};
use crate::failure::Failure;

/// The outputs of one proxy run.
pub struct Reports {
    stderr: bool,
    /// ` [NAME]` after `mcp-unknown-keys` on stderr when `--name` is given.
    tag: String,
    log: Option<Log>,
    attribution: Attribution,
    otlp: Option<otlp::Exporter>,
    state: Option<CatalogState>,
    allow: Vec<String>,
    top_level_only: bool,
    no_missing: bool,
}

/// What the reports of one run are asked for: the door's options, as its
/// command line gave them (the engine never reads the command line).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportOptions<'a> {
    /// `--log FILE`.
    pub log: Option<&'a Path>,
    /// `--allow KEY`…: keys tolerated on every tool.
    pub allow: &'a [String],
    /// `--quiet`: nothing on stderr but a failing log.
    pub quiet: bool,
    /// `--name NAME`: ` [NAME]` on stderr.
    pub name: Option<&'a str>,
    /// `--top-level-only`.
    pub top_level_only: bool,
    /// `--no-missing`: required keys a call lacks are not reported.
    pub no_missing: bool,
    /// `--otlp URL`.
    pub otlp: Option<&'a str>,
    /// The remote server's URL, which OTLP records name as its address.
    pub remote_url: Option<&'a str>,
    /// `--state-dir DIR`: keep the server's last catalogue in
    /// `DIR/catalogs/` for the hook ([`crate::state`]).
    pub state_dir: Option<&'a Path>,
}

impl Reports {
    /// Opens `--log` and `--otlp`, if asked for, for a server called
    /// `server`.
    pub fn open(options: &ReportOptions<'_>, server: String) -> Result<Reports, Failure> {
        let log = match options.log {
            None => None,
            Some(path) => Some(
                Log::open(path)
                    .map_err(|e| Failure::new(format!("cannot open the log {}: {e}", path.display()), 2))?,
            ),
        };
        let attribution = Attribution::new(server);
        let otlp = otlp::Exporter::open(options.otlp, options.remote_url, &attribution)
            .map_err(|e| Failure::new(e, 2))?;
        let state = match options.state_dir {
            None => None,
            Some(dir) => CatalogState::open(dir, &attribution.server, options.allow, options.top_level_only)
                .map_err(|e| {
                    Failure::new(
                        format!("cannot open the state directory {}: {e}", dir.display()),
                        2,
                    )
                })?,
        };
        Ok(Reports {
            stderr: !options.quiet,
            tag: options
                .name
                .map(|name| format!(" [{}]", Printable(name)))
                .unwrap_or_default(),
            log,
            attribution,
            otlp,
            state,
            allow: options.allow.to_vec(),
            top_level_only: options.top_level_only,
            no_missing: options.no_missing,
        })
    }

    /// A tap for one session (`upstream`: the reverse proxy's hash of the
    /// upstream session it serves), whose auditor tolerates `--allow` keys
    /// and honours `--top-level-only` and `--no-missing`.
    pub fn tap(self: &Arc<Self>, upstream: Option<String>) -> Tap {
        let session = Arc::new(SessionReport {
            reports: self.clone(),
            upstream,
        });
        let auditor = Auditor::new()
            .with_shared_sink(session)
            .allow_all(self.allow.iter().cloned())
            .top_level_only(self.top_level_only)
            .check_required(!self.no_missing);
        Tap::new(auditor)
    }

    /// The summary of what `tap` audited and found, once its session has
    /// ended; the audit gets [`SETTLE_AT_EXIT`] to read what is queued.
    pub fn summarise(&self, tap: &Tap) {
        tap.summarise(Some(SETTLE_AT_EXIT));
    }

    /// The proxy is about to exit: `--otlp` gets its last try, then the log
    /// gets [`LOG_AT_EXIT`] to write the lines handed to it.
    pub fn finish(&self) {
        if let Some(otlp) = &self.otlp {
            otlp.finish();
        }
        if let Some(log) = &self.log {
            log.finish(LOG_AT_EXIT);
        }
    }

    /// Writes `line` on stderr, unless `--quiet`, after
    /// `mcp-unknown-keys[ [NAME]]{kind}: `.
    fn say(&self, kind: &str, line: &str) {
        if self.stderr {
            let text = format!("mcp-unknown-keys{}{kind}: {line}\n", self.tag);
            // One write, so that a server sharing stderr does not land inside.
            let _ = io::stderr().lock().write_all(text.as_bytes());
        }
    }
}

/// The reports of one session (one tap).
pub(crate) struct SessionReport {
    reports: Arc<Reports>,
    upstream: Option<String>,
}

impl SessionReport {
    /// Hands `line` (a JSON object) to the log, attributed.
    fn log(&self, line: &str, warning: bool) {
        let Some(log) = &self.reports.log else { return };
        let line = self.reports.attribution.stamp(line, self.upstream.as_deref());
        if warning {
            log.warning(line);
        } else {
            log.record(line);
        }
    }
}

/// Everything the tap says of a session: stderr, the log, `--otlp` (each
/// warning and verdict joined to its call's trace, when the call carried
/// one) and `--state-dir`.
impl Sink for SessionReport {
    fn warn(&self, warning: &Warning) {
        self.reports.say("", &warning.to_string());
        self.log(&warning.to_json_line(), true);
        if let Some(otlp) = &self.reports.otlp {
            otlp.warning(warning, warning.trace.as_ref(), self.upstream.as_deref());
        }
    }

    fn verdict(&self, judged: &Judged) {
        self.log(&judged.to_json_line(), false);
        if let Some(otlp) = &self.reports.otlp {
            otlp.verdict(judged, judged.trace.as_ref(), self.upstream.as_deref());
        }
    }

    fn installed(&self, page: Option<&str>, catalog: &Catalog) {
        if let Some(state) = &self.reports.state {
            state.installed(page, catalog);
        }
    }

    fn note(&self, tool: &str, note: &Note) {
        self.reports.say(" note", &format!("{}: {note}", Printable(tool)));
        #[derive(Serialize)]
        struct Logged<'a> {
            note: NoteLine<'a>,
        }
        #[derive(Serialize)]
        struct NoteLine<'a> {
            tool: &'a str,
            #[serde(flatten)]
            note: &'a Note,
            text: String,
        }
        let line = Logged {
            note: NoteLine {
                tool,
                note,
                text: note.to_string(),
            },
        };
        self.log(&serde_json::to_string(&line).expect("a note serialises"), false);
    }

    fn notice(&self, notice: &Notice) {
        self.reports.say("", &notice.to_string());
    }

    /// The session's summary, once it ended: last on stderr and in the
    /// log, with what `--otlp` sent.
    fn summary(&self, summary: &Summary<'_>) {
        // The stdio proxy's and the bridge's session (no upstream session)
        // is the run's only one: its summary is the run's last word, so
        // `--otlp` is flushed first. A reverse-proxy session's end leaves
        // the queue, which other sessions share, to the exporter.
        let otlp = self.reports.otlp.as_ref().map(|otlp| match self.upstream {
            None => otlp.flush(),
            Some(_) => otlp.counts(),
        });
        let reports = &self.reports;
        if reports.stderr && !summary.is_empty() {
            let text = summary_text(summary, &reports.tag, otlp.as_ref());
            let _ = io::stderr().lock().write_all(text.as_bytes());
        }
        self.log(&summary_line(summary, otlp.as_ref()), false);
    }
}

/// The summary's words, then, when `--otlp` dropped records, a line that
/// says so.
fn summary_text(summary: &Summary<'_>, tag: &str, otlp: Option<&otlp::Counts>) -> String {
    let mut text = summary.to_text(tag);
    if let Some(otlp) = otlp.filter(|otlp| otlp.dropped > 0) {
        let _ = writeln!(
            text,
            "  {} OTLP record(s) dropped: the collector at {} did not take them ({} sent)",
            otlp.dropped, otlp.collector, otlp.sent
        );
    }
    text
}

/// The summary's JSON line, with `"otlp":{…}` after the core's members
/// when `--otlp` is given.
fn summary_line(summary: &Summary<'_>, otlp: Option<&otlp::Counts>) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        summary: Logged<'a>,
    }
    #[derive(Serialize)]
    struct Logged<'a> {
        #[serde(flatten)]
        summary: &'a Summary<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        otlp: Option<&'a otlp::Counts>,
    }
    let line = Line {
        summary: Logged { summary, otlp },
    };
    serde_json::to_string(&line).expect("a summary serialises")
}

#[cfg(test)]
mod tests {
    use mcp_unknown_keys::audit::Auditor;
    use mcp_unknown_keys::jsonrpc::{Line, read_line};
    use mcp_unknown_keys::session::{Session, Side};

    use super::*;

    /// A session that listed `read` and called it once with `ffset`, which
    /// the server ignored.
    fn session() -> Session {
        let auditor = Auditor::new().with_sink(());
        let mut session = Session::new();
        for (from, line) in [
            (Side::Host, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            (
                Side::Server,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{"properties":{"path":{}}}}]}}"#,
            ),
            (
                Side::Host,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a","ffset":1}}}"#,
            ),
            (
                Side::Server,
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
            ),
        ] {
            let Line::Message(message) = read_line(line.as_bytes()) else {
                panic!("{line}")
            };
            session.read(&auditor, from, message);
        }
        session
    }

    fn counts(dropped: u64) -> otlp::Counts {
        otlp::Counts {
            collector: "http://collector:4318".into(),
            sent: 3,
            dropped,
        }
    }

    #[test]
    fn the_log_line_is_the_core_s_summary_with_what_otlp_sent_last() {
        let session = session();
        let summary = Summary::new(session.coverage(), session.findings(), session.verdicts().tally());
        let core = summary.to_json_line();
        assert_eq!(summary_line(&summary, None), core);
        let with_otlp = summary_line(&summary, Some(&counts(1)));
        assert_eq!(
            with_otlp,
            format!(
                r#"{},"otlp":{{"collector":"http://collector:4318","sent":3,"dropped":1}}}}}}"#,
                &core[..core.len() - 2]
            )
        );
        assert!(with_otlp.contains(r#""findings":[{"tool":"read","key":"ffset","calls":1"#));
    }

    #[test]
    fn the_words_say_dropped_otlp_records_after_the_findings_and_only_then() {
        let session = session();
        let summary = Summary::new(session.coverage(), session.findings(), session.verdicts().tally());
        let words = summary.to_text(" [fs]");
        assert_eq!(summary_text(&summary, " [fs]", None), words);
        assert_eq!(summary_text(&summary, " [fs]", Some(&counts(0))), words);
        assert_eq!(
            summary_text(&summary, " [fs]", Some(&counts(2))),
            format!(
                "{words}  2 OTLP record(s) dropped: the collector at http://collector:4318 did not take them (3 sent)\n"
            )
        );
        assert!(words.contains("read `ffset`: 1 call"), "{words}");
    }
}
