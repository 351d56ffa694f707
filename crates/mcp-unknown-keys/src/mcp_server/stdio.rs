//! A server started as a child process speaking MCP over stdio, and the
//! tail of its stderr, kept to explain its death.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::TokioChildProcess;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

use super::errors::ConnectError;
use super::{DEFAULT_TIMEOUT, McpServer};

/// How many of the server's last stderr lines are kept to explain its death.
const STDERR_TAIL_LINES: usize = 20;

impl McpServer {
    /// Describes a server to start as a child process speaking MCP over
    /// stdio; [`StdioServer::connect`] starts it.
    pub fn stdio(program: impl Into<OsString>) -> StdioServer {
        let program = program.into();
        let name = PathBuf::from(&program)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.to_string_lossy().into_owned());
        StdioServer {
            program,
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            name,
            timeout: DEFAULT_TIMEOUT,
            forward_stderr: true,
        }
    }
}

/// A server to start as a child process, from [`McpServer::stdio`].
#[derive(Clone, Debug)]
pub struct StdioServer {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
    name: String,
    timeout: Duration,
    forward_stderr: bool,
}

impl StdioServer {
    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> StdioServer {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> StdioServer {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child (the rest is inherited).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> StdioServer {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The directory the child starts in.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> StdioServer {
        self.current_dir = Some(dir.into());
        self
    }

    /// The name errors call the server by (the program's file name unless
    /// set).
    pub fn name(mut self, name: impl Into<String>) -> StdioServer {
        self.name = name.into();
        self
    }

    /// How long the handshake, a listing or a call may take
    /// ([`DEFAULT_TIMEOUT`] unless set).
    pub fn timeout(mut self, timeout: Duration) -> StdioServer {
        self.timeout = timeout;
        self
    }

    /// Whether the child's stderr lines are copied to this process's stderr
    /// (yes, unless set). Its last lines are kept either way, to explain a
    /// death.
    pub fn forward_stderr(mut self, forward: bool) -> StdioServer {
        self.forward_stderr = forward;
        self
    }

    /// Starts the child and completes the MCP handshake. Must be called
    /// within a Tokio runtime.
    pub async fn connect(self) -> Result<McpServer, ConnectError> {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args).envs(self.env.iter().cloned());
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        // The last line of defence, should the runtime go away first.
        command.kill_on_drop(true);

        let spawned = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn();
        let (transport, stderr) = spawned.map_err(|error| ConnectError {
            name: self.name.clone(),
            reason: format!("cannot start {:?}: {error}", self.program),
            stderr_tail: Vec::new(),
        })?;
        let stderr = stderr.map(|stderr| StderrTail::spawn(stderr, self.forward_stderr));
        let process_id = transport.id();
        McpServer::start(self.name, self.timeout, transport, stderr, process_id).await
    }
}

/// The last lines a child wrote to stderr, read by a task of its own (a
/// child whose stderr pipe fills up would block).
#[derive(Clone)]
pub(super) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    closed: watch::Receiver<bool>,
}

impl StderrTail {
    fn spawn(stderr: impl AsyncRead + Unpin + Send + 'static, forward: bool) -> StderrTail {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let (closed_tx, closed) = watch::channel(false);
        let keep = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if forward {
                    eprintln!("{line}");
                }
                let mut lines = keep.lock().unwrap_or_else(|e| e.into_inner());
                if lines.len() == STDERR_TAIL_LINES {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
            let _ = closed_tx.send(true);
        });
        StderrTail { lines, closed }
    }

    pub(super) fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect()
    }

    /// The tail once the child has closed its stderr, or after a short wait:
    /// a server that just died may still have its last words in the pipe.
    pub(super) async fn lines_at_exit(&self) -> Vec<String> {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(Duration::from_millis(500), closed.wait_for(|c| *c)).await;
        self.lines()
    }
}
