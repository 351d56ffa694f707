//! The audit worker: reads the queued lines in order and hands each message
//! to the core's session ([`Session`]), which keeps the listings, audits
//! the calls, pairs those that carried undeclared keys with the server's
//! answers and counts what it found; the worker keeps the relays' gates in
//! step with it and delivers what it says through the auditor's sink.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_unknown_keys::audit::{Auditor, Coverage, Findings, Notice, Skip, Summary, VerdictTally, Verdicts};
use mcp_unknown_keys::jsonrpc::{Id, Line, Message, read_line};
use mcp_unknown_keys::session::{Session, Side};

use super::answers::AwaitedIds;
use super::queue::{Entry, Source};

/// Moves the window by as many listings as a message made the session
/// await, or answered and forgot: each one awaited holds the window open.
fn move_window(window: &AtomicUsize, before: usize, after: usize) {
    if after > before {
        window.fetch_add(after - before, Ordering::SeqCst);
    } else {
        window.fetch_sub(before - after, Ordering::SeqCst);
    }
}

/// What the relays and the worker share to decide which lines to queue.
#[derive(Default)]
pub(super) struct Gates {
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
/// while a warning is delivered. Everything it says goes to the auditor's
/// sink: the door's outputs are that sink.
pub(super) struct Worker {
    auditor: Auditor,
    state: Mutex<State>,
    /// The session ended: the lines still queued are counted, not audited.
    ending: AtomicBool,
}

#[derive(Default)]
struct State {
    /// What the alarm decides about the session's messages: listings,
    /// calls, answers, coverage, findings, verdicts.
    session: Session,
    /// The door's own notices already said, so each is said once.
    said: HashSet<Notice>,
    /// The line being read, once parsed: how many of its calls are still
    /// to be counted in the coverage. While it is `Some`, [`Worker::end`]
    /// counts those calls, not the line (which `Gates::calls_unread` still
    /// holds), so a batch cut short is counted whole and nothing twice.
    calls_to_count: Option<u64>,
}

impl State {
    /// One call of the line being read is counted.
    fn counted_one(&mut self) {
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
    pub(super) fn new(auditor: Auditor) -> Worker {
        Worker {
            auditor,
            state: Mutex::default(),
            ending: AtomicBool::new(false),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn findings(&self) -> Findings {
        self.state().session.findings().clone()
    }

    pub(super) fn coverage(&self) -> Coverage {
        self.state().session.coverage().clone()
    }

    pub(super) fn verdicts(&self) -> Verdicts<Id> {
        self.state().session.verdicts().clone()
    }

    /// The verdicts' counts alone, for the summary: not the calls still
    /// awaited, which a clone of the verdicts would copy too.
    pub(super) fn tally(&self) -> VerdictTally {
        self.state().session.verdicts().tally().clone()
    }

    #[cfg(test)]
    pub(crate) fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// Reads one queued line and acts on what it is; once the session is
    /// ending, only counts the calls in it. A bug met reading it loses that
    /// line only: the gates it holds open are closed and the next line read.
    pub(super) fn read(&self, entry: &Entry, gates: &Gates) {
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
                    // Only a host's calls are calls: a server's line shaped
                    // as one (an echo, a request of its own) counts for
                    // nothing, as it does while the session runs.
                    if entry.from == Source::Client {
                        self.count_unread(message);
                    }
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
            let mut state = self.state();
            state.session.count_unread_call(&name);
            state.counted_one();
        }
    }

    /// The session is ending: the lines still queued are only counted.
    pub(super) fn end_soon(&self) {
        self.ending.store(true, Ordering::Release);
    }

    /// The session ended: the coverage so far, with the calls of the line
    /// being read not counted yet, and each client line that may be a call
    /// and is still queued, counted as calls not audited; and how many
    /// those were.
    pub(super) fn end(&self, gates: &Gates) -> (Coverage, u64) {
        self.end_soon();
        let state = self.state();
        let mut coverage = state.session.coverage().clone();
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

    /// Hands one message to the session, under the state's lock, keeping
    /// the relays' gates in step with it; then delivers what it said, with
    /// no lock held, through the auditor's sink, the catalogue installed
    /// with the listing page that completed it (`--state-dir` keeps the
    /// page).
    fn act<'a>(&self, entry: &'a Entry, message: Message<'a>, gates: &Gates) {
        let from = match entry.from {
            Source::Client => Side::Host,
            Source::Server => Side::Server,
            // The proxy answered in the server's place: the server never did.
            Source::Proxy => Side::Door,
        };
        // The id under which an answer may now be awaited: a call's, or a
        // `tasks/result` request's (whose answer settles a task's call).
        let requested = match &message {
            Message::Call { id, .. } => id.clone(),
            Message::TaskResult { id, .. } => Some(id.clone()),
            _ => None,
        };
        let page = match &message {
            Message::Response { result, .. } => result.map(|result| result.get()),
            _ => None,
        };
        let step = {
            let mut state = self.state();
            let before = state.session.awaited_listings();
            let step = state.session.read(&self.auditor, from, message);
            move_window(&gates.window, before, state.session.awaited_listings());
            if step.call.is_some() {
                state.counted_one();
            }
            let awaited = requested.filter(|id| state.session.verdicts().awaits(id));
            let settled = !step.verdicts.is_empty();
            if awaited.is_some() || settled {
                let verdicts = state.session.verdicts();
                gates.awaited.update(|ids| {
                    ids.extend(awaited);
                    if settled {
                        forget_settled(ids, verdicts);
                    }
                });
            }
            step
        };
        step.deliver_with_page(&self.auditor, page);
    }

    /// The session ended: every call still awaited is unanswered.
    pub(super) fn finish(&self, gates: &Gates) {
        let judged = {
            let mut state = self.state();
            let judged = state.session.finish();
            gates.awaited.update(HashSet::clear);
            judged
        };
        for judged in &judged {
            self.auditor.verdict(judged);
        }
    }

    /// The session's summary, to the auditor's sink.
    pub(super) fn summarise(&self, summary: &Summary<'_>) {
        self.auditor.summarise(summary);
    }

    /// Says `notice` unless it was said before.
    pub(super) fn notice_once(&self, notice: Notice) {
        if self.state().said.insert(notice.clone()) {
            self.auditor.notice(&notice);
        }
    }
}

/// Drops from the server relay's gate the ids no longer awaited. Swept only
/// once the gate holds twice as many ids as calls are awaited, or none is
/// awaited: a sweep per verdict cost a pass over up to
/// [`MAX_AWAITED`](mcp_unknown_keys::limits::MAX_AWAITED) ids per call once
/// that many went unanswered (30 µs a call, a fortieth of the stdio proxy's
/// throughput). An id kept a while after its answer only lets a server line
/// carrying it be looked at, in vain.
fn forget_settled(ids: &mut HashSet<Id>, verdicts: &Verdicts<Id>) {
    let awaited = verdicts.awaited();
    if awaited == 0 {
        ids.clear();
    } else if ids.len() >= 2 * awaited {
        ids.retain(|id| verdicts.awaits(id));
    }
}
