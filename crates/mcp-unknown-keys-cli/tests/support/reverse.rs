//! `proxy --listen 127.0.0.1:0 --upstream URL`, run for a test: where it
//! listens, its stderr line by line as it comes, and its log once stopped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

use serde_json::Value;

use super::{PATIENCE, binary, wait_with_patience};

/// A running reverse proxy, stopped with SIGTERM on drop.
pub struct Reverse {
    child: Child,
    pub address: String,
    /// Each stderr line, as it comes.
    lines: mpsc::Receiver<String>,
    /// Every stderr line so far.
    stderr: Arc<Mutex<String>>,
    reader: Option<thread::JoinHandle<()>>,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Reverse {
    /// Starts the proxy in front of `upstream`, logging to a file of its
    /// own, with `options` besides.
    pub fn start(upstream: &str, options: &[&str]) -> Reverse {
        Reverse::start_with(upstream, options, |_| {})
    }

    /// [`Reverse::start`], the command adjusted by `adjust` before it
    /// starts (its environment, its limits).
    pub fn start_with(upstream: &str, options: &[&str], adjust: impl FnOnce(&mut Command)) -> Reverse {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("warnings.jsonl");
        let mut command = Command::new(binary());
        command
            .args([
                "proxy",
                "--log",
                log.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                upstream,
            ])
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().unwrap();
        let (send, lines) = mpsc::channel();
        let stderr = Arc::new(Mutex::new(String::new()));
        let kept = stderr.clone();
        let from_child = child.stderr.take().unwrap();
        let reader = thread::spawn(move || {
            for line in BufReader::new(from_child).lines() {
                let Ok(line) = line else { return };
                kept.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = send.send(line);
            }
        });
        let mut reverse = Reverse {
            child,
            address: String::new(),
            lines,
            stderr,
            reader: Some(reader),
            log,
            _dir: dir,
        };
        let line = reverse.wait_for_stderr(|line| line.contains("listening on http://"));
        reverse.address = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("the proxy said {line:?}"))
            .to_owned();
        reverse
    }

    /// The URL the proxy serves the MCP endpoint at.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Waits for the next stderr line that `wanted` accepts (lines before
    /// it are passed over here, but kept in what [`Reverse::stop`] returns).
    pub fn wait_for_stderr(&self, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => {}
                Err(_) => panic!(
                    "the awaited line is not on the proxy's stderr: {}",
                    self.stderr.lock().unwrap()
                ),
            }
        }
    }

    /// The proxy's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Stops the proxy; returns its stderr and the warnings it logged (the
    /// summary of each session left out).
    pub fn stop(self) -> (String, Vec<Value>) {
        let (stderr, lines) = self.stop_with_log();
        let warnings = lines
            .into_iter()
            .filter(|line| {
                ["summary", "verdict", "note"]
                    .iter()
                    .all(|kind| line.get(kind).is_none())
            })
            .collect();
        (stderr, warnings)
    }

    /// Stops the proxy: its stderr, and every line of its log.
    pub fn stop_with_log(mut self) -> (String, Vec<Value>) {
        terminate(&self.child);
        assert!(wait_with_patience(&mut self.child).success());
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines = log
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("each log line is JSON"))
            .collect();
        self.reader.take().unwrap().join().unwrap();
        let stderr = self.stderr.lock().unwrap().clone();
        (stderr, lines)
    }
}

impl Drop for Reverse {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            terminate(&self.child);
            let _ = self.child.wait();
        }
    }
}

fn terminate(child: &Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
}
