//! A progress bar for long files.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use mcp_unknown_keys_logs::Progress;

/// Files at least this long show a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

/// A progress bar on stderr, drawn only for a long file when stderr is a
/// terminal, at most ten times a second.
#[derive(Default)]
pub(super) struct ProgressBar {
    bar: Option<Bar>,
    /// Whether the input being read was looked at for a bar.
    looked: bool,
}

struct Bar {
    name: String,
    len: u64,
    done: u64,
    checked: u64,
    last_drawn: Instant,
    drawn: bool,
}

impl ProgressBar {
    /// Notes how far an input has been read.
    pub(super) fn update(&mut self, progress: &Progress<'_>) {
        if progress.done {
            self.clear();
            self.bar = None;
            self.looked = false;
            return;
        }
        if !std::mem::replace(&mut self.looked, true) {
            self.bar = progress
                .size
                .filter(|len| *len >= PROGRESS_MIN_BYTES && io::stderr().is_terminal())
                .map(|len| Bar {
                    name: progress.input.to_owned(),
                    len,
                    done: 0,
                    checked: 0,
                    last_drawn: Instant::now(),
                    drawn: false,
                });
        }
        let Some(bar) = self.bar.as_mut() else {
            return;
        };
        bar.done = progress.read;
        // Reading the clock per line would cost more than some lines do.
        if bar.done - bar.checked < 1 << 20 {
            return;
        }
        bar.checked = bar.done;
        if bar.last_drawn.elapsed() >= Duration::from_millis(100) {
            bar.last_drawn = Instant::now();
            bar.draw();
        }
    }

    /// Takes the bar off the screen, so a message can be written; it comes
    /// back at the next update.
    pub(super) fn clear(&mut self) {
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
