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
//! - [`report`] sends findings to stderr, `--log` (attributed) and
//!   `--otlp`;
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
mod report;
mod session;
mod signals;
mod summary;
pub mod tap;

pub(crate) use summary::verdicts_text;

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ExitCode, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::Duration;

use self::output::ServerOutput;
use self::report::{ReportOptions, Reports};
use self::session::Event;
use self::signals::Blocked;
use self::tap::Tap;

/// The longest line the tap reads at all. A longer line is forwarded but
/// neither audited nor learned from; a client line that long is counted as
/// a call not audited. This bounds the memory a line that spans many reads
/// can take.
pub const MAX_TAPPED_LINE: usize = 64 * 1024 * 1024;

/// At exit, how long the audit may take to read the lines still queued
/// before the summary is written without them.
pub(crate) const SETTLE_AT_EXIT: Duration = Duration::from_secs(3);

/// At exit, how long the log may take to write the lines handed to it.
pub(crate) const LOG_AT_EXIT: Duration = Duration::from_secs(3);

/// The command line of `proxy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also append each warning to FILE, as one JSON object per line
    /// (`tool`, `unknown_keys`, `declared_keys`, `id`, `hints`,
    /// `missing_keys`, `unknown_paths`: keys only, never values), each
    /// verdict (`{"verdict":"ignored"|"rejected"|"unanswered",…}`), each
    /// schema note (`{"note":…}`), and on exit a last line
    /// `{"summary":{"coverage":…,"findings":[…],"declared_keys":{…}}}`;
    /// every line ends with `ts`, `server` and `session`.
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
    /// The server's name, as `wrap` gives it from the host's configuration:
    /// the `server` of every log line (else the command's base name, or the
    /// URL's host), and on stderr `mcp-unknown-keys [NAME]: …`.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Audit top-level keys only, as the first version did: no nested key
    /// is read or reported.
    #[arg(long)]
    top_level_only: bool,
    /// Also send each warning and verdict to the OpenTelemetry collector at
    /// URL (OTLP/HTTP, JSON: URL/v1/logs, and URL/v1/traces for calls that
    /// carry a `traceparent`), batched, never waited for; what it does not
    /// take is dropped and counted.
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
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

impl Args {
    /// The remote server's URL, for the doors that have one.
    fn remote_url(&self) -> Option<&str> {
        #[cfg(feature = "remote")]
        return self.remote.url();
        #[cfg(not(feature = "remote"))]
        None
    }

    /// What the reports are asked for.
    fn report_options(&self) -> ReportOptions<'_> {
        ReportOptions {
            log: self.log.as_deref(),
            allow: &self.allow,
            quiet: self.quiet,
            name: self.name.as_deref(),
            top_level_only: self.top_level_only,
            #[cfg(feature = "remote")]
            otlp: self.otlp.as_deref(),
            #[cfg(not(feature = "remote"))]
            otlp: None,
            remote_url: self.remote_url(),
        }
    }

    /// The name the server goes by in the log's attribution.
    fn server_name(&self) -> String {
        report::attribution::server_name(self.name.as_deref(), &self.command, self.remote_url())
    }
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
    let reports = Arc::new(Reports::open(&args.report_options(), args.server_name())?);
    let tap = Arc::new(reports.tap(None));
    let (mut child, group) = session::spawn(&args.command, &blocked)?;
    let (events, event) = mpsc::channel();
    let told = events.clone();
    blocked
        .forward_to(move |signal| {
            // Told before it is forwarded, so the main thread sees it before
            // the server's exit that it may cause.
            let listening = told.send(Event::Signal).is_ok();
            group.signal(signal);
            listening
        })
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
    // Nothing the server started outlives the session; its grace and the
    // summary's wait for the audit run side by side.
    thread::scope(|scope| {
        let ending = thread::Builder::new()
            .name("group-end".into())
            .spawn_scoped(scope, || group.end(session::GROUP_GRACE));
        reports.summarise(&tap);
        if ending.is_err() {
            group.end(session::GROUP_GRACE);
        }
    });
    reports.finish();
    status.map_err(|e| Failure::new(format!("cannot wait for the server: {e}"), 1))
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
