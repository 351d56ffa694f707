//! The bridge's stdout: each line written whole, in the order it was
//! queued; once the host stops reading, lines are dropped.
//!
//! When stdout is a pipe or a socket, as a host that runs the bridge gives
//! it, it is written from the runtime's own thread: made non-blocking and
//! woken when the host reads, so an answer reaches the host without a
//! hand-off to another thread (one context switch fewer per message).
//! Otherwise — a file, or a terminal, whose non-blocking mode the shell
//! would share — from a thread of its own, as blocking writes must be.

use std::io::{self, ErrorKind, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::thread;
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::JoinHandle;

/// What the writer is told to end with ([`Writer::finish`]): every line
/// before it is written, none after. A line always ends with a newline, so it is never empty.
const END: Vec<u8> = Vec::new();

/// The writer of the host's lines.
pub enum Writer {
    /// On the runtime's thread (stdout a pipe or a socket).
    Task(JoinHandle<()>),
    /// On a thread of its own.
    Thread(thread::JoinHandle<()>),
}

impl Writer {
    /// Starts writing the lines `lines` brings, until [`END`].
    pub fn start(lines: mpsc::Receiver<Vec<u8>>, runtime: &Runtime) -> Result<Writer, String> {
        if let Some(stdout) = nonblocking_stdout() {
            let _entered = runtime.enter();
            // SAFETY: `stdout` is an owned duplicate, closed only when the
            // AsyncFd is dropped, and its descriptor never changes.
            match unsafe { AsyncFd::register(stdout) } {
                Ok(stdout) => return Ok(Writer::Task(runtime.spawn(write_async(stdout, lines)))),
                // The thread's writes must block again, or they would fail.
                Err(refused) => set_nonblocking(&refused.into_parts().0, false),
            };
        }
        thread::Builder::new()
            .name("to-host".into())
            .spawn(move || write_blocking(lines))
            .map(Writer::Thread)
            .map_err(|e| format!("cannot start a thread: {e}"))
    }

    /// Writes every line queued so far, then stops: [`END`] goes on the
    /// queue behind them, through `end`. With a `patience`, gives up after
    /// that long: a host that stopped reading holds a write for ever, and a
    /// queue it left full holds the end marker.
    pub fn finish(self, runtime: &Runtime, end: mpsc::Sender<Vec<u8>>, patience: Option<Duration>) {
        match self {
            Writer::Task(task) => runtime.block_on(async {
                let ending = async {
                    let _ = end.send(END).await;
                    let _ = task.await;
                };
                match patience {
                    Some(patience) => drop(tokio::time::timeout(patience, ending).await),
                    None => ending.await,
                }
            }),
            Writer::Thread(writer) => {
                let until = patience.map(|patience| Instant::now() + patience);
                let in_time = || until.is_none_or(|until| Instant::now() < until);
                while matches!(end.try_send(END), Err(TrySendError::Full(_))) && in_time() {
                    thread::sleep(Duration::from_millis(10));
                }
                while !writer.is_finished() && in_time() {
                    thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }
}

/// A duplicate of stdout made non-blocking, when stdout is a pipe or a
/// socket: no other process shares its file description's mode.
fn nonblocking_stdout() -> Option<OwnedFd> {
    let stdout = io::stdout().as_fd().try_clone_to_owned().ok()?;
    // SAFETY: fstat on a descriptor this function owns, with a zeroed stat
    // buffer the call fills.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::fstat(stdout.as_raw_fd(), &mut stat) != 0 {
            return None;
        }
        let kind = stat.st_mode & libc::S_IFMT;
        if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
            return None;
        }
    }
    set_nonblocking(&stdout, true).then_some(stdout)
}

/// Sets or clears `O_NONBLOCK` on `fd`'s file description; whether it could.
fn set_nonblocking(fd: &OwnedFd, nonblocking: bool) -> bool {
    // SAFETY: fcntl on a descriptor `fd` owns.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        let wanted = if nonblocking {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        flags >= 0 && libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, wanted) >= 0
    }
}

async fn write_async(stdout: AsyncFd<OwnedFd>, mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut open = true;
    while let Some(line) = lines.recv().await {
        if line.is_empty() {
            return;
        }
        if open {
            open = write_all(&stdout, &line).await.is_ok();
        }
    }
}

async fn write_all(stdout: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let mut ready = stdout.writable().await?;
        match ready.try_io(|fd| write(fd.get_ref(), bytes)) {
            Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
            Ok(Ok(written)) => bytes = &bytes[written..],
            Ok(Err(error)) if error.kind() == ErrorKind::Interrupted => {}
            Ok(Err(error)) => return Err(error),
            Err(_would_block) => {}
        }
    }
    Ok(())
}

/// One `write(2)`: a would-block comes back as such, for `try_io`.
fn write(fd: &OwnedFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: writes from a live slice to a descriptor `fd` owns.
    let written = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(written).map_err(|_| io::Error::last_os_error())
}

fn write_blocking(mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut stdout = io::stdout().lock();
    let mut open = true;
    while let Some(line) = lines.blocking_recv() {
        if line.is_empty() {
            return;
        }
        if open {
            open = stdout.write_all(&line).and_then(|()| stdout.flush()).is_ok();
        }
    }
}
