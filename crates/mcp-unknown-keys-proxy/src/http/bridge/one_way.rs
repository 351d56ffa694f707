//! What the bridge sends that awaits no answer of the host's — a
//! notification, a response, a line nothing can be read from — and the
//! stream of the server's own messages (2025 era), opened once the session
//! is initialised. Any message the server sends back on them reaches the
//! host as it came.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use hyper::StatusCode;
use hyper::body::Incoming;

use super::Bridge;
use super::exchange::{
    DEFAULT_RETRY, Ended, Exchange, MAX_MESSAGE, MAX_RESUMPTIONS, MAX_RETRY, is_event_stream, read_body,
};
use super::session::{Outbound, Routing};
use crate::client::describe;
use crate::http::note;
use crate::http::reply::{self, Failure};
use crate::http::sse::Parser;

/// A message that awaits no answer, read and routed, ready to send.
pub(super) struct OneWay {
    pub message: Outbound,
    pub routing: Routing,
    pub declared: Option<String>,
    /// The method, or "response".
    pub what: String,
}

impl Bridge {
    /// Sends a one-way message and waits for the server to take it; a body
    /// on a 2xx answer (a JSON message, or an event stream) is passed on to
    /// the host as it came. Nothing is authored for the host: there is no
    /// request to answer.
    pub(super) async fn deliver_one_way(self: Arc<Self>, message: OneWay) {
        let (answer, sent) = self
            .post(message.message, &message.routing, message.declared.as_deref())
            .await;
        let failure = match answer {
            Err(error) => Some(Failure::of_request(&error)),
            Ok(response)
                if response.status() == StatusCode::NOT_FOUND && self.session.expire(sent.as_ref()) =>
            {
                Some(Failure::Expired)
            }
            Ok(response) if response.status().is_success() && is_event_stream(&response) => {
                // Taken: the stream's messages are passed on as they come,
                // but like the GET stream it is not awaited at exit (a
                // server may keep it open for ever).
                self.pump_aside(response.into_body());
                None
            }
            Ok(response) if response.status().is_success() => match read_body(response.into_body()).await {
                Ok(body) if body.trim_ascii().is_empty() => None,
                Ok(body) => {
                    self.out.write(&body).await;
                    None
                }
                Err(failure) => Some(failure),
            },
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
            Some(failure) => note(&failure.explain(self.upstream.shown(), &message.what)),
            None if message.what == "notifications/initialized" => self.clone().listen(),
            None => {}
        }
    }

    /// Forwards the events of a stream that answers no request, on a task
    /// of its own that the end of the session closes.
    fn pump_aside(self: &Arc<Self>, body: Incoming) {
        let bridge = self.clone();
        self.aside_open.fetch_add(1, Ordering::SeqCst);
        let task = tokio::spawn(async move {
            let mut parser = Parser::new(MAX_MESSAGE);
            if let Ended::TooLong = Exchange::listener().pump(&bridge, body, &mut parser).await {
                note(&too_long_a_line(
                    bridge.upstream.shown(),
                    "the answer to a notification",
                ));
            }
            bridge.aside_open.fetch_sub(1, Ordering::SeqCst);
            bridge.answered.notify_waiters();
        });
        let mut aside = self.aside();
        aside.retain(|task| !task.is_finished());
        aside.push(task.abort_handle());
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

    /// Keeps the GET stream open: each time it drops, it is opened again
    /// with `Last-Event-ID` after the server's `retry` delay, doubled on
    /// each attempt in a row that brings nothing; after
    /// [`MAX_RESUMPTIONS`] such attempts, stderr says it is given up.
    async fn listen_until_closed(&self) {
        let mut parser = Parser::new(MAX_MESSAGE);
        let mut failures = 0;
        let mut cause = String::new();
        loop {
            if failures > MAX_RESUMPTIONS {
                note(&format!(
                    "gave up the stream of {}'s own messages after {MAX_RESUMPTIONS} attempts in a row that brought nothing (the last: {cause}); its own notifications and requests no longer reach the host",
                    self.upstream.shown()
                ));
                return;
            }
            if failures > 0 {
                tokio::time::sleep(backoff(&parser, failures)).await;
            }
            let (request, sent) = self.session.get(&self.upstream, parser.last_event_id());
            let response = match self.upstream.request(request).await {
                Ok(response) => response,
                Err(error) => {
                    cause = describe(&*error);
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
            if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                cause = format!("HTTP {status}");
                failures += 1;
                continue;
            }
            if !status.is_success() || !is_event_stream(&response) {
                note(&format!(
                    "{} did not open the stream of its own messages (HTTP {status})",
                    self.upstream.shown()
                ));
                return;
            }
            let before = parser.last_event_id().map(str::to_owned);
            let opened = Instant::now();
            let ended = Exchange::listener()
                .pump(self, response.into_body(), &mut parser)
                .await;
            if matches!(ended, Ended::TooLong) {
                note(&too_long_a_line(
                    self.upstream.shown(),
                    "the stream of its own messages",
                ));
                // The next stream starts afresh, from the last event id read.
                parser.new_stream();
                cause = "a line too long to read".into();
                failures += 1;
                continue;
            }
            let brought = parser.last_event_id() != before.as_deref() || opened.elapsed() >= MAX_RETRY;
            if brought {
                failures = 0;
                tokio::time::sleep(backoff(&parser, 1)).await;
            } else {
                cause = "the stream ended with no new event".into();
                failures += 1;
            }
        }
    }

    /// Ends the session with DELETE (legacy era), if one is open, waiting
    /// no longer than `patience` for the server.
    pub(super) async fn end_session(&self, patience: Duration) {
        if self.session.open_session().is_none() {
            return;
        }
        let request = self.session.delete(&self.upstream);
        let _ = tokio::time::timeout(patience, self.upstream.request(request)).await;
    }
}

/// Stderr's word for a stream let go for a line past the bound.
fn too_long_a_line(server: &str, stream: &str) -> String {
    format!(
        "{server} sent a line longer than {} MiB on {stream}: the stream was closed, and the line not passed on",
        MAX_MESSAGE >> 20
    )
}

/// The wait before the `attempt`th attempt in a row: the server's `retry`
/// (or a default), doubled for each attempt before it, at most
/// [`MAX_RETRY`].
fn backoff(parser: &Parser, attempt: u32) -> Duration {
    let retry = parser.retry().map_or(DEFAULT_RETRY, Duration::from_millis);
    retry
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(MAX_RETRY)
}
