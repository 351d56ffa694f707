//! Failures in words: a failed request, a failed handshake, a server that
//! could not be connected to.

use std::fmt;
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

pub(super) fn is_transport_error(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}

/// A failed request in words. A transport's error is given by its own
/// error and causes, without rmcp's `Transport [type name]` wrapper.
pub(super) fn service_error_text(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => error_chain(&*error.error),
        error => error_chain(error),
    }
}

/// A failed handshake in words, like [`service_error_text`].
pub(super) fn initialize_error_text(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (when {context})", error_chain(&*error.error))
        }
        error => error_chain(error),
    }
}

/// An error followed by its causes, each said once: reqwest's "error
/// sending request" keeps "Connection refused" in its sources.
pub(super) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = cause_of(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause_of(cause);
    }
    text
}

/// The error's cause. rmcp's HTTP transport does not give reqwest's error
/// as its source, so it is dug out here.
fn cause_of<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    #[cfg(feature = "http")]
    {
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        if let Some(StreamableHttpError::Client(client)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(client);
        }
    }
    error.source()
}

pub(super) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

pub(super) fn append_tail(message: &mut String, tail: &[String]) {
    if tail.is_empty() {
        message.push_str("; it wrote nothing to stderr");
    } else {
        message.push_str("; the end of its stderr:\n");
        message.push_str(&tail.join("\n"));
    }
}

/// Why an MCP server could not be started or connected to.
#[derive(Debug)]
pub struct ConnectError {
    pub(super) name: String,
    pub(super) reason: String,
    pub(super) stderr_tail: Vec<String>,
}

impl ConnectError {
    /// The last lines the server wrote to stderr before it failed.
    pub fn stderr_tail(&self) -> &[String] {
        &self.stderr_tail
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut message = format!("cannot connect to MCP server `{}`: {}", self.name, self.reason);
        if !self.stderr_tail.is_empty() {
            append_tail(&mut message, &self.stderr_tail);
        }
        f.write_str(&message)
    }
}

impl std::error::Error for ConnectError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_said_with_each_new_cause_once() {
        #[derive(Debug)]
        struct Failure(&'static str, Option<Box<Failure>>);
        impl fmt::Display for Failure {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Failure {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|cause| cause as _)
            }
        }
        let refused = Failure("connection refused", None);
        let connect = Failure("client error (Connect)", Some(Box::new(refused)));
        let echoed = Failure("send failed: client error (Connect)", Some(Box::new(connect)));
        assert_eq!(
            error_chain(&echoed),
            "send failed: client error (Connect): connection refused"
        );
        assert_eq!(error_chain(&Failure("alone", None)), "alone");
    }
}
