//! The bridge's stdout: each line written whole, in the order it was
//! queued; once the host stops reading, lines are dropped.
//!
//! When stdout is a pipe or a stream socket it is written from the
//! runtime's own thread ([`Pipe`]); otherwise — a file, a terminal, whose
//! non-blocking mode the shell would share, or a datagram socket — from a
//! thread of its own, as blocking writes must be.

use std::io::{self, Write};
use std::os::fd::AsFd;
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

/// The writer of the host's lines.
pub enum Writer {
    /// On the runtime's thread (stdout a pipe or a stream socket).
    Task(JoinHandle<()>),
    /// On a thread of its own.
    Thread(thread::JoinHandle<()>),
}

impl Writer {
    /// Starts writing the lines `lines` brings, until [`END`].
    pub fn start(lines: mpsc::Receiver<Vec<u8>>, runtime: &Runtime) -> Result<Writer, String> {
        let _entered = runtime.enter();
        if let Some(stdout) = Pipe::register(io::stdout().as_fd()) {
            return Ok(Writer::Task(runtime.spawn(write_async(stdout, lines))));
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

async fn write_async(stdout: Pipe, mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut open = true;
    while let Some(line) = lines.recv().await {
        if line.is_empty() {
            return;
        }
        if open {
            open = stdout.write_all(&line).await.is_ok();
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
