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

use crate::report::{ReportOptions, Reports};

/// One way in front of an MCP server.
pub trait Door {
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

/// Why a door could not serve: said on stderr, with the exit code.
#[derive(Debug)]
pub struct Failure {
    /// What went wrong, as one line.
    pub message: String,
    /// The exit code: 2 for a command line that cannot work, 1 otherwise.
    pub code: u8,
}

impl Failure {
    /// A failure to say, exiting with `code`.
    pub fn new(message: String, code: u8) -> Failure {
        Failure { message, code }
    }

    /// Says the failure on stderr; the code to exit with.
    pub fn report(self) -> ExitCode {
        eprintln!("mcp-unknown-keys: {}", self.message);
        ExitCode::from(self.code)
    }
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
