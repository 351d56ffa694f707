//! The queue between the relays and the audit worker: copies of lines, in
//! the order the relays saw them, bounded in bytes.
//!
//! A relay only ever tries to push: when the queue is full the line is
//! refused at once (the caller counts it) and the relay goes on; it wakes
//! the worker only once the line is forwarded. The worker waits for lines;
//! anyone may wait until the worker has caught up. The lock is held for a
//! few counts and a move, never for work that grows with a line: the copy
//! of a line is made before it is taken.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How many lines may wait before the relay that queues the next one wakes
/// the worker itself: a door that wakes it only when idle (the bridge) may
/// never be idle under a steady stream of messages.
const WAKE_AT: usize = 32;

/// Which relay saw a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    Client,
    Server,
    /// A line the proxy wrote to the client in the server's place (an
    /// error answering a request the server could not be reached for).
    Proxy,
}

/// One line for the worker.
#[derive(Debug)]
pub(super) struct Entry {
    pub from: Source,
    pub line: Vec<u8>,
    /// The relay counted this line in the listing window (see
    /// `Shared::window`): the worker closes it once the line is read.
    pub in_window: bool,
    /// The relay counted this line as a call not yet read (see
    /// `Gates::calls_unread`): the worker uncounts it once read.
    pub may_call: bool,
}

/// A FIFO of entries holding at most a given number of line bytes.
pub(super) struct Queue {
    state: Mutex<State>,
    /// Signalled when entries arrive, when the queue closes, and when the
    /// worker finishes entries.
    changed: Condvar,
    /// Entries arrived while someone waited, and nobody was woken yet.
    wake_due: AtomicBool,
    /// `State::bytes` as last set, read without the lock to refuse a line
    /// that cannot fit before copying it.
    bytes_hint: AtomicUsize,
    capacity: usize,
}

#[derive(Default)]
struct State {
    entries: VecDeque<Entry>,
    /// The bytes of the lines queued or being read by the worker.
    bytes: usize,
    /// Entries pushed, and entries the worker has finished.
    pushed: u64,
    finished: u64,
    /// Someone waits on `changed` (skip the wake-up call when nobody does).
    waiters: usize,
    closed: bool,
}

impl Queue {
    /// A queue of at most `capacity` line bytes.
    pub(super) fn new(capacity: usize) -> Queue {
        Queue {
            state: Mutex::default(),
            changed: Condvar::new(),
            wake_due: AtomicBool::new(false),
            bytes_hint: AtomicUsize::new(0),
            capacity,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, mut state: MutexGuard<'a, State>, until: Option<Instant>) -> MutexGuard<'a, State> {
        state.waiters += 1;
        let mut state = match until {
            None => self.changed.wait(state).unwrap_or_else(PoisonError::into_inner),
            Some(at) => {
                let left = at.saturating_duration_since(Instant::now());
                self.changed
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
        };
        state.waiters -= 1;
        state
    }

    /// Queues a copy of `line`, unless it does not fit: then returns false
    /// at once. The copy is made before the lock is taken. The worker is not
    /// woken here: call [`Queue::wake`] once the line is forwarded, so the
    /// wake-up costs the relay nothing first.
    pub(super) fn try_push(&self, from: Source, line: &[u8], in_window: bool, may_call: bool) -> bool {
        if self.bytes_hint.load(Ordering::Relaxed) + line.len() > self.capacity {
            return false;
        }
        let entry = Entry {
            from,
            line: line.to_vec(),
            in_window,
            may_call,
        };
        self.push(entry).is_ok()
    }

    /// Queues `entry` as it is (a move, whatever its size), unless it does
    /// not fit or the queue is closed: then gives it back.
    fn push(&self, entry: Entry) -> Result<(), Entry> {
        let mut state = self.state();
        if state.closed || state.bytes + entry.line.len() > self.capacity {
            return Err(entry);
        }
        state.bytes += entry.line.len();
        self.bytes_hint.store(state.bytes, Ordering::Relaxed);
        state.pushed += 1;
        state.entries.push_back(entry);
        if state.waiters > 0 {
            self.wake_due.store(true, Ordering::Release);
        }
        let burst = state.entries.len() >= WAKE_AT;
        drop(state);
        if burst {
            self.wake();
        }
        Ok(())
    }

    /// Wakes the worker if a line pushed while it waited has not yet.
    pub(super) fn wake(&self) {
        if self.wake_due.swap(false, Ordering::AcqRel) {
            self.changed.notify_all();
        }
    }

    /// Every entry queued, in order, waiting for one; `None` once the
    /// queue is closed and empty. One lock for a whole burst of lines.
    pub(super) fn pop_all(&self) -> Option<VecDeque<Entry>> {
        let mut state = self.state();
        loop {
            if !state.entries.is_empty() {
                return Some(std::mem::take(&mut state.entries));
            }
            if state.closed {
                return None;
            }
            state = self.wait(state, None);
        }
    }

    /// The worker is done with `entries` entries popped earlier, of `bytes`
    /// in all.
    pub(super) fn finished(&self, entries: u64, bytes: usize) {
        let mut state = self.state();
        state.bytes -= bytes;
        self.bytes_hint.store(state.bytes, Ordering::Relaxed);
        state.finished += entries;
        let wake = state.waiters > 0;
        drop(state);
        if wake {
            self.changed.notify_all();
        }
    }

    /// Waits until the worker has finished every entry pushed before this
    /// call, for at most `within` (`None`: however long it takes). Returns
    /// how many of those entries it had not finished when the wait ended.
    pub(super) fn settle(&self, within: Option<Duration>) -> u64 {
        let until = within.map(|within| Instant::now() + within);
        let mut state = self.state();
        let target = state.pushed;
        // A line pushed by a relay still blocked in its write has woken
        // nobody yet.
        self.changed.notify_all();
        while state.finished < target {
            if until.is_some_and(|at| Instant::now() >= at) {
                break;
            }
            state = self.wait(state, until);
        }
        target.saturating_sub(state.finished)
    }

    /// No more entries: the worker ends once it has read those queued.
    pub(super) fn close(&self) {
        self.state().closed = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn lines_come_out_in_order_and_a_full_queue_refuses_without_waiting() {
        let queue = Queue::new(10);
        assert!(queue.try_push(Source::Client, b"12345", false, false));
        assert!(queue.try_push(Source::Server, b"6789", true, false));
        assert!(
            !queue.try_push(Source::Client, b"ab", false, false),
            "11 bytes do not fit in 10"
        );
        let popped: Vec<(Source, Vec<u8>)> = queue
            .pop_all()
            .unwrap()
            .into_iter()
            .map(|entry| (entry.from, entry.line))
            .collect();
        assert_eq!(
            popped,
            [
                (Source::Client, b"12345".to_vec()),
                (Source::Server, b"6789".to_vec())
            ]
        );
        // Popped but not finished: their bytes still count.
        assert!(!queue.try_push(Source::Client, b"ab", false, false));
        queue.finished(2, 9);
        assert!(queue.try_push(Source::Client, b"ab", false, false));
        assert_eq!(queue.pop_all().unwrap()[0].line, b"ab");
    }

    #[test]
    fn a_line_is_copied_before_the_lock_and_moved_under_it() {
        let queue = Queue::new(1 << 20);
        let line = vec![b'x'; 1 << 16];
        let at = line.as_ptr();
        let entry = Entry {
            from: Source::Client,
            line,
            in_window: false,
            may_call: false,
        };
        assert!(queue.push(entry).is_ok());
        let popped = queue.pop_all().unwrap();
        assert_eq!(
            popped[0].line.as_ptr(),
            at,
            "the queue keeps the allocation it was given"
        );
        // A line that cannot fit is refused before it is copied.
        assert!(!queue.try_push(
            Source::Client,
            &vec![b'y'; (1 << 20) - (1 << 16) + 1],
            false,
            false
        ));
        queue.finished(1, 1 << 16);
        assert!(queue.try_push(Source::Client, &vec![b'y'; 1 << 20], false, false));
    }

    #[test]
    fn settling_waits_for_the_worker_and_gives_up_when_told() {
        let queue = Arc::new(Queue::new(100));
        queue.try_push(Source::Client, b"one", false, false);
        assert_eq!(queue.settle(Some(Duration::from_millis(10))), 1);
        let worker = {
            let queue = queue.clone();
            thread::spawn(move || {
                while let Some(entries) = queue.pop_all() {
                    let bytes = entries.iter().map(|entry| entry.line.len()).sum();
                    queue.finished(entries.len() as u64, bytes);
                }
            })
        };
        queue.try_push(Source::Client, b"two", false, false);
        queue.wake();
        assert_eq!(queue.settle(None), 0);
        queue.close();
        worker.join().unwrap();
    }
}
