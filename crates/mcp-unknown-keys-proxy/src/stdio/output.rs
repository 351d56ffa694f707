//! The server's stdout as the relay reads it: to its end, or, once the
//! server has exited, to the last byte it wrote.
//!
//! A process the server started may keep the pipe open (and even write to
//! it) after the server exits, so its end of file may never come. But when
//! the server has exited, every byte it wrote is in the pipe: the reader
//! then takes exactly the bytes the pipe holds at that moment, and ends.
//! No timer is involved, so a client that reads slowly still gets every
//! byte.

use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::process::ChildStdout;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The server's stdout, ending once the server has exited and its bytes
/// are read.
///
/// The pipe is read without blocking, so a read that finds bytes costs one
/// call; only an empty pipe waits, on the pipe and on the news of the
/// server's exit at once.
pub(super) struct ServerOutput {
    pipe: ChildStdout,
    /// Set once the server has exited, before `exit_news` is written to.
    exited: Arc<AtomicBool>,
    /// Readable once the server has exited: wakes a wait on an empty pipe.
    exit_news: io::PipeReader,
    /// Once the server has exited: the bytes it left in the pipe, still to
    /// read.
    left: Option<usize>,
}

impl ServerOutput {
    /// Reads `pipe`, told of the server's exit by `exited` and `exit_news`.
    pub(super) fn new(
        pipe: ChildStdout,
        exited: Arc<AtomicBool>,
        exit_news: io::PipeReader,
    ) -> io::Result<ServerOutput> {
        set_nonblocking(&pipe)?;
        Ok(ServerOutput {
            pipe,
            exited,
            exit_news,
            left: None,
        })
    }

    /// Waits until the pipe has bytes (or its end) or the server has exited.
    fn wait(&self) -> io::Result<()> {
        let mut fds = [self.exit_news.as_fd(), self.pipe.as_fd()].map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        loop {
            // SAFETY: `fds` is a valid array of two pollfd.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } >= 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

impl Read for ServerOutput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // The exit first: a process left behind may keep the pipe full.
            if self.left.is_none() && self.exited.load(Ordering::Acquire) {
                self.left = Some(bytes_in(&self.pipe)?);
            }
            let take = match self.left {
                None => buf.len(),
                Some(0) => return Ok(0),
                Some(left) => left.min(buf.len()),
            };
            match self.pipe.read(&mut buf[..take]) {
                Ok(n) => {
                    if let Some(left) = &mut self.left {
                        *left = if n == 0 { 0 } else { *left - n };
                    }
                    return Ok(n);
                }
                // The bytes counted at the exit are there to read: an empty
                // pipe then means someone else took them.
                Err(e) if e.kind() == ErrorKind::WouldBlock && self.left.is_some() => return Ok(0),
                Err(e) if e.kind() == ErrorKind::WouldBlock => self.wait()?,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn set_nonblocking(pipe: &ChildStdout) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns, with integer
    // arguments. The pipe's read end is the proxy's alone.
    unsafe {
        let flags = libc::fcntl(pipe.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// How many bytes a pipe holds, unread.
fn bytes_in(pipe: &ChildStdout) -> io::Result<usize> {
    let mut bytes: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer given.
    if unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut bytes) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(bytes.max(0) as usize)
}
