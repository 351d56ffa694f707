//! The life of a session: the server process, its exit, and when the proxy
//! is done.
//!
//! - The server runs in a process group of its own, so a signal meant for
//!   it reaches whatever it started too, and a terminal's Ctrl-C reaches it
//!   only through the proxy. On Linux it is also killed should the proxy
//!   die without a word (`PR_SET_PDEATHSIG`): the server cannot outlive it.
//! - Its exit is learned without reaping it (`waitid` with `WNOWAIT`): the
//!   exited server stays a zombie, holding its pid and its group's id,
//!   until the proxy itself exits. So a signal the proxy forwards late can
//!   only ever reach the server's own group, never a process that got a
//!   recycled pid.
//! - The session ends when the server has exited and everything it wrote
//!   has been forwarded ([`Event::OutputDone`]), however slowly the client
//!   reads. Once the host has sent a signal (the host wants the proxy
//!   gone), the server's last output gets [`FLUSH_AFTER_SIGNAL`] to reach
//!   the client after the server exits, and a further signal ends the wait
//!   at once. No timer ever stops the server: when the client closes stdin
//!   the server's stdin is closed, and the server decides when to exit.
//! - Once the session has ended, what the server left running in its group
//!   (helpers it forked, which no one else would stop) gets SIGTERM, then
//!   SIGKILL after [`GROUP_GRACE`] ([`Group::end`]). The unreaped server
//!   keeps the group's id from being reused meanwhile.

use std::ffi::OsString;
use std::io::{self, ErrorKind, Write};
use std::mem::MaybeUninit;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use crate::failure::Failure;
use crate::signals::Blocked;

/// What the main thread waits on.
pub(super) enum Event {
    /// The relay forwarded the end of the server's output.
    OutputDone,
    /// The server exited (it is not reaped).
    ServerExited(io::Result<ExitStatus>),
    /// The host sent a terminating signal, already forwarded to the server.
    Signal,
}

/// Once the session has ended, how long what the server left running in its
/// group has between SIGTERM and SIGKILL.
pub(super) const GROUP_GRACE: Duration = Duration::from_secs(2);

/// How often [`Group::end`] looks whether the group has emptied.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// The server's process group, identified by the server's pid; valid for
/// the proxy's whole life since the server is never reaped.
#[derive(Clone, Copy, Debug)]
pub(super) struct Group {
    pid: libc::pid_t,
}

impl Group {
    /// Sends `signal` to the group, and to the server itself should it have
    /// left the group for one of its own.
    pub(super) fn signal(self, signal: libc::c_int) {
        // SAFETY: kill and getpgid have no memory-safety preconditions. The
        // pid is unreaped, so neither it nor the group id can be recycled.
        unsafe {
            libc::kill(-self.pid, signal);
            if libc::getpgid(self.pid) != self.pid {
                libc::kill(self.pid, signal);
            }
        }
    }

    /// The session has ended and the server has exited (or the proxy gives
    /// up on it): every process still running in its group gets SIGTERM,
    /// and SIGKILL if any is still running `grace` later. Returns at once
    /// when none is.
    pub(super) fn end(self, grace: Duration) {
        if !self.has_live_members() {
            return;
        }
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            thread::sleep(GROUP_POLL);
            if !self.has_live_members() {
                return;
            }
        }
        self.signal(libc::SIGKILL);
    }

    /// Linux: whether a process of the group is running, the exited server
    /// (a zombie) aside, read from `/proc`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn has_live_members(self) -> bool {
        let Ok(processes) = std::fs::read_dir("/proc") else {
            return self.has_members();
        };
        processes.flatten().any(|process| {
            std::fs::read_to_string(process.path().join("stat"))
                .ok()
                .and_then(|stat| running_in_group(&stat))
                == Some(self.pid)
        })
    }

    /// Elsewhere: whether the group has a member at all (the exited server
    /// may count as one, so SIGKILL may follow SIGTERM after the grace).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn has_live_members(self) -> bool {
        self.has_members()
    }

    fn has_members(self) -> bool {
        // SAFETY: kill with signal 0 only checks; the group id cannot be
        // recycled while the server is unreaped.
        unsafe { libc::kill(-self.pid, 0) == 0 }
    }
}

/// The process group of a running (not exited) process, from its
/// `/proc/PID/stat` line: `PID (COMM) STATE PPID PGRP …`, COMM being
/// anything up to the last `)`.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn running_in_group(stat: &str) -> Option<libc::pid_t> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    (!matches!(state, "Z" | "X" | "x")).then_some(group)
}

/// Starts the server: its own process group, the forwarded signals
/// unblocked, killed with the proxy (Linux).
pub(super) fn spawn(command: &[OsString], blocked: &Blocked) -> Result<(Child, Group), Failure> {
    let (program, args) = command.split_first().expect("clap requires COMMAND");
    let mut server = Command::new(program);
    blocked.unblock_in(&mut server);
    die_with_the_proxy(&mut server);
    let child = server
        .args(args)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            // The shell's codes: 127 not found, 126 found but not runnable.
            let code = if e.kind() == ErrorKind::NotFound { 127 } else { 126 };
            Failure::new(format!("cannot start {}: {e}", program.to_string_lossy()), code)
        })?;
    let group = Group {
        pid: child.id() as libc::pid_t,
    };
    Ok((child, group))
}

/// Linux: the server gets SIGKILL when the proxy dies, even by SIGKILL.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn die_with_the_proxy(command: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let proxy = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only calls prctl,
    // getppid and kill, which are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The proxy may have died before the request was made.
            if libc::getppid() != proxy {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// Elsewhere the forwarded signals and the process group are all there is.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn die_with_the_proxy(_command: &mut Command) {}

/// Waits, on a thread of its own, for the server to exit without reaping
/// it; then tells the output relay (`exited`, and a byte to `exit_news` to
/// wake it) and `events`.
pub(super) fn watch(
    group: Group,
    exited: Arc<AtomicBool>,
    mut exit_news: io::PipeWriter,
    events: Sender<Event>,
) -> Result<(), Failure> {
    thread::Builder::new()
        .name("server-exit".into())
        .spawn(move || {
            let status = wait_without_reaping(group.pid);
            exited.store(true, Ordering::Release);
            let _ = exit_news.write_all(b"x");
            let _ = events.send(Event::ServerExited(status));
        })
        .map(drop)
        .map_err(|e| Failure::new(format!("cannot start a thread: {e}"), 1))
}

fn wait_without_reaping(pid: libc::pid_t) -> io::Result<ExitStatus> {
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is a valid, zeroed siginfo_t for waitid to fill.
        let done = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if done == 0 {
            // SAFETY: waitid succeeded, so it filled `info`.
            let info = unsafe { info.assume_init() };
            return Ok(exit_status(&info));
        }
        let error = io::Error::last_os_error();
        if error.kind() != ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The wait status `waitid` describes, as `ExitStatus` reads it.
fn exit_status(info: &libc::siginfo_t) -> ExitStatus {
    // SAFETY: for a child's exit, waitid fills si_status.
    let status = unsafe { info.si_status() };
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        _ => status & 0x7f,
    };
    ExitStatus::from_raw(raw)
}

/// Once the host has sent a signal and the server has exited, how long the
/// server's last output may take to reach a client that may have stopped
/// reading.
pub(super) const FLUSH_AFTER_SIGNAL: Duration = Duration::from_secs(1);

/// Waits for the end of the session: the server exited and its output
/// forwarded; or, once the host has sent a signal, the server exited and
/// its output forwarded within [`FLUSH_AFTER_SIGNAL`], or a further signal.
pub(super) fn wait_for_the_end(events: &Receiver<Event>) -> io::Result<ExitStatus> {
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut output_done = false;
    let mut signalled = false;
    let mut deadline: Option<Instant> = None;
    loop {
        let event = match deadline {
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => events.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match event {
            Ok(Event::ServerExited(exited)) => status = Some(exited),
            Ok(Event::OutputDone) => output_done = true,
            // Forwarded already; the server decides what to do with it.
            Ok(Event::Signal) => signalled = true,
            Err(RecvTimeoutError::Timeout) => output_done = true,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(io::Error::other("the session's threads went away"));
            }
        }
        let Some(exited) = status.take() else {
            continue;
        };
        if output_done || (signalled && deadline.is_some()) {
            return exited;
        }
        if signalled {
            deadline = Some(Instant::now() + FLUSH_AFTER_SIGNAL);
        }
        status = Some(exited);
    }
}

#[cfg(test)]
mod tests {
    use super::running_in_group;

    #[test]
    fn a_stat_line_gives_the_group_of_a_running_process_only() {
        assert_eq!(running_in_group("42 (sleep) S 1 40 40 0 -1"), Some(40));
        assert_eq!(running_in_group("42 (a) b) R 1 41 41 0"), Some(41));
        assert_eq!(running_in_group("40 (sh) Z 1 40 40 0"), None);
        assert_eq!(running_in_group("garbage"), None);
    }
}
