//! The bridge's stdout: each line written whole, in the order it was
//! queued; once the host stops reading, lines are dropped.
//!
//! When stdout is a pipe or a stream socket it is written from the
//! runtime's own thread ([`Pipe`]): a line that finds no other waiting
//! before it is written at once, by the task that has it, so the answer
//! the host waits for leaves before anything else is done (a hand-off to
//! the writer's task would run after what the task does next: reading the
//! answer, dropping the request). Otherwise — a file, a terminal, whose
//! non-blocking mode the shell would share, or a datagram socket — stdout
//! is written from a thread of its own, as blocking writes must be.

use std::io::{self, ErrorKind, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::JoinHandle;

use super::pipe::Pipe;

/// What the writer is told to end with ([`Writer::finish`]): every line
/// before it is written, none after. A line always ends with a newline, so it is never empty.
const END: Vec<u8> = Vec::new();

/// How many lines may wait for the host to read them before the streams
/// that write them wait too.
const QUEUED: usize = 256;

/// The writer of the host's lines.
pub(super) enum Writer {
    /// On the runtime's thread (stdout a pipe or a stream socket).
    Task(JoinHandle<()>),
    /// On a thread of its own.
    Thread(thread::JoinHandle<()>),
}

/// Where the host's lines are sent, by every task that has one.
#[derive(Clone)]
pub(super) struct ToHost {
    queue: mpsc::Sender<Vec<u8>>,
    /// Stdout, when the runtime's thread writes it.
    direct: Option<Arc<Stdout>>,
}

/// Stdout as a pipe, shared by the writer's task and the tasks that write
/// a line at once. All run on the runtime's one thread: the flags are
/// atomic only to be shared.
struct Stdout {
    pipe: Pipe,
    /// The writer's task holds a line it has not written in full.
    busy: AtomicBool,
    /// A write failed (the host stopped reading), or the writer took
    /// [`END`]: lines are dropped.
    closed: AtomicBool,
}

impl ToHost {
    /// Writes `line` and a newline, after every line sent before it.
    pub(super) async fn send(&self, line: &[u8]) {
        if let Some(stdout) = &self.direct
            && !stdout.busy.load(Ordering::Relaxed)
            && self.queue.capacity() == self.queue.max_capacity()
        {
            match stdout.write_now(line) {
                Now::Written => return,
                Now::Rest(rest) => {
                    // No await between the look at the queue and this: the
                    // rest goes first, and cannot find the queue full (an
                    // await could yield, and another line go before it).
                    let queued = self.queue.try_send(rest);
                    debug_assert!(!matches!(queued, Err(TrySendError::Full(_))));
                    return;
                }
                Now::Later => {}
            }
        }
        let _ = self.queue.send(with_newline(line)).await;
    }
}

/// `bytes` and a newline, as the queue holds a line (or its rest).
fn with_newline(bytes: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(bytes.len() + 1);
    line.extend_from_slice(bytes);
    line.push(b'\n');
    line
}

/// What writing a line at once came to.
enum Now {
    /// All of it written, or dropped: the host stopped reading.
    Written,
    /// Part written: the rest goes first on the queue.
    Rest(Vec<u8>),
    /// Nothing written: the pipe is full; the line goes on the queue.
    Later,
}

impl Stdout {
    /// Writes what the pipe takes of `line` now.
    fn write_now(&self, line: &[u8]) -> Now {
        if self.closed.load(Ordering::Relaxed) {
            return Now::Written;
        }
        let written = loop {
            match self.pipe.try_write_line(line) {
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                written => break written,
            }
        };
        match written {
            Ok(count) if count > line.len() => Now::Written,
            Ok(count) => Now::Rest(with_newline(&line[count..])),
            Err(error) if error.kind() == ErrorKind::WouldBlock => Now::Later,
            Err(_) => {
                self.closed.store(true, Ordering::Relaxed);
                Now::Written
            }
        }
    }
}

impl Writer {
    /// Starts writing the lines sent through the [`ToHost`] it returns,
    /// until [`END`].
    pub(super) fn start(runtime: &Runtime) -> Result<(Writer, ToHost), String> {
        let registered = {
            let _entered = runtime.enter();
            Pipe::register(io::stdout().as_fd())
        };
        if let Some(pipe) = registered {
            return Ok(Writer::on_pipe(pipe, runtime));
        }
        let (queue, lines) = mpsc::channel(QUEUED);
        let thread = thread::Builder::new()
            .name("to-host".into())
            .spawn(move || write_blocking(lines))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok((Writer::Thread(thread), ToHost { queue, direct: None }))
    }

    /// The writer of a pipe, on the runtime's thread.
    fn on_pipe(pipe: Pipe, runtime: &Runtime) -> (Writer, ToHost) {
        let (queue, lines) = mpsc::channel(QUEUED);
        let stdout = Arc::new(Stdout {
            pipe,
            busy: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        });
        let task = runtime.spawn(write_async(stdout.clone(), lines));
        let direct = Some(stdout);
        (Writer::Task(task), ToHost { queue, direct })
    }

    /// Writes every line queued so far, then stops: [`END`] goes on the
    /// queue behind them, through `end`. With a `patience`, gives up after
    /// that long: a host that stopped reading holds a write for ever, and a
    /// queue it left full holds the end marker.
    pub(super) fn finish(self, runtime: &Runtime, end: ToHost, patience: Option<Duration>) {
        let end = end.queue;
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

async fn write_async(stdout: Arc<Stdout>, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if line.is_empty() {
            // None after the end, not even one written at once.
            stdout.closed.store(true, Ordering::Relaxed);
            return;
        }
        if !stdout.closed.load(Ordering::Relaxed) {
            stdout.busy.store(true, Ordering::Relaxed);
            let failed = stdout.pipe.write_all(&line).await.is_err();
            stdout.closed.fetch_or(failed, Ordering::Relaxed);
            stdout.busy.store(false, Ordering::Relaxed);
        }
    }
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

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};

    use super::*;

    fn pipe() -> (File, OwnedFd) {
        let mut ends = [0; 2];
        // SAFETY: pipe(2) fills both descriptors, each then owned once.
        unsafe {
            assert_eq!(libc::pipe(ends.as_mut_ptr()), 0);
            (File::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1]))
        }
    }

    #[test]
    fn a_line_written_at_once_never_cuts_into_one_begun_nor_follows_the_end() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (mut host, write_end) = pipe();
        let registered = {
            let _entered = runtime.enter();
            Pipe::register(write_end.as_fd()).expect("a pipe is registered")
        };
        drop(write_end);
        let (writer, to_host) = Writer::on_pipe(registered, &runtime);
        // More than the pipe holds: what is not written at once goes to
        // the writer, which waits for room.
        let long = vec![b'a'; 200_000];
        runtime.block_on(to_host.send(&long));
        runtime.block_on(async { tokio::time::sleep(Duration::from_millis(20)).await });
        // Room for a short line (a page), before the writer's task runs
        // again.
        let mut read = vec![0; 4096];
        host.read_exact(&mut read).unwrap();
        runtime.block_on(to_host.send(b"short"));
        let reader = thread::spawn(move || {
            host.read_to_end(&mut read).unwrap();
            read
        });
        let late = to_host.clone();
        writer.finish(&runtime, to_host, None);
        // After the end, nothing is written.
        runtime.block_on(late.send(&[b'c'; 100_000]));
        drop(late);
        drop(runtime);
        let mut expected = long;
        expected.extend_from_slice(b"\nshort\n");
        assert!(
            reader.join().unwrap() == expected,
            "the lines came whole and in order"
        );
    }
}
