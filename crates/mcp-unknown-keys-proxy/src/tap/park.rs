//! Waking the audit once the runtime has nothing left to do, for a door
//! with a tap per session (the reverse proxy).
//!
//! A door queues a line for the audit before it forwards it, and wakes the
//! audit's thread itself once the line is on its way. Woken as soon as the
//! server's answer began, the audit put a system call, and a thread the
//! client and the server share two cores with, between the answer and the
//! client: 7 to 15 % of what the reverse proxy added, cold (BENCHMARKS.md,
//! eighth round). Woken when the runtime parks, the audit reads while the
//! door waits, once for a burst of messages.
//!
//! A runtime kept busy does not park. A tap wakes its own audit once 32 of
//! its lines wait ([`WAKE_AT`](super::queue)), but one session's call must
//! not wait on the others' traffic: a wake due for longer than
//! [`WAKE_WITHIN`], or due to more than [`MOST_DUE`] taps, is made at the
//! next line any session queues. (A runtime busy for longer with no line
//! queued at all, carrying bytes the tap does not read, still wakes the
//! audit only when it parks.)

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::Tap;

/// The longest a due wake waits for the runtime to park, while lines keep
/// coming: what the reverse proxy's timer for each call allowed before.
pub const WAKE_WITHIN: Duration = Duration::from_millis(20);

/// The most taps due a wake at once: past it they are woken at once, so
/// that the list (and the sessions it keeps) stays small.
pub const MOST_DUE: usize = 64;

/// The taps that queued a line since the runtime last went idle.
#[derive(Default)]
pub struct WakeAtPark {
    due: Mutex<Due>,
}

#[derive(Default)]
struct Due {
    taps: Vec<Arc<Tap>>,
    /// When the first of them was added.
    since: Option<Instant>,
}

impl WakeAtPark {
    /// `tap` queued a line: its audit is woken when the runtime parks, or
    /// here, if the wakes due have waited too long for that.
    pub fn add(&self, tap: &Arc<Tap>) {
        let mut due = self.due();
        if !due.taps.iter().any(|waiting| Arc::ptr_eq(waiting, tap)) {
            due.taps.push(tap.clone());
        }
        let Some(since) = due.since else {
            due.since = Some(Instant::now());
            return;
        };
        if due.taps.len() > MOST_DUE || since.elapsed() >= WAKE_WITHIN {
            wake_all(&mut due);
        }
    }

    /// Wakes every tap added since the last wake: the runtime's
    /// `on_thread_park`.
    pub fn wake(&self) {
        wake_all(&mut self.due());
    }

    fn due(&self) -> MutexGuard<'_, Due> {
        self.due.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Wakes the taps due, and forgets them. (`Tap::wake` takes no lock of
/// this list; dropping a tap's last handle closes its queue, which takes
/// only the queue's.)
fn wake_all(due: &mut Due) {
    due.since = None;
    for tap in due.taps.drain(..) {
        tap.wake();
    }
}

#[cfg(test)]
mod tests {
    use mcp_unknown_keys::audit::Auditor;

    use super::*;

    fn tap() -> Arc<Tap> {
        Arc::new(Tap::new(Auditor::new().with_sink(())))
    }

    #[test]
    fn a_tap_added_twice_is_woken_once_then_let_go() {
        let due = WakeAtPark::default();
        let (one, other) = (tap(), tap());
        due.add(&one);
        due.add(&other);
        due.add(&one);
        assert_eq!(due.due().taps.len(), 2);
        due.wake();
        assert!(due.due().taps.is_empty());
        // Woken, a tap is no longer held: a session that ended goes.
        assert_eq!(Arc::strong_count(&one), 1);
    }

    #[test]
    fn a_wake_due_too_long_is_made_by_the_next_line_queued() {
        let due = WakeAtPark::default();
        let (waiting, busy) = (tap(), tap());
        due.add(&waiting);
        due.add(&busy);
        assert_eq!(due.due().taps.len(), 2, "woken before its time");
        std::thread::sleep(WAKE_WITHIN);
        // The runtime has not parked: another session's line wakes both.
        due.add(&busy);
        assert!(due.due().taps.is_empty());
        assert_eq!(Arc::strong_count(&waiting), 1);
    }

    #[test]
    fn more_taps_due_than_the_most_are_woken_at_once() {
        let due = WakeAtPark::default();
        let taps: Vec<Arc<Tap>> = (0..=MOST_DUE).map(|_| tap()).collect();
        for tap in &taps[..MOST_DUE] {
            due.add(tap);
        }
        assert_eq!(due.due().taps.len(), MOST_DUE);
        due.add(&taps[MOST_DUE]);
        assert!(due.due().taps.is_empty());
    }
}
