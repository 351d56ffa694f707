//! The proxy against a plain byte relay (`cat`) carrying the same traffic.
//!
//! `cargo bench -p mcp-unknown-keys-cli --bench proxy` prints a Markdown
//! table of ratios measured in this one run (absolute times on a shared
//! machine are noise); `MCP_UK_BENCH_RUNS=3` takes fewer runs of each, and
//! `MCP_UK_BENCH_THROUGHPUT_ONLY=1` stops after the throughput table. The bench binary also plays the servers: it runs
//! itself with `MCP_UK_BENCH_ROLE` set.
//!
//! - bulk server→client traffic: tool results of 4 KiB to 1 MiB;
//! - client→server `tools/call` traffic, audited by the proxy;
//! - the round-trip latency of a small `tools/call`, direct and proxied;
//! - the proxy's peak memory with a 100 MiB message each way.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const ROLE: &str = "MCP_UK_BENCH_ROLE";
const PROXY: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

/// The tool the servers list: one declared key, `path`.
const LISTING: &str = r#"{"tools":[{"name":"fs_read","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"}}}}]}"#;

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("emit") => emit(),
        Ok("sink") => serve(false),
        Ok("answer") => serve(true),
        _ => bench(),
    }
}

// ---- the servers -----------------------------------------------------------

/// Writes `COUNT` tool results of `SIZE` bytes each to stdout.
fn emit() {
    let size: usize = std::env::var("SIZE").unwrap().parse().unwrap();
    let count: usize = std::env::var("COUNT").unwrap().parse().unwrap();
    let line = result_line(size);
    let mut out = std::io::stdout().lock();
    for _ in 0..count {
        out.write_all(&line).unwrap();
    }
    out.flush().unwrap();
}

/// A `tools/call` response of about `size` bytes, newline included.
fn result_line(size: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":""#;
    let tail = "\"}],\"isError\":false}}\n";
    let mut line = head.as_bytes().to_vec();
    line.resize(size.saturating_sub(tail.len()).max(head.len()), b'x');
    line.extend_from_slice(tail.as_bytes());
    line
}

/// Answers `tools/list`; answers each `tools/call` with a small result when
/// `answer`, else reads it and moves on.
fn serve(answer: bool) {
    let mut input = BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).unwrap() == 0 {
            return;
        }
        let listing = contains(&line, b"tools/list");
        if !listing && !answer {
            continue;
        }
        let id = id_of(&line);
        let reply = if listing {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{LISTING}}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}]}}}}"#)
        };
        out.write_all(reply.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        out.flush().unwrap();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The id of a request whose `"id":N` comes first (the bench writes them so).
fn id_of(line: &[u8]) -> String {
    let text = std::str::from_utf8(line).unwrap();
    let start = text.find("\"id\":").unwrap() + 5;
    text[start..].split([',', '}']).next().unwrap().to_owned()
}

// ---- the set-ups -------------------------------------------------------------

fn role(name: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(ROLE, name);
    command
}

/// `server` behind the proxy, or behind `cat` in each direction asked
/// (`relay_in`: client→server, `relay_out`: server→client), or direct.
struct Route {
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    children: Vec<Child>,
    proxy: Option<u32>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Via {
    Direct,
    Cat,
    Proxy,
}

fn route(via: Via, mut server: Command) -> Route {
    match via {
        Via::Direct => {
            let mut child = server
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            Route {
                stdin: child.stdin.take(),
                stdout: child.stdout.take().unwrap(),
                children: vec![child],
                proxy: None,
            }
        }
        Via::Cat => {
            // client → cat → server → cat → client
            let mut cat_in = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut child = server
                .stdin(cat_in.stdout.take().unwrap())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut cat_out = Command::new("cat")
                .stdin(child.stdout.take().unwrap())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            Route {
                stdin: cat_in.stdin.take(),
                stdout: cat_out.stdout.take().unwrap(),
                children: vec![cat_in, child, cat_out],
                proxy: None,
            }
        }
        Via::Proxy => {
            let program = server.get_program().to_owned();
            let envs: Vec<_> = server
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
                .collect();
            let mut proxy = Command::new(PROXY);
            proxy
                .args(["proxy", "--quiet", "--"])
                .arg(program)
                .args(server.get_args());
            for (key, value) in envs {
                if let Some(value) = value {
                    proxy.env(key, value);
                }
            }
            let mut child = proxy
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            Route {
                stdin: child.stdin.take(),
                stdout: child.stdout.take().unwrap(),
                proxy: Some(child.id()),
                children: vec![child],
            }
        }
    }
}

impl Route {
    fn finish(mut self) {
        drop(self.stdin.take());
        for mut child in self.children.drain(..) {
            let _ = child.wait();
        }
    }
}

// ---- the measures ------------------------------------------------------------

/// The best of several runs: on a shared machine, the run least disturbed
/// by others is the one that shows what the program costs.
fn best(xs: Vec<f64>) -> f64 {
    xs.into_iter().fold(f64::INFINITY, f64::min)
}

fn percentile(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[((xs.len() as f64 - 1.0) * p).round() as usize]
}

/// Seconds to carry `count` results of `size` bytes from server to client.
fn bulk_once(via: Via, size: usize, count: usize) -> f64 {
    let mut server = role("emit");
    server
        .env("SIZE", size.to_string())
        .env("COUNT", count.to_string());
    let started = Instant::now();
    let mut r = route(via, server);
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    loop {
        let n = r.stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(total, result_line(size).len() * count);
    r.finish();
    elapsed
}

/// Seconds to carry `count` `tools/call` requests of about `size` bytes from
/// client to server, after a listing, until the server has read them all.
fn calls_once(via: Via, size: usize, count: usize) -> f64 {
    let mut r = route(via, role("sink"));
    let mut stdin = r.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#).unwrap();
    let mut reply = String::new();
    BufReader::new(&mut r.stdout).read_line(&mut reply).unwrap();
    assert!(reply.contains("fs_read"));
    let padding = "p".repeat(size.saturating_sub(120));
    let mut batch = Vec::new();
    for id in 0..count {
        writeln!(
            batch,
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"{padding}","offset":3,"ffset":4}}}}}}"#,
            id + 2
        )
        .unwrap();
    }
    let started = Instant::now();
    let mut writer = BufWriter::with_capacity(1 << 16, stdin);
    writer.write_all(&batch).unwrap();
    drop(writer);
    r.finish();
    started.elapsed().as_secs_f64()
}

/// Round-trip times (µs) of small `tools/call` requests answered at once.
fn round_trips(via: Via, count: usize) -> Vec<f64> {
    let mut r = route(via, role("answer"));
    let mut stdin = r.stdin.take().unwrap();
    let mut stdout = BufReader::new(&mut r.stdout);
    let mut reply = String::new();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#).unwrap();
    stdout.read_line(&mut reply).unwrap();
    let mut times = Vec::with_capacity(count);
    for id in 0..count + 100 {
        let call = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"fs_read\",\"arguments\":{{\"path\":\"src/main.rs\",\"offset\":1}}}}}}\n",
            id + 2
        );
        reply.clear();
        let started = Instant::now();
        stdin.write_all(call.as_bytes()).unwrap();
        stdout.read_line(&mut reply).unwrap();
        let elapsed = started.elapsed();
        if id >= 100 {
            times.push(elapsed.as_secs_f64() * 1e6); // after a warm-up
        }
    }
    drop(stdout);
    r.stdin = Some(stdin);
    r.finish();
    times
}

/// The proxy's peak resident memory (KiB) while one message of `size`
/// bytes goes server→client (`to_client`) or client→server.
fn peak_memory(size: usize, to_client: bool) -> u64 {
    let mut r = if to_client {
        let mut server = role("emit");
        server.env("SIZE", size.to_string()).env("COUNT", "1");
        route(Via::Proxy, server)
    } else {
        route(Via::Proxy, role("sink"))
    };
    let pid = r.proxy.unwrap();
    let sampler = thread::spawn(move || {
        let mut peak = 0;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kib) = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
            {
                peak = kib;
            }
            thread::sleep(Duration::from_millis(2));
        }
        peak
    });
    if to_client {
        std::io::copy(&mut r.stdout, &mut std::io::sink()).unwrap();
    } else {
        let mut stdin = r.stdin.take().unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#).unwrap();
        let mut reply = String::new();
        BufReader::new(&mut r.stdout).read_line(&mut reply).unwrap();
        let head = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_read","arguments":{"ffset":1,"path":""#;
        stdin.write_all(head.as_bytes()).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..size >> 20 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}}}\n").unwrap();
    }
    r.finish();
    sampler.join().unwrap()
}

fn bench() {
    // `MCP_UK_BENCH_RUNS=3` for a quick look; the figures to quote take 9.
    let runs = std::env::var("MCP_UK_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(9);
    println!("### Proxy throughput (best of {runs} interleaved runs; ratio = relay time / proxy time)\n");
    println!("| traffic | message | `cat` relay | proxy | proxy / relay |");
    println!("|---|---|---|---|---|");
    for (size, count) in [(4 << 10, 16 << 10), (64 << 10, 1 << 10), (1 << 20, 64)] {
        let mut cat = Vec::new();
        let mut proxy = Vec::new();
        for _ in 0..runs {
            cat.push(bulk_once(Via::Cat, size, count));
            proxy.push(bulk_once(Via::Proxy, size, count));
        }
        let bytes = (result_line(size).len() * count) as f64;
        let (cat, proxy) = (best(cat), best(proxy));
        println!(
            "| server→client results | {} KiB | {:.0} MiB/s | {:.0} MiB/s | {:.2}× |",
            size >> 10,
            bytes / cat / (1 << 20) as f64,
            bytes / proxy / (1 << 20) as f64,
            cat / proxy
        );
    }
    for (size, count) in [(200, 100_000), (4 << 10, 16 << 10)] {
        let mut cat = Vec::new();
        let mut proxy = Vec::new();
        for _ in 0..runs {
            cat.push(calls_once(Via::Cat, size, count));
            proxy.push(calls_once(Via::Proxy, size, count));
        }
        let (cat, proxy) = (best(cat), best(proxy));
        println!(
            "| client→server `tools/call` (audited) | {} B | {:.0} k calls/s | {:.0} k calls/s | {:.2}× |",
            size,
            count as f64 / cat / 1e3,
            count as f64 / proxy / 1e3,
            cat / proxy
        );
    }

    if std::env::var_os("MCP_UK_BENCH_THROUGHPUT_ONLY").is_some() {
        return;
    }

    println!("\n### Round trip of a small `tools/call` (µs, 2 000 calls each)\n");
    println!("| route | median | p99 | added at the median | added at p99 |");
    println!("|---|---|---|---|---|");
    let mut direct = round_trips(Via::Direct, 2000);
    let mut cat = round_trips(Via::Cat, 2000);
    let mut proxy = round_trips(Via::Proxy, 2000);
    let (dm, dp) = (percentile(&mut direct, 0.5), percentile(&mut direct, 0.99));
    for (name, times) in [
        ("direct", &mut direct),
        ("`cat` each way", &mut cat),
        ("proxy", &mut proxy),
    ] {
        let (m, p) = (percentile(times, 0.5), percentile(times, 0.99));
        println!("| {name} | {m:.1} | {p:.1} | {:+.1} | {:+.1} |", m - dm, p - dp);
    }

    println!("\n### Peak memory of the proxy with one 100 MiB message\n");
    println!("| direction | peak resident memory |");
    println!("|---|---|");
    println!(
        "| server→client result | {:.1} MiB |",
        peak_memory(100 << 20, true) as f64 / 1024.0
    );
    println!(
        "| client→server `tools/call` | {:.1} MiB |",
        peak_memory(100 << 20, false) as f64 / 1024.0
    );
}
