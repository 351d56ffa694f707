//! Shared by the integration tests: start the proxy, talk to it line by
//! line, read its warnings; generate transcripts for `audit`.

#![allow(dead_code)] // each test file uses a part

pub mod library;
#[cfg(feature = "remote")]
pub mod paced;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "remote")]
pub mod reverse;
#[cfg(feature = "remote")]
pub mod scripted;
pub mod servers;
pub mod transcript;

#[allow(unused_imports)] // each test binary uses its own part
pub use servers::{ScratchDir, block_on, stderr_of};

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a test waits for any one answer before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The `mcp-unknown-keys` binary under test: this build's, or the one
/// `MCP_UK_TEST_BINARY` names (to check that a regression test fails on an
/// older build).
pub fn binary() -> String {
    std::env::var("MCP_UK_TEST_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-unknown-keys").to_owned())
}

/// The path of a third-party test prerequisite, from the environment
/// `scripts/test-deps` prints; fails the test when it is missing.
pub fn prerequisite(var: &str) -> String {
    match std::env::var(var) {
        Ok(path) if Path::new(&path).exists() => path,
        Ok(path) => panic!("{var}={path} does not exist: run scripts/test, which installs it"),
        Err(_) => {
            panic!("{var} is not set: run scripts/test, which installs it (or eval \"$(scripts/test-deps)\")")
        }
    }
}

/// `mcp-unknown-keys proxy OPTIONS -- SERVER...` with piped stdio.
pub fn proxy_command(options: &[&str], server: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .arg("proxy")
        .args(options)
        .arg("--")
        .args(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A running proxy, spoken to line by line.
pub struct Session {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Option<thread::JoinHandle<String>>,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Session {
    /// Starts `proxy --log LOG OPTIONS -- SERVER...`, LOG a fresh file.
    pub fn start(options: &[&str], server: &[&str]) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("warnings.jsonl");
        Session::start_in(dir, log, options, server, |_| {})
    }

    /// Starts `proxy --log LOG OPTIONS -- SERVER...` with the LOG given.
    pub fn start_logging_to(log: &str, options: &[&str], server: &[&str]) -> Session {
        Session::start_in(tempfile::tempdir().unwrap(), log.into(), options, server, |_| {})
    }

    /// [`Session::start`] with the LOG given and the proxy's command
    /// adjusted by `adjust` before it starts.
    pub fn start_with(
        log: &Path,
        options: &[&str],
        server: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Session {
        Session::start_in(tempfile::tempdir().unwrap(), log.into(), options, server, adjust)
    }

    fn start_in(
        dir: tempfile::TempDir,
        log: PathBuf,
        options: &[&str],
        server: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Session {
        let mut all = vec!["--log", log.to_str().unwrap()];
        all.extend_from_slice(options);
        let mut command = proxy_command(&all, server);
        adjust(&mut command);
        let mut child = command.spawn().expect("the proxy starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if send.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Session {
            child,
            stdin,
            lines,
            stderr: Some(stderr),
            log,
            _dir: dir,
        }
    }

    /// Sends raw bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.as_mut().expect("stdin open").write_all(bytes).unwrap();
    }

    /// Sends one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// The next line the proxy wrote to stdout, newline included.
    pub fn recv(&mut self) -> Vec<u8> {
        self.lines
            .recv_timeout(PATIENCE)
            .expect("the proxy forwards a line in time")
    }

    /// The next line the proxy wrote to stdout, if one comes within
    /// `patience`.
    pub fn try_recv(&mut self, patience: Duration) -> Option<Vec<u8>> {
        self.lines.recv_timeout(patience).ok()
    }

    /// Sends a line to an echoing server and checks it comes back unchanged:
    /// the proxy has seen it in both directions once this returns.
    pub fn echo(&mut self, line: &str) {
        self.send(line);
        let back = self.recv();
        assert_eq!(String::from_utf8_lossy(&back), format!("{line}\n"));
    }

    /// Closes stdin and waits for the proxy to exit.
    pub fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let status = wait_with_patience(&mut self.child);
        let stderr = self.stderr.take().unwrap().join().unwrap();
        let mut stdout = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            stdout.extend(line);
        }
        Finished {
            status,
            stderr,
            stdout,
            warnings: read_warnings(&self.log),
            log: read_log(&self.log),
        }
    }

    /// The warnings logged so far.
    pub fn warnings(&self) -> Vec<Value> {
        read_warnings(&self.log)
    }

    /// Waits until at least `count` warnings are logged: the audit runs
    /// off the relay, a heavy one after the call is forwarded.
    pub fn wait_for_warnings(&self, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            // Parsed once the log can hold enough warnings, not on every
            // poll: a test that waits after each of many calls parsed the
            // whole log each time (the flood test's 66 waits: 40 % of its
            // CPU time).
            if lines_naming_unknown_keys(&self.log) >= count {
                let warnings = self.warnings();
                if warnings.len() >= count {
                    return warnings;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{count} warning(s) in time: {:?}",
                self.warnings()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Session {
    /// Stops a proxy still running with SIGTERM, which it forwards, so that
    /// its server does not outlive the test.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// How a session ended.
pub struct Finished {
    /// The proxy's exit status.
    pub status: ExitStatus,
    /// Everything the proxy (and the server) wrote to stderr.
    pub stderr: String,
    /// What the proxy wrote to stdout after the last line read.
    pub stdout: Vec<u8>,
    /// Every warning logged.
    pub warnings: Vec<Value>,
    /// The log as written.
    pub log: String,
}

impl Finished {
    /// The stderr lines that are warnings (not notices such as a failing
    /// log's).
    pub fn warning_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("mcp-unknown-keys: ") && l.contains(" was called with "))
            .collect()
    }

    /// The stderr lines of the summary printed on exit: its heading and the
    /// indented rows under it.
    pub fn summary_lines(&self) -> Vec<&str> {
        let mut lines = self
            .stderr
            .lines()
            .skip_while(|l| !l.starts_with("mcp-unknown-keys summary: "));
        let heading = lines.next().into_iter();
        heading.chain(lines.take_while(|l| l.starts_with("  "))).collect()
    }
}

impl Finished {
    /// The verdicts logged.
    pub fn verdicts(&self) -> Vec<Value> {
        self.log
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line.get("verdict").is_some())
            .collect()
    }

    /// The summary the proxy logged as its last line, once the session
    /// ended: `{"coverage":…,"findings":[…],"declared_keys":{…}}`.
    pub fn logged_summary(&self) -> Value {
        let last = self.log.lines().last().expect("the log has a summary line");
        let line: Value = serde_json::from_str(last).expect("each log line is JSON");
        line["summary"].clone()
    }
}

/// Whether a process exists and is not a zombie (Linux: from /proc). A
/// child killed as its runtime goes away is reaped by tokio only when a
/// runtime next handles a SIGCHLD or spawns a process, which, in a test
/// run alone, never comes: until then it is a zombie.
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Waits for a child to exit, killing it and failing after [`PATIENCE`].
pub fn wait_with_patience(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the process did not exit in time");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Reads a warnings log: one JSON object per line, each warning checked to
/// carry the four fields with the right types. The verdict and note lines,
/// and the summary line the proxy adds on exit, which must come last, are
/// left out. A last line still being written (no newline yet) is not read:
/// the log writes whole lines.
pub fn read_warnings(log: &Path) -> Vec<Value> {
    let lines = read_lines(log);
    if let Some(at) = lines.iter().position(|line| line.get("summary").is_some()) {
        assert_eq!(at, lines.len() - 1, "the summary comes last");
    }
    lines
        .into_iter()
        .filter(|line| {
            ["verdict", "note", "summary"]
                .iter()
                .all(|kind| line.get(kind).is_none())
        })
        .inspect(|warning| {
            assert!(warning["tool"].is_string(), "{warning}");
            assert!(warning["unknown_keys"].is_array(), "{warning}");
            assert!(warning["declared_keys"].is_array(), "{warning}");
            assert!(warning["id"].is_string(), "{warning}");
        })
        .collect()
}

/// A log line without the attribution the proxy adds to each: `ts`,
/// `server`, `session`.
pub fn unattributed(mut line: Value) -> Value {
    if let Some(members) = line.as_object_mut() {
        for member in ["ts", "server", "session"] {
            members.remove(member);
        }
    }
    line
}

/// The log's verdict lines: `{"verdict":…,"tool":…,"id":…,"unknown_keys":[…],…}`.
pub fn read_verdicts(log: &Path) -> Vec<Value> {
    read_lines(log)
        .into_iter()
        .filter(|line| line.get("verdict").is_some())
        .collect()
}

/// The log's note lines: `{"note":{…}}`.
pub fn read_notes(log: &Path) -> Vec<Value> {
    read_lines(log)
        .into_iter()
        .filter_map(|line| line.get("note").cloned())
        .collect()
}

/// How many of the log's lines name `unknown_keys`: every warning does (so
/// do verdicts), read without parsing.
fn lines_naming_unknown_keys(log: &Path) -> usize {
    read_log(log)
        .lines()
        .filter(|line| line.contains(r#""unknown_keys""#))
        .count()
}

/// Every whole line of a log, each parsed as JSON.
pub fn read_lines(log: &Path) -> Vec<Value> {
    let text = read_log(log);
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    whole
        .lines()
        .map(|line| serde_json::from_str(line).expect("each log line is JSON"))
        .collect()
}

/// The log as written, when it is a regular file (not a device or a FIFO,
/// which cannot be read back).
pub fn read_log(log: &Path) -> String {
    if log.is_file() {
        std::fs::read_to_string(log).unwrap_or_default()
    } else {
        String::new()
    }
}

/// The (tool, unknown keys, id) of each warning, for compact assertions.
pub fn summary(warnings: &[Value]) -> Vec<(String, Vec<String>, String)> {
    warnings
        .iter()
        .map(|w| {
            let keys = w["unknown_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_owned())
                .collect();
            (
                w["tool"].as_str().unwrap().to_owned(),
                keys,
                w["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A `tools/list` request.
pub fn list_request(id: &str, cursor: Option<&str>) -> String {
    match cursor {
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        Some(cursor) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"cursor":"{cursor}"}}}}"#)
        }
    }
}

/// A `tools/list` response listing `tools` (name, declared keys), written as
/// the TypeScript SDK writes it (`result` first, `id` last).
pub fn list_response(id: &str, tools: &[(&str, &[&str])], next_cursor: Option<&str>) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|(name, keys)| {
            let properties: serde_json::Map<String, Value> = keys
                .iter()
                .map(|k| (k.to_string(), serde_json::json!({"type": "string"})))
                .collect();
            serde_json::json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
        })
        .collect();
    let mut result = serde_json::json!({ "tools": tools });
    if let Some(cursor) = next_cursor {
        result["nextCursor"] = cursor.into();
    }
    format!(r#"{{"result":{result},"jsonrpc":"2.0","id":{id}}}"#)
}

/// A `tools/call` request.
pub fn call(id: &str, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}
