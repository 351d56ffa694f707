//! A request the server stopped taking: bytes wait to be written and, for
//! [`idle`], none was written and the server took none of those the
//! kernel already holds for it. A request that moves, however slowly, is
//! never cut: a 100 MB body a slow server takes in 40 s goes through as it
//! would without the proxy. Waiting for an answer, once the request is
//! written, is never bounded here (a tool may run for minutes).
//!
//! The kernel's own count is asked, not only the writes: a socket whose
//! send buffer is full lets the next write in only once much of it has
//! drained (half of it, on Linux), which a slow server may take longer
//! than the idle time to do while taking bytes all along.

use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// How long a request may wait to be written, with no byte moving on its
/// connection, before the connection is given up.
pub(crate) const IDLE: Duration = Duration::from_secs(30);

/// For tests only, never documented for use: [`IDLE`] in milliseconds, so
/// that a test of it need not wait 30 s.
const IDLE_KNOB: &str = "MCP_UNKNOWN_KEYS_TEST_IDLE_MS";

/// [`IDLE`], or the test's value: read once.
pub(crate) fn idle() -> Duration {
    static IDLE_NOW: OnceLock<Duration> = OnceLock::new();
    *IDLE_NOW.get_or_init(|| {
        std::env::var(IDLE_KNOB)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(IDLE, Duration::from_millis)
    })
}

/// What one connection's reads and writes tell of its progress.
pub(super) struct Progress {
    /// The connection's socket, owned by the connection (see `stall`).
    socket: RawFd,
    /// When the connection opened: the times below count from it.
    opened: Instant,
    /// When a byte was last written, or a wait to write began, in
    /// milliseconds from `opened`.
    moved: AtomicU64,
    /// A write waits for the server to take bytes.
    waiting: AtomicBool,
    /// The bytes the kernel held unsent or unacknowledged when last
    /// looked at, while a write waits ([`NOT_KNOWN`] when it cannot say).
    queued: AtomicU64,
    /// The connection was given up as stalled.
    stalled: AtomicBool,
}

impl Progress {
    /// The progress of the connection over `socket`.
    pub(super) fn new(socket: RawFd) -> Progress {
        Progress {
            socket,
            opened: Instant::now(),
            moved: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
            queued: AtomicU64::new(NOT_KNOWN),
            stalled: AtomicBool::new(false),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Bytes were written.
    pub(super) fn moved(&self) {
        self.moved.store(self.now(), Ordering::Release);
        self.waiting.store(false, Ordering::Release);
    }

    /// A write found the server not taking bytes: the count starts now,
    /// unless it already runs.
    pub(super) fn blocked(&self) {
        if !self.waiting.swap(true, Ordering::AcqRel) {
            self.moved.store(self.now(), Ordering::Release);
            self.queued.store(queued(self.socket), Ordering::Release);
        }
    }

    /// Whether the server took bytes the kernel held for it since the
    /// last look; the look is kept for the next.
    fn taken(&self) -> bool {
        let now = queued(self.socket);
        let before = self.queued.swap(now, Ordering::AcqRel);
        now != NOT_KNOWN && before != NOT_KNOWN && now < before
    }

    /// Whether the connection was given up as stalled.
    pub(super) fn was_stalled(&self) -> bool {
        self.stalled.load(Ordering::Acquire)
    }

    /// Resolves once a write has waited `idle` with no byte moving; the
    /// connection is then marked stalled. Run by the task that drives the
    /// connection, so its socket is open all the while.
    pub(super) async fn stall(&self, idle: Duration) {
        loop {
            let moved = self.opened + Duration::from_millis(self.moved.load(Ordering::Acquire));
            if !self.waiting.load(Ordering::Acquire) {
                tokio::time::sleep(idle).await;
            } else if moved.elapsed() < idle {
                tokio::time::sleep_until(moved + idle).await;
            } else if self.taken() {
                self.moved.store(self.now(), Ordering::Release);
            } else {
                self.stalled.store(true, Ordering::Release);
                return;
            }
        }
    }
}

/// [`queued`] could not say.
const NOT_KNOWN: u64 = u64::MAX;

/// The bytes written to `socket` that its peer has not yet acknowledged.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn queued(socket: RawFd) -> u64 {
    let mut queued: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ on a socket) writes one int, into a live
    // local; on a descriptor that is not a socket it fails harmlessly.
    let asked = unsafe { libc::ioctl(socket, libc::TIOCOUTQ, &raw mut queued) };
    match u64::try_from(queued) {
        Ok(queued) if asked == 0 => queued,
        _ => NOT_KNOWN,
    }
}

/// Elsewhere, only the writes tell.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn queued(_socket: RawFd) -> u64 {
    NOT_KNOWN
}

/// A request given up: its connection took no byte of it for so long.
#[derive(Debug)]
pub(crate) struct Stalled(pub Duration);

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server took no byte of the request for {} s",
            self.0.as_secs_f64()
        )
    }
}

impl std::error::Error for Stalled {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn only_a_write_that_waits_with_nothing_moving_is_a_stall() {
        let idle = Duration::from_secs(30);
        // No socket: only the writes tell.
        let progress = Progress::new(-1);
        // Idle with nothing to write (a long tool call): never a stall.
        let quiet = tokio::time::timeout(Duration::from_secs(300), progress.stall(idle)).await;
        assert!(quiet.is_err());
        // A write that waits, bytes moving now and then: no stall either.
        progress.blocked();
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_secs(20)).await;
            progress.moved();
            progress.blocked();
        }
        let moving = tokio::time::timeout(Duration::from_secs(29), progress.stall(idle)).await;
        assert!(moving.is_err());
        assert!(!progress.was_stalled());
        // Then nothing moves: a stall, 30 s after the last byte.
        let started = Instant::now();
        progress.stall(idle).await;
        assert!(progress.was_stalled());
        assert!(
            started.elapsed() <= Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
