//! Where what the alarm says goes: stderr by default, `tracing`, or a
//! closure of yours. One trait for every door: warnings, catalogue notes,
//! notices, verdicts, the catalogues installed and a session's summary.

use std::fmt;
use std::io::Write;

use super::catalog::Catalog;
use super::catalog::note::Note;
use super::notice::Notice;
use super::printable::Printable;
use super::printable::write_each;
use super::summary::Summary;
use super::verdicts::Judged;
use super::warning::Warning;

/// Receives each warning once. Its answer is ignored, and a sink that panics
/// is caught and swallowed: host bookkeeping never changes what a call does.
///
/// Any `Fn(&Warning)` closure is a sink, which is how a host puts warnings in
/// its own log or session record:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use mcp_unknown_keys::audit::{Auditor, Warning};
///
/// let seen = Arc::new(Mutex::new(Vec::<Warning>::new()));
/// let record = seen.clone();
/// let auditor = Auditor::new().with_sink(move |warning: &Warning| {
///     record.lock().unwrap().push(warning.clone());
/// });
/// # drop(auditor);
/// ```
///
/// Every door hands what it has to say to a sink, and nothing else: the
/// words are the core's ([`Warning`], [`Note`], [`Notice`] and
/// [`Summary`] say themselves; a sink adds only what is its own, as the
/// proxy's `--otlp` report says what it sent), and a door delivers a
/// [`Step`](crate::session::Step) of its session with
/// [`Step::deliver`](crate::session::Step::deliver). A door adds a sink,
/// never a way of saying.
pub trait Sink: Send + Sync {
    /// Takes one warning.
    fn warn(&self, warning: &Warning);

    /// Takes one note about what a listed tool's schema could not be read
    /// for ([`Note`]), once per auditor. [`StderrSink`] and [`TracingSink`]
    /// say it; the default, which closures get, discards it.
    fn note(&self, tool: &str, note: &Note) {
        let _ = (tool, note);
    }

    /// Takes one notice about the alarm itself ([`Notice`]): a gap in what
    /// it audits, a pairing it cannot make, a bound it met. [`StderrSink`]
    /// and [`TracingSink`] say it; the default discards it.
    fn notice(&self, notice: &Notice) {
        let _ = notice;
    }

    /// Takes what the server did with a call that carried undeclared keys
    /// ([`Judged`]), once settled. [`TracingSink`] says it; the default,
    /// and [`StderrSink`] (whose lines are the warnings'), discard it.
    fn verdict(&self, judged: &Judged) {
        let _ = judged;
    }

    /// Takes each catalogue installed for the calls that follow: `page`
    /// is the `result` text of the listing page that completed it, or
    /// `None` when the server's tools changed and no catalogue is in use.
    /// For a sink that keeps the server's catalogue beside the session
    /// (the proxy's `--state-dir`, for the hook); the default discards it.
    /// Only a door that keeps the page's text says it
    /// ([`Step::deliver_with_page`](crate::session::Step::deliver_with_page)):
    /// the session's step keeps no copy of a listing, which may be
    /// megabytes.
    fn installed(&self, page: Option<&str>, catalog: &Catalog) {
        let _ = (page, catalog);
    }

    /// Takes what a session ended with ([`Summary`]: its coverage, its
    /// findings and their verdicts, the lines passed over unread), once,
    /// when it ends: from a door whose sessions end (the proxy, for each
    /// session it relays). [`StderrSink`] says it in words, when there is
    /// anything to say, and [`TracingSink`] as one event; the default
    /// discards it.
    fn summary(&self, summary: &Summary<'_>) {
        let _ = summary;
    }
}

impl<F: Fn(&Warning) + Send + Sync + 'static> Sink for F {
    fn warn(&self, warning: &Warning) {
        self(warning)
    }
}

/// Discards every warning.
impl Sink for () {
    fn warn(&self, _: &Warning) {}
}

/// Both sinks take everything, the first one first.
impl<A: Sink, B: Sink> Sink for (A, B) {
    fn warn(&self, warning: &Warning) {
        self.0.warn(warning);
        self.1.warn(warning);
    }

    fn note(&self, tool: &str, note: &Note) {
        self.0.note(tool, note);
        self.1.note(tool, note);
    }

    fn notice(&self, notice: &Notice) {
        self.0.notice(notice);
        self.1.notice(notice);
    }

    fn verdict(&self, judged: &Judged) {
        self.0.verdict(judged);
        self.1.verdict(judged);
    }

    fn installed(&self, page: Option<&str>, catalog: &Catalog) {
        self.0.installed(page, catalog);
        self.1.installed(page, catalog);
    }

    fn summary(&self, summary: &Summary<'_>) {
        self.0.summary(summary);
        self.1.summary(summary);
    }
}

/// The default: one line on stderr per warning, its diagnosis after a dash,
///
/// `mcp-unknown-keys: fs_read was called with undeclared argument(s) ffset, the rest; it declares offset, path
/// — ffset → offset? (truncated), the rest (fragment); offset was not sent: the server will use its default, 0`
///
/// (one line; wrapped here). A note is one line too, prefixed differently
/// so that a script counting warning lines counts only those:
///
/// `mcp-unknown-keys note: fetch: the $ref "https://example.com/fetch.json" is not local and is not fetched: the tool's arguments are not audited`
///
/// A session's end, if it said anything, is the summary's words
/// ([`Summary::to_text`]): a `mcp-unknown-keys summary:` heading and
/// indented lines under it, written at once. Verdicts and the catalogues
/// installed are not written.
///
/// Right for a script; a host with a log should pass its own sink.
#[derive(Clone, Copy, Debug, Default)]
pub struct StderrSink;

impl StderrSink {
    /// The line written for `warning`, newline included: for a door that
    /// writes to a stderr of its own (the Python package writes to
    /// `sys.stderr`).
    pub fn warning_line(warning: &Warning) -> String {
        format!("mcp-unknown-keys: {warning}\n")
    }

    /// The line written for a note about `tool`, newline included.
    pub fn note_line(tool: &str, note: &Note) -> String {
        StderrSink::text_line(tool, &note.to_string())
    }

    /// A note's line for any text about `tool`, worded as
    /// [`StderrSink::note_line`] words a catalogue's note.
    pub fn text_line(tool: &str, text: &str) -> String {
        format!("mcp-unknown-keys note: {}: {text}\n", Printable(tool))
    }

    /// The line written for a notice, newline included.
    pub fn notice_line(notice: &Notice) -> String {
        format!("mcp-unknown-keys: {notice}\n")
    }
}

impl Sink for StderrSink {
    fn warn(&self, warning: &Warning) {
        write_line(&StderrSink::warning_line(warning));
    }

    fn note(&self, tool: &str, note: &Note) {
        write_line(&StderrSink::note_line(tool, note));
    }

    fn notice(&self, notice: &Notice) {
        write_line(&StderrSink::notice_line(notice));
    }

    fn summary(&self, summary: &Summary<'_>) {
        if !summary.is_empty() {
            write_line(&summary.to_text(""));
        }
    }
}

/// One write for the whole line, so that a server sharing this stderr does
/// not land inside it (a pipe keeps writes of up to PIPE_BUF bytes whole); a
/// closed stderr is no reason to fail a tool call, so the error is ignored.
fn write_line(line: &str) {
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Emits each warning as a `tracing` event at WARN level, with target
/// `mcp_unknown_keys` and the fields `tool`, `id`, `unknown_keys`,
/// `unknown_paths` and `declared_keys`, then the diagnosis: `hints` in brief
/// (`ffset → offset? (truncated), the rest (fragment)`), `causes` (the cause
/// of each unknown key, in order) and `missing_keys`
/// (`offset was not sent: the server will use its default, 0`). Each
/// catalogue note is an event at WARN level too, with the fields `tool`,
/// `at` and `note`; each notice one with the field `notice`. A server's
/// answer to a call that carried undeclared keys is an INFO event
/// (`verdict`, `tool`, `id`, `unknown_keys`, `unknown_paths`), and so is the
/// end of a session that said anything (`session ended`: `calls`,
/// `audited`, `unaudited`, `coverage` in words, `findings`, the number of
/// pairs found); a `=warn` filter hides both. A library never installs a subscriber: the host's subscriber decides where the
/// events go (`RUST_LOG=mcp_unknown_keys=warn`).
///
/// **On your OpenTelemetry traces.** With `tracing-opentelemetry`'s layer in
/// the host's subscriber, an event emitted inside a span becomes an event
/// of that span's OpenTelemetry span: audit each tool call inside the span
/// the host opens for it (`tools/call fs_read`), and the warning, with the
/// fields above as attributes, shows on the call's trace in any backend.
/// `examples/opentelemetry.rs` runs it end to end:
///
/// ```text
/// span "tools/call fs_read" in trace 12c93363eb040587b488a6b78659f12e
///   event "tool called with undeclared argument(s)"
///     tool = fs_read
///     id = call_1
///     unknown_keys = ["ffset"]
///     declared_keys = ["offset", "path"]
///     causes = ["truncated"]
///     …
/// ```
///
/// (The `mcp-unknown-keys proxy` sends to a collector itself: `--otlp URL`.)
#[derive(Clone, Copy, Debug, Default)]
pub struct TracingSink;

/// The `tracing` target of [`TracingSink`]'s events.
pub const TRACING_TARGET: &str = "mcp_unknown_keys";

impl Sink for TracingSink {
    fn warn(&self, warning: &Warning) {
        tracing::warn!(
            target: TRACING_TARGET,
            tool = %warning.tool,
            id = %warning.id,
            unknown_keys = ?warning.unknown_keys,
            unknown_paths = ?warning.unknown_paths,
            declared_keys = ?warning.declared_keys,
            hints = %Joined(&warning.hints, ", "),
            causes = ?warning.hints.iter().map(|hint| hint.cause.as_str()).collect::<Vec<_>>(),
            missing_keys = %Joined(&warning.missing_keys, "; "),
            "tool called with undeclared argument(s)"
        );
    }

    fn note(&self, tool: &str, note: &Note) {
        tracing::warn!(
            target: TRACING_TARGET,
            tool = %tool,
            at = %note.at,
            note = %note,
            "tool schema not read whole"
        );
    }

    fn notice(&self, notice: &Notice) {
        tracing::warn!(target: TRACING_TARGET, notice = %notice, "mcp-unknown-keys notice");
    }

    fn verdict(&self, judged: &Judged) {
        tracing::info!(
            target: TRACING_TARGET,
            verdict = %judged.verdict,
            tool = %judged.tool,
            id = %judged.id,
            unknown_keys = ?judged.unknown_keys,
            unknown_paths = ?judged.unknown_paths,
            "server answered a call that carried undeclared argument(s)"
        );
    }

    fn summary(&self, summary: &Summary<'_>) {
        if summary.is_empty() {
            return;
        }
        let coverage = summary.coverage;
        tracing::info!(
            target: TRACING_TARGET,
            calls = coverage.calls,
            audited = coverage.audited,
            unaudited = coverage.unaudited_calls(),
            coverage = %coverage,
            findings = summary.findings.len(),
            "session ended"
        );
    }
}

/// Shows items one after another, with a separator: a `tracing` field value.
struct Joined<'a, T>(&'a [T], &'static str);

impl<T: fmt::Display> fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_each(f, self.0, self.1)
    }
}
