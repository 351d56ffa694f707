//! Waking the audit once the runtime has nothing left to do, for a door
//! with a tap per session (the reverse proxy).
//!
//! A door queues a line for the audit before it forwards it, and wakes the
//! audit's thread only once the line is on its way. Waking it as soon as a
//! message is forwarded puts a system call, and a thread the client and
//! the server share two cores with, between the server's answer and the
//! client: the reverse proxy added a third more, cold, that way
//! (BENCHMARKS.md, eighth round). Woken when the runtime parks, the audit
//! reads while the door waits, and once for a burst of messages. (A burst
//! that keeps the runtime from parking wakes the audit itself, every
//! [`WAKE_AT`](super::queue) lines.)

use std::sync::{Arc, Mutex, PoisonError};

use super::Tap;

/// The taps that queued a line since the runtime last went idle.
#[derive(Default)]
pub struct WakeAtPark {
    due: Mutex<Vec<Arc<Tap>>>,
}

impl WakeAtPark {
    /// `tap` queued a line: its audit is woken when the runtime parks.
    pub fn add(&self, tap: &Arc<Tap>) {
        let mut due = self.due();
        if !due.iter().any(|waiting| Arc::ptr_eq(waiting, tap)) {
            due.push(tap.clone());
        }
    }

    /// Wakes every tap added since the last call: the runtime's
    /// `on_thread_park`.
    pub fn wake(&self) {
        for tap in self.due().drain(..) {
            tap.wake();
        }
    }

    fn due(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Tap>>> {
        self.due.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use mcp_unknown_keys::audit::Auditor;

    use super::*;

    #[test]
    fn a_tap_added_twice_is_woken_once_then_let_go() {
        let due = WakeAtPark::default();
        let tap = || Arc::new(Tap::new(Auditor::new().with_sink(())));
        let (one, other) = (tap(), tap());
        due.add(&one);
        due.add(&other);
        due.add(&one);
        assert_eq!(due.due().len(), 2);
        due.wake();
        assert!(due.due().is_empty());
        // Woken, a tap is no longer held: a session that ended goes.
        assert_eq!(Arc::strong_count(&one), 1);
    }
}
