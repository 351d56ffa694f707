//! The only bytes the bridge authors: the answer to a request that failed
//! on the way (so that the host does not wait for ever), and the stdio
//! form of a subscription the server closed. Each says what happened.

use std::time::Duration;

use hyper::StatusCode;
use serde_json::value::RawValue;

use crate::client::stall::Stalled;
use crate::client::{BoxError, cause, describe};

/// The JSON-RPC code of an error the bridge authors: in the range JSON-RPC
/// leaves to implementations, as the failure is the transport's, not the
/// server's.
pub(super) const TRANSPORT_ERROR: i64 = -32000;

/// How much of a server's error body is quoted.
const QUOTED: usize = 200;

/// Why a request got no answer from the server.
#[derive(Debug)]
pub(super) enum Failure {
    /// The server could not be reached, or the connection failed.
    Unreachable(String),
    /// The server took no byte of the request for this long: given up.
    Stalled(Duration),
    /// The server ended the session (HTTP 404 to a request that carried it).
    Expired,
    /// An HTTP error status without a JSON-RPC answer.
    Status {
        status: StatusCode,
        said: Option<String>,
    },
    /// The stream ended before the answer, and could not be resumed.
    Unanswered(Option<String>),
    /// A resumption of the stream was refused.
    Unresumable(StatusCode),
    /// The server closed a `subscriptions/listen` stream.
    SubscriptionEnded,
    /// The answer was longer than this many bytes: not passed on.
    TooLong(usize),
}

impl Failure {
    /// Why a request could not be sent, or its answer not begin.
    pub(super) fn of_request(error: &BoxError) -> Failure {
        match cause::<Stalled>(&**error) {
            Some(Stalled(idle)) => Failure::Stalled(*idle),
            None => Failure::Unreachable(describe(&**error)),
        }
    }

    /// The failure in words, for stderr and for the host.
    pub(super) fn explain(&self, server: &str, method: &str) -> String {
        let what = if method.is_empty() { "the request" } else { method };
        match self {
            Failure::Unreachable(cause) => format!("cannot reach {server} ({what}): {cause}"),
            Failure::Stalled(idle) => format!(
                "{server} took no byte of {what} for {} s, so it was given up (a request the server takes, however slowly, is never cut)",
                idle.as_secs_f64()
            ),
            Failure::Expired => format!(
                "{server} ended the MCP session (HTTP 404 Not Found to {what}); restart this server in your host to start a new session"
            ),
            Failure::Status { status, said } => {
                let said = said.as_deref().map(|s| format!(": {s}")).unwrap_or_default();
                format!("{server} answered {what} with HTTP {status}{said}")
            }
            Failure::Unanswered(cause) => {
                let cause = cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
                format!("{server} ended the answer to {what} before answering it{cause}")
            }
            Failure::Unresumable(status) => format!(
                "{server} dropped the stream answering {what} and refused to resume it (HTTP {status})"
            ),
            Failure::SubscriptionEnded => format!("{server} closed the stream of {what}"),
            Failure::TooLong(limit) => format!(
                "{server} answered {what} with a message longer than {} MiB, which is not passed on",
                limit >> 20
            ),
        }
    }
}

/// `{"jsonrpc":"2.0","id":ID,"error":{"code":-32000,"message":TEXT}}`.
pub(super) fn error(id: &RawValue, text: &str) -> String {
    let message = serde_json::to_string(&format!("mcp-unknown-keys: {text}")).expect("a string serialises");
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{TRANSPORT_ERROR},"message":{message}}}}}"#,
        id.get()
    )
}

/// `notifications/cancelled` for a subscription: how stdio says the server
/// closed it.
pub(super) fn cancelled(id: &RawValue, text: &str) -> String {
    let reason = serde_json::to_string(&format!("mcp-unknown-keys: {text}")).expect("a string serialises");
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":{reason}}}}}"#,
        id.get()
    )
}

/// What an error body said: a JSON-RPC error's message, or the start of a
/// text, control characters dropped.
pub(super) fn said(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Answer {
        error: Said,
    }
    #[derive(serde::Deserialize)]
    struct Said {
        message: String,
    }
    let text = match serde_json::from_slice::<Answer>(body) {
        Ok(answer) => answer.error.message,
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(QUOTED)
        .collect();
    let clean = clean.trim();
    (!clean.is_empty()).then(|| clean.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn an_error_answers_the_request_by_its_own_id() {
        let line = error(&id(r#""a\"b""#), "cannot reach \"x\"");
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["id"], "a\"b");
        assert_eq!(value["error"]["code"], TRANSPORT_ERROR);
        assert_eq!(value["error"]["message"], "mcp-unknown-keys: cannot reach \"x\"");
        let cancel: serde_json::Value = serde_json::from_str(&cancelled(&id("7"), "closed")).unwrap();
        assert_eq!(cancel["params"]["requestId"], 7);
    }

    #[test]
    fn an_error_body_is_quoted_briefly() {
        assert_eq!(
            said(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: No valid session ID provided"}}"#).as_deref(),
            Some("Bad Request: No valid session ID provided")
        );
        assert_eq!(
            said(b"upstream\nconnect error").as_deref(),
            Some("upstream connect error")
        );
        assert_eq!(said(b"  ").as_deref(), None);
        assert_eq!(said(&[b'x'; 1000]).unwrap().len(), QUOTED);
    }

    #[test]
    fn failures_say_what_happened() {
        let expired = Failure::Expired.explain("http://h/mcp", "tools/call");
        assert!(expired.contains("ended the MCP session (HTTP 404 Not Found to tools/call)"));
        let status = Failure::Status {
            status: StatusCode::BAD_GATEWAY,
            said: None,
        };
        assert_eq!(
            status.explain("http://h/mcp", "tools/list"),
            "http://h/mcp answered tools/list with HTTP 502 Bad Gateway"
        );
    }
}
