//! The remote doors of `proxy`, for MCP servers reached over streamable
//! HTTP (feature `remote`):
//!
//! - `proxy --url URL`: a stdio command for the host, that carries each
//!   message to the server and back ([`bridge`]);
//! - `proxy --listen ADDR --upstream URL`: an HTTP reverse proxy for hosts
//!   that connect by URL ([`reverse`]).
//!
//! Both read copies of the messages with the stdio proxy's [`Tap`], an
//! HTTP body or an SSE event's data shown to it as a line would be, and
//! both pass the bytes of every message through as they came. The HTTP
//! client ([`client`](crate::client), [`tls`](crate::client::tls)), the
//! SSE reader ([`sse`]), what is read of a message ([`message`],
//! [`mcp_param`]) and the user's headers ([`headers`]) are shared.

mod bridge;
mod mcp_param;
mod message;
mod reply;
pub(crate) mod reverse;
pub(crate) mod sse;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use hyper::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use crate::client::{Upstream, headers, url};
use crate::door::{Door, sealed::Sealed};
use crate::failure::Failure;
use crate::report::Reports;
use crate::report::attribution::url_host;
use crate::tap::Tap;

/// `proxy --url URL`: stdio to the host, streamable HTTP to the server.
pub struct Bridge {
    url: String,
    upstream: Upstream,
    headers: HeaderMap,
}

impl Bridge {
    /// The bridge to the server at `url` (`${VAR}` read from the
    /// environment), sending `headers` (`'NAME: VALUE'`, `${VAR}` read from
    /// the environment, values never said) with every request, and trusting
    /// the CA certificates of `ca_certs` beside the system's and Mozilla's.
    pub fn new(url: &str, headers: &[String], ca_certs: &[PathBuf]) -> Result<Bridge, Failure> {
        let url = url::expand(url, |name| std::env::var(name).ok()).map_err(|e| Failure::new(e, 2))?;
        let (url, credentials) = url::take_userinfo(&url);
        let headers = user_headers(headers, credentials)?;
        let upstream = Upstream::new(&url, ca_certs).map_err(|e| Failure::new(e, 2))?;
        Ok(Bridge {
            url,
            upstream,
            headers,
        })
    }
}

impl Sealed for Bridge {}

impl Door for Bridge {
    fn server_name(&self) -> String {
        url_host(&self.url).unwrap_or_default()
    }

    fn remote_url(&self) -> Option<&str> {
        Some(&self.url)
    }

    /// Exits 0 once the host is done or a signal ends the bridge.
    fn serve(self, reports: Arc<Reports>) -> Result<ExitCode, Failure> {
        let tap = Arc::new(reports.tap(None));
        let outcome = bridge::run(self.upstream, self.headers, tap.clone());
        reports.summarise(&tap);
        outcome
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| Failure::new(e, 1))
    }
}

/// `proxy --listen ADDR --upstream URL`: an HTTP reverse proxy in front of
/// a streamable-HTTP server.
pub struct Reverse {
    listen: SocketAddr,
    url: String,
    upstream: Upstream,
    headers: HeaderMap,
    guard: reverse::Guard,
}

impl Reverse {
    /// The reverse proxy listening at `listen` in front of `upstream`, with
    /// `headers` and `ca_certs` as [`Bridge::new`] takes them. Only a
    /// loopback address unless `non_loopback` (anyone who reaches it reaches
    /// the server, with the credentials the proxy adds); web pages of
    /// `origins` may use it, and requests whose `Host` is neither `listen`
    /// nor a loopback name are refused, as DNS rebinding would send them.
    pub fn new(
        listen: SocketAddr,
        upstream: &str,
        non_loopback: bool,
        origins: &[String],
        headers: &[String],
        ca_certs: &[PathBuf],
    ) -> Result<Reverse, Failure> {
        if !listen.ip().is_loopback() && !non_loopback {
            return Err(Failure::new(
                format!(
                    "--listen {listen} is not a loopback address: anyone who can reach it could use the \
                     server through the proxy; add --allow-non-loopback to listen there anyway"
                ),
                2,
            ));
        }
        url::check_userinfo(upstream, "--upstream").map_err(|e| Failure::new(e, 2))?;
        let (url, credentials) = url::take_userinfo(upstream);
        let headers = user_headers(headers, credentials)?;
        let guard = reverse::Guard::new(listen, origins).map_err(|e| Failure::new(e, 2))?;
        let upstream = Upstream::new(&url, ca_certs).map_err(|e| Failure::new(e, 2))?;
        Ok(Reverse {
            listen,
            url,
            upstream,
            headers,
            guard,
        })
    }
}

impl Sealed for Reverse {}

impl Door for Reverse {
    fn server_name(&self) -> String {
        url_host(&self.url).unwrap_or_default()
    }

    fn remote_url(&self) -> Option<&str> {
        Some(&self.url)
    }

    /// Serves until a signal; then writes each session's summary and exits 0.
    fn serve(self, reports: Arc<Reports>) -> Result<ExitCode, Failure> {
        let new_tap = {
            let reports = reports.clone();
            move |upstream: String| reports.tap(Some(upstream))
        };
        let summarise = move |tap: &Tap| reports.summarise(tap);
        let sessions = reverse::Sessions::new(new_tap, summarise);
        reverse::run(self.listen, self.upstream, self.headers, sessions, self.guard)
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| Failure::new(e, 1))
    }
}

/// The user's `--header`s, `${VAR}` read from the environment, and the
/// URL's userinfo as `Authorization` unless a `--header` gives one.
fn user_headers(headers: &[String], credentials: Option<HeaderValue>) -> Result<HeaderMap, Failure> {
    let mut headers = headers::parse_all(headers, |name| std::env::var(name).ok())
        .map_err(|e| Failure::new(e.to_string(), 2))?;
    if let Some(credentials) = credentials
        && !headers.contains_key(AUTHORIZATION)
    {
        headers.insert(AUTHORIZATION, credentials);
    }
    Ok(headers)
}

/// Says something about the transport on stderr: not a warning, so not
/// prefixed as warnings are.
fn note(text: &str) {
    eprintln!("mcp-unknown-keys remote: {text}");
}

/// The [`STOPPING`](crate::signals::STOPPING) signals, listened for from now on (in `runtime`): their
/// default action no longer ends the process at once.
fn stop_signals(runtime: &tokio::runtime::Runtime) -> Vec<(libc::c_int, tokio::signal::unix::Signal)> {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    crate::signals::STOPPING
        .iter()
        .filter_map(|number| Some((*number, signal(SignalKind::from_raw(*number)).ok()?)))
        .collect()
}

/// Resolves with the signal's number when one of `signals` arrives.
async fn signalled(signals: &mut [(libc::c_int, tokio::signal::unix::Signal)]) -> libc::c_int {
    std::future::poll_fn(|cx| {
        for (number, signal) in signals.iter_mut() {
            if signal.poll_recv(cx).is_ready() {
                return std::task::Poll::Ready(*number);
            }
        }
        std::task::Poll::Pending
    })
    .await
}
