//! Response bodies on their way through the reverse proxy: every frame
//! forwarded as it arrives, while the tap is shown the messages they carry.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;

use super::super::note;
use super::super::sse::{LineTooLong, Parser};
use crate::client::BoxError;
use crate::relay::LineTap;
use crate::tap::Tap;

/// How a response body carries messages.
pub(super) enum Carries {
    /// An SSE stream: each event's data is a message.
    Events(Parser),
    /// A JSON body: the whole body is one message, `length` bytes long
    /// when the response said so.
    Json { length: Option<u64> },
    /// Nothing the tap reads (an error page, a compressed body).
    Nothing,
}

/// A response body forwarded frame by frame, the tap shown each message
/// before the frame that completes it goes on.
///
/// An SSE line longer than the parser's bound ends the stream: the client
/// sees it cut (as if the server had dropped it), and stderr says why.
pub(super) struct Tapped {
    inner: Incoming,
    tap: Arc<Tap>,
    carries: Carries,
    /// A JSON body read so far, while the tap may want it.
    json: Option<BytesMut>,
    /// The server, as messages name it.
    upstream: Arc<str>,
    /// The stream was cut: nothing more is read from the server.
    cut: bool,
}

impl Tapped {
    /// `inner`, shown to `tap` as `carries` says, from `upstream`.
    pub(super) fn new(inner: Incoming, tap: Arc<Tap>, carries: Carries, upstream: Arc<str>) -> Tapped {
        let json = matches!(carries, Carries::Json { .. }).then(BytesMut::new);
        Tapped {
            inner,
            tap,
            carries,
            json,
            upstream,
            cut: false,
        }
    }

    /// Shows the tap the messages `chunk` completes.
    fn look(&mut self, chunk: &Bytes) -> Result<(), LineTooLong> {
        let server = self.tap.server();
        match &mut self.carries {
            Carries::Events(parser) => {
                parser.set_limit(server.keep_limit());
                let tap = &self.tap;
                parser.feed(chunk, |event| {
                    if let Some(data) = event
                        .data
                        .filter(|_| event.kind.as_deref().is_none_or(|k| k == "message"))
                    {
                        tap.server().show(&data);
                    }
                })?;
            }
            Carries::Json { length } => {
                let Some(json) = &mut self.json else { return Ok(()) };
                if json.len() + chunk.len() > server.keep_limit() {
                    server.passed_over();
                    self.json = None;
                    return Ok(());
                }
                json.extend_from_slice(chunk);
                if length.is_some_and(|length| json.len() as u64 == length) {
                    self.finish();
                }
            }
            Carries::Nothing => {}
        }
        Ok(())
    }

    /// The body ended: a JSON body is a whole message now.
    fn finish(&mut self) {
        if let Some(json) = self.json.take()
            && !json.is_empty()
        {
            self.tap.server().show(&json);
        }
    }
}

impl HttpBody for Tapped {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.cut {
            return Poll::Ready(None);
        }
        let frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(chunk) = frame.data_ref()
                    && let Err(too_long) = this.look(chunk)
                {
                    this.cut = true;
                    let text = format!(
                        "{} sent an event stream line longer than {} MiB: the stream was cut there, unread",
                        this.upstream,
                        too_long.limit >> 20
                    );
                    note(&text);
                    return Poll::Ready(Some(Err(text.into())));
                }
            }
            None => this.finish(),
            Some(Err(_)) => this.json = None,
        }
        Poll::Ready(frame.map(|frame| frame.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        // A JSON body still held is shown to the tap on the poll that
        // finds its end: ask for that poll.
        self.cut || (self.json.is_none() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
