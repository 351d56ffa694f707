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
//! client ([`client`], [`tls`]), the SSE reader ([`sse`]), what is read of a
//! message ([`message`], [`mcp_param`]) and the user's headers
//! ([`headers`]) are shared.

mod bridge;
pub(crate) mod client;
mod headers;
mod mcp_param;
mod message;
mod reply;
mod reverse;
mod sse;
mod tls;
pub(crate) mod url;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use self::client::Upstream;
use super::report::Reports;
use super::tap::Tap;

/// The command line of the remote doors, flattened into `proxy`'s.
#[derive(clap::Args, Debug, Default)]
#[group(skip)]
#[command(next_help_heading = "Remote servers (streamable HTTP)")]
pub struct Args {
    /// Bridge stdio to the MCP server at URL (streamable HTTP, both
    /// protocol eras): put this command in a host that only runs stdio
    /// servers.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "listen"])]
    url: Option<String>,
    /// Serve an HTTP reverse proxy at ADDR (such as 127.0.0.1:8808) in front
    /// of --upstream, for hosts that connect by URL.
    #[arg(long, value_name = "ADDR", requires = "upstream", conflicts_with = "command")]
    listen: Option<SocketAddr>,
    /// The MCP endpoint --listen stands in front of.
    #[arg(long, value_name = "URL", requires = "listen")]
    upstream: Option<String>,
    /// Let --listen take an address other than loopback: anyone who reaches
    /// it reaches the upstream server, with the credentials the proxy adds.
    #[arg(long, requires = "listen")]
    allow_non_loopback: bool,
    /// Let web pages of ORIGIN (such as https://app.example.com) use
    /// --listen (repeatable). Requests with another Origin, or whose Host
    /// is neither the listening address nor a loopback name, are refused
    /// (403), as DNS rebinding would send them.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    allow_origins: Vec<String>,
    /// Add a header to every request to the server (repeatable), such as
    /// 'Authorization: Bearer ${TOKEN}': ${VAR} is read from the
    /// environment, and values never appear in logs or errors.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
    /// Trust the CA certificates of FILE (PEM) for the server's TLS, beside
    /// the system's and the bundled Mozilla roots (repeatable).
    #[arg(long = "ca-cert", value_name = "FILE")]
    ca_certs: Vec<PathBuf>,
}

impl Args {
    /// Whether a remote door was asked for, or one of its options given
    /// (which the stdio proxy would otherwise ignore in silence).
    pub fn requested(&self) -> bool {
        self.url.is_some() || self.listen.is_some() || !self.headers.is_empty() || !self.ca_certs.is_empty()
    }

    /// The remote server's URL: `--url`, or `--upstream`.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref().or(self.upstream.as_deref())
    }
}

/// Runs the door asked for; exits 0 once the host is done or a signal
/// ends it, 2 for a command line that cannot work, 1 otherwise.
pub fn run(args: &super::Args) -> ExitCode {
    match door(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("mcp-unknown-keys: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn door(args: &super::Args) -> Result<(), super::Failure> {
    let remote = &args.remote;
    let headers = headers::parse_all(&remote.headers, |name| std::env::var(name).ok())
        .map_err(|e| super::Failure::new(e.to_string(), 2))?;
    let reports = Arc::new(Reports::open(&args.report_options(), args.server_name())?);
    if let Some(template) = &remote.url {
        let url =
            url::expand(template, |name| std::env::var(name).ok()).map_err(|e| super::Failure::new(e, 2))?;
        let upstream = Upstream::new(&url, &remote.ca_certs).map_err(|e| super::Failure::new(e, 2))?;
        let tap = Arc::new(reports.tap(None));
        let outcome = bridge::run(upstream, headers, tap.clone());
        reports.summarise(&tap);
        reports.finish();
        return outcome.map_err(|e| super::Failure::new(e, 1));
    }
    let (Some(listen), Some(url)) = (remote.listen, &remote.upstream) else {
        return Err(super::Failure::new(
            "--header and --ca-cert go with --url URL, or with --listen ADDR --upstream URL".into(),
            2,
        ));
    };
    if !listen.ip().is_loopback() && !remote.allow_non_loopback {
        return Err(super::Failure::new(
            format!(
                "--listen {listen} is not a loopback address: anyone who can reach it could use the server \
                 through the proxy; add --allow-non-loopback to listen there anyway"
            ),
            2,
        ));
    }
    url::check_userinfo(url, "--upstream").map_err(|e| super::Failure::new(e, 2))?;
    let guard = reverse::Guard::new(listen, &remote.allow_origins).map_err(|e| super::Failure::new(e, 2))?;
    let upstream = Upstream::new(url, &remote.ca_certs).map_err(|e| super::Failure::new(e, 2))?;
    let new_tap = {
        let reports = reports.clone();
        move |upstream: String| reports.tap(Some(upstream))
    };
    let summarise = {
        let reports = reports.clone();
        move |tap: &Tap| reports.summarise(tap)
    };
    let sessions = reverse::Sessions::new(new_tap, summarise);
    let served = reverse::run(listen, upstream, headers, sessions, guard);
    reports.finish();
    served.map_err(|e| super::Failure::new(e, 1))
}

/// Says something about the transport on stderr: not a warning, so not
/// prefixed as warnings are.
fn note(text: &str) {
    eprintln!("mcp-unknown-keys remote: {text}");
}

/// The [`STOPPING`](super::signals::STOPPING) signals, listened for from now on (in `runtime`): their
/// default action no longer ends the process at once.
fn stop_signals(runtime: &tokio::runtime::Runtime) -> Vec<(libc::c_int, tokio::signal::unix::Signal)> {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    super::signals::STOPPING
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
