//! `proxy --url URL`: stdio to the host, streamable HTTP to the server.
//!
//! Each line from the host is POSTed as it is; each message the server
//! sends back — a JSON body, or an event of an SSE stream — is written to
//! stdout as one line. Requests go side by side (a slow call holds up no
//! other); a notification or a response is sent only once the message
//! before it was, so that `notifications/initialized` reaches the server
//! before the requests that follow it. The tap sees each line as the stdio
//! proxy shows it one.
//!
//! - [`exchange`] carries one message and its answer, streams included;
//! - [`session`] keeps what the protocol carries from one request to the
//!   next (era, `Mcp-Session-Id`, version) and builds the requests;
//! - [`reply`](super::reply) writes the only bytes the bridge ever authors.

mod exchange;
mod host;
mod one_way;
mod pipe;
mod session;
mod to_host;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{HeaderMap, HeaderValue};
use mcp_unknown_keys::jsonrpc::Id;
use tokio::sync::{Notify, mpsc};
use tokio::task::AbortHandle;

use self::host::HostLine;
use self::one_way::OneWay;
use self::session::{Outbound, Routing, UpstreamSession};
use self::to_host::{ToHost, Writer};
use super::message::{Kind, Leading, Outgoing};
use super::note;
use crate::client;
use crate::client::pool::ResetBeforeAnswer;
use crate::client::{BoxError, Response, Upstream};
use crate::relay::LineTap;
use crate::tap::Tap;

/// How long a notification or a response may take to be accepted before
/// the next message is sent anyway (the first still goes on: only the
/// waiting stops).
const ACCEPT_PATIENCE: Duration = Duration::from_secs(10);

/// On a signal: how long the server gets to take the session's DELETE, and
/// the host to read what is still to be written, before the bridge exits
/// anyway.
const STOP_PATIENCE: Duration = Duration::from_secs(2);

/// The bridge's shared state.
struct Bridge {
    upstream: Upstream,
    session: UpstreamSession,
    tap: Arc<Tap>,
    out: Out,
    /// Requests awaiting their answer, by id: to close a 2026-07-28
    /// request's stream on `notifications/cancelled`, and to know when the
    /// host has nothing left to wait for.
    in_flight: Mutex<HashMap<Id, InFlight>>,
    /// One-way messages still on their way to the server.
    one_way: AtomicUsize,
    /// Wakes the end of the session when a request is answered, or a
    /// one-way message delivered.
    answered: Notify,
    /// The stream of the server's own messages (2025 era), once opened.
    listening: Mutex<Option<AbortHandle>>,
    /// Event streams that answer a one-way message: pumped, not awaited
    /// (but for a moment at exit), and how many are still open.
    aside: Mutex<Vec<AbortHandle>>,
    aside_open: AtomicUsize,
}

struct InFlight {
    task: AbortHandle,
    /// A `subscriptions/listen` stream: it has no answer to wait for.
    endless: bool,
}

/// Runs the bridge until the host has closed stdin and every answer it
/// awaits is written, or SIGHUP, SIGINT, SIGQUIT or SIGTERM comes; then
/// ends the session (DELETE, where there is one).
pub(super) fn run(upstream: Upstream, headers: HeaderMap, tap: Arc<Tap>) -> Result<(), String> {
    let parked = tap.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // The audit is woken once the runtime has nothing left to do: after
        // the message it is to read went on its way, and once per burst.
        .on_thread_park(move || parked.wake())
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let mut signals = super::stop_signals(&runtime);
    // Stdout first: it is used to the last (see `pipe`).
    let (writer, to_host) = Writer::start(&runtime)?;
    let end = to_host.clone();
    let (lines, from_host) = mpsc::channel(64);
    host::start(lines, &runtime)?;
    let bridge = Arc::new(Bridge {
        session: UpstreamSession::new(headers),
        upstream,
        out: Out {
            lines: to_host,
            tap: tap.clone(),
        },
        tap,
        in_flight: Mutex::default(),
        one_way: AtomicUsize::new(0),
        answered: Notify::new(),
        listening: Mutex::new(None),
        aside: Mutex::default(),
        aside_open: AtomicUsize::new(0),
    });
    // The session is a task, not `block_on`'s own future: a task the
    // host's reader wakes runs at once, where waking `block_on`'s future
    // first costs the runtime a look at its driver, a system call per line.
    // (`block_on` waits for the session or a signal: woken twice at most.)
    let mut session = runtime.spawn(bridge.clone().serve(from_host));
    let signalled = runtime.block_on(async {
        let signalled = tokio::select! {
            ended = &mut session => match ended {
                Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
                _ => false,
            },
            _ = super::signalled(&mut signals) => {
                // On this one thread the session is not running now, and
                // once aborted it is never polled again: `close` below
                // has `in_flight` to itself.
                session.abort();
                true
            }
        };
        bridge.close().await;
        signalled
    });
    drop(bridge);
    // Every line queued so far is written (a task still running when the
    // runtime goes is cut short, as it always was). A host that stopped
    // reading holds the writer for ever: after a signal it gets a moment,
    // then the bridge exits without it.
    writer.finish(&runtime, end, signalled.then_some(STOP_PATIENCE));
    drop(runtime);
    Ok(())
}

impl Bridge {
    /// Sends each host line on, in order; returns once stdin is closed and
    /// every request the host awaits is answered.
    async fn serve(self: Arc<Self>, mut from_host: mpsc::Receiver<HostLine>) {
        while let Some(line) = from_host.recv().await {
            match line {
                HostLine::Whole(line) if line.trim_ascii().is_empty() => {}
                HostLine::Whole(line) => self.clone().dispatch(Bytes::from(line)).await,
                HostLine::Long(streamed) => {
                    let leading = Leading::read(streamed.head());
                    self.dispatch_long(streamed.boxed(), leading).await;
                }
            }
        }
        self.all_answered().await;
        let _ = tokio::time::timeout(STOP_PATIENCE, self.aside_ended()).await;
    }

    /// One host line.
    async fn dispatch(self: Arc<Self>, line: Bytes) {
        let message = Outgoing::read(&line);
        // Read (and a warning said) as soon as the message is on its way:
        // not once the server's answer begins, which may be long.
        self.tap.client().show_before(&line);
        match message.kind() {
            Kind::Request => self.request(&message, line.clone()).await,
            Kind::Notification | Kind::Response | Kind::Unreadable => {
                if let Some(cancelled) = self.session.cancels_by_closing(&message) {
                    self.close_stream(cancelled);
                } else {
                    self.send_one_way(&message, line.clone()).await;
                }
            }
        }
    }

    /// Sends a one-way message on a task of its own, and waits up to
    /// [`ACCEPT_PATIENCE`] for the server to take it before the next
    /// message goes: past that, only the waiting stops, never the sending.
    async fn send_one_way(self: &Arc<Self>, message: &Outgoing<'_>, line: Bytes) {
        let one_way = OneWay {
            routing: self.session.route(message),
            declared: message.protocol_version().map(str::to_owned),
            what: message.method().unwrap_or("response").to_owned(),
            message: Outbound::Whole(line),
        };
        self.deliver_aside(one_way).await;
    }

    /// Delivers a one-way message on a task of its own (see
    /// [`Bridge::send_one_way`]).
    async fn deliver_aside(self: &Arc<Self>, one_way: OneWay) {
        let what = one_way.what.clone();
        self.one_way.fetch_add(1, Ordering::SeqCst);
        let bridge = self.clone();
        let delivery = tokio::spawn(async move {
            bridge.clone().deliver_one_way(one_way).await;
            bridge.one_way.fetch_sub(1, Ordering::SeqCst);
            bridge.answered.notify_waiters();
        });
        if tokio::time::timeout(ACCEPT_PATIENCE, delivery).await.is_err() {
            note(&format!(
                "{} has not accepted a {what} within {} s; sending the next message anyway",
                self.upstream.shown(),
                ACCEPT_PATIENCE.as_secs()
            ));
        }
    }

    /// A request: sent on a task of its own, except `initialize`, whose
    /// session every later message needs.
    async fn request(self: &Arc<Self>, message: &Outgoing<'_>, line: Bytes) {
        let exchange = exchange::Exchange::plan(self, message, line);
        if message.method() == Some("initialize") {
            exchange.run(self.clone()).await;
            return;
        }
        self.send_request(exchange, message.method() == Some("subscriptions/listen"));
    }

    /// A line too long to read (longer than [`exchange::MAX_MESSAGE`]): sent as it
    /// streams in, unread, and counted as passed over. Its leading `id` and
    /// `method` tell a request, which is awaited and answered on failure
    /// like any other; the server's answer passes on as for any message.
    async fn dispatch_long(self: &Arc<Self>, body: client::Body, leading: Leading) {
        // The tap says it, and counts it as a call not audited.
        self.tap.client().passed_over();
        if leading.id.is_some() && leading.method.is_some() {
            let endless = leading.method.as_deref() == Some("subscriptions/listen");
            self.send_request(exchange::Exchange::streamed(body, leading), endless);
        } else {
            let one_way = OneWay {
                routing: session::Routing::none(),
                declared: None,
                what: leading.method.unwrap_or_else(|| "message".to_owned()),
                message: Outbound::Streamed(body),
            };
            self.deliver_aside(one_way).await;
        }
    }

    /// Sends a request on a task of its own, awaited at exit unless
    /// `endless`.
    fn send_request(self: &Arc<Self>, exchange: exchange::Exchange, endless: bool) {
        let id = exchange.id().cloned();
        let bridge = self.clone();
        // Boxed: the exchange's future is large, and tokio moves a task's
        // future several times on its way into the task.
        let task = tokio::spawn(Box::pin(exchange.run(bridge)));
        // An id that is neither a string nor a number cannot be matched to
        // an answer: such a request is sent, but not awaited.
        if let Some(id) = id {
            let entry = InFlight {
                task: task.abort_handle(),
                endless,
            };
            self.in_flight().insert(id, entry);
        }
    }

    /// POSTs a message with the headers its routing and the session want;
    /// returns the answer and the session id sent, to tell an expiry. A
    /// whole line a kept connection lost, reset before any answer, goes
    /// again once ([`ResetBeforeAnswer`]).
    async fn post(
        &self,
        message: Outbound,
        routing: &Routing,
        declared: Option<&str>,
    ) -> (Result<Response, BoxError>, Option<HeaderValue>) {
        let again = message.again();
        let (request, sent) = self
            .session
            .post(&self.upstream, message.into_body(), routing, declared);
        match self.upstream.request(request).await {
            Err(error)
                if error.is::<ResetBeforeAnswer>()
                    && let Some(line) = again =>
            {
                let (request, sent) =
                    self.session
                        .post(&self.upstream, session::full(line), routing, declared);
                (self.upstream.request(request).await, sent)
            }
            answered => (answered, sent),
        }
    }

    /// A request is answered (or will never be): forget it.
    fn done(&self, id: &Id) {
        self.in_flight().remove(id);
        self.answered.notify_waiters();
    }

    /// `notifications/cancelled` in the 2026-07-28 era: closing the
    /// request's stream is the cancellation.
    fn close_stream(&self, id: Id) {
        if let Some(request) = self.in_flight().remove(&id) {
            request.task.abort();
        }
    }

    /// Waits until no request the host awaits is left unanswered, and
    /// every one-way message is delivered.
    async fn all_answered(&self) {
        loop {
            let answered = self.answered.notified();
            let awaited = self.in_flight().values().any(|request| !request.endless);
            if !awaited && self.one_way.load(Ordering::SeqCst) == 0 {
                return;
            }
            answered.await;
        }
    }

    /// Waits until every stream that answers a one-way message has ended:
    /// at exit, a short stream's last messages still reach the host, and
    /// [`STOP_PATIENCE`] bounds the wait for one a server keeps open.
    async fn aside_ended(&self) {
        loop {
            let ended = self.answered.notified();
            if self.aside_open.load(Ordering::SeqCst) == 0 {
                return;
            }
            ended.await;
        }
    }

    /// Ends the session: open streams closed, the session deleted.
    async fn close(&self) {
        for (_, request) in self.in_flight().drain() {
            request.task.abort();
        }
        if let Some(listening) = self.listening().take() {
            listening.abort();
        }
        for stream in self.aside().drain(..) {
            stream.abort();
        }
        self.end_session(STOP_PATIENCE).await;
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<Id, InFlight>> {
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn listening(&self) -> std::sync::MutexGuard<'_, Option<AbortHandle>> {
        self.listening.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn aside(&self) -> std::sync::MutexGuard<'_, Vec<AbortHandle>> {
        self.aside.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The host's stdout ([`to_host`]): a host that reads slowly holds up the
/// streams that write to it, never the runtime.
struct Out {
    lines: ToHost,
    tap: Arc<Tap>,
}

impl Out {
    /// Writes one server message as one line, shown to the tap first.
    async fn write(&self, message: &[u8]) {
        let line = super::message::as_line(message);
        self.tap.server().show_before(&line);
        self.lines.send(&line).await;
    }

    /// Writes a message the bridge wrote itself, in the server's place: the
    /// tap is told that the server did not answer.
    async fn write_own(&self, message: &[u8]) {
        self.tap.own_reply(message);
        self.lines.send(message).await;
    }
}
