//! `mcp-unknown-keys proxy [--log FILE] [--allow KEY]... [--quiet] -- COMMAND [ARG]...`
//!
//! Runs COMMAND as an MCP server over stdio and stands in its place: every
//! byte from the client reaches the server and every byte from the server
//! reaches the client, unchanged and in order, while a tap reads copies of
//! the messages to learn the catalogue and audit `tools/call` requests.
//!
//! - [`relay`] copies bytes and shows complete lines to a tap;
//! - [`tap`] reads those lines and audits through the core's `Auditor`;
//! - this module wires the command line, the child process, signals and the
//!   exit status.
//!
//! The life of a session: when the client closes stdin, the server's stdin
//! is closed and the server has [`EXIT_GRACE`] to exit, then gets SIGTERM,
//! then SIGKILL. When the server exits, what it wrote is forwarded and the
//! proxy exits with its status (128+N for signal N). SIGINT and SIGTERM
//! sent to the proxy go to the server.
//!
//! Limits, each chosen so the relay never waits on the tap: a line over
//! [`tap::MAX_TAPPED_LINE`] is forwarded but not read; a server line is read
//! only when it may answer a pending `tools/list` or is a short
//! `list_changed` notification. Unix only (signals, exit statuses).

#[cfg(feature = "remote")]
mod http;
mod relay;
mod signals;
pub mod tap;

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use mcp_unknown_keys::audit::{Auditor, Finding, Findings, Printable, Sink, StderrSink, Warning};

use self::signals::Blocked;
use self::tap::Tap;

/// How long a server may take to exit once its stdin is closed, before it
/// is sent SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// How long a server may take to exit after SIGTERM, before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Once the server has exited, how long its output may stay silent before
/// the proxy stops waiting for the end of it (a process the server started
/// may hold the pipe open).
const OUTPUT_IDLE: Duration = Duration::from_millis(500);

/// The command line of `proxy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Also append each warning to FILE, as one JSON object per line
    /// (`tool`, `unknown_keys`, `declared_keys`, `id`, `hints`,
    /// `missing_keys`: keys only, never values), and on exit a last line
    /// `{"summary":[…]}`.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Tolerate KEY on every tool, as `reason` is (repeatable): for keys a
    /// host injects, such as `toolCallId`.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// Do not write warnings to stderr (the log still gets them).
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

/// Events the main thread waits on.
enum Event {
    /// The client closed the proxy's stdin.
    ClientClosed,
    /// The relay forwarded the end of the server's output.
    OutputDone,
    /// The server exited.
    ServerExited(io::Result<ExitStatus>),
}

fn proxy(args: Args) -> Result<ExitStatus, Failure> {
    let warnings = Arc::new(Warnings::open(&args)?);
    let auditor = Auditor::new()
        .with_shared_sink(warnings.clone())
        .allow_all(args.allow.iter().cloned());
    let tap = Arc::new(Tap::new(auditor));
    let blocked =
        Blocked::block().map_err(|e| failure(format!("cannot set up signal forwarding: {e}"), 1))?;
    let mut child = spawn(&args.command, &blocked)?;
    blocked.forward_to(child.id());

    // Both relays share the tap; this function keeps it too, for the summary
    // of what it found once they end.
    let (events, event) = mpsc::channel();
    let progress = Arc::new(AtomicU64::new(0));
    start_client_to_server(&mut child, tap.clone(), events.clone())?;
    start_server_to_client(&mut child, tap.clone(), events.clone(), progress.clone())?;
    let pid = child.id();
    thread::spawn(move || {
        let _ = events.send(Event::ServerExited(child.wait()));
    });

    let (status, output_done) = wait_for_server(&event, pid);
    if !output_done {
        wait_for_output(&event, &progress);
    }
    warnings.summarise(&tap.findings());
    status.map_err(|e| failure(format!("cannot wait for the server: {e}"), 1))
}

/// Where the proxy's warnings go: stderr unless `--quiet`, and the log with
/// `--log`.
struct Warnings {
    stderr: bool,
    log: Option<Mutex<File>>,
}

impl Warnings {
    fn open(args: &Args) -> Result<Warnings, Failure> {
        let log = match &args.log {
            None => None,
            Some(path) => {
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| failure(format!("cannot open the log {}: {e}", path.display()), 2))?;
                Some(Mutex::new(file))
            }
        };
        Ok(Warnings {
            stderr: !args.quiet,
            log,
        })
    }

    /// The session's summary, once the server has exited: per (tool, key),
    /// how many calls carried it and its cause. On stderr when anything was
    /// found; in the log always, as a last line `{"summary":[…]}`.
    fn summarise(&self, findings: &Findings) {
        if self.stderr && !findings.is_empty() {
            // Not prefixed `mcp-unknown-keys:` as warnings are, so that a
            // host or a script counting warning lines counts only those.
            let mut lines = format!(
                "mcp-unknown-keys summary: {} key(s) on {} tool(s), with the calls that carried each\n",
                findings.len(),
                findings.tools()
            );
            for finding in findings.iter() {
                // The key in backticks: a model-written key may hold spaces
                // or colons of its own.
                let calls = if finding.calls == 1 { "call" } else { "calls" };
                let cause = finding
                    .cause
                    .map(|cause| format!(" ({cause})"))
                    .unwrap_or_default();
                lines += &format!(
                    "  {} `{}`: {} {calls}{cause}\n",
                    Printable(finding.tool),
                    Printable(finding.key),
                    finding.calls
                );
            }
            let _ = io::stderr().lock().write_all(lines.as_bytes());
        }
        let summary: Vec<Finding<'_>> = findings.iter().collect();
        self.log(&serde_json::json!({ "summary": summary }).to_string());
    }

    /// Appends one line to the log, if there is one.
    fn log(&self, line: &str) {
        if let Some(log) = &self.log {
            // One write per line: with O_APPEND, concurrent writers do not
            // interleave. A full disk is no reason to disturb the session.
            let line = format!("{line}\n");
            let _ = log
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .write_all(line.as_bytes());
        }
    }
}

impl Sink for Warnings {
    fn warn(&self, warning: &Warning) {
        if self.stderr {
            StderrSink.warn(warning);
        }
        self.log(&warning.to_json_line());
    }
}

fn spawn(command: &[OsString], blocked: &Blocked) -> Result<Child, Failure> {
    let (program, args) = command.split_first().expect("clap requires COMMAND");
    let mut server = Command::new(program);
    blocked.unblock_in(&mut server);
    server
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            // The shell's codes: 127 not found, 126 found but not runnable.
            let code = if e.kind() == ErrorKind::NotFound { 127 } else { 126 };
            failure(format!("cannot start {}: {e}", program.to_string_lossy()), code)
        })
}

fn start_client_to_server(
    child: &mut Child,
    tap: Arc<Tap>,
    events: mpsc::Sender<Event>,
) -> Result<(), Failure> {
    let from_client = stdio_file(io::stdin().as_fd())?;
    let to_server = child.stdin.take().expect("stdin is piped");
    thread::Builder::new()
        .name("client-to-server".into())
        .spawn(move || {
            if let Err(relay::Stopped::Write) = relay::relay(&from_client, &to_server, &tap.client()) {
                // The server no longer reads: keep the client from blocking.
                drop(to_server);
                relay::drain(&from_client);
            } else {
                // Dropping our end closes the server's stdin.
                drop(to_server);
            }
            let _ = events.send(Event::ClientClosed);
        })
        .map_err(|e| failure(format!("cannot start a thread: {e}"), 1))?;
    Ok(())
}

fn start_server_to_client(
    child: &mut Child,
    tap: Arc<Tap>,
    events: mpsc::Sender<Event>,
    progress: Arc<AtomicU64>,
) -> Result<(), Failure> {
    let mut from_server = child.stdout.take().expect("stdout is piped");
    let to_client = Progress {
        out: stdio_file(io::stdout().as_fd())?,
        progress,
    };
    thread::Builder::new()
        .name("server-to-client".into())
        .spawn(move || {
            if let Err(relay::Stopped::Write) = relay::relay(&mut from_server, to_client, &tap.server()) {
                // The client no longer reads: keep the server from blocking.
                relay::drain(&mut from_server);
            }
            let _ = events.send(Event::OutputDone);
        })
        .map_err(|e| failure(format!("cannot start a thread: {e}"), 1))?;
    Ok(())
}

/// Waits for the server to exit. Once the client has closed stdin, the
/// server gets [`EXIT_GRACE`] to exit, then SIGTERM, then SIGKILL.
fn wait_for_server(event: &mpsc::Receiver<Event>, pid: u32) -> (io::Result<ExitStatus>, bool) {
    let mut deadline: Option<Instant> = None;
    let mut terminated = false;
    let mut output_done = false;
    loop {
        let next = match deadline {
            None => event.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => event.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match next {
            Ok(Event::ServerExited(status)) => return (status, output_done),
            Ok(Event::OutputDone) => output_done = true,
            Ok(Event::ClientClosed) => deadline = Some(Instant::now() + EXIT_GRACE),
            Err(RecvTimeoutError::Timeout) if !terminated => {
                signals::send(pid, libc::SIGTERM);
                terminated = true;
                deadline = Some(Instant::now() + TERM_GRACE);
            }
            Err(RecvTimeoutError::Timeout) => {
                signals::send(pid, libc::SIGKILL);
                deadline = None;
            }
            Err(RecvTimeoutError::Disconnected) => {
                return (
                    Err(io::Error::other("the server's waiter went away")),
                    output_done,
                );
            }
        }
    }
}

/// Waits until everything the server wrote has been forwarded, or its output
/// has been idle for [`OUTPUT_IDLE`] (while not blocked on a slow client).
fn wait_for_output(event: &mpsc::Receiver<Event>, progress: &AtomicU64) {
    let mut seen = progress.load(Ordering::Acquire);
    loop {
        match event.recv_timeout(OUTPUT_IDLE) {
            Ok(Event::OutputDone) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => {
                let now = progress.load(Ordering::Acquire);
                if now == seen {
                    return;
                }
                seen = now;
            }
        }
    }
}

/// The client's end of the relay; counts writes begun and finished, so that
/// a write blocked on a slow client counts as progress.
struct Progress {
    out: File,
    progress: Arc<AtomicU64>,
}

impl Write for Progress {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.progress.fetch_add(1, Ordering::AcqRel);
        let written = (&self.out).write(buf);
        self.progress.fetch_add(1, Ordering::AcqRel);
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The proxy's own stdin or stdout as an unbuffered file: bytes go through
/// in the reads and writes the relay makes, never held in a buffer.
fn stdio_file(fd: std::os::fd::BorrowedFd<'_>) -> Result<File, Failure> {
    fd.try_clone_to_owned()
        .map(File::from)
        .map_err(|e| failure(format!("cannot use stdio: {e}"), 1))
}

/// The server's exit status as the proxy's: its code, or 128+N for signal N.
fn exit_code(status: ExitStatus) -> ExitCode {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(signal)) => ExitCode::from((128 + signal) as u8),
        (None, None) => ExitCode::FAILURE,
    }
}

fn failure(message: String, code: u8) -> Failure {
    Failure { message, code }
}
