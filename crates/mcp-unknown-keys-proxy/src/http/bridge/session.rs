//! What the protocol carries from one request to the next, and the
//! requests built from it.
//!
//! - 2025-03-26 to 2025-11-25 (the *legacy* era, opened by `initialize`):
//!   the `Mcp-Session-Id` the server assigned on the `initialize` answer
//!   goes on every later request, with `MCP-Protocol-Version` set to the
//!   version the answer negotiated;
//! - 2026-07-28 (the *modern* era, each request declaring its version in
//!   `_meta`): no session; `MCP-Protocol-Version` is the version the message
//!   declares, and `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` are read from
//!   the message.

use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request};

use super::super::mcp_param::{ParamHeaders, header_text};
use crate::client::{Body, Upstream};
use mcp_unknown_keys::jsonrpc::Id;

use super::super::message::Outgoing;

pub(super) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const EVENTS: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The protocol's state between requests.
pub(super) struct UpstreamSession {
    /// The user's `--header`s.
    headers: HeaderMap,
    state: Mutex<State>,
    /// The `x-mcp-header` annotations of the tools listed.
    params: Mutex<ParamHeaders>,
}

#[derive(Default)]
struct State {
    era: Era,
    /// The session the server assigned (legacy era).
    id: Option<HeaderValue>,
    /// The server ended the session (404): requests are answered with an
    /// error until the host starts a new one with `initialize`.
    expired: bool,
    /// The version to send when a message declares none: the negotiated one
    /// (legacy), or the last one declared (modern).
    version: Option<HeaderValue>,
}

/// Which protocol era the host speaks, as its messages show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Era {
    /// No `initialize` and no versioned request yet.
    #[default]
    Unknown,
    /// 2025-03-26 to 2025-11-25: opened by `initialize`.
    Legacy,
    /// 2026-07-28: each request declares its version.
    Modern,
}

/// The headers one message goes with, read from it before it is sent.
pub(super) struct Routing {
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Routing {
    /// No headers: a message of the server's own stream.
    pub(super) fn none() -> Routing {
        Routing { headers: Vec::new() }
    }
}

impl UpstreamSession {
    pub(super) fn new(headers: HeaderMap) -> UpstreamSession {
        UpstreamSession {
            headers,
            state: Mutex::default(),
            params: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn params(&self) -> MutexGuard<'_, ParamHeaders> {
        self.params.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The era.
    pub(super) fn era(&self) -> Era {
        self.state().era
    }

    /// Notes what a message tells of the era, and reads the headers it goes
    /// with. An `initialize` starts a new legacy session.
    pub(super) fn route(&self, message: &Outgoing<'_>) -> Routing {
        let mut state = self.state();
        let declared = message.protocol_version();
        if message.method() == Some("initialize") {
            *state = State {
                era: Era::Legacy,
                ..State::default()
            };
        } else if let Some(version) = declared {
            state.era = Era::Modern;
            state.version = HeaderValue::from_str(version).ok();
        }
        let mut headers = Vec::new();
        if state.era != Era::Modern {
            return Routing { headers };
        }
        if let Some(method) = message.method().and_then(|m| HeaderValue::from_str(m).ok()) {
            headers.push((MCP_METHOD, method));
        }
        if let Some(name) = message.routed_name()
            && let Ok(name) = HeaderValue::from_str(&header_text(name))
        {
            headers.push((MCP_NAME, name));
        }
        if let Some(tool) = message.tool() {
            headers.extend(self.params().headers(tool, message.arguments()));
        }
        Routing { headers }
    }

    /// The request a 2026-07-28 `notifications/cancelled` gives up: on HTTP,
    /// that request's stream is closed instead of the notification being
    /// sent.
    pub(super) fn cancels_by_closing(&self, message: &Outgoing<'_>) -> Option<Id> {
        if self.era() != Era::Modern {
            return None;
        }
        message.cancelled_request().and_then(Id::read)
    }

    /// Keeps the session the `initialize` answer assigned.
    pub(super) fn assigned(&self, id: Option<&HeaderValue>) {
        self.state().id = id.cloned();
    }

    /// Keeps the version the `initialize` answer negotiated.
    pub(super) fn negotiated(&self, version: &str) {
        self.state().version = HeaderValue::from_str(version).ok();
    }

    /// The server answered 404 to a request in this session: it is over.
    /// Returns whether there was a session to expire.
    pub(super) fn expire(&self, sent: Option<&HeaderValue>) -> bool {
        let mut state = self.state();
        match (&state.id, sent) {
            (Some(id), Some(sent)) if id == sent => {
                state.expired = true;
                true
            }
            _ => false,
        }
    }

    /// Whether the server ended the session.
    pub(super) fn expired(&self) -> bool {
        self.state().expired
    }

    /// The session to end with DELETE on exit, if one is open.
    pub(super) fn open_session(&self) -> Option<HeaderValue> {
        let state = self.state();
        state.id.clone().filter(|_| !state.expired)
    }

    /// A POST of `body`, with the headers its routing and the session want.
    /// Returns the session id sent, if any, to tell an expiry.
    pub(super) fn post(
        &self,
        upstream: &Upstream,
        body: Body,
        routing: &Routing,
        declared: Option<&str>,
    ) -> (Request<Body>, Option<HeaderValue>) {
        let mut request = self.base(upstream, Method::POST, body);
        let headers = request.headers_mut();
        headers.insert(ACCEPT, BOTH);
        headers.insert(CONTENT_TYPE, JSON);
        if let Some(version) = declared.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(PROTOCOL_VERSION, version);
        }
        for (name, value) in &routing.headers {
            headers.append(name.clone(), value.clone());
        }
        let sent = headers.get(SESSION_ID).cloned();
        (request, sent)
    }

    /// A GET of the server's event stream, resuming after `last_event_id`.
    pub(super) fn get(
        &self,
        upstream: &Upstream,
        last_event_id: Option<&str>,
    ) -> (Request<Body>, Option<HeaderValue>) {
        let mut request = self.base(upstream, Method::GET, empty());
        let headers = request.headers_mut();
        headers.insert(ACCEPT, EVENTS);
        if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, id);
        }
        let sent = headers.get(SESSION_ID).cloned();
        (request, sent)
    }

    /// A DELETE of the session.
    pub(super) fn delete(&self, upstream: &Upstream) -> Request<Body> {
        self.base(upstream, Method::DELETE, empty())
    }

    /// A request with the user's headers, the session and the version.
    fn base(&self, upstream: &Upstream, method: Method, body: Body) -> Request<Body> {
        let mut request = Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = upstream.url().clone();
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        let state = self.state();
        if let Some(id) = state.id.clone().filter(|_| !state.expired) {
            headers.insert(SESSION_ID, id);
        }
        if let Some(version) = state.version.clone() {
            headers.insert(PROTOCOL_VERSION, version);
        }
        request
    }
}

/// What a POST carries: a whole host line, which can be sent again, or a
/// line too long to hold, as it streams in.
pub(super) enum Outbound {
    /// A line read whole.
    Whole(Bytes),
    /// A line longer than the bridge holds, sent as stdin brings it.
    Streamed(Body),
}

impl Outbound {
    /// The line again, if it can be sent again.
    pub(super) fn again(&self) -> Option<Bytes> {
        match self {
            Outbound::Whole(line) => Some(line.clone()),
            Outbound::Streamed(_) => None,
        }
    }

    /// The request body.
    pub(super) fn into_body(self) -> Body {
        match self {
            Outbound::Whole(line) => full(line),
            Outbound::Streamed(body) => body,
        }
    }
}

/// A body in one piece.
pub(super) fn full(body: Bytes) -> Body {
    Full::new(body).map_err(|never| match never {}).boxed()
}

fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream() -> Upstream {
        Upstream::new("http://127.0.0.1:9/mcp", &[]).unwrap()
    }

    fn header(request: &Request<Body>, name: &str) -> Option<String> {
        request
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }

    fn post(session: &UpstreamSession, line: &str) -> Request<Body> {
        let message = Outgoing::read(line.as_bytes());
        let routing = session.route(&message);
        session
            .post(
                &upstream(),
                full(Bytes::from(line.to_owned())),
                &routing,
                message.protocol_version(),
            )
            .0
    }

    #[test]
    fn a_legacy_session_sends_its_id_and_negotiated_version_after_initialize() {
        let mut user = HeaderMap::new();
        user.insert("authorization", HeaderValue::from_static("Bearer t"));
        let session = UpstreamSession::new(user);
        let initialize = post(
            &session,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        );
        assert_eq!(header(&initialize, "mcp-session-id"), None);
        assert_eq!(header(&initialize, "mcp-protocol-version"), None);
        assert_eq!(header(&initialize, "authorization").as_deref(), Some("Bearer t"));
        assert_eq!(
            header(&initialize, "accept").as_deref(),
            Some("application/json, text/event-stream")
        );
        session.assigned(Some(&HeaderValue::from_static("abc")));
        session.negotiated("2025-11-25");
        let call = post(
            &session,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
        );
        assert_eq!(header(&call, "mcp-session-id").as_deref(), Some("abc"));
        assert_eq!(
            header(&call, "mcp-protocol-version").as_deref(),
            Some("2025-11-25")
        );
        assert_eq!(header(&call, "mcp-method"), None);
        assert!(session.expire(Some(&HeaderValue::from_static("abc"))));
        assert_eq!(session.open_session(), None);
        let after = post(&session, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert_eq!(header(&after, "mcp-session-id"), None);
    }

    #[test]
    fn a_modern_request_carries_the_headers_its_message_names() {
        let session = UpstreamSession::new(HeaderMap::new());
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Ünïcode","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let call = post(&session, line);
        assert_eq!(session.era(), Era::Modern);
        assert_eq!(
            header(&call, "mcp-protocol-version").as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(header(&call, "mcp-method").as_deref(), Some("tools/call"));
        assert_eq!(
            header(&call, "mcp-name").as_deref(),
            Some("=?base64?w5xuw69jb2Rl?=")
        );
        assert_eq!(header(&call, "mcp-session-id"), None);
        let cancel = Outgoing::read(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        assert!(session.cancels_by_closing(&cancel).is_some());
    }
}
