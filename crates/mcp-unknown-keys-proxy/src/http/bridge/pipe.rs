//! The host's stdin and stdout on the runtime's own thread, when they are
//! pipes or stream sockets, as a host that runs the bridge gives them: made
//! non-blocking and woken by the runtime when the host writes or reads, so
//! a message crosses the bridge with no hand-off between threads (each
//! hand-off is a context switch per message).
//!
//! A file or a terminal is not made non-blocking: its mode would be shared
//! with the shell. An end the bridge made non-blocking is put back to
//! blocking when the bridge lets go of it, for whoever uses it next; an end
//! already non-blocking is left so. (Register stdout before stdin: when
//! both are one socket, stdout's end, used to the last, then restores it.)

use std::io::{self, ErrorKind, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, ReadBuf};

/// A pipe or stream socket end, non-blocking and registered with the
/// runtime.
pub(super) struct Pipe(AsyncFd<Blocking>);

/// An owned duplicate that puts its file description back to blocking when
/// dropped, if it was made non-blocking for the bridge.
struct Blocking {
    fd: OwnedFd,
    restore: bool,
}

impl AsRawFd for Blocking {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

impl Drop for Blocking {
    fn drop(&mut self) {
        if self.restore {
            set_flags(self.fd.as_fd(), |flags| flags & !libc::O_NONBLOCK);
        }
    }
}

impl Pipe {
    /// `fd` on the runtime (whose context must be entered), if it is a pipe
    /// or a stream socket and the runtime takes it.
    pub(super) fn register(fd: BorrowedFd<'_>) -> Option<Pipe> {
        if !is_byte_stream(fd) {
            return None;
        }
        let fd = fd.try_clone_to_owned().ok()?;
        let was = set_flags(fd.as_fd(), |flags| flags | libc::O_NONBLOCK)?;
        let blocking = Blocking {
            fd,
            restore: was & libc::O_NONBLOCK == 0,
        };
        // SAFETY: the duplicate is owned by `Blocking`, closed only when
        // the AsyncFd is dropped, and its descriptor never changes. A
        // refused registration drops it, restored.
        unsafe { AsyncFd::register(blocking) }.ok().map(Pipe)
    }

    /// Writes all of `bytes`, waiting for room as the host reads.
    pub(super) async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut ready = self.0.writable().await?;
            match ready.try_io(|fd| syscall_result(fd_write(fd.get_ref(), bytes))) {
                Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
                Ok(Ok(written)) => bytes = &bytes[written..],
                Ok(Err(error)) if error.kind() == ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }

    /// Writes what it can of `line` and a newline, in one system call,
    /// without waiting: the count of bytes written (the line's length plus
    /// one, when all were), or the error (`WouldBlock` when the pipe is
    /// full).
    pub(super) fn try_write_line(&self, line: &[u8]) -> io::Result<usize> {
        let pieces = [IoSlice::new(line), IoSlice::new(b"\n")];
        // SAFETY: writes from live slices, whose `IoSlice`s have the
        // layout of `iovec`, to a descriptor the pipe owns.
        let written = unsafe {
            libc::writev(
                self.0.get_ref().as_raw_fd(),
                pieces.as_ptr().cast(),
                pieces.len() as libc::c_int,
            )
        };
        syscall_result(written)
    }
}

impl AsyncRead for Pipe {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match ready.try_io(|fd| syscall_result(fd_read(fd.get_ref(), unfilled))) {
                Ok(Ok(read)) => {
                    // A short read emptied the pipe: the next read waits for
                    // the runtime to say it has more, as tokio's own streams
                    // do, rather than asking the kernel to hear "none yet".
                    if read > 0 && read < unfilled.len() {
                        ready.clear_ready();
                    }
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => {}
            }
        }
    }
}

/// A pipe, or a socket of type `SOCK_STREAM`: a stream of bytes, which a
/// short read leaves empty (a datagram socket's next message may wait
/// behind a short read, so it is left to the thread).
fn is_byte_stream(fd: BorrowedFd<'_>) -> bool {
    // SAFETY: fstat and getsockopt on a live descriptor, into zeroed
    // buffers of the sizes the calls are given.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut stat) != 0 {
            return false;
        }
        match stat.st_mode & libc::S_IFMT {
            libc::S_IFIFO => true,
            libc::S_IFSOCK => {
                let mut kind: libc::c_int = 0;
                let mut length = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                let asked = libc::getsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_TYPE,
                    (&raw mut kind).cast(),
                    &mut length,
                );
                asked == 0 && kind == libc::SOCK_STREAM
            }
            _ => false,
        }
    }
}

/// Changes the status flags of `fd`'s file description; the flags before,
/// if it could.
fn set_flags(fd: BorrowedFd<'_>, change: impl FnOnce(i32) -> i32) -> Option<i32> {
    // SAFETY: fcntl on a live descriptor.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        (flags >= 0 && libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, change(flags)) >= 0).then_some(flags)
    }
}

/// One `write(2)`.
fn fd_write(fd: &Blocking, bytes: &[u8]) -> isize {
    // SAFETY: writes from a live slice to a descriptor `fd` owns.
    unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) }
}

/// One `read(2)`.
fn fd_read(fd: &Blocking, into: &mut [u8]) -> isize {
    // SAFETY: reads into a live, initialised slice from a descriptor `fd`
    // owns, at most its length.
    unsafe { libc::read(fd.as_raw_fd(), into.as_mut_ptr().cast(), into.len()) }
}

/// A system call's count, or its error (a would-block comes back as such,
/// for `try_io`).
fn syscall_result(count: isize) -> io::Result<usize> {
    usize::try_from(count).map_err(|_| io::Error::last_os_error())
}
