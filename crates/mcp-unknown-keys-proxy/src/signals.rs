//! Every terminating signal a host may send goes to the server's process
//! group: the proxy stands in for the server, so a host that asks the
//! "server" to stop asks the real one (and whatever it started), and the
//! proxy then exits with the server's status, its summary written.

use std::io;
use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::thread;

/// The signals a host or a user sends to stop a process: the stdio proxy
/// forwards them to the server, and the remote doors end gracefully on them
/// (the session deleted, the summary written).
pub(crate) const STOPPING: [libc::c_int; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM];

/// The signals forwarded to the server: those a host or a user may send to
/// stop ([`STOPPING`]) or poke a process, whose default action would end
/// the proxy.
pub(crate) const FORWARDED: [libc::c_int; 7] = [
    STOPPING[0],
    STOPPING[1],
    STOPPING[2],
    STOPPING[3],
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
];

/// The forwarded signals, blocked in the proxy so that they wait for
/// [`Blocked::forward_to`] instead of ending it.
pub(crate) struct Blocked {
    set: libc::sigset_t,
}

impl Blocked {
    /// Blocks the forwarded signals in this thread and every thread it
    /// starts afterwards: call it before starting any. A child process would
    /// inherit the mask: spawn the server with [`Blocked::unblock_in`].
    pub(crate) fn block() -> io::Result<Blocked> {
        // SAFETY: the set is initialised by sigemptyset before any other
        // use, and the calls only read and write it.
        unsafe {
            let mut set = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(set.as_mut_ptr());
            let mut set = set.assume_init();
            for signal in FORWARDED {
                libc::sigaddset(&mut set, signal);
            }
            let error = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if error != 0 {
                return Err(io::Error::from_raw_os_error(error));
            }
            Ok(Blocked { set })
        }
    }

    /// Unblocks the forwarded signals in the process `command` starts, so
    /// that the server can be stopped by them.
    pub(crate) fn unblock_in(&self, command: &mut Command) {
        let set = self.set;
        // SAFETY: the closure runs between fork and exec and only calls
        // pthread_sigmask, which is async-signal-safe, on a copied set.
        unsafe {
            command.pre_exec(move || {
                let error = libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                if error != 0 {
                    return Err(io::Error::from_raw_os_error(error));
                }
                Ok(())
            });
        }
    }

    /// From a thread of its own, hands every forwarded signal the proxy
    /// receives from now on to `forward` (which sends it on to the server),
    /// until `forward` returns `false`.
    pub(crate) fn forward_to(
        self,
        mut forward: impl FnMut(libc::c_int) -> bool + Send + 'static,
    ) -> io::Result<()> {
        thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                loop {
                    let mut signal: libc::c_int = 0;
                    // SAFETY: `set` is a valid, initialised signal set.
                    if unsafe { libc::sigwait(&self.set, &mut signal) } != 0 {
                        return;
                    }
                    if !forward(signal) {
                        return;
                    }
                }
            })
            .map(drop)
    }
}
