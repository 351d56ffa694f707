//! A progress bar for long files.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Files at least this long show a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

/// A progress bar on stderr, drawn only for a long file when stderr is a
/// terminal, at most ten times a second.
pub struct Progress {
    bar: Option<Bar>,
}

struct Bar {
    name: String,
    len: u64,
    done: u64,
    since_check: u64,
    last_drawn: Instant,
    drawn: bool,
}

impl Progress {
    /// A bar for an input of `len` bytes, drawn only when it is long and
    /// stderr is a terminal.
    pub fn new(name: &str, len: Option<u64>) -> Progress {
        let bar = len
            .filter(|len| *len >= PROGRESS_MIN_BYTES && io::stderr().is_terminal())
            .map(|len| Bar {
                name: name.to_owned(),
                len,
                done: 0,
                since_check: 0,
                last_drawn: Instant::now(),
                drawn: false,
            });
        Progress { bar }
    }

    /// Notes that `bytes` more were read.
    pub fn advance(&mut self, bytes: u64) {
        let Some(bar) = self.bar.as_mut() else {
            return;
        };
        bar.done += bytes;
        bar.since_check += bytes;
        // Reading the clock per line would cost more than some lines do.
        if bar.since_check < 1 << 20 {
            return;
        }
        bar.since_check = 0;
        if bar.last_drawn.elapsed() >= Duration::from_millis(100) {
            bar.last_drawn = Instant::now();
            bar.draw();
        }
    }

    /// Takes the bar off the screen, so a message can be written; it comes
    /// back at the next update.
    pub fn clear(&mut self) {
        if let Some(bar) = self.bar.as_mut().filter(|bar| bar.drawn) {
            bar.drawn = false;
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

impl Bar {
    fn draw(&mut self) {
        const WIDTH: u64 = 30;
        let done = self.done.min(self.len);
        let filled = (done * WIDTH / self.len.max(1)) as usize;
        let line = format!(
            "\r\x1b[2K{} [{}{}] {:>3}% {}/{} MB",
            self.name,
            "#".repeat(filled),
            " ".repeat(WIDTH as usize - filled),
            done * 100 / self.len.max(1),
            done >> 20,
            self.len >> 20,
        );
        let _ = io::stderr().lock().write_all(line.as_bytes());
        self.drawn = true;
    }
}
