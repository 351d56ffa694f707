//! `mcp-unknown-keys proxy [--log FILE] [--allow KEY]... [--quiet] -- COMMAND [ARG]...`
//!
//! Runs COMMAND as an MCP server over stdio and stands in its place: every
//! byte from the client reaches the server and every byte from the server
//! reaches the client, unchanged and in order, while a tap reads copies of
//! the messages to learn the catalogue and audit `tools/call` requests.
//!
//! - [`relay`] copies bytes and shows complete lines to a tap;
//! - [`output`] reads the server's stdout to the last byte the server wrote;
//! - [`tap`] queues copies of the lines that matter for an audit worker;
//! - [`session`] runs the server and decides when the session ends;
//! - [`signals`] forwards the host's signals to the server's group;
//! - [`log`] writes `--log` from a thread of its own;
//! - [`summary`] says what the session audited and found;
//! - `http` (feature `remote`) reaches remote servers over streamable HTTP:
//!   a stdio bridge (`--url`) and a reverse proxy (`--listen`), through the
//!   same tap.
//!
//! `docs/proxy.md` tells the life of a session and every limit.

#[cfg(feature = "remote")]
mod http;
mod log;
mod output;
mod relay;
mod session;
mod signals;
mod summary;
pub mod tap;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ExitCode, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::Duration;

use mcp_unknown_keys::audit::{Auditor, Sink, StderrSink, Warning};

use self::log::Log;
use self::output::ServerOutput;
use self::session::Event;
use self::signals::Blocked;
use self::summary::Summary;
use self::tap::Tap;

/// At exit, how long the audit may take to read the lines still queued
/// before the summary is written without them.
pub(crate) const SETTLE_AT_EXIT: Duration = Duration::from_secs(3);

/// At exit, how long the log may take to write the lines handed to it.
const LOG_AT_EXIT: Duration = Duration::from_secs(3);

/// The command line of `proxy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also append each warning to FILE, as one JSON object per line
    /// (`tool`, `unknown_keys`, `declared_keys`, `id`, `hints`,
    /// `missing_keys`: keys only, never values), and on exit a last line
    /// `{"summary":{"coverage":…,"findings":[…],"declared_keys":{…}}}`.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Tolerate KEY on every tool, as `reason` is (repeatable): for keys a
    /// host injects, such as `toolCallId`.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// Do not write warnings, notices or the summary to stderr (the log
    /// still gets them; a failing log is still said).
    #[arg(long)]
    quiet: bool,
    /// The server's name, as `wrap` gives it from the host's configuration.
    // Accepted so wrapped configurations run; what the proxy does with it
    // (log attribution, issue 14) lands with that work.
    #[allow(dead_code)]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// A remote server instead: `--url`, or `--listen` with `--upstream`.
    #[cfg(feature = "remote")]
    #[command(flatten)]
    remote: http::Args,
    /// The MCP server to run over stdio, and its arguments.
    #[cfg_attr(feature = "remote", arg(last = true, required_unless_present_any = ["url", "listen"], value_name = "COMMAND"))]
    #[cfg_attr(
        not(feature = "remote"),
        arg(last = true, required = true, value_name = "COMMAND")
    )]
    command: Vec<OsString>,
}

/// Runs `proxy`: exits with the server's status.
pub fn run(args: Args) -> ExitCode {
    #[cfg(feature = "remote")]
    if args.remote.requested() {
        return http::run(&args);
    }
    match proxy(args) {
        Ok(status) => exit_code(status),
        Err(failure) => {
            eprintln!("mcp-unknown-keys: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

/// Why the proxy could not stand in for the server.
struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    fn new(message: String, code: u8) -> Failure {
        Failure { message, code }
    }
}

fn proxy(args: Args) -> Result<ExitStatus, Failure> {
    // Before any thread starts: each inherits the mask, and a signal no
    // thread blocks would end the proxy.
    let blocked =
        Blocked::block().map_err(|e| Failure::new(format!("cannot set up signal forwarding: {e}"), 1))?;
    let warnings = Arc::new(Warnings::open(&args)?);
    let tap = Arc::new(warnings.tap(&args.allow));
    let (mut child, group) = session::spawn(&args.command, &blocked)?;
    let (events, event) = mpsc::channel();
    blocked
        .forward_to(group, events.clone())
        .map_err(|e| Failure::new(format!("cannot start a thread: {e}"), 1))?;
    let exited = Arc::new(AtomicBool::new(false));
    let (exit_news_in, exit_news_out) =
        io::pipe().map_err(|e| Failure::new(format!("cannot create a pipe: {e}"), 1))?;
    let from_server = ServerOutput::new(
        child.stdout.take().expect("stdout is piped"),
        exited.clone(),
        exit_news_in,
    )
    .map_err(|e| Failure::new(format!("cannot read the server's output: {e}"), 1))?;
    start_client_to_server(&mut child, tap.clone())?;
    start_server_to_client(from_server, tap.clone(), events.clone())?;
    session::watch(group, exited, exit_news_out, events)?;
    // The server is never reaped (see `session`): dropping `child` leaves it.
    drop(child);

    let status = session::wait_for_the_end(&event);
    warnings.summarise(&tap);
    warnings.finish();
    status.map_err(|e| Failure::new(format!("cannot wait for the server: {e}"), 1))
}

/// Where the proxy's warnings go: stderr unless `--quiet`, and the log with
/// `--log`.
struct Warnings {
    stderr: bool,
    log: Option<Log>,
}

impl Warnings {
    /// Opens `--log`, if given; warnings go to stderr unless `--quiet`.
    fn open(args: &Args) -> Result<Warnings, Failure> {
        let log = match &args.log {
            None => None,
            Some(path) => Some(
                Log::open(path)
                    .map_err(|e| Failure::new(format!("cannot open the log {}: {e}", path.display()), 2))?,
            ),
        };
        Ok(Warnings {
            stderr: !args.quiet,
            log,
        })
    }

    /// A tap whose auditor says its warnings here, tolerating `--allow`
    /// keys, and whose notices go to stderr unless `--quiet`.
    fn tap(self: &Arc<Self>, allow: &[String]) -> Tap {
        let auditor = Auditor::new()
            .with_shared_sink(self.clone())
            .allow_all(allow.iter().cloned());
        let stderr = self.stderr;
        Tap::new(auditor).with_notices(move |notice| {
            if stderr {
                let _ = writeln!(io::stderr().lock(), "mcp-unknown-keys: {notice}");
            }
        })
    }

    /// The summary of what `tap` audited and found, once its session has
    /// ended; the audit gets [`SETTLE_AT_EXIT`] to read what is queued.
    fn summarise(&self, tap: &Tap) {
        let unsettled = tap.settle(Some(SETTLE_AT_EXIT));
        self.write_summary(&Summary {
            coverage: &tap.coverage(),
            findings: &tap.findings(),
            unread: tap.unread(),
            unsettled,
        });
    }

    /// Writes a summary: on stderr when there is anything to say; in the
    /// log always, as its last line.
    fn write_summary(&self, summary: &Summary<'_>) {
        if self.stderr && !summary.is_empty() {
            let _ = io::stderr().lock().write_all(summary.to_text().as_bytes());
        }
        if let Some(log) = &self.log {
            log.summary(summary.to_json_line());
        }
    }

    /// The proxy is about to exit: the log gets [`LOG_AT_EXIT`] to write
    /// the lines handed to it.
    fn finish(&self) {
        if let Some(log) = &self.log {
            log.finish(LOG_AT_EXIT);
        }
    }
}

impl Sink for Warnings {
    fn warn(&self, warning: &Warning) {
        if self.stderr {
            StderrSink.warn(warning);
        }
        if let Some(log) = &self.log {
            log.warning(warning.to_json_line());
        }
    }
}

fn start_client_to_server(child: &mut Child, tap: Arc<Tap>) -> Result<(), Failure> {
    let from_client = stdio_file(io::stdin().as_fd())?;
    let to_server = child.stdin.take().expect("stdin is piped");
    spawn("client-to-server", move || {
        if let Err(relay::Stopped::Write) = relay::relay(&from_client, &to_server, &tap.client()) {
            // The server no longer reads: keep the client from blocking.
            drop(to_server);
            relay::drain(&from_client);
        }
        // Dropping our end, if not dropped yet, closes the server's stdin.
    })
}

fn start_server_to_client(
    mut from_server: ServerOutput,
    tap: Arc<Tap>,
    events: Sender<Event>,
) -> Result<(), Failure> {
    let to_client = stdio_file(io::stdout().as_fd())?;
    spawn("server-to-client", move || {
        if let Err(relay::Stopped::Write) = relay::relay(&mut from_server, &to_client, &tap.server()) {
            // The client no longer reads: keep the server from blocking.
            relay::drain(&mut from_server);
        }
        let _ = events.send(Event::OutputDone);
    })
}

fn spawn(name: &str, work: impl FnOnce() + Send + 'static) -> Result<(), Failure> {
    thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .map(drop)
        .map_err(|e| Failure::new(format!("cannot start a thread: {e}"), 1))
}

/// The proxy's own stdin or stdout as an unbuffered file: bytes go through
/// in the reads and writes the relay makes, never held in a buffer.
fn stdio_file(fd: std::os::fd::BorrowedFd<'_>) -> Result<File, Failure> {
    fd.try_clone_to_owned()
        .map(File::from)
        .map_err(|e| Failure::new(format!("cannot use stdio: {e}"), 1))
}

/// The server's exit status as the proxy's: its code, or 128+N for signal N.
fn exit_code(status: ExitStatus) -> ExitCode {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(signal)) => ExitCode::from((128 + signal) as u8),
        (None, None) => ExitCode::FAILURE,
    }
}
