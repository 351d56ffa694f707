//! Request bodies on their way to the upstream, each read whole (to show
//! the tap before it is sent) within three bounds: its own length (a
//! longer body streams through unread), the total held whole at once
//! across every connection (past it, a body streams through unread too,
//! and stderr says so once), and the time since its headers (a body not
//! whole by then streams on unread as well, rather than being held). The
//! bytes held count against the total until the upstream connection has
//! written them, not merely taken them. A body is cut only when it stops:
//! no byte of it for [`idle`](crate::client::idle), however long it takes
//! as a whole.

// `pub` for the fuzz targets (the crate's `fuzzing` module), which link
// this reader; outside them nothing reaches it.
#![cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::time::{Instant, Sleep};

// Named from the crate's root, not from `super`: the fuzz target
// `request_body` compiles this file at its own root, beside stand-ins.
use crate::client::{Body, BoxError};
use crate::http::note;

/// How long a request's body may take to arrive whole, from its headers,
/// to be held and read; a slower one is sent on as it comes, unread.
pub(crate) const HOLD_WITHIN: Duration = Duration::from_secs(30);

/// The most bytes of request bodies held whole at once, across every
/// connection: four bodies of the longest the tap reads.
pub(crate) const MAX_HELD: usize = 4 * crate::MAX_TAPPED_LINE;

/// For tests only, never documented for use: [`HOLD_WITHIN`] in
/// milliseconds, so that a test of it need not wait 30 s.
const HOLD_WITHIN_KNOB: &str = "MCP_UNKNOWN_KEYS_TEST_BODY_WITHIN_MS";

/// For tests only, never documented for use: [`MAX_HELD`] in bytes, so
/// that a test of it need not send hundreds of megabytes.
const MAX_HELD_KNOB: &str = "MCP_UNKNOWN_KEYS_TEST_MAX_HELD";

/// [`HOLD_WITHIN`], or the test's value: read once.
pub(crate) fn hold_within() -> Duration {
    static WITHIN: OnceLock<Duration> = OnceLock::new();
    *WITHIN.get_or_init(|| knob(HOLD_WITHIN_KNOB).map_or(HOLD_WITHIN, |ms| Duration::from_millis(ms as u64)))
}

fn knob(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

/// The bytes of request bodies held whole, shared by every connection.
pub struct Budget {
    held: AtomicUsize,
    max: usize,
    /// Whether stderr said the budget was reached.
    said_full: AtomicBool,
    /// Whether stderr said a body was too slow to hold.
    said_slow: AtomicBool,
}

impl Budget {
    /// A budget of [`MAX_HELD`] bytes (or the test's value).
    pub fn new() -> Arc<Budget> {
        Budget::of(knob(MAX_HELD_KNOB).unwrap_or(MAX_HELD))
    }

    /// A budget of `max` bytes.
    pub fn of(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            held: AtomicUsize::new(0),
            max,
            said_full: AtomicBool::new(false),
            said_slow: AtomicBool::new(false),
        })
    }

    /// Takes `bytes` more, if they fit.
    fn take(&self, bytes: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|&total| total <= self.max)
            })
            .is_ok()
    }

    /// Bytes held now.
    #[allow(dead_code)] // read by the tests and the fuzz target `request_body`
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }
}

/// Says `text` on stderr, the first time `said` is set.
fn say_once(said: &AtomicBool, text: &str) {
    if !said.swap(true, Ordering::AcqRel) {
        note(text);
    }
}

/// Bytes held against a [`Budget`], given back when dropped.
pub(crate) struct Held {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Held {
    fn new(budget: &Arc<Budget>) -> Held {
        Held {
            budget: budget.clone(),
            bytes: 0,
        }
    }

    /// Holds `bytes` more, if the budget has them.
    fn grow(&mut self, bytes: usize) -> bool {
        let taken = self.budget.take(bytes);
        if taken {
            self.bytes += bytes;
        }
        taken
    }

    /// `bytes`, which give this back once every copy of them is let go:
    /// once the upstream connection has written them (it queues them as
    /// they are, and drops each once written).
    fn keeping(self, bytes: Bytes) -> Bytes {
        Bytes::from_owner(HeldBytes { bytes, _held: self })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Bytes and what they hold of the budget.
struct HeldBytes {
    bytes: Bytes,
    _held: Held,
}

impl AsRef<[u8]> for HeldBytes {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// A request body, as [`read_request`] read it.
pub enum Request {
    /// All of it, held against the budget until it is written.
    Whole(Bytes, Body),
    /// Too long to tap, past the budget, or too slow to hold: sent as it
    /// streams. `head` is what was read of it before (held until written
    /// too), to tell what it is.
    Streamed { head: Bytes, body: Body },
}

/// Why a body could not be read.
#[derive(Debug)]
pub enum Unread {
    /// No byte of it came for this long.
    Idle(Duration),
    /// The client's connection failed.
    Failed(BoxError),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Idle(idle) => write!(
                f,
                "no byte of the request's body came for {} s",
                idle.as_secs_f64()
            ),
            Unread::Failed(error) => write!(f, "{}", crate::client::describe(&**error)),
        }
    }
}

impl std::error::Error for Unread {}

/// A request body: read whole when it is no longer than `limit`, fits the
/// `budget` and is whole by `hold_until` (a JSON-RPC message, to show the
/// tap before it is sent); else what was read is sent, followed by the rest
/// as it comes, untapped. Either way no `idle` time may pass without a
/// byte of it.
pub async fn read_request<B>(
    mut body: B,
    limit: usize,
    budget: &Arc<Budget>,
    hold_until: Instant,
    idle: Duration,
) -> Result<Request, Unread>
where
    B: HttpBody<Data = Bytes> + Send + Sync + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let mut read = BytesMut::new();
    let mut held = Held::new(budget);
    let hold = tokio::time::sleep_until(hold_until);
    tokio::pin!(hold);
    loop {
        let frame = tokio::select! {
            biased;
            frame = tokio::time::timeout(idle, body.frame()) => frame.map_err(|_| Unread::Idle(idle))?,
            () = &mut hold => {
                say_once(&budget.said_slow, &format!(
                    "a request body not whole {} s after its headers was sent on as it came, unread (not audited); said once",
                    hold_within().as_secs_f64()
                ));
                return Ok(streamed(read, held, body, idle));
            }
        };
        let Some(frame) = frame else {
            let bytes = held.keeping(read.freeze());
            return Ok(Request::Whole(bytes.clone(), whole(bytes)));
        };
        let frame = frame.map_err(|error| Unread::Failed(error.into()))?;
        let Some(data) = frame.data_ref() else { continue };
        let fits = held.grow(data.len());
        read.extend_from_slice(data);
        if !fits {
            say_once(
                &budget.said_full,
                &format!(
                    "request bodies held whole at once reached {} MiB: a request was sent on as it streamed, unread (not audited); said once",
                    budget.max >> 20
                ),
            );
        }
        if !fits || read.len() > limit {
            return Ok(streamed(read, held, body, idle));
        }
    }
}

/// What was read of a body, then the rest of it as it comes.
fn streamed<B>(read: BytesMut, held: Held, rest: B, idle: Duration) -> Request
where
    B: HttpBody<Data = Bytes> + Send + Sync + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let head = held.keeping(read.freeze());
    let body = Prefixed {
        prefix: Some(head.clone()),
        rest: Some(rest.map_err(Into::into).boxed()),
        idle,
        waiting: None,
    };
    Request::Streamed {
        head,
        body: body.boxed(),
    }
}

/// What was read of a body, then the rest of it, which may not pause for
/// `idle` or longer.
struct Prefixed {
    prefix: Option<Bytes>,
    rest: Option<Body>,
    idle: Duration,
    /// While the rest is awaited from the client, when it is given up.
    /// The time the upstream takes to want more is not the client's.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl Prefixed {
    /// A whole body.
    fn whole(bytes: Bytes) -> Prefixed {
        Prefixed {
            prefix: Some(bytes),
            rest: None,
            idle: Duration::ZERO,
            waiting: None,
        }
    }
}

impl HttpBody for Prefixed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(prefix) = this.prefix.take()
            && !prefix.is_empty()
        {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        let Some(rest) = &mut this.rest else {
            return Poll::Ready(None);
        };
        if let Poll::Ready(frame) = Pin::new(rest).poll_frame(cx) {
            this.waiting = None;
            return Poll::Ready(frame);
        }
        let idle = this.idle;
        let waiting = this
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
        if waiting.as_mut().poll(cx).is_ready() {
            this.rest = None;
            this.waiting = None;
            return Poll::Ready(Some(Err(Box::new(Unread::Idle(idle)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.as_ref().is_none_or(Bytes::is_empty) && self.rest.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let prefix = self.prefix.as_ref().map_or(0, |prefix| prefix.len() as u64);
        match &self.rest {
            // A whole body: its length is known, as a Content-Length.
            None => SizeHint::with_exact(prefix),
            Some(rest) => {
                let rest = rest.size_hint();
                let mut hint = SizeHint::new();
                hint.set_lower(rest.lower() + prefix);
                if let Some(upper) = rest.upper() {
                    hint.set_upper(upper + prefix);
                }
                hint
            }
        }
    }
}

/// A body of bytes held whole, as the upstream is sent one.
pub(super) fn whole(bytes: Bytes) -> Body {
    Prefixed::whole(bytes).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A body of these pieces, each at the next tick of `every` if any,
    /// then its end; or, `endless`, nothing more.
    struct Pieces {
        pieces: VecDeque<Bytes>,
        endless: bool,
        every: Option<tokio::time::Interval>,
    }

    impl HttpBody for Pieces {
        type Data = Bytes;
        type Error = BoxError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
            if let Some(every) = &mut self.every {
                std::task::ready!(every.poll_tick(cx));
            }
            match self.pieces.pop_front() {
                Some(piece) => Poll::Ready(Some(Ok(Frame::data(piece)))),
                None if self.endless => Poll::Pending,
                None => Poll::Ready(None),
            }
        }
    }

    fn body(pieces: &[&'static str], endless: bool) -> Pieces {
        Pieces {
            pieces: pieces
                .iter()
                .map(|piece| Bytes::from_static(piece.as_bytes()))
                .collect(),
            endless,
            every: None,
        }
    }

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    const IDLE: Duration = Duration::from_secs(30);

    async fn read(pieces: Pieces, limit: usize, budget: &Arc<Budget>) -> Request {
        match read_request(pieces, limit, budget, later(), IDLE).await {
            Ok(request) => request,
            Err(error) => panic!("{error}"),
        }
    }

    async fn sent(body: Body) -> Vec<u8> {
        body.collect().await.unwrap().to_bytes().to_vec()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_body_is_held_against_the_budget_until_every_copy_is_let_go() {
        let budget = Budget::of(10);
        let Request::Whole(bytes, whole) = read(body(&["abc", "def"], false), 100, &budget).await else {
            panic!("read whole")
        };
        assert_eq!(&bytes[..], b"abcdef");
        assert_eq!(budget.held(), 6);
        assert_eq!(whole.size_hint().exact(), Some(6), "sent with its length");
        // Handed on is not written: the connection's copy still holds.
        let mut whole = whole;
        let frame = whole.frame().await.unwrap().unwrap().into_data().unwrap();
        drop(whole);
        drop(bytes);
        assert_eq!(budget.held(), 6, "held while the connection has the bytes");
        drop(frame);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn past_the_budget_or_the_limit_a_body_streams_through_whole() {
        let budget = Budget::of(10);
        let Request::Whole(_, first) = read(body(&["12345678"], false), 100, &budget).await else {
            panic!("the first fits")
        };
        let Request::Streamed { head, body: second } = read(body(&["abc", "def"], false), 100, &budget).await
        else {
            panic!("the second does not")
        };
        assert_eq!(&head[..], b"abc", "what was read before the budget ran out");
        drop(head);
        assert_eq!(budget.held(), 8, "only the first is held");
        assert_eq!(sent(second).await, b"abcdef");
        let Request::Streamed { body: long, .. } = read(body(&["ab", "cd", "ef"], false), 3, &budget).await
        else {
            panic!("too long")
        };
        assert_eq!(sent(long).await, b"abcdef");
        drop(first);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_body_that_stops_is_cut_after_the_idle_time_whether_read_or_streamed() {
        let budget = Budget::of(100);
        let started = Instant::now();
        let cut = read_request(body(&["{"], true), 100, &budget, later(), IDLE).await;
        assert!(matches!(cut, Err(Unread::Idle(_))));
        assert_eq!(started.elapsed(), IDLE);
        assert_eq!(budget.held(), 0);
        // Streamed (past the limit), the rest is cut alike.
        let Request::Streamed { body: rest, .. } = read(body(&["abcd"], true), 2, &budget).await else {
            panic!("streamed")
        };
        let error = rest.collect().await.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("no byte of the request's body came for 30 s"),
            "{error}"
        );
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_streamed_body_is_not_cut_for_the_time_the_upstream_takes() {
        let budget = Budget::of(100);
        let Request::Streamed { body: mut rest, .. } = read(body(&["abcd", "ef"], true), 2, &budget).await
        else {
            panic!("streamed")
        };
        // The upstream takes a piece, then wants the next only a minute later.
        assert!(rest.frame().await.is_some());
        assert!(rest.frame().await.is_some());
        tokio::time::sleep(Duration::from_secs(60)).await;
        let waited = Instant::now();
        assert!(
            rest.frame().await.unwrap().is_err(),
            "the client sent nothing more"
        );
        assert_eq!(
            waited.elapsed(),
            IDLE,
            "counted from when the proxy asked the client"
        );
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_body_slower_than_the_hold_bound_is_let_go_and_streams_on_never_cut() {
        let budget = Budget::of(1 << 20);
        let within = Instant::now() + Duration::from_secs(30);
        // A byte a second, for longer than the test reads.
        let trickle = Pieces {
            every: Some(tokio::time::interval(Duration::from_secs(1))),
            ..body(&[" "; 200], true)
        };
        let Ok(Request::Streamed { body: mut rest, .. }) =
            read_request(trickle, 1 << 20, &budget, within, IDLE).await
        else {
            panic!("streamed on")
        };
        assert_eq!(Instant::now(), within);
        for _ in 0..100 {
            assert!(rest.frame().await.unwrap().is_ok());
        }
        assert_eq!(budget.held(), 0, "nothing held once what was read is sent");
    }
}
