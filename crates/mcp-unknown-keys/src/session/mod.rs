//! One MCP session as the alarm sees it: the messages that pass between a
//! host and a server in, what the alarm says out.
//!
//! A [`Session`] is a state machine with no I/O, no clock, no thread and
//! no lock of its own. A door reads each message with the one JSON-RPC
//! reader ([`jsonrpc::read_line`](crate::jsonrpc::read_line)), hands it to
//! [`Session::read`] with the side it came from, and delivers what the
//! returned [`Step`] says (a warning, verdicts, a catalogue's notes) where
//! it delivers things, with no lock held. What the session decides:
//!
//! - a `tools/list` request is awaited by id (at most
//!   [`MAX_AWAITED_LISTINGS`](crate::limits::MAX_AWAITED_LISTINGS) at
//!   once); only the response answering it is a listing page, which opens
//!   a listing (no cursor) or extends the one being assembled
//!   ([`Listing`]); calls meet the pages listed so far;
//! - a response to an awaited listing that is no listing (an error) keeps
//!   the catalogue in use and abandons the listing being assembled;
//! - `notifications/tools/list_changed` drops the catalogue: calls are not
//!   audited ([`Skip::NoCatalogue`]) until the next listing;
//! - a `tools/call` is audited against the catalogue in use, counted in
//!   the [`Coverage`] and the [`Findings`], and, when it carried undeclared
//!   keys, awaits its answer ([`Verdicts`]): `ignored`, `rejected`, or
//!   `unanswered` when cancelled, answered by the door in the server's
//!   place, or never answered by the end ([`Session::finish`]); an
//!   interim answer (`input_required`) waits for the call's retry, a task
//!   handle for the `tasks/result` that fetches the task's result;
//! - a request under an id another request in flight holds makes the
//!   calls awaited under it [`ambiguous`](crate::audit::Verdict::Ambiguous),
//!   said once ([`Notice::AmbiguousId`]).
//!
//! The catalogue and the said-once memory are the [`Auditor`]'s: the
//! session installs each listing in it (saying no note: the door says
//! them, from [`Step::installed`]). What a door says of a step (notes,
//! [`Notice`]s, the warning, verdicts) goes through one sink:
//! [`Step::deliver`].
//!
//! Three seams serve a door that reads recordings rather than live
//! traffic (the log reader's replay), whose own rules stay its own:
//!
//! - [`Session::read_audited_call`]: a call the door audited on its own
//!   path (catalogues the session does not hold, names as hosts write
//!   them) is counted and awaits its verdict as a call the session audits;
//! - [`Session::take_unrequested_listings`]: a recording of a server's
//!   side alone holds no `tools/list` request, so a listing response
//!   answering none is taken as a page all the same, while the door says so;
//! - [`Session::abandon_listing`]: a catalogue reached the door by another
//!   way (a listing a log kept on its own), which gives up the listing
//!   being assembled.
//!
//! ```
//! use mcp_unknown_keys::audit::{Auditor, Skip};
//! use mcp_unknown_keys::jsonrpc::{Line, read_line};
//! use mcp_unknown_keys::session::{Session, Side};
//!
//! let auditor = Auditor::new().with_sink(());
//! let mut session = Session::new();
//! let mut read = |from, line: &str| {
//!     let Line::Message(message) = read_line(line.as_bytes()) else { unreachable!() };
//!     session.read(&auditor, from, message)
//! };
//! read(Side::Host, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
//! read(
//!     Side::Server,
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{"properties":{"path":{}}}}]}}"#,
//! );
//! let step = read(
//!     Side::Host,
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a","ffset":1}}}"#,
//! );
//! assert_eq!(step.warning().unwrap().unknown_keys, ["ffset"]);
//! let step = read(Side::Server, r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
//! assert_eq!(step.verdicts[0].verdict.as_str(), "ignored");
//! assert_eq!((session.coverage().calls, session.coverage().audited), (1, 1));
//! # let _ = Skip::NoCatalogue;
//! ```

use std::sync::Arc;

use serde_json::Value;

use crate::audit::auditor::Auditor;
use crate::audit::call::{Call, Outcome, Skip};
use crate::audit::catalog::Catalog;
use crate::audit::coverage::Coverage;
use crate::audit::findings::Findings;
use crate::audit::keys::Arguments;
use crate::audit::listing::Listing;
use crate::audit::notice::Notice;
use crate::audit::verdicts::{Answer, Judged, Verdicts};
use crate::audit::warning::Warning;
use crate::jsonrpc::{AwaitedListings, Id, ListingPage, Message};
use crate::trace::TraceContext;

/// Where a message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The host (the MCP client): requests, and notifications such as
    /// `notifications/cancelled`.
    Host,
    /// The server: responses, and notifications such as
    /// `notifications/tools/list_changed`.
    Server,
    /// The door itself, answering a request in the server's place (an
    /// error it could not deliver): the server never answered it.
    Door,
}

/// What one message made the session say. Deliver it with no lock held.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Step {
    /// The catalogue the message installed in the auditor (a listing's
    /// page, or none after `list_changed`): say its notes with
    /// [`Auditor::say_notes`].
    pub installed: Option<Arc<Catalog>>,
    /// What the session says of itself, each for the first time: a call
    /// unaudited for a new reason, an id two requests in flight share.
    pub notices: Vec<Notice>,
    /// The call the message was, when it was one.
    pub call: Option<CallStep>,
    /// The verdicts the message settled.
    pub verdicts: Vec<Judged>,
    /// Whether the session made anything of the message: a `tools/list`
    /// request, `list_changed`, a call, or a response or cancellation that
    /// answered or gave up something awaited. A log reader counts the
    /// records that held nothing of use.
    pub used: bool,
}

impl Step {
    /// The warning to deliver, when the message was a call that carried
    /// a pair said now for the first time.
    pub fn warning(&self) -> Option<&Warning> {
        match &self.call.as_ref()?.outcome {
            Outcome::Audited { warning, .. } => warning.as_ref(),
            Outcome::Skipped(_) => None,
        }
    }

    /// Says what the step holds through `auditor`'s sink, shielded from
    /// its panics: the installed catalogue's notes not said before, the
    /// notices, the warning (with the call's trace context), then the
    /// verdicts (with theirs).
    pub fn deliver(&self, auditor: &Auditor) {
        self.deliver_parts(auditor, None);
    }

    /// [`Step::deliver`], for a door that kept the text of the message
    /// read (`page`: a response's `result`): the catalogue installed, if
    /// any, goes to [`Sink::installed`](crate::audit::Sink::installed)
    /// too, right after its notes, with `page`, the listing page that
    /// completed it (`None` after `list_changed`).
    pub fn deliver_with_page(&self, auditor: &Auditor, page: Option<&str>) {
        self.deliver_parts(auditor, Some(page));
    }

    fn deliver_parts(&self, auditor: &Auditor, page: Option<Option<&str>>) {
        if let Some(installed) = &self.installed {
            auditor.say_notes(installed);
            if let Some(page) = page {
                auditor.say_installed(page, installed);
            }
        }
        for notice in &self.notices {
            auditor.notice(notice);
        }
        if let Some(warning) = self.warning() {
            auditor.warn(warning);
        }
        for judged in &self.verdicts {
            auditor.verdict(judged);
        }
    }
}

/// A call read: how it was audited, and what follows.
#[derive(Debug)]
#[non_exhaustive]
pub struct CallStep {
    /// Audited (with the warning to deliver, if any), or skipped and why.
    pub outcome: Outcome,
    /// It carried undeclared keys or lacked required keys (said before or
    /// not): [`Outcome::is_flagged`].
    pub flagged: bool,
}

/// One MCP session's state: the listings awaited and assembled, every call
/// counted, and the calls awaiting their verdict.
#[derive(Debug, Default)]
pub struct Session {
    awaited: AwaitedListings,
    listing: Listing,
    coverage: Coverage,
    findings: Findings,
    verdicts: Verdicts<Id>,
    skips_said: Vec<Skip>,
    /// Whether an id shared by two requests in flight was said.
    ambiguity_said: bool,
    /// A response answering no awaited request is a listing page all the
    /// same ([`Session::take_unrequested_listings`]).
    unrequested_listings: bool,
}

impl Session {
    /// A session before any message.
    pub fn new() -> Session {
        Session::default()
    }

    /// Acts on one message from `from`, auditing calls through `auditor`
    /// (its catalogue and its said-once memory).
    pub fn read(&mut self, auditor: &Auditor, from: Side, message: Message<'_>) -> Step {
        let mut step = Step::default();
        match (from, message) {
            (Side::Host, Message::ListTools { id, first }) => {
                step.notices.extend(self.shared_id(&id));
                self.awaited.request(id, first);
                step.used = true;
            }
            (
                Side::Host,
                Message::Call {
                    id,
                    name,
                    arguments,
                    meta,
                },
            ) => {
                step = self.call(
                    auditor,
                    &name,
                    arguments.as_deref(),
                    id,
                    meta.map(|meta| meta.get()),
                );
            }
            (Side::Host, Message::TaskResult { id, task }) => {
                step.notices.extend(self.shared_id(&id));
                step.used = self.verdicts.task_result(id, &task);
            }
            (Side::Host, Message::CancelTask { task }) => {
                step.verdicts.extend(self.verdicts.cancel_task(&task));
                step.used = !step.verdicts.is_empty();
            }
            (Side::Host, Message::Cancelled { request }) => {
                let listing = self.awaited.cancel(&request);
                step.verdicts.extend(self.verdicts.cancel(&request));
                step.used = listing || !step.verdicts.is_empty();
            }
            (Side::Server, Message::ListChanged) => {
                // Nothing is audited until the next listing, the first
                // answered from now on (the host may have asked for it
                // before the notification reached it).
                self.listing.abandon();
                step.installed = Some(auditor.install_catalog(Catalog::none()));
                step.used = true;
            }
            (Side::Server | Side::Door, Message::Response { id, result }) => {
                let result = result.map(|raw| raw.get());
                let listing = self.answered(auditor, &id, result, &mut step);
                // The answer is read only for a call that awaits one: most
                // responses (large tool results among them) are not.
                if self.verdicts.awaits(&id) {
                    let judged = match from {
                        Side::Door => self.verdicts.cancel(&id),
                        _ => self.verdicts.answer(&id, Answer::read(result)),
                    };
                    step.verdicts.extend(judged);
                }
                step.used = listing || !step.verdicts.is_empty();
            }
            _ => {}
        }
        step
    }

    /// A call the door audited on a path of its own, with `outcome` what
    /// its auditor said of `call`: for a door whose calls meet catalogues
    /// the session does not hold (the log reader's `--tools` catalogues,
    /// bound to servers, and tool names as hosts write them). It is counted
    /// as [`Session::read`] counts a call it audits, and, when it carried
    /// undeclared keys and has a `key` (the JSON-RPC id read exactly), it
    /// awaits its answer the same way. Returns the step: the call, the
    /// verdicts it settled (the oldest call awaited, judged `unanswered`,
    /// when too many await), and the notice of a reason to skip new to
    /// the session.
    pub fn read_audited_call(&mut self, call: &Call<'_>, key: Option<Id>, outcome: Outcome) -> Step {
        self.coverage.record(call, &outcome);
        self.findings.record(call, &outcome);
        self.pair_audited_call(call, key, outcome)
    }

    /// [`Session::read_audited_call`] for a door that counts calls in
    /// counts of its own (the log reader's report, across inputs): the
    /// call is paired with its answer, and neither counted in
    /// [`Session::coverage`] nor in [`Session::findings`], so that no call
    /// is counted twice.
    pub fn pair_audited_call(&mut self, call: &Call<'_>, key: Option<Id>, outcome: Outcome) -> Step {
        let mut notices: Vec<Notice> = key
            .as_ref()
            .and_then(|key| self.shared_id(key))
            .into_iter()
            .collect();
        let flagged = outcome.is_flagged();
        let verdicts = match key.filter(|_| flagged) {
            Some(key) => self.verdicts.call(key, call, &outcome),
            None => Vec::new(),
        };
        if let Outcome::Skipped(skip) = &outcome
            && !self.skips_said.contains(skip)
        {
            self.skips_said.push(*skip);
            notices.push(Notice::Unaudited {
                tool: call.tool.to_owned(),
                skip: *skip,
            });
        }
        Step {
            call: Some(CallStep { outcome, flagged }),
            notices,
            verdicts,
            used: true,
            ..Step::default()
        }
    }

    /// With `true`, a response that answers no awaited `tools/list` request
    /// is read as a listing page all the same: a further page of the
    /// listing being assembled, or else one opening a new listing. For a
    /// door reading a recording that may hold a server's side alone, which
    /// decides while it is so (until the recording holds a request). Off by
    /// default: a door that sees both sides takes only the answers to the
    /// requests it saw.
    pub fn take_unrequested_listings(&mut self, take: bool) {
        self.unrequested_listings = take;
    }

    /// A catalogue reached the door by another way (a listing a log kept on
    /// its own): the listing being assembled is given up, as a new listing
    /// gives it up, and its further pages are passed over.
    pub fn abandon_listing(&mut self) {
        self.listing.abandon();
    }

    /// Counts a call the door could not hand over (a line too long to
    /// read, or passed over while the audit was behind) as not audited.
    pub fn count_unread_call(&mut self, tool: &str) {
        self.coverage.count_unaudited(tool, Skip::UnreadableArguments);
    }

    /// The session ended: every call still awaiting its answer is
    /// `unanswered`.
    pub fn finish(&mut self) -> Vec<Judged> {
        self.verdicts.finish()
    }

    /// Every call read so far, audited or skipped and why.
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// Every undeclared pair read so far, counted per call.
    pub fn findings(&self) -> &Findings {
        &self.findings
    }

    /// The calls that carried undeclared keys, with their verdicts.
    pub fn verdicts(&self) -> &Verdicts<Id> {
        &self.verdicts
    }

    /// How many `tools/list` requests await their response.
    pub fn awaited_listings(&self) -> usize {
        self.awaited.len()
    }

    /// A response: if it answers an awaited listing (or, while
    /// unrequested listings are taken, is one), a page of it. Whether it
    /// was taken for a listing's answer.
    fn answered(&mut self, auditor: &Auditor, id: &Id, result: Option<&str>, step: &mut Step) -> bool {
        let (page, first) = match self.awaited.answer(id) {
            Some(first) => match result.and_then(ListingPage::read) {
                Some(page) => (page, first),
                None => {
                    // An error, or a result that is no listing: the
                    // catalogue in use stays; the listing being assembled
                    // is given up.
                    self.listing.abandon();
                    return true;
                }
            },
            None if self.unrequested_listings => match result.and_then(ListingPage::read) {
                Some(page) => (page, !self.listing.is_assembling()),
                None => return false,
            },
            None => return false,
        };
        if let Some(catalog) = self.listing.page_listed(&page.tools, first, page.more) {
            step.installed = Some(auditor.install_catalog(catalog));
        }
        true
    }

    /// A request under `id`: should calls awaiting their answer hold the
    /// same id, the answers cannot be told apart, and the calls are
    /// marked ambiguous. The notice to say, the first time in the session.
    fn shared_id(&mut self, id: &Id) -> Option<Notice> {
        let first = self.verdicts.mark_ambiguous(id) && !std::mem::replace(&mut self.ambiguity_said, true);
        first.then(|| Notice::AmbiguousId { id: id.to_string() })
    }

    /// Audits one `tools/call` against the catalogue in use and counts it;
    /// one that carried undeclared keys awaits its answer.
    ///
    /// One that raised a finding is read for the trace context its `meta`
    /// (`params._meta`) carries, which goes with its warning and, once
    /// judged, its verdict: so that a sink exporting spans joins them to
    /// the call's trace. Any other call's `meta` is never read.
    fn call(
        &mut self,
        auditor: &Auditor,
        tool: &str,
        arguments: Option<&str>,
        key: Option<Id>,
        meta: Option<&str>,
    ) -> Step {
        // The id as warnings show it; `key`, read exactly, pairs the call
        // with its answer (and verdicts show it as it came).
        let id = key.as_ref().map(Id::to_value);
        // No `arguments` member is no arguments, as a server runs it: empty
        // text, which a tool requiring keys is audited for as emptied.
        let call = Call {
            tool,
            arguments: Some(Arguments::Json(arguments.unwrap_or_default())),
            id: id.as_ref(),
        };
        let outcome = auditor.audit(&auditor.catalog(), call);
        // Counted and judged with the id as it was written (`1e0`, not
        // the `1.0` a JSON value makes of it).
        let written = key.as_ref().map(|key| Value::String(key.to_string()));
        let call = Call {
            id: written.as_ref(),
            ..call
        };
        let trace = meta
            .filter(|_| outcome.is_flagged())
            .and_then(TraceContext::of_meta);
        // Only a traced call needs its key once the session has it.
        let traced_key = trace.and(key.clone());
        let mut step = self.read_audited_call(&call, key, outcome);
        let Some(trace) = trace else { return step };
        if let Some(CallStep {
            outcome:
                Outcome::Audited {
                    warning: Some(warning),
                    ..
                },
            ..
        }) = &mut step.call
        {
            warning.trace = Some(trace);
        }
        if let Some(key) = traced_key {
            self.verdicts.trace_newest(&key, trace);
        }
        step
    }
}

#[cfg(test)]
mod tests;
