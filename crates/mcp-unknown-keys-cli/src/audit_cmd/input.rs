//! Reading the input line by line, with a progress bar for long files.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Files at least this long show a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 32 << 20;
/// A line buffer grown past this by one long line is given back afterwards,
/// so one huge line does not hold its memory for the rest of the run.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// One input: a file, or stdin.
pub struct Input {
    /// How the input is named in messages (`stdin` for stdin).
    pub name: String,
    reader: Box<dyn BufRead>,
    len: Option<u64>,
}

impl Input {
    /// Standard input.
    pub fn stdin() -> Input {
        Input {
            name: "stdin".to_owned(),
            reader: Box::new(io::stdin().lock()),
            len: None,
        }
    }

    /// Opens a file; the error says which file and why. `-` is stdin.
    pub fn open(path: &Path) -> Result<Input, String> {
        if path == Path::new("-") {
            return Ok(Input::stdin());
        }
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| format!("cannot open the input {name}: {e}"))?;
        let metadata = file
            .metadata()
            .map_err(|e| format!("cannot read the input {name}: {e}"))?;
        if metadata.is_dir() {
            return Err(format!("cannot read the input {name}: it is a directory"));
        }
        Ok(Input {
            name,
            reader: Box::new(BufReader::with_capacity(256 << 10, file)),
            len: Some(metadata.len()),
        })
    }

    /// Calls `on_line` with each line (without its line ending) and its
    /// number, counted from 1. Lines are read into one reused buffer, so
    /// memory holds one line at a time whatever the input's length.
    pub fn for_each_line(mut self, mut on_line: impl FnMut(&[u8], u64, &mut Progress)) -> io::Result<()> {
        let mut progress = Progress::new(&self.name, self.len);
        let mut buffer = Vec::with_capacity(64 << 10);
        let mut number = 0;
        loop {
            buffer.clear();
            let read = self.reader.read_until(b'\n', &mut buffer)?;
            if read == 0 {
                break;
            }
            number += 1;
            on_line(&buffer, number, &mut progress);
            progress.advance(read as u64);
            if buffer.capacity() > KEPT_BUFFER_BYTES {
                buffer = Vec::with_capacity(64 << 10);
            }
        }
        progress.clear();
        Ok(())
    }
}

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
    fn new(name: &str, len: Option<u64>) -> Progress {
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

    fn advance(&mut self, bytes: u64) {
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
