//! Request bodies on their way to the upstream, each read whole (to show
//! the tap before it is sent) within three bounds: its own length (a
//! longer body streams through unread), the total held whole at once
//! across every connection (past it, a body streams through unread too,
//! and stderr says so once), and the time since its headers (a body not
//! whole by then is cut, as hyper cuts headers that trickle in).

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

/// How long a request's body may take to arrive whole, from its headers.
pub const BODY_WITHIN: Duration = Duration::from_secs(30);

/// The most bytes of request bodies held whole at once, across every
/// connection: four bodies of the longest the tap reads.
pub const MAX_HELD: usize = 4 * crate::MAX_TAPPED_LINE;

/// For tests only, never documented for use: [`BODY_WITHIN`] in
/// milliseconds, so that a test of it need not wait 30 s.
const BODY_WITHIN_KNOB: &str = "MCP_UNKNOWN_KEYS_TEST_BODY_WITHIN_MS";

/// For tests only, never documented for use: [`MAX_HELD`] in bytes, so
/// that a test of it need not send hundreds of megabytes.
const MAX_HELD_KNOB: &str = "MCP_UNKNOWN_KEYS_TEST_MAX_HELD";

/// [`BODY_WITHIN`], or the test's value: read once.
pub fn body_within() -> Duration {
    static WITHIN: OnceLock<Duration> = OnceLock::new();
    *WITHIN.get_or_init(|| knob(BODY_WITHIN_KNOB).map_or(BODY_WITHIN, |ms| Duration::from_millis(ms as u64)))
}

fn knob(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

/// The bytes of request bodies held whole, shared by every connection.
pub struct Budget {
    held: AtomicUsize,
    max: usize,
    /// Whether stderr said the budget was reached.
    said: AtomicBool,
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
            said: AtomicBool::new(false),
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

/// Bytes held against a [`Budget`], given back when dropped.
pub struct Held {
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
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A request body, as [`read_request`] read it.
pub enum Request {
    /// All of it, held against the budget until it is sent.
    Whole(Bytes, Body),
    /// Too long to tap, or past the budget: sent as it streams.
    Streamed(Body),
}

/// Why a body could not be read.
#[derive(Debug)]
pub enum Unread {
    /// It did not arrive whole within [`body_within`] of its headers.
    TooSlow(Duration),
    /// The client's connection failed.
    Failed(BoxError),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::TooSlow(within) => write!(
                f,
                "the request's body did not arrive whole within {} s of its headers",
                within.as_secs_f64()
            ),
            Unread::Failed(error) => write!(f, "{}", crate::client::describe(&**error)),
        }
    }
}

impl std::error::Error for Unread {}

/// A request body: read whole when it is no longer than `limit` and fits
/// the `budget` (a JSON-RPC message, to show the tap before it is sent);
/// else what was read is sent, followed by the rest as it comes, untapped.
/// Either way it must be whole by `deadline`.
pub async fn read_request<B>(
    mut body: B,
    limit: usize,
    budget: &Arc<Budget>,
    deadline: Instant,
) -> Result<Request, Unread>
where
    B: HttpBody<Data = Bytes> + Send + Sync + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    let mut read = BytesMut::new();
    let mut held = Held::new(budget);
    loop {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .map_err(|_| Unread::TooSlow(body_within()))?;
        let Some(frame) = frame else {
            let bytes = read.freeze();
            let whole = Prefixed::whole(bytes.clone(), held);
            return Ok(Request::Whole(bytes, whole.boxed()));
        };
        let frame = frame.map_err(|error| Unread::Failed(error.into()))?;
        let Some(data) = frame.data_ref() else { continue };
        let fits = held.grow(data.len());
        read.extend_from_slice(data);
        if !fits && !budget.said.swap(true, Ordering::AcqRel) {
            note(&format!(
                "request bodies held whole at once reached {} MiB: a request was sent on as it streamed, unread (not audited); said once",
                budget.max >> 20
            ));
        }
        if !fits || read.len() > limit {
            let rest = Prefixed {
                prefix: Some(read.freeze()),
                held: Some(held),
                rest: Some(body.map_err(Into::into).boxed()),
                deadline: Some(Box::pin(tokio::time::sleep_until(deadline))),
            };
            return Ok(Request::Streamed(rest.boxed()));
        }
    }
}

/// What was read of a body (held against the budget until it is sent),
/// then the rest of it, which must come by the deadline.
struct Prefixed {
    prefix: Option<Bytes>,
    held: Option<Held>,
    rest: Option<Body>,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl Prefixed {
    /// A whole body.
    fn whole(bytes: Bytes, held: Held) -> Prefixed {
        Prefixed {
            prefix: Some(bytes),
            held: Some(held),
            rest: None,
            deadline: None,
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
        if let Some(prefix) = self.prefix.take() {
            // Handed to the connection: no longer the proxy's to hold.
            self.held = None;
            if !prefix.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(prefix))));
            }
        }
        if let Some(deadline) = &mut self.deadline
            && deadline.as_mut().poll(cx).is_ready()
        {
            self.rest = None;
            return Poll::Ready(Some(Err(Box::new(Unread::TooSlow(body_within())))));
        }
        match &mut self.rest {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A body of these pieces, then its end; or, `endless`, nothing more.
    struct Pieces {
        pieces: VecDeque<Bytes>,
        endless: bool,
    }

    impl HttpBody for Pieces {
        type Data = Bytes;
        type Error = BoxError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
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
        }
    }

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    async fn sent(body: Body) -> Vec<u8> {
        body.collect().await.unwrap().to_bytes().to_vec()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_body_is_held_against_the_budget_until_it_is_sent() {
        let budget = Budget::of(10);
        let Ok(Request::Whole(bytes, whole)) =
            read_request(body(&["abc", "def"], false), 100, &budget, later()).await
        else {
            panic!("read whole")
        };
        assert_eq!(&bytes[..], b"abcdef");
        assert_eq!(budget.held(), 6);
        assert_eq!(whole.size_hint().exact(), Some(6), "sent with its length");
        assert_eq!(sent(whole).await, b"abcdef");
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn past_the_budget_or_the_limit_a_body_streams_through_whole() {
        let budget = Budget::of(10);
        let Ok(Request::Whole(_, first)) =
            read_request(body(&["12345678"], false), 100, &budget, later()).await
        else {
            panic!("the first fits")
        };
        let Ok(Request::Streamed(second)) =
            read_request(body(&["abc", "def"], false), 100, &budget, later()).await
        else {
            panic!("the second does not")
        };
        assert_eq!(budget.held(), 8, "only the first is held");
        assert_eq!(sent(second).await, b"abcdef");
        let Ok(Request::Streamed(long)) =
            read_request(body(&["ab", "cd", "ef"], false), 3, &budget, later()).await
        else {
            panic!("too long")
        };
        assert_eq!(sent(long).await, b"abcdef");
        drop(first);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_body_not_whole_by_the_deadline_is_cut() {
        let budget = Budget::of(100);
        let soon = Instant::now() + Duration::from_millis(50);
        let cut = read_request(body(&["{"], true), 100, &budget, soon).await;
        assert!(matches!(cut, Err(Unread::TooSlow(_))));
        assert_eq!(budget.held(), 0);
        // Streamed (past the limit), the rest is cut alike.
        let soon = Instant::now() + Duration::from_millis(50);
        let Ok(Request::Streamed(rest)) = read_request(body(&["abcd"], true), 2, &budget, soon).await else {
            panic!("streamed")
        };
        let error = rest.collect().await.unwrap_err();
        assert!(error.to_string().contains("did not arrive whole"), "{error}");
    }
}
