//! The host's stdin, read line by line on a thread of its own. A line that
//! fits [`MAX_MESSAGE`] is handed over whole; a longer one is handed over
//! as it is read, as the body of its POST, so that it reaches the server
//! (the alarm never loses a call) while memory stays bounded.

use std::io::{BufRead, BufReader, ErrorKind};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};
use tokio::sync::mpsc;

use super::exchange::MAX_MESSAGE;
use crate::client::BoxError;

/// How many pieces of a long line may wait for the server to take them.
const PIECES_AHEAD: usize = 16;

/// A line from the host.
pub enum HostLine {
    /// A line no longer than [`MAX_MESSAGE`], newline and CR dropped.
    Whole(Vec<u8>),
    /// A longer line: its first bytes and the rest as it is read.
    Long(Streamed),
}

/// A long line, as a request body: the bytes read before it was found too
/// long, then each piece as stdin brings it, to the newline (not sent).
pub struct Streamed {
    head: Option<Bytes>,
    rest: mpsc::Receiver<Bytes>,
}

impl Streamed {
    /// The first bytes of the line.
    pub fn head(&self) -> &[u8] {
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

/// Reads the host's lines until stdin ends, or nobody takes them.
pub fn read(lines: &mpsc::Sender<HostLine>) {
    let mut stdin = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut line = Vec::new();
    // While a long line is read: where its pieces go (`None` once the
    // request it feeds was given up: the rest is read and dropped).
    let mut long: Option<Option<mpsc::Sender<Bytes>>> = None;
    loop {
        let buffer = match stdin.fill_buf() {
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
            if lines.blocking_send(HostLine::Long(streamed)).is_err() {
                return;
            }
            long = Some(Some(rest));
        }
        match &mut long {
            None => line.extend_from_slice(piece),
            Some(rest) => {
                let given_up = rest.as_ref().is_some_and(|rest| {
                    !piece.is_empty() && rest.blocking_send(Bytes::copy_from_slice(piece)).is_err()
                });
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
        if lines.blocking_send(HostLine::Whole(whole)).is_err() {
            return;
        }
    }
}
