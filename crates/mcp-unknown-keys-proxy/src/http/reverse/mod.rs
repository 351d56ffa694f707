//! `proxy --listen ADDR --upstream URL`: an HTTP reverse proxy in front of a
//! streamable-HTTP MCP server, for hosts that connect by URL.
//!
//! Requests and responses pass through with their status, headers and
//! bytes (`Authorization`, `Mcp-Session-Id`, `Mcp-Param-*` and every other
//! end-to-end header included); the hop-by-hop headers are dropped, as an
//! HTTP proxy must, and `Host` becomes the upstream's. A response streams
//! frame by frame: an SSE event reaches the client as soon as the server
//! sends it. The tap reads a copy of each POSTed message (audits a
//! `tools/call`, notes a `tools/list`) and of each message coming back (learns
//! a listing), one tap per session ([`sessions`]).

mod body;
mod guard;
pub(crate) mod request;
mod sessions;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{
    ACCEPT, ACCEPT_ENCODING, CONNECTION, CONTENT_ENCODING, CONTENT_TYPE, HOST, HeaderMap, HeaderName,
    HeaderValue, ORIGIN, PROXY_AUTHENTICATE, PROXY_AUTHORIZATION, TE, TRAILER, TRANSFER_ENCODING, UPGRADE,
};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use self::body::{Carries, Tapped};
pub(crate) use self::guard::Guard;
use self::guard::Refused;
pub(crate) use self::sessions::Sessions;
use super::message::{Kind, Leading, Outgoing};
use super::note;
use super::reply::{self, Failure};
use super::sse::Parser;
use crate::client::pool::ResetBeforeAnswer;
use crate::client::stall::idle;
use crate::client::{Body, Upstream, cause};
use crate::relay::LineTap;
use crate::tap::Tap;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

/// Headers that belong to one connection, never forwarded (RFC 9110,
/// 7.6.1), besides those `Connection` names.
const HOP_BY_HOP: [HeaderName; 9] = [
    CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    PROXY_AUTHENTICATE,
    PROXY_AUTHORIZATION,
    TE,
    TRAILER,
    TRANSFER_ENCODING,
    UPGRADE,
];

/// The proxy's shared state.
struct Proxy {
    upstream: Upstream,
    /// The user's `--header`s, added to every upstream request.
    headers: HeaderMap,
    sessions: Sessions,
    /// Which `Host` and `Origin` may use the proxy.
    guard: Guard,
    /// The request bodies held whole at once.
    budget: Arc<request::Budget>,
    /// The `Host`s and `Origin`s refused and said on stderr (so many at
    /// most: a page could send endless new ones).
    refused: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// How many refused values are remembered as said; past it, refusals are
/// no longer said.
const REFUSALS_SAID: usize = 256;

/// Serves until SIGHUP, SIGINT, SIGQUIT or SIGTERM, then writes each
/// session's summary.
pub(crate) fn run(
    listen: SocketAddr,
    upstream: Upstream,
    headers: HeaderMap,
    sessions: Sessions,
    guard: Guard,
) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let proxy = Arc::new(Proxy {
        upstream,
        headers,
        sessions,
        guard,
        budget: request::Budget::new(),
        refused: std::sync::Mutex::default(),
    });
    let mut signals = super::stop_signals(&runtime);
    let served = runtime.block_on(async {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        note(&format!(
            "listening on http://{bound}/ in front of {}",
            proxy.upstream.shown()
        ));
        tokio::select! {
            () = accept(listener, proxy.clone()) => {}
            _ = super::signalled(&mut signals) => {}
        }
        Ok(())
    });
    proxy.sessions.end_all();
    served
}

/// The shortest and the longest pause after a failed accept.
const ACCEPT_PAUSE: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(1));

async fn accept(listener: TcpListener, proxy: Arc<Proxy>) {
    let mut pause = ACCEPT_PAUSE.0;
    let mut said = false;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // One connection that failed before it was taken: the next.
            Err(error) if is_one_connection_s(&error) => continue,
            // Out of file descriptors, or of memory: accepting again at
            // once fails again at once, a core kept busy for nothing. The
            // waiting clients stay queued until connections close.
            Err(error) => {
                if !said {
                    said = true;
                    note(&format!(
                        "cannot accept connections ({error}): new clients wait until some close; \
                         retrying at most every {} s (said once)",
                        ACCEPT_PAUSE.1.as_secs()
                    ));
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(ACCEPT_PAUSE.1);
                continue;
            }
        };
        pause = ACCEPT_PAUSE.0;
        let _ = stream.set_nodelay(true);
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| proxy.clone().forward(request));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// An accept error that belongs to one connection (reset before it was
/// taken), not to the listener.
fn is_one_connection_s(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(error.kind(), ConnectionAborted | ConnectionReset | Interrupted)
}

impl Proxy {
    /// One request, to the upstream and back.
    async fn forward(self: Arc<Self>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
        let target = self.target(request.uri());
        let to_endpoint = target.path() == self.upstream.url().path();
        if let Err(refused) = self.guarded(request.method(), request.headers(), to_endpoint) {
            let text = refused.explain();
            self.say_refused(&refused, &text);
            return Ok(plain(refused.status(), &text));
        }
        let (parts, incoming) = request.into_parts();
        let key = self.sessions.key(&parts.headers);
        let (tap, evicted) = self.sessions.tap(&key);
        self.summarise(evicted);
        let client = tap.client();
        // The headers are in: the body has its time to be held from now.
        let hold_until = tokio::time::Instant::now() + request::hold_within();
        let read =
            request::read_request(incoming, client.keep_limit(), &self.budget, hold_until, idle()).await;
        let (body, id, tapped, again) = match read {
            Ok(request::Request::Whole(bytes, body)) => {
                let tapped = client.before_forward(&bytes);
                let message = Outgoing::read(&bytes);
                let id = (message.kind() == Kind::Request).then(|| message.id().map(ToOwned::to_owned));
                (body, id.flatten(), tapped, Some(bytes))
            }
            Ok(request::Request::Streamed { head, body }) => {
                client.passed_over();
                let leading = Leading::read(&head);
                (body, leading.id.filter(|_| leading.method.is_some()), false, None)
            }
            Err(unread) => return Ok(self.failed(&Failed::Body(&unread), None, &tap)),
        };
        let mut upstream = Request::new(body);
        *upstream.method_mut() = parts.method.clone();
        *upstream.uri_mut() = target;
        *upstream.headers_mut() = end_to_end(parts.headers);
        let headers = upstream.headers_mut();
        headers.remove(HOST);
        if to_endpoint {
            // The tap reads the messages of the endpoint's answers: they
            // must come as they are. Other paths keep the client's choice.
            headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        }
        // The user's headers stand for the client's of the same name; a
        // name given twice is sent twice.
        for name in self.headers.keys() {
            headers.remove(name);
        }
        for (name, value) in &self.headers {
            headers.append(name, value.clone());
        }
        // A body held whole can go again, should a kept connection lose it
        // before any answer ([`ResetBeforeAnswer`]).
        let retry = again.map(|bytes| {
            (
                bytes,
                upstream.method().clone(),
                upstream.uri().clone(),
                upstream.headers().clone(),
            )
        });
        let mut answer = if tapped {
            waking_the_audit(self.upstream.request(upstream), &tap).await
        } else {
            self.upstream.request(upstream).await
        };
        if let (Err(error), Some((bytes, method, uri, headers))) = (&answer, retry)
            && error.is::<ResetBeforeAnswer>()
        {
            let mut upstream = Request::new(request::whole(bytes));
            *upstream.method_mut() = method;
            *upstream.uri_mut() = uri;
            *upstream.headers_mut() = headers;
            answer = self.upstream.request(upstream).await;
        }
        let response = match answer {
            Ok(response) => response,
            Err(error) => {
                let failed = match cause::<request::Unread>(&*error) {
                    Some(unread) => Failed::Body(unread),
                    None => Failed::Upstream(Failure::of_request(&error)),
                };
                return Ok(self.failed(&failed, id.as_deref(), &tap));
            }
        };
        let status = response.status();
        // Only the endpoint speaks for the session: a 404 (or a DELETE) on
        // another path (OAuth metadata, say) says nothing of it.
        let ended = to_endpoint
            && ((parts.method == Method::DELETE && status.is_success())
                || (status == StatusCode::NOT_FOUND && matches!(key, sessions::Key::Session(_))));
        if ended {
            // The session is over (deleted, or unknown to the server): its
            // summary now. The 404 goes to the client as it is.
            self.summarise(self.sessions.end(&key));
        }
        let (mut head, incoming) = response.into_parts();
        let carries = carries(&head.headers);
        if matches!(carries, Carries::Nothing) && head.headers.contains_key(CONTENT_ENCODING) && to_endpoint {
            note(&format!(
                "{} answered with a {} body although the proxy asked for none: passed on as it is, unread",
                self.upstream.shown(),
                head.headers
                    .get(CONTENT_ENCODING)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("compressed")
            ));
        }
        head.headers = end_to_end(head.headers);
        let body = Tapped::new(incoming, tap, carries, self.upstream.shown_shared()).boxed();
        Ok(Response::from_parts(head, body))
    }

    /// Checks every `Host`, `Origin` and `Sec-Fetch-Site` the request came
    /// with, and what a GET of the endpoint accepts.
    fn guarded(&self, method: &Method, headers: &HeaderMap, to_endpoint: bool) -> Result<(), Refused> {
        for host in headers.get_all(HOST) {
            self.guard.check(Some(host.as_bytes()), None)?;
        }
        for origin in headers.get_all(ORIGIN) {
            self.guard.check(None, Some(origin.as_bytes()))?;
        }
        let has_origin = headers.contains_key(ORIGIN);
        for site in headers.get_all(SEC_FETCH_SITE) {
            self.guard.check_site(site.as_bytes(), has_origin)?;
        }
        if method == Method::GET
            && to_endpoint
            && !guard::accepts_event_stream(headers.get_all(ACCEPT).iter().map(HeaderValue::as_bytes))
        {
            return Err(Refused::NotEventStream);
        }
        Ok(())
    }

    /// Says a refusal on stderr, once per value refused.
    fn say_refused(&self, refused: &Refused, text: &str) {
        let mut said = self
            .refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if said.len() < REFUSALS_SAID && said.insert(refused.value().to_owned()) {
            note(text);
        }
    }

    /// Writes the summary of a session that ended, on a thread where
    /// blocking is allowed (it settles the audit and writes the log).
    fn summarise(self: &Arc<Self>, ended: Option<Arc<Tap>>) {
        if let Some(tap) = ended {
            let proxy = self.clone();
            tokio::task::spawn_blocking(move || proxy.sessions.summary(&tap));
        }
    }

    /// Where a request goes: the upstream URL for `/` and for the
    /// upstream's own path, the same path on the upstream's origin for any
    /// other (OAuth metadata, say).
    fn target(&self, asked: &Uri) -> Uri {
        let url = self.upstream.url();
        let path = match asked.path() {
            "/" | "" => url.path(),
            path => path,
        };
        let query = asked
            .query()
            .or(if path == url.path() { url.query() } else { None });
        let path_and_query = match query {
            Some(query) => format!("{path}?{query}"),
            None => path.to_owned(),
        };
        let mut parts = url.clone().into_parts();
        parts.path_and_query = path_and_query.parse().ok();
        Uri::from_parts(parts).unwrap_or_else(|_| url.clone())
    }

    /// The proxy's own answer to a request that failed: a JSON-RPC error
    /// answering it when it is a request with an id (shown to the tap as
    /// the proxy's own reply: the server did not answer), plain text
    /// otherwise. The upstream's failures are said on stderr; a client's
    /// own (its body stopped, its connection failed) are its to see.
    fn failed(
        &self,
        failed: &Failed<'_>,
        id: Option<&serde_json::value::RawValue>,
        tap: &Tap,
    ) -> Response<Body> {
        let text = match failed {
            Failed::Body(unread) => unread.to_string(),
            Failed::Upstream(failure) => {
                let text = failure.explain(self.upstream.shown(), "");
                note(&text);
                text
            }
        };
        let mut response = match id {
            Some(id) => {
                let error = reply::error(id, &text);
                tap.own_reply(error.as_bytes());
                let mut response = Response::new(full(Bytes::from(error)));
                *response.status_mut() = failed.status();
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
            None => plain(failed.status(), &text),
        };
        if let Failed::Body(_) = failed {
            // The rest of the body may still trickle in: the connection
            // is not read any further.
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// Why the proxy answers a request itself.
enum Failed<'a> {
    /// The client's body stopped coming, or its connection failed.
    Body(&'a request::Unread),
    /// The upstream could not be reached, or took none of the request.
    Upstream(Failure),
}

impl Failed<'_> {
    fn status(&self) -> StatusCode {
        match self {
            Failed::Body(request::Unread::Idle(_)) => StatusCode::REQUEST_TIMEOUT,
            Failed::Body(request::Unread::Failed(_)) => StatusCode::BAD_REQUEST,
            Failed::Upstream(Failure::Stalled(_)) => StatusCode::GATEWAY_TIMEOUT,
            Failed::Upstream(_) => StatusCode::BAD_GATEWAY,
        }
    }
}

/// What the tap can read in a response body.
fn carries(headers: &HeaderMap) -> Carries {
    let encoded = headers
        .get(CONTENT_ENCODING)
        .is_some_and(|encoding| encoding.as_bytes() != b"identity");
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if encoded {
        Carries::Nothing
    } else if content_type.starts_with("text/event-stream") {
        // Data is kept as the tap asks (`set_limit`), lines bounded alike
        // whatever it asks.
        Carries::Events(Parser::new(0).with_line_limit(crate::MAX_TAPPED_LINE))
    } else if content_type.starts_with("application/json") {
        let length = headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse().ok());
        Carries::Json { length }
    } else {
        Carries::Nothing
    }
}

/// The headers without the hop-by-hop ones.
fn end_to_end(mut headers: HeaderMap) -> HeaderMap {
    // Most messages carry none: one pass over the names finds those to
    // drop, rather than a look-up per name that could be there.
    let mut dropped: Vec<HeaderName> = headers
        .keys()
        .filter(|name| HOP_BY_HOP.contains(name))
        .cloned()
        .collect();
    if dropped.contains(&CONNECTION) {
        let named = headers
            .get_all(CONNECTION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok());
        dropped.extend(named);
    }
    for name in dropped {
        headers.remove(name);
    }
    headers
}

fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from(format!("mcp-unknown-keys: {text}\n"))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// How long a request the tap queued may wait for the server's answer to
/// begin before the audit is woken anyway, so that a warning is said while a
/// slow call still runs.
const WARN_WITHIN: Duration = Duration::from_millis(20);

/// The upstream's answer to a request the tap queued. The audit is woken
/// when the answer begins, or after [`WARN_WITHIN`] if it has not by then,
/// or when the request is dropped (the client went away). Waking it at once
/// for every request cost a fifth of the throughput at 32 requests in
/// flight (the audit thread woken for each message rather than once for a
/// burst of them, on cores the client and the server share).
async fn waking_the_audit<F: Future>(answer: F, tap: &Tap) -> F::Output {
    let _wakes = WakeOnDrop(tap);
    let mut answer = std::pin::pin!(answer);
    tokio::select! {
        biased;
        answered = answer.as_mut() => return answered,
        () = tokio::time::sleep(WARN_WITHIN) => tap.client().after_forward(b""),
    }
    answer.await
}

/// Wakes the audit when dropped: however the wait for an answer ends.
struct WakeOnDrop<'a>(&'a Tap);

impl Drop for WakeOnDrop<'_> {
    fn drop(&mut self) {
        self.0.client().after_forward(b"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_stop_here_and_the_rest_pass() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "keep-alive, x-hop"),
            ("keep-alive", "timeout=5"),
            ("x-hop", "1"),
            ("transfer-encoding", "chunked"),
            ("authorization", "Bearer t"),
            ("mcp-session-id", "s"),
            ("mcp-param-region", "us"),
            ("upgrade", "h2c"),
        ] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let kept = end_to_end(headers);
        let mut names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["authorization", "mcp-param-region", "mcp-session-id"]);
    }

    #[test]
    fn the_root_and_the_upstream_path_go_to_the_endpoint_other_paths_to_its_origin() {
        let proxy = Proxy {
            upstream: Upstream::new("https://mcp.example.com/v1/mcp?tenant=a", &[]).unwrap(),
            headers: HeaderMap::new(),
            guard: Guard::new("127.0.0.1:1".parse().unwrap(), &[]).unwrap(),
            budget: request::Budget::of(0),
            refused: std::sync::Mutex::default(),
            sessions: Sessions::new(
                |_| crate::tap::Tap::new(mcp_unknown_keys::audit::Auditor::new().with_sink(())),
                |_| {},
            ),
        };
        let target = |path: &str| proxy.target(&path.parse().unwrap()).to_string();
        assert_eq!(target("/"), "https://mcp.example.com/v1/mcp?tenant=a");
        assert_eq!(target("/v1/mcp"), "https://mcp.example.com/v1/mcp?tenant=a");
        assert_eq!(target("/v1/mcp?x=1"), "https://mcp.example.com/v1/mcp?x=1");
        assert_eq!(
            target("/.well-known/oauth-protected-resource"),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
    }
}
