//! The contract every door keeps, and the one way a door is run.
//!
//! A door stands in front of one MCP server: it carries the bytes between
//! host and server unchanged and in order, shows each whole message to a
//! tap ([`Reports::tap`]: `client().show(..)` for what the host sent,
//! `server().show(..)` for what the server sent; a byte stream goes through
//! `relay::LineTap`), and writes each session's summary
//! ([`Reports::summarise`]). The tap audits off the byte path: a door never
//! waits for it. Everything a door needs that can fail before the session
//! starts (parsing its addresses, blocking signals) is done when it is
//! built, so [`run`] opens the reports only for a door that can serve.

use std::process::ExitCode;
use std::sync::Arc;

use crate::failure::Failure;
use crate::report::{ReportOptions, Reports};

/// One way in front of an MCP server: the stdio proxy ([`Stdio`](crate::Stdio)),
/// the bridge ([`Bridge`](crate::Bridge)) and the reverse proxy
/// ([`Reverse`](crate::Reverse)).
///
/// Sealed on purpose: a door serves through this crate's reports and tap,
/// whose types stay private, so no door can be written outside it. A new
/// door is added here (docs/architecture.md, "Add a door").
pub trait Door: sealed::Sealed {
    /// The name the server goes by in the log when the user gives none:
    /// the command's base name, or the URL's host.
    fn server_name(&self) -> String;

    /// The server's URL, for a door that reaches it by one (OTLP names it).
    fn remote_url(&self) -> Option<&str> {
        None
    }

    /// Serves until the host or the server is done, reporting through
    /// `reports`; the status the process should exit with.
    fn serve(self, reports: Arc<Reports>) -> Result<ExitCode, Failure>;
}

/// Runs `door` with the reports `options` ask for: opens them, serves, and
/// closes them (the log flushed, OTLP sent); a failure is said on stderr.
pub fn run(door: impl Door, options: &ReportOptions<'_>) -> ExitCode {
    let options = ReportOptions {
        remote_url: options.remote_url.or(door.remote_url()),
        ..*options
    };
    let server = options.name.map_or_else(|| door.server_name(), str::to_owned);
    let reports = match Reports::open(&options, server) {
        Ok(reports) => Arc::new(reports),
        Err(failure) => return failure.report(),
    };
    let served = door.serve(reports.clone());
    reports.finish();
    served.unwrap_or_else(Failure::report)
}

/// The seal: only this crate's doors implement [`Door`].
pub(crate) mod sealed {
    /// Implemented by each door of this crate, and nothing else.
    pub trait Sealed {}
}
