//! The proxy engine of mcp-unknown-keys: doors that stand in front of an MCP
//! server, carry every byte unchanged, and show a copy of each message to
//! the session core, which audits each `tools/call` against the tool's
//! declared schema.
//!
//! Three doors, one contract ([`Door`]), one tap, one set of reports:
//!
//! - [`Stdio`]: runs the server as a child over stdio and stands in its place
//!   (`mcp-unknown-keys proxy -- COMMAND`);
//! - `Bridge` (feature `remote`): stdio to the host, streamable HTTP to the
//!   server (`proxy --url URL`);
//! - `Reverse` (feature `remote`): an HTTP reverse proxy in front of a
//!   streamable-HTTP server (`proxy --listen ADDR --upstream URL`).
//!
//! [`run`] opens the reports a run is asked for ([`ReportOptions`]: stderr,
//! `--log`, `--otlp`, `--state-dir`), serves the door, and says why it failed if it did.
//!
//! Inside: `relay` copies bytes and shows whole lines to a `tap`, which
//! queues copies for an audit worker driving the core's
//! `mcp_unknown_keys::session::Session`; `report` sends what it finds to
//! stderr, the log and OTLP, and each session's summary to stderr and the
//! log (with what `--otlp` sent).
//! `docs/proxy.md` tells the life of a session and every limit.
//!
//! ```no_run
//! use mcp_unknown_keys_proxy::{ReportOptions, Stdio, run};
//!
//! let door = Stdio::new(vec!["my-mcp-server".into()]).expect("signals can be blocked");
//! let exit = run(door, &ReportOptions::default());
//! # let _ = exit;
//! ```

#![warn(unreachable_pub)]

#[cfg(feature = "remote")]
mod client;
mod door;
mod failure;
#[cfg(feature = "remote")]
mod http;
mod relay;
mod report;
mod signals;
pub mod state;
mod stdio;
mod tap;

pub use self::door::{Door, run};
pub use self::failure::Failure;
#[cfg(feature = "remote")]
pub use self::http::{Bridge, Reverse};
pub use self::report::ReportOptions;
pub use self::stdio::Stdio;

use std::time::Duration;

/// The longest line the tap reads at all. A longer line is forwarded but
/// neither audited nor learned from; a client line that long is counted as
/// a call not audited. This bounds the memory a line that spans many reads
/// can take.
pub const MAX_TAPPED_LINE: usize = 64 * 1024 * 1024;

/// The remote doors' readers of untrusted bytes, exported for the fuzz
/// targets (`fuzz/`, feature `fuzzing`) so they link the code they test.
/// Not part of the crate's stable API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::client::BoxError;
    pub use crate::http::reverse::request::{Budget, Request, read_request};
    pub use crate::http::sse::{Event, LineTooLong, Parser};
}

/// At exit, how long the audit may take to read the lines still queued
/// before the summary is written without them.
pub(crate) const SETTLE_AT_EXIT: Duration = Duration::from_secs(3);

/// At exit, how long the log may take to write the lines handed to it.
pub(crate) const LOG_AT_EXIT: Duration = Duration::from_secs(3);
