//! One message to the server and what comes back: a JSON body, or the
//! events of an SSE stream, each written to the host as one line; a stream
//! dropped before its answer is resumed with `Last-Event-ID` where the era
//! has it; a failure is answered so the host never waits in vain.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::StatusCode;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use serde_json::value::RawValue;

use super::Bridge;
use super::session::{Era, Routing, SESSION_ID};
use crate::proxy::http::client::{Response, describe};
use crate::proxy::http::message::{Incoming as ServerMessage, Outgoing, RequestId};
use crate::proxy::http::note;
use crate::proxy::http::reply::{self, Failure};
use crate::proxy::http::sse::{Event, Parser};
use crate::proxy::relay::LineTap;

/// How many times a dropped stream is resumed in a row without a message
/// coming through, before the request is answered with an error.
const MAX_RESUMPTIONS: u32 = 5;

/// How long to wait before resuming, when the server named no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_millis(500);

/// The longest `retry` the bridge honours.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// A request, read and ready to send.
pub struct Exchange {
    line: Bytes,
    id: Option<RequestId>,
    raw_id: Option<Box<RawValue>>,
    method: Option<String>,
    declared: Option<String>,
    routing: Routing,
    first_page: bool,
}

/// How a stream of events ended.
enum Ended {
    /// The answer to the request came through.
    Answered,
    /// The stream ended, cleanly or not, without it.
    Early(Option<String>),
}

impl Exchange {
    /// Reads what sending `message` needs, and notes what it tells the
    /// session.
    pub fn plan(bridge: &Bridge, message: &Outgoing<'_>, line: Bytes) -> Exchange {
        let routing = bridge.session.route(message);
        Exchange {
            id: message.id().and_then(RequestId::read),
            raw_id: message.id().map(ToOwned::to_owned),
            method: message.method().map(str::to_owned),
            declared: message.protocol_version().map(str::to_owned),
            first_page: message.method() == Some("tools/list") && !message.has_cursor(),
            routing,
            line,
        }
    }

    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("")
    }

    /// Sends a request and writes what answers it; shows `tapped` to the
    /// tap once the request has gone.
    pub async fn run(self, bridge: Arc<Bridge>, tapped: Option<Bytes>) {
        let failure = if bridge.session.expired() && self.method() != "initialize" {
            Some(Failure::Expired)
        } else {
            let (request, sent) = bridge.session.post(
                &bridge.upstream,
                self.line.clone(),
                &self.routing,
                self.declared.as_deref(),
            );
            let response = bridge.upstream.request(request).await;
            if let Some(line) = &tapped {
                bridge.tap.client().after_forward(line);
            }
            match response {
                Err(error) => Some(Failure::Unreachable(describe(&error))),
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
        let body = read_body(response.into_body())
            .await
            .map_err(Failure::Unreachable)?;
        if self
            .id
            .as_ref()
            .is_some_and(|id| ServerMessage::read(&body).answers(id))
        {
            self.deliver(bridge, &body).await;
            return Ok(());
        }
        if status.is_success() && !body.trim_ascii().is_empty() {
            // Some other message: the host gets it, and the error too, as
            // nothing else will answer its request.
            self.deliver(bridge, &body).await;
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
        let mut parser = Parser::new(usize::MAX);
        let mut ended = self.pump(bridge, body, &mut parser).await;
        let mut attempts = 0;
        loop {
            let why = match ended {
                Ended::Answered => return Ok(()),
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
    /// or ends.
    async fn pump(&self, bridge: &Bridge, mut body: Incoming, parser: &mut Parser) -> Ended {
        loop {
            let frame = match body.frame().await {
                None => return Ended::Early(None),
                Some(Err(error)) => return Ended::Early(Some(describe(&error))),
                Some(Ok(frame)) => frame,
            };
            let Some(chunk) = frame.data_ref() else { continue };
            let mut events = Vec::new();
            parser.feed(chunk, |event| events.push(event));
            let mut answered = false;
            for data in events.into_iter().filter_map(message_data) {
                answered |= self
                    .id
                    .as_ref()
                    .is_some_and(|id| ServerMessage::read(&data).answers(id));
                self.deliver(bridge, &data).await;
            }
            if answered {
                return Ended::Answered;
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
            .map_err(|e| Failure::Unreachable(describe(&e)))?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND && bridge.session.expire(sent.as_ref()) {
            return Err(Failure::Expired);
        }
        if !status.is_success() || !is_event_stream(&response) {
            return Err(Failure::Unresumable(status));
        }
        Ok(self.pump(bridge, response.into_body(), parser).await)
    }

    /// Writes a server message to the host, learning what the bridge needs
    /// from the answers it carries.
    async fn deliver(&self, bridge: &Bridge, message: &[u8]) {
        if let Some(id) = &self.id {
            let read = ServerMessage::read(message);
            if read.answers(id) {
                self.learn(bridge, read.result());
            }
        }
        bridge.out.write(message).await;
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

impl Bridge {
    /// Sends a notification or a response (or a line nothing can be read
    /// from) and waits for the server to take it. Nothing is answered to the
    /// host: there is no request to answer.
    pub async fn deliver_one_way(self: Arc<Self>, message: &Outgoing<'_>, line: Bytes) {
        let routing = self.session.route(message);
        let (request, sent) = self
            .session
            .post(&self.upstream, line, &routing, message.protocol_version());
        let what = message.method().unwrap_or("response").to_owned();
        let failure = match self.upstream.request(request).await {
            Err(error) => Some(Failure::Unreachable(describe(&error))),
            Ok(response)
                if response.status() == StatusCode::NOT_FOUND && self.session.expire(sent.as_ref()) =>
            {
                Some(Failure::Expired)
            }
            Ok(response) if response.status().is_success() => {
                // A body on a notification's answer carries nothing the host
                // waits for; it is read so the connection can be reused.
                let _ = read_body(response.into_body()).await;
                None
            }
            Ok(response) => {
                let status = response.status();
                let body = read_body(response.into_body()).await.unwrap_or_default();
                Some(Failure::Status {
                    status,
                    said: reply::said(&body),
                })
            }
        };
        match failure {
            Some(failure) => note(&failure.explain(self.upstream.shown(), &what)),
            None if what == "notifications/initialized" => self.clone().listen(),
            None => {}
        }
    }

    /// Opens the GET stream of the server's own messages (2025 era), once
    /// per session, where the server offers it.
    fn listen(self: Arc<Self>) {
        let bridge = self.clone();
        let task = tokio::spawn(async move { bridge.listen_until_closed().await });
        if let Some(previous) = self.listening().replace(task.abort_handle()) {
            previous.abort();
        }
    }

    async fn listen_until_closed(&self) {
        let mut parser = Parser::new(usize::MAX);
        let mut failures = 0;
        while failures < MAX_RESUMPTIONS {
            let (request, sent) = self.session.get(&self.upstream, parser.last_event_id());
            let response = match self.upstream.request(request).await {
                Ok(response) => response,
                Err(error) => {
                    note(&format!(
                        "the stream of {}'s own messages failed: {}",
                        self.upstream.shown(),
                        describe(&error)
                    ));
                    failures += 1;
                    continue;
                }
            };
            let status = response.status();
            if status == StatusCode::METHOD_NOT_ALLOWED {
                return; // not offered
            }
            if status == StatusCode::NOT_FOUND && self.session.expire(sent.as_ref()) {
                note(&Failure::Expired.explain(self.upstream.shown(), "its stream"));
                return;
            }
            if !status.is_success() || !is_event_stream(&response) {
                note(&format!(
                    "{} did not open the stream of its own messages (HTTP {status})",
                    self.upstream.shown()
                ));
                return;
            }
            let forwarding = Exchange::listener();
            let before = parser.last_event_id().map(str::to_owned);
            forwarding.pump(self, response.into_body(), &mut parser).await;
            failures = if parser.last_event_id().map(str::to_owned) == before {
                failures + 1
            } else {
                0
            };
            let retry = parser
                .retry()
                .map_or(DEFAULT_RETRY, Duration::from_millis)
                .min(MAX_RETRY);
            tokio::time::sleep(retry).await;
        }
    }

    /// Ends the session with DELETE (legacy era), if one is open.
    pub async fn end_session(&self) {
        if self.session.open_session().is_none() {
            return;
        }
        let request = self.session.delete(&self.upstream);
        let _ = tokio::time::timeout(Duration::from_secs(2), self.upstream.request(request)).await;
    }
}

impl Exchange {
    /// The exchange the GET stream's messages are forwarded through: it
    /// answers no request.
    fn listener() -> Exchange {
        Exchange {
            line: Bytes::new(),
            id: None,
            raw_id: None,
            method: None,
            declared: None,
            routing: Routing::none(),
            first_page: false,
        }
    }
}

/// The data of an event that carries a message.
fn message_data(event: Event) -> Option<Vec<u8>> {
    if !event.is_message() {
        return None;
    }
    event.data.filter(|data| !data.trim_ascii().is_empty())
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"))
}

/// A whole body.
async fn read_body(body: Incoming) -> Result<Bytes, String> {
    body.collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| describe(&e))
}
