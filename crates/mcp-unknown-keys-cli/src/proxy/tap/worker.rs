//! The audit worker: reads the queued lines in order, keeps the listings,
//! audits calls through the core's `Auditor`, pairs the calls that carried
//! undeclared keys with the server's answers, and counts what it found.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_unknown_keys::audit::{
    Answer, Arguments, Auditor, Call, Coverage, Findings, Judged, Listing, Outcome, Printable, Skip,
    Verdicts, Warning,
};
use mcp_unknown_keys::jsonrpc::{AwaitedListings, Id, Line, ListingPage, Message, read_line};

use super::Report;
use super::answers::AwaitedIds;
use super::queue::{Entry, From};
use super::trace::TraceContext;

/// Changes the awaited listings with `change`, and the window by as many
/// requests as it added or dropped (a request forgotten past the bounds, or
/// answered, closes its part of the window).
fn awaiting<T>(state: &mut State, window: &AtomicUsize, change: impl FnOnce(&mut AwaitedListings) -> T) -> T {
    let before = state.awaited.len();
    let changed = change(&mut state.awaited);
    let after = state.awaited.len();
    if after > before {
        window.fetch_add(after - before, Ordering::SeqCst);
    } else {
        window.fetch_sub(before - after, Ordering::SeqCst);
    }
    changed
}

/// Where notices go.
type Notices = Box<dyn Fn(&str) + Send + Sync>;

/// What the relays and the worker share to decide which lines to queue.
#[derive(Default)]
pub struct Gates {
    /// `tools/list` requests queued unread plus listings awaited: while
    /// not zero, every server line is queued (see `Shared::window`).
    pub window: AtomicUsize,
    /// Client lines that may be calls, queued and not read yet: while not
    /// zero, every server line is queued, for it may answer one of them.
    pub calls_unread: AtomicUsize,
    /// The calls awaiting their verdict, by id.
    pub awaited: AwaitedIds,
}

/// The worker's rules and state; its lock is held only between lines,
/// while a line that may hold calls is parsed, and while counting, never
/// while a warning is delivered.
pub struct Worker {
    auditor: Auditor,
    state: Mutex<State>,
    notices: Mutex<Notices>,
    report: Mutex<Option<Arc<dyn Report>>>,
    /// The session ended: the lines still queued are counted, not audited.
    ending: AtomicBool,
}

#[derive(Default)]
struct State {
    /// The `tools/list` requests awaiting their response, matched as the
    /// `audit` command matches them: each one counted in the window
    /// (`Gates::window`) while it is awaited.
    awaited: AwaitedListings,
    /// The listing being assembled.
    listing: Listing,
    findings: Findings,
    coverage: Coverage,
    /// The calls that carried undeclared keys, paired with their answers.
    verdicts: Verdicts<Id>,
    /// The trace context of awaited calls that carried one, by id text.
    traces: HashMap<String, TraceContext>,
    /// The notices already said, so each is said once.
    said: HashSet<String>,
    /// The line being read, once parsed: how many of its calls are still
    /// to be counted in `coverage`. While it is `Some`, [`Worker::end`]
    /// counts those calls, not the line (which `Gates::calls_unread` still
    /// holds), so a batch cut short is counted whole and nothing twice.
    calls_to_count: Option<u64>,
}

impl State {
    /// Counts one call of the line being read as `count` says.
    fn count(&mut self, count: impl FnOnce(&mut Coverage)) {
        count(&mut self.coverage);
        if let Some(left) = &mut self.calls_to_count {
            *left = left.saturating_sub(1);
        }
    }
}

/// How many `tools/call` requests a line holds.
fn calls_in(line: &Line<'_>) -> u64 {
    let is_call = |message: &Message<'_>| matches!(message, Message::Call { .. });
    match line {
        Line::Message(message) => u64::from(is_call(message)),
        Line::Batch(messages) => messages.iter().filter(|message| is_call(message)).count() as u64,
        Line::Unreadable => 0,
    }
}

impl Worker {
    pub fn new(auditor: Auditor) -> Worker {
        Worker {
            auditor,
            state: Mutex::default(),
            notices: Mutex::new(Box::new(|notice: &str| {
                let _ = writeln!(std::io::stderr().lock(), "mcp-unknown-keys: {notice}");
            })),
            report: Mutex::new(None),
            ending: AtomicBool::new(false),
        }
    }

    #[cfg(test)]
    pub fn set_notices(&self, notices: Notices) {
        *self.notices.lock().unwrap_or_else(PoisonError::into_inner) = notices;
    }

    pub fn set_report(&self, report: Arc<dyn Report>) {
        *self.report.lock().unwrap_or_else(PoisonError::into_inner) = Some(report);
    }

    pub fn report(&self) -> Option<Arc<dyn Report>> {
        self.report.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn findings(&self) -> Findings {
        self.state().findings.clone()
    }

    pub fn coverage(&self) -> Coverage {
        self.state().coverage.clone()
    }

    pub fn verdicts(&self) -> Verdicts<Id> {
        self.state().verdicts.clone()
    }

    #[cfg(test)]
    pub fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// Reads one queued line and acts on what it is; once the session is
    /// ending, only counts the calls in it. A bug met reading it loses that
    /// line only: the gates it holds open are closed and the next line read.
    pub fn read(&self, entry: &Entry, gates: &Gates) {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let messages = match self.parse(entry) {
                Line::Message(message) => vec![message],
                Line::Batch(messages) => messages,
                Line::Unreadable => Vec::new(),
            };
            for message in messages {
                // Checked per message: once the session ends, the rest of
                // a batch is only counted.
                if self.ending.load(Ordering::Acquire) {
                    self.count_unread(message);
                } else {
                    self.act(entry, message, gates);
                }
            }
        }));
        if entry.in_window {
            gates.window.fetch_sub(1, Ordering::SeqCst);
        }
        if entry.may_call {
            // Under the state's lock, so that `end` sees the line either
            // being read (its calls known) or still unread, never both.
            let mut state = self.state();
            state.calls_to_count = None;
            gates.calls_unread.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Parses a queued line. One that may hold calls is parsed under the
    /// state's lock, and the number of its calls noted there: `end` never
    /// sees a line half read without knowing how many calls it holds.
    fn parse<'a>(&self, entry: &'a Entry) -> Line<'a> {
        if !entry.may_call {
            return read_line(&entry.line);
        }
        let mut state = self.state();
        let line = read_line(&entry.line);
        state.calls_to_count = Some(calls_in(&line));
        line
    }

    /// A call read after the session ended: counted as not audited, as a
    /// line passed over unread is.
    fn count_unread(&self, message: Message<'_>) {
        if let Message::Call { name, .. } = message {
            self.state()
                .count(|coverage| coverage.count_unaudited(&name, Skip::UnreadableArguments));
        }
    }

    /// The session is ending: the lines still queued are only counted.
    pub fn end_soon(&self) {
        self.ending.store(true, Ordering::Release);
    }

    /// The session ended: the coverage so far, with the calls of the line
    /// being read not counted yet, and each client line that may be a call
    /// and is still queued, counted as calls not audited; and how many
    /// those were.
    pub fn end(&self, gates: &Gates) -> (Coverage, u64) {
        self.end_soon();
        let state = self.state();
        let mut coverage = state.coverage.clone();
        let queued = gates.calls_unread.load(Ordering::SeqCst) as u64;
        let unread = match state.calls_to_count {
            // The line being read is in `calls_unread` too.
            Some(left) => queued.saturating_sub(1) + left,
            None => queued,
        };
        for _ in 0..unread {
            coverage.count_unaudited("", Skip::UnreadableArguments);
        }
        (coverage, unread)
    }

    fn act(&self, entry: &Entry, message: Message<'_>, gates: &Gates) {
        let window = &gates.window;
        match (entry.from, message) {
            (From::Client, Message::ListTools { id, first }) => self.expect_listing(id, first, window),
            (From::Client, Message::Call { id, name, arguments }) => {
                self.audit(&name, arguments.as_deref(), id, &entry.line, gates);
            }
            (From::Client, Message::Cancelled { request }) => {
                self.forget(&request, window);
                self.judge(gates, |verdicts| verdicts.cancel(&request));
            }
            (From::Server, Message::ListChanged) => self.list_changed(),
            (From::Server | From::Proxy, Message::Response { id, result }) => {
                self.answered(&id, result.map(|raw| raw.get()), window);
                let answer = match entry.from {
                    // The proxy answered in the server's place: the server
                    // never did.
                    From::Proxy => None,
                    _ => Some(Answer::read(result.map(|raw| raw.0.get()))),
                };
                self.judge(gates, |verdicts| match answer {
                    Some(answer) => verdicts.answer(&id, answer),
                    None => verdicts.cancel(&id),
                });
            }
            _ => {}
        }
    }

    /// A client asks for a listing: await its id until the response.
    fn expect_listing(&self, id: Id, first: bool, window: &AtomicUsize) {
        awaiting(&mut self.state(), window, |awaited| awaited.request(id, first));
    }

    /// A client cancelled a request: a listing it was may never be answered.
    fn forget(&self, id: &Id, window: &AtomicUsize) {
        awaiting(&mut self.state(), window, |awaited| awaited.cancel(id));
    }

    /// A server answered: if it answers an awaited listing, learn from it.
    fn answered(&self, id: &Id, result: Option<&str>, window: &AtomicUsize) {
        let mut state = self.state();
        let Some(first) = awaiting(&mut state, window, |awaited| awaited.answer(id)) else {
            return;
        };
        let Some(page) = result.and_then(ListingPage::read) else {
            // An error, or a result that is not a listing: the catalogue in
            // use stays, and a listing being assembled is abandoned.
            state.listing.abandon();
            return;
        };
        let catalog = state.listing.page(&page.tools.tools, first, page.more);
        let unsaid: Vec<String> = page
            .tools
            .unreadable
            .into_iter()
            .filter(|name| state.said.insert(format!("tool {name}")))
            .collect();
        drop(state);
        if let Some(catalog) = catalog {
            self.auditor.replace_catalog(catalog);
        }
        for name in unsaid {
            self.notice(&format!(
                "the listed tool {} could not be read (its schema nests too deep to build); \
                 calls to it are not audited",
                Printable(&name)
            ));
        }
    }

    /// The server's tools changed: nothing is audited until the next
    /// listing, the first to be answered from now on (a client may have
    /// asked for it before the notification reached it).
    fn list_changed(&self) {
        self.state().listing.abandon();
        self.auditor.clear_catalog();
    }

    /// Audits one `tools/call` request, counts it, delivers its warning, if
    /// any, and awaits its answer when it carried undeclared keys.
    fn audit(&self, tool: &str, arguments: Option<&str>, key: Option<Id>, line: &[u8], gates: &Gates) {
        // The id as the warnings show it; `key`, read exactly, pairs the
        // call with its answer.
        let value = key.as_ref().map(Id::to_value);
        let id = value.as_ref();
        let call = Call {
            tool,
            arguments: arguments.map(Arguments::Json),
            id,
        };
        let catalog = self.auditor.catalog();
        let outcome = self.auditor.audit(&catalog, call);
        let flagged = matches!(&outcome, Outcome::Audited { undeclared, undeclared_paths, .. }
            if !undeclared.is_empty() || !undeclared_paths.is_empty());
        let trace = flagged
            .then(|| TraceContext::of_call(line, key.as_ref()))
            .flatten();
        let judged = {
            let mut state = self.state();
            state.count(|coverage| coverage.record(&call, &outcome));
            state.findings.record(&call, &outcome);
            match key.filter(|_| flagged) {
                Some(key) => {
                    let judged = state.verdicts.call(key.clone(), &call, &outcome);
                    if let Some(trace) = trace {
                        state.traces.insert(mcp_unknown_keys::id_text(id), trace);
                    }
                    let verdicts = &state.verdicts;
                    gates.awaited.update(|ids| {
                        ids.insert(key);
                        if !judged.is_empty() {
                            ids.retain(|id| verdicts.awaits(id));
                        }
                    });
                    self.traced(&mut state, judged)
                }
                None => Vec::new(),
            }
        };
        if let Outcome::Skipped(skip) = &outcome {
            self.say_unaudited(tool, *skip);
        }
        if let Some(warning) = outcome.warning() {
            self.deliver(&warning, trace.as_ref());
        }
        self.deliver_verdicts(judged);
    }

    /// Judges with `judge`; delivers the verdict, if any.
    fn judge(&self, gates: &Gates, judge: impl FnOnce(&mut Verdicts<Id>) -> Option<Judged>) {
        let judged = {
            let mut state = self.state();
            if state.verdicts.awaited() == 0 {
                return;
            }
            let judged: Vec<Judged> = judge(&mut state.verdicts).into_iter().collect();
            if judged.is_empty() {
                return;
            }
            let verdicts = &state.verdicts;
            gates.awaited.update(|ids| ids.retain(|id| verdicts.awaits(id)));
            self.traced(&mut state, judged)
        };
        self.deliver_verdicts(judged);
    }

    /// The session ended: every call still awaited is unanswered.
    pub fn finish(&self, gates: &Gates) {
        let judged = {
            let mut state = self.state();
            let judged = state.verdicts.finish();
            gates.awaited.update(HashSet::clear);
            self.traced(&mut state, judged)
        };
        self.deliver_verdicts(judged);
    }

    /// Each verdict with the trace context of its call, taken from the
    /// state.
    fn traced(&self, state: &mut State, judged: Vec<Judged>) -> Vec<(Judged, Option<TraceContext>)> {
        judged
            .into_iter()
            .map(|judged| {
                let trace = state.traces.remove(&judged.id);
                (judged, trace)
            })
            .collect()
    }

    fn deliver(&self, warning: &Warning, trace: Option<&TraceContext>) {
        match self.report() {
            Some(report) => {
                let _ = catch_unwind(AssertUnwindSafe(|| report.warning(warning, trace)));
            }
            None => self.auditor.warn(warning),
        }
    }

    fn deliver_verdicts(&self, judged: Vec<(Judged, Option<TraceContext>)>) {
        let Some(report) = self.report() else { return };
        for (judged, trace) in judged {
            let _ = catch_unwind(AssertUnwindSafe(|| report.verdict(&judged, trace.as_ref())));
        }
    }

    /// Says, once per reason, that a call went unaudited and why: the
    /// summary counts them all, but a silent gap would read as "nothing
    /// found".
    fn say_unaudited(&self, tool: &str, skip: Skip) {
        let why = match skip {
            Skip::NoCatalogue => {
                "no tools/list answer seen yet (or the server's tools changed since the last one); \
                 calls are audited once the client lists the tools"
            }
            Skip::UnlistedTool => "the server's tools/list does not name it",
            Skip::DeclaresNothing => {
                "its tool declares no argument and its schema is open (or could not be read)"
            }
            Skip::UnreadableArguments => "its arguments are not a JSON object",
        };
        if self.state().said.insert(format!("unaudited {skip}")) {
            let call = match tool {
                "" => "a call naming no tool".to_owned(),
                tool => format!("the call to {}", Printable(tool)),
            };
            self.notice(&format!(
                "{call} was not audited: {why}; the summary counts each call not audited ({skip})"
            ));
        }
    }

    /// Says `notice` unless it was said before.
    pub fn notice_once(&self, notice: &str) {
        if self.state().said.insert(notice.to_owned()) {
            self.notice(notice);
        }
    }

    fn notice(&self, notice: &str) {
        if let Some(report) = self.report() {
            let _ = catch_unwind(AssertUnwindSafe(|| report.notice(notice)));
            return;
        }
        let notices = self.notices.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = catch_unwind(AssertUnwindSafe(|| notices(notice)));
    }
}
