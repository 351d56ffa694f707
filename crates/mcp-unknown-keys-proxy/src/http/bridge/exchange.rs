//! One message to the server and what comes back: a JSON body, or the
//! events of an SSE stream, each written to the host as one line; a stream
//! dropped before its answer is resumed with `Last-Event-ID` where the era
//! has it; a failure is answered so the host never waits in vain.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::StatusCode;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use mcp_unknown_keys::jsonrpc::Id;
use serde_json::value::RawValue;

use super::Bridge;
use super::session::{Era, Outbound, Routing, SESSION_ID};
use crate::client::{Body, Response, describe};
use crate::http::message::{Leading, Outgoing, answer_to};
use crate::http::note;
use crate::http::reply::{self, Failure};
use crate::http::sse::{Event, Parser};

/// How many times a dropped stream is resumed in a row without a message
/// coming through, before the request is answered with an error.
pub(super) const MAX_RESUMPTIONS: u32 = 5;

/// How long to wait before resuming, when the server named no `retry`.
pub(super) const DEFAULT_RETRY: Duration = Duration::from_millis(500);

/// The longest `retry` the bridge honours, and the longest wait between
/// two attempts to open the stream of the server's own messages.
pub(super) const MAX_RETRY: Duration = Duration::from_secs(30);

/// The longest message the bridge reads from the server (a body, or an
/// event's data): the stdio proxy's limit of a line it taps. A longer one
/// is not passed on, and stderr says so; it never grows memory past this.
pub(super) const MAX_MESSAGE: usize = crate::MAX_TAPPED_LINE;

/// How long, and how many bytes, the rest of a stream is read after the
/// answer came, so that its connection goes back to the pool: a connection
/// whose response is dropped before its end is closed (439 connections for
/// 550 calls against a real server). Servers end the stream just after the
/// answer: the answer waits up to [`SETTLE`] for that end, so that the
/// host's next call finds the connection free; the rest is read aside.
const DRAIN: (Duration, usize) = (Duration::from_secs(2), 1 << 20);

/// How long the answer waits for the end of its stream (see [`DRAIN`]).
const SETTLE: Duration = Duration::from_millis(10);

/// A request, read and ready to send.
pub(super) struct Exchange {
    /// The message, taken when it is sent.
    message: Option<Outbound>,
    id: Option<Id>,
    raw_id: Option<Box<RawValue>>,
    method: Option<String>,
    declared: Option<String>,
    routing: Routing,
    first_page: bool,
}

/// How a stream of events ended.
pub(super) enum Ended {
    /// The answer to the request came through.
    Answered,
    /// The stream ended, cleanly or not, without it.
    Early(Option<String>),
    /// The stream sent a line longer than the parser's bound (with or
    /// without its end): it was let go, unread.
    TooLong,
}

impl Exchange {
    /// Reads what sending `message` needs, and notes what it tells the
    /// session.
    pub(super) fn plan(bridge: &Bridge, message: &Outgoing<'_>, line: Bytes) -> Exchange {
        let routing = bridge.session.route(message);
        Exchange {
            message: Some(Outbound::Whole(line)),
            id: message.id().and_then(Id::read),
            raw_id: message.id().map(ToOwned::to_owned),
            method: message.method().map(str::to_owned),
            declared: message.protocol_version().map(str::to_owned),
            first_page: message.method() == Some("tools/list") && !message.has_cursor(),
            routing,
        }
    }

    /// A request too long to read, sent as it streams in: only its
    /// leading `id` and `method` are known, and no header is read from it.
    pub(super) fn streamed(body: Body, leading: Leading) -> Exchange {
        Exchange {
            message: Some(Outbound::Streamed(body)),
            id: leading.id.as_deref().and_then(Id::read),
            raw_id: leading.id,
            method: leading.method,
            declared: None,
            routing: Routing::none(),
            first_page: false,
        }
    }

    pub(super) fn id(&self) -> Option<&Id> {
        self.id.as_ref()
    }

    fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("")
    }

    /// Whether the session learns from the answer ([`Exchange::learn`]),
    /// which is then read before the host gets it: the host's next request
    /// goes with what it taught.
    fn learns(&self) -> bool {
        matches!(self.method(), "initialize" | "tools/list")
    }

    /// Sends a request and writes what answers it.
    pub(super) async fn run(mut self, bridge: Arc<Bridge>) {
        let message = self.message.take().unwrap_or(Outbound::Whole(Bytes::new()));
        let failure = if bridge.session.expired() && self.method() != "initialize" {
            Some(Failure::Expired)
        } else {
            let (response, sent) = bridge
                .post(message, &self.routing, self.declared.as_deref())
                .await;
            match response {
                Err(error) => Some(Failure::of_request(&error)),
                Ok(response) => self.answer(&bridge, response, sent.as_ref()).await.err(),
            }
        };
        if let Some(failure) = failure {
            self.fail(&bridge, &failure).await;
        }
        if let Some(id) = &self.id {
            bridge.done(id);
        }
    }

    /// Reads the server's answer to the request.
    async fn answer(
        &self,
        bridge: &Bridge,
        response: Response,
        sent: Option<&HeaderValue>,
    ) -> Result<(), Failure> {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && bridge.session.expire(sent) {
            return Err(Failure::Expired);
        }
        if self.method() == "initialize" && status.is_success() {
            bridge.session.assigned(response.headers().get(SESSION_ID));
        }
        if status.is_success() && is_event_stream(&response) {
            return self.follow(bridge, response.into_body()).await;
        }
        let body = read_body(response.into_body()).await?;
        let message = status.is_success() && !body.trim_ascii().is_empty();
        if message && !self.learns() {
            // The host gets the message before it is read: it waits for the
            // message, not for the reading, which only tells its answer
            // from another message (after which it is told that its
            // request went unanswered).
            bridge.out.write(&body).await;
            return match self.id.as_ref().and_then(|id| answer_to(&body, id)) {
                Some(_) => Ok(()),
                None => Err(Failure::Unanswered(None)),
            };
        }
        if let Some(result) = self.id.as_ref().and_then(|id| answer_to(&body, id)) {
            self.learn(bridge, result);
            bridge.out.write(&body).await;
            return Ok(());
        }
        if message {
            // Some other message: the host gets it, and the error too, as
            // nothing else will answer its request.
            bridge.out.write(&body).await;
            return Err(Failure::Unanswered(None));
        }
        Err(Failure::Status {
            status,
            said: reply::said(&body),
        })
    }

    /// Forwards an answer's event stream, resuming it (legacy era) when it
    /// drops before the answer came; a resumption that brings events
    /// starts the count of attempts afresh.
    async fn follow(&self, bridge: &Bridge, body: Incoming) -> Result<(), Failure> {
        let mut parser = Parser::new(MAX_MESSAGE);
        let mut ended = self.pump(bridge, body, &mut parser).await;
        let mut attempts = 0;
        loop {
            let why = match ended {
                Ended::Answered => return Ok(()),
                Ended::TooLong => return Err(Failure::TooLong(MAX_MESSAGE)),
                Ended::Early(why) => why,
            };
            let resumable = bridge.session.era() == Era::Legacy && parser.last_event_id().is_some();
            if !resumable || attempts == MAX_RESUMPTIONS {
                return Err(self.unfinished(why));
            }
            let before = parser.last_event_id().map(str::to_owned);
            ended = self.resume(bridge, &mut parser).await?;
            attempts = if parser.last_event_id() == before.as_deref() {
                attempts + 1
            } else {
                0
            };
        }
    }

    /// Forwards the events of one stream until it brings the answer to the
    /// request (the stream is then let go: a resumed stream may stay open),
    /// or ends, or sends a line past the parser's bound (then let go too:
    /// what was held of the line is dropped, and the line is never read).
    pub(super) async fn pump(&self, bridge: &Bridge, mut body: Incoming, parser: &mut Parser) -> Ended {
        loop {
            let frame = match body.frame().await {
                None => return Ended::Early(None),
                Some(Err(error)) => return Ended::Early(Some(describe(&error))),
                Some(Ok(frame)) => frame,
            };
            let Some(chunk) = frame.data_ref() else { continue };
            let mut events = Vec::new();
            let fed = parser.feed(chunk, |event| events.push(event));
            let messages: Vec<Vec<u8>> = events
                .into_iter()
                .filter_map(|event| message_data(event, bridge))
                .collect();
            let mut answered = false;
            for data in &messages {
                if let Some(result) = self.id.as_ref().and_then(|id| answer_to(data, id)) {
                    self.learn(bridge, result);
                    answered = true;
                }
            }
            let rest = if answered { settle(body).await } else { Some(body) };
            for data in &messages {
                bridge.out.write(data).await;
            }
            let Some(rest) = rest else { return Ended::Answered };
            if answered {
                tokio::spawn(drain(rest));
                return Ended::Answered;
            }
            body = rest;
            if fed.is_err() {
                return Ended::TooLong;
            }
        }
    }

    /// Resumes a dropped stream: GET with `Last-Event-ID`, after the delay
    /// the server asked for.
    async fn resume(&self, bridge: &Bridge, parser: &mut Parser) -> Result<Ended, Failure> {
        let retry = parser
            .retry()
            .map_or(DEFAULT_RETRY, Duration::from_millis)
            .min(MAX_RETRY);
        tokio::time::sleep(retry).await;
        let (request, sent) = bridge.session.get(&bridge.upstream, parser.last_event_id());
        let response = bridge
            .upstream
            .request(request)
            .await
            .map_err(|e| Failure::of_request(&e))?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND && bridge.session.expire(sent.as_ref()) {
            return Err(Failure::Expired);
        }
        if !status.is_success() || !is_event_stream(&response) {
            return Err(Failure::Unresumable(status));
        }
        Ok(self.pump(bridge, response.into_body(), parser).await)
    }

    /// What an answer teaches: the negotiated version, tools' headers.
    fn learn(&self, bridge: &Bridge, result: Option<&RawValue>) {
        let Some(result) = result else { return };
        match self.method() {
            "initialize" => {
                #[derive(serde::Deserialize)]
                struct Initialized<'a> {
                    #[serde(borrow, rename = "protocolVersion")]
                    protocol_version: Option<std::borrow::Cow<'a, str>>,
                }
                if let Ok(Initialized {
                    protocol_version: Some(version),
                }) = serde_json::from_str(result.get())
                {
                    bridge.session.negotiated(&version);
                }
            }
            "tools/list" => {
                for (tool, why) in bridge.session.params().learn(result, self.first_page) {
                    note(&format!(
                        "tool {tool} has {why}; its calls go without Mcp-Param headers, and the server may refuse them"
                    ));
                }
            }
            _ => {}
        }
    }

    /// A stream that ended without the answer.
    fn unfinished(&self, why: Option<String>) -> Failure {
        if self.method() == "subscriptions/listen" {
            Failure::SubscriptionEnded
        } else {
            Failure::Unanswered(why)
        }
    }

    /// Tells the host what went wrong, as the answer to its request.
    async fn fail(&self, bridge: &Bridge, failure: &Failure) {
        let text = failure.explain(bridge.upstream.shown(), self.method());
        note(&text);
        if let Some(id) = &self.raw_id {
            let line = match failure {
                Failure::SubscriptionEnded => reply::cancelled(id, &text),
                _ => reply::error(id, &text),
            };
            bridge.out.write_own(line.as_bytes()).await;
        }
    }
}

impl Exchange {
    /// The exchange the messages of the GET stream, or of the answer to a
    /// notification, are forwarded through: it answers no request.
    pub(super) fn listener() -> Exchange {
        Exchange {
            message: None,
            id: None,
            raw_id: None,
            method: None,
            declared: None,
            routing: Routing::none(),
            first_page: false,
        }
    }
}

/// Reads what is left of a stream whose answer came, for up to [`SETTLE`]:
/// `None` once it ended (its connection back in the pool), else the rest.
async fn settle(mut body: Incoming) -> Option<Incoming> {
    let ended = tokio::time::timeout(SETTLE, to_end(&mut body)).await;
    (!matches!(ended, Ok(true))).then_some(body)
}

/// Reads what is left of a stream whose answer came, to its end, so that
/// its connection can carry the next request; a stream that goes on past
/// [`DRAIN`] is let go (its connection closed), as before.
async fn drain(mut body: Incoming) {
    let _ = tokio::time::timeout(DRAIN.0, to_end(&mut body)).await;
}

/// Reads `body` to its end (`true`), or until it fails or brings more than
/// [`DRAIN`]'s bytes (`false`): what it brings after the answer is not
/// passed on, as the stream would have been closed there.
async fn to_end(body: &mut Incoming) -> bool {
    let mut read = 0;
    loop {
        match body.frame().await {
            None => return true,
            Some(Err(_)) => return false,
            Some(Ok(frame)) => {
                read += frame.data_ref().map_or(0, |data| data.len());
                if read > DRAIN.1 {
                    return false;
                }
            }
        }
    }
}

/// The data of an event that carries a message; an event too long to keep
/// is said on stderr, as it is not passed on.
fn message_data(event: Event, bridge: &Bridge) -> Option<Vec<u8>> {
    if !event.is_message() {
        return None;
    }
    let Some(data) = event.data else {
        note(&format!(
            "{} sent an event longer than {} MiB: it was not passed on to the host",
            bridge.upstream.shown(),
            MAX_MESSAGE >> 20
        ));
        return None;
    };
    (!data.trim_ascii().is_empty()).then_some(data)
}

pub(super) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"))
}

/// A whole body, no longer than [`MAX_MESSAGE`].
pub(super) async fn read_body(body: Incoming) -> Result<Bytes, Failure> {
    match Limited::new(body, MAX_MESSAGE).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(Failure::TooLong(MAX_MESSAGE)),
        Err(error) => Err(Failure::Unreachable(describe(&*error))),
    }
}
