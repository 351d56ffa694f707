//! A door the bench speaks to: a process of its own, spoken to over HTTP
//! or line by line on its stdio, stopped when dropped.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::floors::{BARE_BRIDGE, BARE_KIND, TCP_RELAY};
use super::{CALLS_EACH, IN_FLIGHT, call};

/// A running door, stopped on drop.
pub struct Door {
    pub child: Child,
    /// Where an HTTP door listens.
    pub address: String,
    lines: Option<BufReader<std::process::ChildStdout>>,
}

impl Door {
    pub fn reverse(binary: &str, upstream: &str) -> Door {
        let mut child = Command::new(binary)
            .args([
                "proxy",
                "--quiet",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                upstream,
            ])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .split("http://")
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        Door {
            child,
            address,
            lines: None,
        }
    }

    /// The bench itself as a bare bridge of `kind` ([`BARE_KIND`]) in front
    /// of `server`.
    pub fn bare(kind: &str, server: &str) -> Door {
        Door::command(
            Command::new(std::env::current_exe().unwrap())
                .env(BARE_BRIDGE, server)
                .env(BARE_KIND, kind),
        )
    }

    /// The bench itself as [`floors::tcp_relay`] in front of `server`.
    pub fn relay(server: &str) -> Door {
        let mut relay = Door::command(Command::new(std::env::current_exe().unwrap()).env(TCP_RELAY, server));
        let mut address = String::new();
        relay.lines.as_mut().unwrap().read_line(&mut address).unwrap();
        relay.address = address.trim().to_owned();
        relay
    }

    pub fn bridge(binary: &str, url: &str) -> Door {
        Door::stdio(binary, &["proxy", "--quiet", "--url", url], Stdio::inherit())
    }

    /// A command spoken to line by line on its stdio.
    pub fn stdio(program: &str, args: &[&str], stderr: Stdio) -> Door {
        Door::command(Command::new(program).args(args).stderr(stderr))
    }

    /// A command spoken to line by line on its stdio.
    pub fn command(command: &mut Command) -> Door {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", command.get_program()));
        let lines = Some(BufReader::new(child.stdout.take().unwrap()));
        Door {
            child,
            address: String::new(),
            lines,
        }
    }

    /// Sends a line and reads the answer.
    pub fn line(&mut self, line: &String) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        self.lines.as_mut().unwrap().read_line(&mut answer).unwrap();
    }

    /// Calls per second with `IN_FLIGHT` calls kept in flight on stdio.
    pub fn throughput(&mut self) -> f64 {
        let total = IN_FLIGHT * CALLS_EACH;
        let answered = Arc::new(AtomicUsize::new(0));
        let mut lines = self.lines.take().unwrap();
        let counter = answered.clone();
        let start = Instant::now();
        let reader = thread::spawn(move || {
            let mut answer = String::new();
            for _ in 0..total {
                answer.clear();
                lines.read_line(&mut answer).unwrap();
                counter.fetch_add(1, Ordering::Release);
            }
            lines
        });
        let stdin = self.child.stdin.as_mut().unwrap();
        for id in 0..total {
            while id >= answered.load(Ordering::Acquire) + IN_FLIGHT {
                thread::yield_now();
            }
            stdin.write_all(call(id).as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
            stdin.flush().unwrap();
        }
        self.lines = Some(reader.join().unwrap());
        total as f64 / start.elapsed().as_secs_f64()
    }
}

impl Drop for Door {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
