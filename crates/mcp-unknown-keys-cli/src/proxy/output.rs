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

/// The server's stdout, ending once the server has exited and its bytes
/// are read.
pub struct ServerOutput {
    pipe: ChildStdout,
    /// Readable once the server has exited.
    exited: io::PipeReader,
    /// Once the server has exited: the bytes it left in the pipe, still to
    /// read.
    left: Option<usize>,
}

impl ServerOutput {
    pub fn new(pipe: ChildStdout, exited: io::PipeReader) -> ServerOutput {
        ServerOutput {
            pipe,
            exited,
            left: None,
        }
    }

    /// Waits until the pipe has bytes (or its end) or the server has exited;
    /// returns whether it has exited.
    fn wait(&self) -> io::Result<bool> {
        let mut fds = [
            libc::pollfd {
                fd: self.exited.as_fd().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.pipe.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            // SAFETY: `fds` is a valid array of two pollfd.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if ready >= 0 {
                // The exit first: a process left behind may keep the pipe
                // readable forever.
                return Ok(fds[0].revents != 0);
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
        if self.left.is_none() && self.wait()? {
            self.left = Some(bytes_in(&self.pipe)?);
        }
        match self.left {
            None => self.pipe.read(buf),
            Some(0) => Ok(0),
            Some(left) => {
                let take = left.min(buf.len());
                let n = self.pipe.read(&mut buf[..take])?;
                self.left = Some(if n == 0 { 0 } else { left - n });
                Ok(n)
            }
        }
    }
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
