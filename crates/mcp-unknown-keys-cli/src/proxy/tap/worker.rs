//! The audit worker: reads the queued lines in order, keeps the listings,
//! audits calls through the core's `Auditor`, and counts what it found.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_unknown_keys::audit::{
    Arguments, Auditor, Call, Coverage, Findings, ListedTools, Listing, Printable,
};
use mcp_unknown_keys::jsonrpc::{Id, Line, Message, absent, members, read_line};
use serde_json::Value;
use serde_json::value::RawValue;

use super::queue::{Entry, From};

/// The most `tools/list` requests awaited at once; the oldest is forgotten
/// beyond it (a server may never answer a request).
pub const MAX_PENDING_LISTINGS: usize = 64;

/// A `tools/list` request is forgotten once the server has sent this many
/// other responses without answering it: while one is awaited every server
/// line is read, so one never answered (or answered with an id it does not
/// match) must not keep them all read.
pub const MAX_RESPONSES_AWAITING: u64 = 256;

/// Where notices go.
type Notices = Box<dyn Fn(&str) + Send + Sync>;

/// The worker's rules and state; its lock is held only between lines and
/// while counting, never while a warning is delivered.
pub struct Worker {
    auditor: Auditor,
    state: Mutex<State>,
    notices: Mutex<Notices>,
}

/// A `tools/list` request awaiting its response.
struct Pending {
    id: Id,
    /// It has no cursor: its response opens a listing.
    first: bool,
    /// The server's responses read before it was sent.
    since: u64,
}

#[derive(Default)]
struct State {
    /// `tools/list` requests awaiting their response, oldest first.
    pending: VecDeque<Pending>,
    /// The server's responses read so far.
    responses: u64,
    /// The listing being assembled.
    listing: Listing,
    findings: Findings,
    coverage: Coverage,
    /// The notices already said, so each is said once.
    said: HashSet<String>,
}

impl Worker {
    pub fn new(auditor: Auditor) -> Worker {
        Worker {
            auditor,
            state: Mutex::default(),
            notices: Mutex::new(Box::new(|notice: &str| {
                let _ = writeln!(std::io::stderr().lock(), "mcp-unknown-keys: {notice}");
            })),
        }
    }

    pub fn set_notices(&self, notices: Notices) {
        *self.notices.lock().unwrap_or_else(PoisonError::into_inner) = notices;
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

    #[cfg(test)]
    pub fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// Reads one queued line and acts on what it is. A bug met reading it
    /// loses that line only: the window is closed and the next line read.
    pub fn read(&self, entry: &Entry, window: &AtomicUsize) {
        let _ = catch_unwind(AssertUnwindSafe(|| match read_line(&entry.line) {
            Line::Message(message) => self.act(entry.from, message, window),
            Line::Batch(messages) => {
                for message in messages {
                    self.act(entry.from, message, window);
                }
            }
            Line::Unreadable => {}
        }));
        if entry.in_window {
            window.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn act(&self, from: From, message: Message<'_>, window: &AtomicUsize) {
        match (from, message) {
            (From::Client, Message::ListTools { id, first }) => self.expect_listing(id, first, window),
            (From::Client, Message::Call { id, name, arguments }) => {
                self.audit(&name, arguments.as_deref(), id.as_ref());
            }
            (From::Client, Message::Cancelled { request }) => self.forget(&request, window),
            (From::Server, Message::ListChanged) => self.list_changed(),
            (From::Server, Message::Response { id, result }) => {
                self.answered(&id, result.map(|raw| raw.0), window);
            }
            _ => {}
        }
    }

    /// A client asks for a listing: remember its id until the response.
    fn expect_listing(&self, id: Id, first: bool, window: &AtomicUsize) {
        let mut state = self.state();
        self.forget_in(&mut state, &id, window);
        if state.pending.len() == MAX_PENDING_LISTINGS {
            state.pending.pop_front();
            window.fetch_sub(1, Ordering::SeqCst);
        }
        window.fetch_add(1, Ordering::SeqCst);
        let since = state.responses;
        state.pending.push_back(Pending { id, first, since });
    }

    /// A client cancelled a request: a listing it was may never be answered.
    fn forget(&self, id: &Id, window: &AtomicUsize) {
        self.forget_in(&mut self.state(), id, window);
    }

    fn forget_in(&self, state: &mut State, id: &Id, window: &AtomicUsize) -> Option<bool> {
        let at = state.pending.iter().position(|pending| pending.id == *id)?;
        window.fetch_sub(1, Ordering::SeqCst);
        state.pending.remove(at).map(|pending| pending.first)
    }

    /// A server answered: if it answers a pending listing, learn from it.
    fn answered(&self, id: &Id, result: Option<&RawValue>, window: &AtomicUsize) {
        let mut state = self.state();
        state.responses += 1;
        let answered = self.forget_in(&mut state, id, window);
        while let Some(oldest) = state.pending.front()
            && state.responses - oldest.since > MAX_RESPONSES_AWAITING
        {
            state.pending.pop_front();
            window.fetch_sub(1, Ordering::SeqCst);
        }
        let Some(first) = answered else {
            return;
        };
        let page = result
            .and_then(|result| members(result.get(), ["tools", "nextCursor"]))
            .and_then(|[tools, next]| Some((ListedTools::read(tools?.get())?, !absent(next))));
        let Some((listed, more)) = page else {
            // An error, or a result that is not a listing: the catalogue in
            // use stays, and a listing being assembled is abandoned.
            state.listing.abandon();
            return;
        };
        let catalog = state.listing.page(&listed.tools, first, more);
        let unsaid: Vec<String> = listed
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

    /// Audits one `tools/call` request, counts it, and delivers its
    /// warning, if any.
    fn audit(&self, tool: &str, arguments: Option<&str>, id: Option<&Value>) {
        let call = Call {
            tool,
            arguments: arguments.map(Arguments::Json),
            id,
        };
        let catalog = self.auditor.catalog();
        let outcome = self.auditor.audit(&catalog, call);
        {
            let mut state = self.state();
            state.coverage.record(&call, &outcome);
            state.findings.record(&call, &outcome);
        }
        if let Some(warning) = outcome.warning() {
            self.auditor.warn(&warning);
        }
    }

    /// Says `notice` unless it was said before.
    pub fn notice_once(&self, notice: &str) {
        if self.state().said.insert(notice.to_owned()) {
            self.notice(notice);
        }
    }

    fn notice(&self, notice: &str) {
        let notices = self.notices.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = catch_unwind(AssertUnwindSafe(|| notices(notice)));
    }
}
