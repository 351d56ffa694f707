//! `--log FILE`: whole lines or nothing, written by a thread of its own.
//!
//! Nothing waits for the log: lines are handed to a writer thread through
//! a backlog bounded in bytes, so a log on a slow disk, or a FIFO nobody
//! reads, holds neither the relay nor the audit. The file is opened without
//! blocking (a FIFO with no reader yet is opened by the writer thread, once
//! a reader comes). Each line goes out in one piece; should a write fail,
//! or the backlog overflow, the log stops there for good, a line cut short
//! is taken back where the file allows it, and stderr says once, `--quiet`
//! or not, from which warning on the log is missing.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// The most bytes of lines waiting for the writer. A line is still taken
/// when nothing waits, however long, so no single warning is refused.
pub(super) const MAX_LOG_BACKLOG: usize = 64 * 1024 * 1024;

/// The log of one session.
pub(super) struct Log {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    lines: VecDeque<Line>,
    bytes: usize,
    /// Warnings handed to the log so far (the summary is not one), and
    /// those written.
    warnings: u64,
    written: u64,
    /// Once set, no line is taken any more.
    failed: bool,
    /// The writer has written or dropped every line handed to it.
    idle: bool,
    closed: bool,
}

struct Line {
    text: String,
    /// A warning's line, not a verdict's, a note's or the summary's.
    warning: bool,
}

impl Log {
    /// Opens FILE for appending, creating it, without waiting on a FIFO
    /// that has no reader yet. Fails at once on any other error.
    pub(super) fn open(path: &Path) -> io::Result<Log> {
        let file = match open_without_blocking(path) {
            Ok(file) => Some(file),
            // A FIFO without a reader: the writer waits for one.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => None,
            Err(e) => return Err(e),
        };
        let shared = Arc::new(Shared {
            path: path.to_owned(),
            state: Mutex::new(State {
                idle: true,
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let writer = shared.clone();
        thread::Builder::new()
            .name("log".into())
            .spawn(move || writer.write_all(file))?;
        Ok(Log { shared })
    }

    /// Hands one warning's line to the writer.
    pub(super) fn warning(&self, line: String) {
        self.push(line, true);
    }

    /// Hands a line that is not a warning (a verdict, a note, the
    /// summary) to the writer.
    pub(super) fn record(&self, line: String) {
        self.push(line, false);
    }

    fn push(&self, text: String, warning: bool) {
        let mut state = self.shared.state();
        if warning {
            state.warnings += 1;
        }
        if state.failed || state.closed {
            return;
        }
        if !state.lines.is_empty() && state.bytes + text.len() > MAX_LOG_BACKLOG {
            state.fail(&self.shared.path, "it could not keep up (its backlog is full)");
            return;
        }
        state.bytes += text.len();
        state.idle = false;
        state.lines.push_back(Line { text, warning });
        drop(state);
        self.shared.changed.notify_all();
    }

    /// No more lines: waits up to `within` for the writer to write those
    /// handed to it, then says on stderr which are missing, if any.
    pub(super) fn finish(&self, within: Duration) {
        let until = Instant::now() + within;
        let mut state = self.shared.state();
        state.closed = true;
        self.shared.changed.notify_all();
        while !state.idle && !state.failed {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.fail(
                    &self.shared.path,
                    "nothing took its lines before the session ended",
                );
                break;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer thread: opens the file if it could not be opened yet, then
    /// writes each line handed to it, until the log closes or fails.
    fn write_all(&self, file: Option<File>) {
        let mut file = match file {
            Some(file) => file,
            None => match OpenOptions::new().append(true).open(&self.path) {
                Ok(file) => file,
                Err(e) => return self.state().fail(&self.path, &e.to_string()),
            },
        };
        loop {
            let mut state = self.state();
            let line = loop {
                if state.failed {
                    return;
                }
                if let Some(line) = state.lines.pop_front() {
                    break line;
                }
                state.idle = true;
                self.changed.notify_all();
                if state.closed {
                    return;
                }
                state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
            };
            drop(state);
            let written = write_line(&mut file, &line.text);
            let mut state = self.state();
            state.bytes -= line.text.len();
            match written {
                Ok(()) => state.written += u64::from(line.warning),
                Err(e) => return state.fail(&self.path, &e.to_string()),
            }
        }
    }
}

impl State {
    /// The log stops for good; stderr says so once, naming the first
    /// warning missing from it.
    fn fail(&mut self, path: &Path, cause: &str) {
        if self.failed {
            return;
        }
        self.failed = true;
        self.lines.clear();
        let missing = if self.warnings > self.written {
            let first = ordinal(self.written + 1);
            format!("warnings from the {first} on, and the summary, are not in it")
        } else {
            "the summary is not in it".to_owned()
        };
        let _ = writeln!(
            io::stderr().lock(),
            "mcp-unknown-keys: the log {} failed: {cause}; {missing}",
            path.display()
        );
    }
}

/// Opens for appending without blocking, then makes writes block again (the
/// writer thread may wait; nothing else does).
fn open_without_blocking(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    // SAFETY: fcntl on a file this function owns, with integer arguments.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(file)
}

/// Writes `text` and a newline in one piece, or takes back what was written
/// of it (a regular file no other process appended to meanwhile), so the
/// file holds whole lines only.
fn write_line(file: &mut File, text: &str) -> io::Result<()> {
    let mut line = Vec::with_capacity(text.len() + 1);
    line.extend_from_slice(text.as_bytes());
    line.push(b'\n');
    let start = file.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let mut written = 0;
    while written < line.len() {
        match file.write(&line[written..]) {
            Ok(0) => return Err(take_back(file, start, written, ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(take_back(file, start, written, e)),
        }
    }
    Ok(())
}

fn take_back(file: &File, start: Option<u64>, written: usize, error: io::Error) -> io::Error {
    if let Some(start) = start
        && written > 0
        && file.metadata().is_ok_and(|m| m.len() == start + written as u64)
    {
        let _ = file.set_len(start);
    }
    error
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`…
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_as_english() {
        let all: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal).into();
        assert_eq!(
            all,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"
            ]
        );
    }

    #[test]
    fn lines_are_written_whole_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let log = Log::open(&path).unwrap();
        log.warning("{\"a\":1}".into());
        log.warning("{\"b\":2}".into());
        log.record("{\"summary\":{}}".into());
        log.finish(Duration::from_secs(10));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n{\"summary\":{}}\n"
        );
    }
}
