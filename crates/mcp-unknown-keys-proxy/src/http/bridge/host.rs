//! The host's stdin, read line by line. A line that fits [`MAX_MESSAGE`] is
//! handed over whole; a longer one is handed over as it is read, as the
//! body of its POST, so that it reaches the server (the alarm never loses a
//! call) while memory stays bounded.

use std::io::{self, ErrorKind, Read};
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::runtime::{Handle, Runtime};
use tokio::sync::mpsc;

use super::exchange::MAX_MESSAGE;
use super::pipe::Pipe;
use crate::client::BoxError;

/// How many pieces of a long line may wait for the server to take them.
const PIECES_AHEAD: usize = 16;

/// How much of stdin is read at once.
const BUFFER: usize = 64 * 1024;

/// A line from the host.
pub(super) enum HostLine {
    /// A line no longer than [`MAX_MESSAGE`], newline and CR dropped.
    Whole(Vec<u8>),
    /// A longer line: its first bytes and the rest as it is read.
    Long(Streamed),
}

/// A long line, as a request body: the bytes read before it was found too
/// long, then each piece as stdin brings it, to the newline (not sent).
pub(super) struct Streamed {
    head: Option<Bytes>,
    rest: mpsc::Receiver<Bytes>,
}

impl Streamed {
    /// The first bytes of the line.
    pub(super) fn head(&self) -> &[u8] {
        self.head.as_deref().unwrap_or_default()
    }
}

impl HttpBody for Streamed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(head) = self.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        self.rest
            .poll_recv(cx)
            .map(|piece| piece.map(|piece| Ok(Frame::data(piece))))
    }
}

/// Starts reading the host's lines into `lines`, until stdin ends or
/// nobody takes them: on the runtime's own thread when stdin is a pipe or
/// a stream socket ([`Pipe`]); otherwise a thread reads it, blocking, and
/// hands its bytes to the same reader.
pub(super) fn start(lines: mpsc::Sender<HostLine>, runtime: &Runtime) -> Result<(), String> {
    let _entered = runtime.enter();
    if let Some(stdin) = Pipe::register(io::stdin().as_fd()) {
        runtime.spawn(read(BufReader::with_capacity(BUFFER, stdin), lines));
        return Ok(());
    }
    let (from_thread, to_runtime) = tokio::io::simplex(BUFFER);
    let handle = runtime.handle().clone();
    thread::Builder::new()
        .name("from-host".into())
        .spawn(move || read_blocking(to_runtime, &handle))
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    runtime.spawn(read(BufReader::with_capacity(BUFFER, from_thread), lines));
    Ok(())
}

/// Hands stdin's bytes to the runtime as they come, until either ends; then
/// ends the runtime's side too.
fn read_blocking(mut to_runtime: impl AsyncWrite + Unpin, runtime: &Handle) {
    let mut stdin = io::stdin().lock();
    let mut buffer = vec![0; BUFFER];
    loop {
        let read = match stdin.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if runtime.block_on(to_runtime.write_all(&buffer[..read])).is_err() {
            return;
        }
    }
    // Dropping a half of the stream does not end it: shutting it down does.
    let _ = runtime.block_on(to_runtime.shutdown());
}

/// Reads the host's lines until stdin ends, or nobody takes them.
async fn read(mut stdin: impl AsyncBufRead + Unpin, lines: mpsc::Sender<HostLine>) {
    let mut line = Vec::new();
    // While a long line is read: where its pieces go (`None` once the
    // request it feeds was given up: the rest is read and dropped).
    let mut long: Option<Option<mpsc::Sender<Bytes>>> = None;
    loop {
        let buffer = match stdin.fill_buf().await {
            Ok([]) => return,
            Ok(buffer) => buffer,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let (piece, ends) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (&buffer[..at], true),
            None => (buffer, false),
        };
        if long.is_none() && line.len() + piece.len() > MAX_MESSAGE {
            let (rest, receiver) = mpsc::channel(PIECES_AHEAD);
            let streamed = Streamed {
                head: Some(Bytes::from(std::mem::take(&mut line))),
                rest: receiver,
            };
            if lines.send(HostLine::Long(streamed)).await.is_err() {
                return;
            }
            long = Some(Some(rest));
        }
        match &mut long {
            None => line.extend_from_slice(piece),
            Some(rest) => {
                let given_up = match rest {
                    Some(sender) if !piece.is_empty() => {
                        sender.send(Bytes::copy_from_slice(piece)).await.is_err()
                    }
                    _ => false,
                };
                if given_up {
                    *rest = None;
                }
            }
        }
        let used = piece.len() + usize::from(ends);
        stdin.consume(used);
        if !ends {
            continue;
        }
        // The end of a long line ends its body.
        if long.take().is_some() {
            continue;
        }
        let mut whole = std::mem::take(&mut line);
        if whole.last() == Some(&b'\r') {
            whole.pop();
        }
        if lines.send(HostLine::Whole(whole)).await.is_err() {
            return;
        }
    }
}
