//! The tap: learns the catalogue from `tools/list` responses and audits
//! `tools/call` requests, off the relay's byte path.
//!
//! The relays show the tap each complete line. The tap never reads a line
//! on the relay's thread: it decides from a few substring searches whether
//! the line may matter, and if so queues a copy for one audit worker, which
//! reads the lines of both directions in the order the relays saw them (so
//! a listing is learned before a call sent after it is audited). Nothing
//! the worker does can hold a relay: the queue is bounded in bytes and a
//! line that does not fit is passed over at once, counted, never waited
//! for.
//!
//! - the core's [`jsonrpc`](mcp_unknown_keys::jsonrpc) reads a line as the
//!   server's JSON parser would (a pure function, shared with `audit`);
//! - [`queue`] carries copies of lines to the worker;
//! - [`worker`] keeps the listings, audits through the core's `Auditor`,
//!   pairs flagged calls with their answers, counts coverage, findings
//!   and verdicts, and says what it finds through the auditor's sink (the
//!   door's outputs: [`crate::report`]);
//! - [`answers`] holds the ids of the calls awaiting their verdict, and the
//!   relay's cheap check of whether a server line answers one.

mod answers;
mod queue;
mod worker;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::thread;
use std::time::Duration;

use mcp_unknown_keys::audit::{Auditor, Coverage, Findings, Notice, Skip, Summary, Unread, Verdicts};
use memchr::memmem;

use self::queue::{Queue, Source};
use self::worker::{Gates, Worker};
use super::MAX_TAPPED_LINE;
use super::relay::LineTap;
use mcp_unknown_keys::jsonrpc::Id;

/// The most line bytes queued for the audit worker (and held while it reads
/// them). A line that would not fit is passed over: the relay never waits.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;

/// At the end of a session, once the audit has had its time, how long it
/// may take to count the calls in the lines still queued (reading them,
/// not auditing them).
pub(crate) const COUNT_AT_EXIT: Duration = Duration::from_millis(500);

/// The longest server line read as a possible `list_changed` notification
/// while no listing is awaited (the real one is under a hundred bytes):
/// longer lines, tool results among them, need no look.
pub(crate) const MAX_NOTIFICATION_LINE: usize = 1024;

/// Shared by both directions of one proxy.
pub struct Tap {
    shared: Arc<Shared>,
}

/// What the relays and the worker share.
struct Shared {
    queue: Queue,
    /// The counts that decide which server lines are queued. `window`:
    /// how many lines that may be `tools/list` requests are queued unread,
    /// plus how many listings are awaited: while it is not zero, every
    /// server line is queued, for it may be a listing. A relay adds before
    /// the line is forwarded and the worker subtracts after, so a response
    /// always finds the window open. `calls_unread` does the same for the
    /// answers to calls, and `awaited` holds the calls whose answer is
    /// awaited once read.
    gates: Gates,
    unread: UnreadCounts,
    worker: Worker,
}

impl Shared {
    /// Says once, from the worker, that lines were passed over unread.
    fn say_unread(&self) {
        if self.unread.too_long.load(Ordering::Relaxed) > 0 {
            self.worker.notice_once(Notice::LineTooLong {
                limit: MAX_TAPPED_LINE,
            });
        }
        if self.unread.behind.load(Ordering::Relaxed) + self.unread.server_behind.load(Ordering::Relaxed) > 0
        {
            self.worker.notice_once(Notice::FellBehind);
        }
    }
}

/// Lines passed over unread, counted by the relays.
#[derive(Default)]
struct UnreadCounts {
    too_long: AtomicU64,
    too_long_calls: AtomicU64,
    behind: AtomicU64,
    behind_calls: AtomicU64,
    server_behind: AtomicU64,
}

impl Tap {
    /// A tap that audits through `auditor`, on a worker thread of its own,
    /// and says what it finds (warnings, notes, notices, verdicts, the
    /// catalogues installed, the session's summary) through the auditor's
    /// sink.
    pub fn new(auditor: Auditor) -> Tap {
        let shared = Arc::new(Shared {
            queue: Queue::new(MAX_QUEUED_BYTES),
            gates: Gates::default(),
            unread: UnreadCounts::default(),
            worker: Worker::new(auditor),
        });
        let reader = shared.clone();
        thread::Builder::new()
            .name("audit".into())
            .spawn(move || {
                while let Some(entries) = reader.queue.pop_all() {
                    let bytes = entries.iter().map(|entry| entry.line.len()).sum();
                    for entry in &entries {
                        reader.worker.read(entry, &reader.gates);
                    }
                    reader.queue.finished(entries.len() as u64, bytes);
                    reader.say_unread();
                }
            })
            .expect("the audit thread starts");
        Tap { shared }
    }

    /// The client-to-server direction's view of the tap.
    pub fn client(&self) -> ClientLines<'_> {
        ClientLines(&self.shared)
    }

    /// The server-to-client direction's view of the tap.
    pub fn server(&self) -> ServerLines<'_> {
        ServerLines(&self.shared)
    }

    /// Waits until the worker has read every line queued so far, for at
    /// most `within` (`None`: however long it takes). Returns how many lines
    /// it had still to read when the wait ended.
    pub fn settle(&self, within: Option<Duration>) -> u64 {
        self.shared.queue.settle(within)
    }

    /// Per (tool, key), how many audited calls carried that undeclared key
    /// (every call, not only the first one said), and its diagnosed cause:
    /// as far as the worker has read (see [`Tap::settle`]).
    pub fn findings(&self) -> Findings {
        self.shared.worker.findings()
    }

    /// Every `tools/call` found, audited or not and why, as far as the
    /// worker has read (see [`Tap::settle`]); client lines passed over
    /// unread that may have been calls count as calls not audited, under
    /// `unreadable_arguments`.
    pub fn coverage(&self) -> Coverage {
        with_unread(self.shared.worker.coverage(), &self.unread())
    }

    /// What the server did with each call that carried undeclared keys,
    /// counted per (tool, key), as far as the worker has read.
    pub fn verdicts(&self) -> Verdicts<Id> {
        self.shared.worker.verdicts()
    }

    /// Wakes the worker for the lines shown since it was last woken: what
    /// a door that shows lines with [`LineTap::show_before`] calls once they
    /// are on their way (the bridge: each time its runtime goes idle).
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    pub(crate) fn wake(&self) {
        self.shared.queue.wake();
    }

    /// A message the proxy wrote to the client in the server's place: an
    /// error answering a request the server could not be reached for. A
    /// call it answers is unanswered by the server; a listing it answers is
    /// no longer awaited.
    pub fn own_reply(&self, message: &[u8]) {
        if message.len() <= MAX_TAPPED_LINE
            && self.shared.queue.try_push(Source::Proxy, message, false, false)
        {
            self.shared.queue.wake();
        }
    }

    /// The session ended: the worker gets `within` to read what is queued,
    /// then [`COUNT_AT_EXIT`] to count the calls in what is left without
    /// auditing them; the calls still awaiting an answer are judged
    /// unanswered, and the summary goes to the auditor's sink
    /// ([`Sink::summary`](mcp_unknown_keys::audit::Sink::summary)). Every
    /// call the tap read is in the summary's coverage: those it could not
    /// audit in time as not audited (`unreadable_arguments`, as lines
    /// passed over are).
    pub fn summarise(&self, within: Option<Duration>) {
        let mut unsettled = self.settle(within);
        if unsettled > 0 {
            self.shared.worker.end_soon();
            unsettled = self.settle(Some(COUNT_AT_EXIT));
        }
        let (coverage, unsettled_calls) = self.shared.worker.end(&self.shared.gates);
        self.shared.worker.finish(&self.shared.gates);
        let mut unread = self.unread();
        unread.unsettled = unsettled;
        unread.unsettled_calls = unsettled_calls;
        let coverage = with_unread(coverage, &unread);
        let (findings, tally) = (self.findings(), self.shared.worker.tally());
        self.shared
            .worker
            .summarise(&Summary::new(&coverage, &findings, &tally).with_unread(unread));
    }

    /// The lines passed over unread so far.
    pub fn unread(&self) -> Unread {
        let count = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let counts = &self.shared.unread;
        let mut unread = Unread::with_limit(MAX_TAPPED_LINE);
        unread.too_long = count(&counts.too_long);
        unread.too_long_calls = count(&counts.too_long_calls);
        unread.behind = count(&counts.behind);
        unread.behind_calls = count(&counts.behind_calls);
        unread.server_behind = count(&counts.server_behind);
        unread
    }

    /// The tools of the catalogue currently audited against.
    #[cfg(test)]
    fn audited_tools(&self) -> Vec<String> {
        self.settle(None);
        self.shared.worker.audited_tools()
    }
}

/// `coverage`, with the client lines passed over unread that may have been
/// calls, as calls not audited.
fn with_unread(mut coverage: Coverage, unread: &Unread) -> Coverage {
    for _ in 0..unread.calls() {
        coverage.count_unaudited("", Skip::UnreadableArguments);
    }
    coverage
}

impl Drop for Tap {
    /// The worker reads what is queued, then ends.
    fn drop(&mut self) {
        self.shared.queue.close();
    }
}

impl fmt::Debug for Tap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tap")
            .field("window", &self.shared.gates.window.load(Ordering::Relaxed))
            .field("unread", &self.unread())
            .finish_non_exhaustive()
    }
}

/// Lines from the client: those that may be `tools/list`, `tools/call`,
/// `notifications/cancelled`, `tasks/result` or `tasks/cancel` are queued
/// before they are forwarded.
#[derive(Clone, Copy)]
pub struct ClientLines<'a>(&'a Shared);

impl LineTap for ClientLines<'_> {
    fn keep_limit(&self) -> usize {
        MAX_TAPPED_LINE
    }

    fn before_forward(&self, line: &[u8]) -> bool {
        // A method is matched decoded, so a word can hide behind a `\u`
        // escape: a line with one is always read.
        let escaped = has(&ESCAPE, line);
        let tools = tools_words(line);
        let tasks = !tools.any && has(&TASKS, line);
        if !(escaped || tools.any || tasks || has(&CANCELLED, line)) {
            return false;
        }
        let in_window = escaped || tools.list;
        // A `tasks/result` request is held as a call is: the server's
        // answer to it, which may settle a task's call, is queued.
        let may_call = escaped || tasks || (tools.any && has(&CALL, line));
        let gates = &self.0.gates;
        if in_window {
            gates.window.fetch_add(1, Ordering::SeqCst);
        }
        if may_call {
            gates.calls_unread.fetch_add(1, Ordering::SeqCst);
        }
        if self.0.queue.try_push(Source::Client, line, in_window, may_call) {
            return true;
        }
        if in_window {
            gates.window.fetch_sub(1, Ordering::SeqCst);
        }
        if may_call {
            gates.calls_unread.fetch_sub(1, Ordering::SeqCst);
        }
        self.0.unread.behind.fetch_add(1, Ordering::Relaxed);
        // A `tasks/` request passed over is no call not audited.
        if may_call && !tasks {
            self.0.unread.behind_calls.fetch_add(1, Ordering::Relaxed);
        }
        false
    }

    fn after_forward(&self, _line: &[u8]) {
        self.0.queue.wake();
    }

    /// A line passed over with nothing seen of it (an HTTP body too long
    /// to show) may be a call.
    fn passed_over(&self) {
        self.too_long(true);
    }

    /// A line passed over is counted as a call only if its first bytes
    /// may be one: a line whose method they show to be another (a long
    /// notification, a response) is no call.
    fn passed_over_line(&self, head: &[u8]) {
        self.too_long(may_be_call(head));
    }
}

impl ClientLines<'_> {
    fn too_long(&self, may_call: bool) {
        self.0.unread.too_long.fetch_add(1, Ordering::Relaxed);
        if may_call {
            self.0.unread.too_long_calls.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How many first bytes of a line too long to read are looked at for its
/// method.
const HEAD_BYTES: usize = 64 << 10;

/// Whether a line whose first bytes are `head` may be a `tools/call`: not
/// when they show its method (a member `method` of the message itself,
/// written plainly) to be another, or show it to be a response (a member
/// `result` or `error`). A method written with an escape, or not among the
/// first bytes, may be `tools/call`.
fn may_be_call(head: &[u8]) -> bool {
    let head = &head[..head.len().min(HEAD_BYTES)];
    if has(&ESCAPE, head) {
        return true;
    }
    let mut depth = 0usize;
    let mut at = 0;
    while at < head.len() {
        match head[at] {
            b'"' => {
                // A string: skip it, and if it is the message's `method`
                // member, read its value.
                let start = at + 1;
                let Some(len) = string_len(&head[start..]) else {
                    return true;
                };
                at = start + len + 1;
                let key = &head[start..start + len];
                let is_key = head[at..].trim_ascii_start().starts_with(b":");
                if depth == 1 && is_key && matches!(key, b"result" | b"error") {
                    return false;
                }
                if depth == 1 && key == b"method" {
                    let rest = head[at..].trim_ascii_start();
                    let Some(rest) = rest.strip_prefix(b":") else {
                        continue;
                    };
                    let rest = rest.trim_ascii_start();
                    let Some(value) = rest.strip_prefix(b"\"") else {
                        return true;
                    };
                    return match string_len(value) {
                        Some(len) => &value[..len] == b"tools/call",
                        None => true,
                    };
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        at += 1;
    }
    true
}

/// The length of the JSON string text `text` starts with, up to its
/// closing quote (escapes skipped); `None` when it does not end in `text`.
fn string_len(text: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'\\' => at += 2,
            b'"' => return Some(at),
            _ => at += 1,
        }
    }
    None
}

/// Lines from the server: while a listing may be awaited, or a call is
/// queued unread, every line (it may be the listing, or the call's
/// answer); while calls await their verdict, a line whose id is awaited;
/// otherwise only a short line that may be
/// `notifications/tools/list_changed`. Queued before they are forwarded, so
/// the worker reads them before any call the client sends in reply.
#[derive(Clone, Copy)]
pub struct ServerLines<'a>(&'a Shared);

impl ServerLines<'_> {
    /// Every server line is queued.
    fn reads_all(&self) -> bool {
        let gates = &self.0.gates;
        gates.window.load(Ordering::SeqCst) > 0 || gates.calls_unread.load(Ordering::SeqCst) > 0
    }
}

impl LineTap for ServerLines<'_> {
    fn keep_limit(&self) -> usize {
        if self.reads_all() || self.0.gates.awaited.any() {
            MAX_TAPPED_LINE
        } else {
            MAX_NOTIFICATION_LINE
        }
    }

    fn before_forward(&self, line: &[u8]) -> bool {
        let wanted = self.reads_all()
            || (line.len() <= MAX_NOTIFICATION_LINE && (has(&LIST_CHANGED, line) || has(&ESCAPE, line)))
            || self.0.gates.awaited.may_answer(line);
        if !wanted {
            return false;
        }
        if self.0.queue.try_push(Source::Server, line, false, false) {
            return true;
        }
        self.0.unread.server_behind.fetch_add(1, Ordering::Relaxed);
        false
    }

    fn after_forward(&self, _line: &[u8]) {
        self.0.queue.wake();
    }
}

impl fmt::Debug for ClientLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientLines")
    }
}

impl fmt::Debug for ServerLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerLines")
    }
}

/// A word the relays look for. Its searcher is built once: building one per
/// line would cost more than the search.
type Word = LazyLock<memmem::Finder<'static>>;

static ESCAPE: Word = LazyLock::new(|| memmem::Finder::new("\\u"));
static TOOLS: Word = LazyLock::new(|| memmem::Finder::new("tools"));

static CALL: Word = LazyLock::new(|| memmem::Finder::new("call"));
static CANCELLED: Word = LazyLock::new(|| memmem::Finder::new("cancelled"));
static TASKS: Word = LazyLock::new(|| memmem::Finder::new("tasks/"));
static LIST_CHANGED: Word = LazyLock::new(|| memmem::Finder::new("list_changed"));

fn has(word: &Word, line: &[u8]) -> bool {
    word.find(line).is_some()
}

/// What a line's `tools` words may be.
struct ToolsWords {
    /// The line says `tools` at all.
    any: bool,
    /// It says `tools/list`, its slash perhaps written `\/`.
    list: bool,
}

/// One pass over the line for `tools`, looking at what follows each.
fn tools_words(line: &[u8]) -> ToolsWords {
    let mut words = ToolsWords {
        any: false,
        list: false,
    };
    for at in TOOLS.find_iter(line) {
        words.any = true;
        let rest = &line[at + b"tools".len()..];
        if rest.starts_with(b"/list") || rest.starts_with(b"\\/list") {
            words.list = true;
            break;
        }
    }
    words
}

#[cfg(test)]
mod tests;
