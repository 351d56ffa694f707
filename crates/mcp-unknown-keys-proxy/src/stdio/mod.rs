//! The stdio door: runs an MCP server as a child over stdio and stands in
//! its place. Every byte from the host reaches the server and every byte
//! from the server reaches the host, unchanged and in order, while the tap
//! reads copies of the lines.
//!
//! - [`output`] reads the server's stdout to the last byte the server wrote;
//! - [`process`] runs the server and decides when the session ends;
//! - the host's signals go to the server's group (`crate::signals`).

mod output;
mod process;

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitCode, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, Sender};
use std::thread;

use self::output::ServerOutput;
use self::process::Event;
use crate::door::{Door, sealed::Sealed};
use crate::failure::Failure;
use crate::relay;
use crate::report::Reports;
use crate::report::attribution::command_name;
use crate::signals::Blocked;
use crate::tap::Tap;

/// `proxy -- COMMAND [ARG]...`: the server run as a child over stdio.
pub struct Stdio {
    command: Vec<OsString>,
    blocked: Blocked,
}

impl Stdio {
    /// The door for the server `command` (the program, then its
    /// arguments). Blocks the signals it forwards in this thread, so call
    /// it before starting any thread: each inherits the mask, and a signal
    /// no thread blocks would end the proxy.
    pub fn new(command: Vec<OsString>) -> Result<Stdio, Failure> {
        if command.is_empty() {
            return Err(Failure::new("no server command to run".into(), 2));
        }
        let blocked =
            Blocked::block().map_err(|e| Failure::new(format!("cannot set up signal forwarding: {e}"), 1))?;
        Ok(Stdio { command, blocked })
    }
}

impl Sealed for Stdio {}

impl Door for Stdio {
    fn server_name(&self) -> String {
        command_name(&self.command)
    }

    /// Exits with the server's status: its code, or 128+N for signal N.
    fn serve(self, reports: Arc<Reports>) -> Result<ExitCode, Failure> {
        let Stdio { command, blocked } = self;
        let tap = Arc::new(reports.tap(None));
        let (mut child, group) = process::spawn(&command, &blocked)?;
        let (events, event) = mpsc::channel();
        let told = events.clone();
        blocked
            .forward_to(move |signal| {
                // Told before it is forwarded, so the main thread sees it
                // before the server's exit that it may cause.
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
        process::watch(group, exited, exit_news_out, events)?;
        // The server is never reaped (see `process`): dropping `child`
        // leaves it.
        drop(child);

        let status = process::wait_for_the_end(&event);
        // Nothing the server started outlives the session; its grace and
        // the summary's wait for the audit run side by side.
        thread::scope(|scope| {
            let ending = thread::Builder::new()
                .name("group-end".into())
                .spawn_scoped(scope, || group.end(process::GROUP_GRACE));
            reports.summarise(&tap);
            if ending.is_err() {
                group.end(process::GROUP_GRACE);
            }
        });
        status
            .map(exit_code)
            .map_err(|e| Failure::new(format!("cannot wait for the server: {e}"), 1))
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
