//! The remote doors against a direct HTTP client, side by side in one run.
//!
//! `cargo bench -p mcp-unknown-keys-cli --bench proxy_http` prints a
//! Markdown table. The bench plays the server itself (a hyper server on
//! loopback answering `tools/call` with a small JSON result) and the
//! clients:
//!
//! - the round trip of a small `tools/call`: direct (HTTP, keep-alive),
//!   through the reverse proxy (`--listen`), and through the bridge
//!   (`--url`: a line on stdin, a line on stdout), in two regimes: warm
//!   (each route's calls in a row) and cold (the routes taking turns call
//!   by call, so each call finds the caches as another process left them,
//!   as a host's calls, seconds apart, do) — the median of the best of
//!   several runs, and what each door adds to the direct median within
//!   each run (the median over runs, and its range); and the CPU time and
//!   context switches each door's process spends per call (all its
//!   threads, from `/proc`: the direct route has no process of its own, so
//!   this is what the door adds);
//! - throughput with 32 calls in flight: 32 HTTP clients direct and through
//!   the reverse proxy; 32 calls pipelined through the bridge's stdio.
//!
//! With `PROXY_BENCH_BASELINE=PATH` (another build of the binary; several,
//! separated by `:`, each named by its file name), that build's doors run
//! in the same rounds, taking turns with this one's, so that a change is
//! compared under the same load (the latency of loopback wake-ups on these
//! shared machines moves threefold between idle and busy).
//! With `PROXY_BENCH_MCP_REMOTE=PATH` (the `mcp-remote` command of the npm
//! package, the stdio→HTTP bridge hosts use), it takes its turn too, and the
//! bench says what the bridge adds as a ratio of what `mcp-remote` adds
//! (`scripts/bench-remote` installs the pinned `mcp-remote` and sets it).
//! Each run also sends lines through `cat` and back: the two pipe hops a
//! stdio bridge adds to an HTTP round trip, which no bridge can avoid;
//! through three bare bridges that read nothing of the messages (blocking
//! and hand-written, then as one tokio task, then with hyper's client): the
//! least a bridge adds, and what the runtime and the HTTP client each add
//! to that; and calls through a TCP relay, a process that copies each
//! connection's bytes to the server and back on one thread, as the doors
//! run, reading none of them: the least any HTTP proxy of its own process
//! adds.
//!
//! With `PROXY_BENCH_PROFILE=1` it times nothing: it counts, with
//! valgrind's callgrind, the instructions a call costs the bridge and each
//! bare bridge, on the call's path and after it ([`profile`]).

use std::process::Stdio;
use std::thread;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

#[path = "proxy_http/door.rs"]
mod door;
#[path = "proxy_http/floors.rs"]
mod floors;
#[path = "proxy_http/profile.rs"]
mod profile;
#[path = "proxy_http/usage.rs"]
mod usage;

use door::Door;
use floors::{BARE, BARE_BRIDGE, BARE_KIND, HYPER_BARE, RELAY, TCP_RELAY, TOKIO_BARE};
use usage::{Cost, Usage};

const PROXY: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");
const LISTING: &str = r#"{"tools":[{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]}"#;
const ROUND_TRIPS: usize = 1000;
const IN_FLIGHT: usize = 32;
const CALLS_EACH: usize = 200;
const RUNS: usize = 9;

fn call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"a"}}}}}}"#
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks; nothing to list
    }
    if let Ok(server) = std::env::var(BARE_BRIDGE) {
        return match std::env::var(BARE_KIND).as_deref() {
            Ok("blocking") => floors::bare_bridge(&server),
            Ok("tokio") => floors::tokio_bare_bridge(&server),
            Ok("hyper") => floors::hyper_bare_bridge(&server),
            kind => panic!(
                "{BARE_KIND} must be blocking, tokio or hyper (is {})",
                kind.unwrap_or("unset")
            ),
        };
    }
    if let Ok(server) = std::env::var(TCP_RELAY) {
        return floors::tcp_relay(&server);
    }
    let server = serve();
    let url = format!("http://{server}/mcp");
    if std::env::var_os(profile::PROFILE).is_some() {
        return profile::profile(PROXY, &url, &server);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut builds = vec![Doors::start("", PROXY, &url, &runtime)];
    let baselines = std::env::var("PROXY_BENCH_BASELINE").unwrap_or_default();
    for baseline in baselines.split(':').filter(|path| !path.is_empty()) {
        let label = match std::path::Path::new(baseline).file_name() {
            Some(name) if baselines.contains(':') => format!(" (baseline {})", name.to_string_lossy()),
            _ => " (baseline)".to_owned(),
        };
        builds.push(Doors::start(label, baseline, &url, &runtime));
    }
    let mut peer = std::env::var("PROXY_BENCH_MCP_REMOTE").ok().map(|program| {
        let mut peer = Door::stdio(&program, &[&url, "--allow-http"], Stdio::null());
        peer.line(&r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#.to_owned());
        peer
    });
    let mut peer_rate = 0f64;
    // The bridge's floor: its host's line crosses two pipes, in and out,
    // which a direct HTTP client does not. `cat` crosses them doing nothing.
    let mut echo = Door::stdio("cat", &[], Stdio::inherit());
    // The least a stdio bridge can add: the two pipe hops, and the HTTP
    // exchange moved from the host into the bridge.
    let mut bare = Door::bare("blocking", &server);
    // The same on tokio's runtime, then with hyper's client: what each of
    // the two adds to the floor, before anything of the bridge's own.
    let mut tokio_bare = Door::bare("tokio", &server);
    let mut hyper_bare = Door::bare("hyper", &server);
    // The least a reverse proxy can add: a process between the two.
    let relay = Door::relay(&server);
    let relay_url = format!("http://{}/mcp", relay.address);

    // The routes, in the order `routes` below gives them.
    let mut names = vec!["direct HTTP".to_owned()];
    for doors in &builds {
        names.push(format!("reverse proxy (--listen){}", doors.label));
        names.push(format!("bridge (--url, stdio){}", doors.label));
    }
    names.push(ECHO.to_owned());
    names.push(BARE.to_owned());
    names.push(TOKIO_BARE.to_owned());
    names.push(HYPER_BARE.to_owned());
    names.push(RELAY.to_owned());
    names.extend(peer.as_ref().map(|_| PEER.to_owned()));
    let named = |wanted: &str| names.iter().position(|name| name == wanted);
    // This build's bridge, whose ratio to the peer is told.
    let bridge = names.iter().position(|name| name.starts_with("bridge")).unwrap();
    // The routes with a process of their own, whose costs are told.
    let doors: Vec<usize> = (1..names.len()).filter(|&at| names[at] != ECHO).collect();
    // By regime, route and run: each call's round trip.
    let mut times = [vec![Vec::new(); names.len()], vec![Vec::new(); names.len()]];
    let mut costs: Vec<Vec<Cost>> = names.iter().map(|_| Vec::new()).collect();
    let mut direct_rate = 0f64;
    let mut rates: Vec<[f64; 2]> = builds.iter().map(|_| [0.0; 2]).collect();
    let mut relay_rate = 0f64;
    for run in 0..RUNS {
        let mut pids: Vec<u32> = builds
            .iter()
            .flat_map(|doors| [doors.reverse.child.id(), doors.bridge.child.id()])
            .collect();
        pids.extend([bare.child.id(), tokio_bare.child.id(), hyper_bare.child.id()]);
        pids.push(relay.child.id());
        pids.extend(peer.as_ref().map(|peer| peer.child.id()));
        let before: Vec<Usage> = pids.iter().map(|pid| Usage::of(*pid)).collect();
        let clients: Vec<_> = (0..=builds.len() + 1).map(|_| client()).collect();
        let mut routes = vec![Route::Http(&clients[0], &url)];
        for (doors, client) in builds.iter_mut().zip(&clients[2..]) {
            routes.push(Route::Http(client, &doors.reverse_url));
            routes.push(Route::Stdio(&mut doors.bridge));
        }
        routes.push(Route::Stdio(&mut echo));
        routes.push(Route::Stdio(&mut bare));
        routes.push(Route::Stdio(&mut tokio_bare));
        routes.push(Route::Stdio(&mut hyper_bare));
        routes.push(Route::Http(&clients[1], &relay_url));
        if let Some(peer) = &mut peer {
            routes.push(Route::Stdio(peer));
        }
        for (regime, in_a_row) in [ROUND_TRIPS, 1].into_iter().enumerate() {
            let timed = take_turns(&mut routes, in_a_row, run, &runtime);
            for (route, calls) in timed.into_iter().enumerate() {
                times[regime][route].push(calls);
            }
        }
        drop(routes);
        for ((&at, pid), before) in doors.iter().zip(&pids).zip(&before) {
            costs[at].push(Usage::of(*pid).since(*before, 2 * ROUND_TRIPS));
        }
        direct_rate = direct_rate.max(runtime.block_on(throughput(&url)));
        for (n, doors) in builds.iter_mut().enumerate() {
            rates[n][0] = rates[n][0].max(runtime.block_on(throughput(&doors.reverse_url)));
            rates[n][1] = rates[n][1].max(doors.bridge.throughput());
        }
        relay_rate = relay_rate.max(runtime.block_on(throughput(&relay_url)));
        if let Some(peer) = &mut peer {
            peer_rate = peer_rate.max(peer.throughput());
        }
    }
    println!("### Remote doors ({RUNS} runs; {ROUND_TRIPS} round trips on each route per run and regime)\n");
    println!(
        "Warm: each route's calls in a row, the routes one after another. Cold: the routes taking turns call by call, as a host's calls, seconds apart, find the caches cold.\n"
    );
    println!(
        "| route | warm: median, best run | warm: added at the median, per run: median (range) | cold: median, best run | cold: added (range) |"
    );
    println!("|---|---|---|---|---|");
    // What a route adds is taken within each run, against the direct
    // route's median of that run: the load moves both alike.
    let added: Vec<Vec<Vec<f64>>> = times
        .iter()
        .map(|regime| {
            let direct: Vec<f64> = regime[0].iter().map(|run| percentiles(run).0).collect();
            regime
                .iter()
                .map(|runs| {
                    runs.iter()
                        .zip(&direct)
                        .map(|(run, d)| percentiles(run).0 - d)
                        .collect()
                })
                .collect()
        })
        .collect();
    for (at, name) in names.iter().enumerate() {
        let mut row = format!("| {name} ");
        for regime in 0..2 {
            let (median, _) = best(&times[regime][at]);
            let (add, low, high) = spread(added[regime][at].clone());
            row += &format!("| {median:.1} µs | {add:+.1} µs ({low:+.1} to {high:+.1}) ");
        }
        println!("{row}|");
    }
    if let Some(peer) = named(PEER) {
        let floors = [BARE, TOKIO_BARE, HYPER_BARE].map(|name| named(name).unwrap());
        for (regime, said) in ["warm", "cold"].iter().enumerate() {
            let floors = floors.iter().zip([
                "the bare bridge",
                "the bare bridge on tokio",
                "the bare bridge on hyper",
            ]);
            for (route, what) in [(&bridge, "the bridge")].into_iter().chain(floors) {
                let ratios = added[regime][*route]
                    .iter()
                    .zip(&added[regime][peer])
                    .map(|(b, p)| b / p);
                let (ratio, low, high) = spread(ratios.collect());
                println!(
                    "\n{said}: {what} adds {ratio:.3}× what {PEER} adds (per run: median, range {low:.3}×–{high:.3}×)."
                );
            }
            // What the aim leaves a bridge on tokio and hyper for its own
            // work, and what this bridge's takes, run by run.
            let hyper_floor = &added[regime][named(HYPER_BARE).unwrap()];
            let runs = hyper_floor
                .iter()
                .zip(&added[regime][peer])
                .zip(&added[regime][bridge]);
            let (left, own): (Vec<f64>, Vec<f64>) = runs
                .map(|((floor, peer), bridge)| (AIM * peer - floor, bridge - floor))
                .unzip();
            let ((left, left_low, left_high), (own, own_low, own_high)) = (spread(left), spread(own));
            println!(
                "\n{said}: over the bare bridge on hyper, the aim ({AIM}× what {PEER} adds) leaves {left:+.1} µs for the bridge's own work (per run: median, range {left_low:+.1} to {left_high:+.1}); it takes {own:+.1} µs ({own_low:+.1} to {own_high:+.1})."
            );
        }
    }
    println!(
        "\n| door, one call at a time | CPU per call (median of {RUNS} runs, range) | of which in the kernel | context switches per call |"
    );
    println!("|---|---|---|---|");
    for &at in &doors {
        let runs = &costs[at];
        let (cpu, low, high) = spread(
            runs.iter()
                .map(|cost: &Cost| cost.user_micros + cost.system_micros)
                .collect(),
        );
        let (kernel, _, _) = spread(runs.iter().map(|cost| cost.system_micros).collect());
        let (switches, _, _) = spread(runs.iter().map(|cost| cost.switches).collect());
        println!(
            "| {} | {cpu:.0} µs ({low:.0}–{high:.0}) | {kernel:.0} µs | {switches:.1} |",
            names[at]
        );
    }
    println!("\n| {IN_FLIGHT} calls in flight | calls/s, best of {RUNS} runs | / direct |");
    println!("|---|---|---|");
    println!("| direct HTTP | {direct_rate:.0} | 1.00× |");
    for (doors, [reverse, bridge]) in builds.iter().zip(rates) {
        for (name, rate) in [("reverse proxy", reverse), ("bridge", bridge)] {
            println!(
                "| {name}{} | {rate:.0} | {:.2}× |",
                doors.label,
                rate / direct_rate
            );
        }
    }
    println!("| {RELAY} | {relay_rate:.0} | {:.2}× |", relay_rate / direct_rate);
    if peer.is_some() {
        println!("| {PEER} | {peer_rate:.0} | {:.2}× |", peer_rate / direct_rate);
    }
}

/// The bridge's aim: what it adds, as a share of what the peer adds.
const AIM: f64 = 0.05;

/// The name of the line through `cat` and back in the tables.
const ECHO: &str = "`cat` (the two pipe hops alone)";

/// The peer's name in the tables.
const PEER: &str = "mcp-remote (stdio → HTTP)";

/// One build's two doors in front of the bench's server, each having read
/// the listing, so that every call is audited.
struct Doors {
    label: String,
    reverse_url: String,
    reverse: Door,
    bridge: Door,
}

impl Doors {
    fn start(label: impl Into<String>, binary: &str, url: &str, runtime: &tokio::runtime::Runtime) -> Doors {
        let reverse = Door::reverse(binary, url);
        let reverse_url = format!("http://{}/mcp", reverse.address);
        let mut bridge = Door::bridge(binary, url);
        bridge.line(&r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#.to_owned());
        runtime.block_on(post_once(
            &client(),
            &reverse_url,
            r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#,
        ));
        Doors {
            label: label.into(),
            reverse_url,
            reverse,
            bridge,
        }
    }
}

/// The median, lowest and highest of a few runs' figures.
fn spread(mut runs: Vec<f64>) -> (f64, f64, f64) {
    runs.sort_by(f64::total_cmp);
    (runs[runs.len() / 2], runs[0], runs[runs.len() - 1])
}

/// The (median, p99) of one run's round trips.
fn percentiles(run: &[f64]) -> (f64, f64) {
    let mut xs = run.to_vec();
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[xs.len() * 99 / 100])
}

/// The (median, p99) of the run with the lowest median.
fn best(runs: &[Vec<f64>]) -> (f64, f64) {
    runs.iter()
        .map(|run| percentiles(run))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap()
}

fn client() -> Client<HttpConnector, Full<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

async fn post_once(client: &Client<HttpConnector, Full<Bytes>>, url: &str, body: &str) -> Bytes {
    let request = hyper::Request::post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let response = client.request(request).await.unwrap();
    response.into_body().collect().await.unwrap().to_bytes()
}

/// A way to the server that a call takes.
enum Route<'a> {
    /// POSTed by the bench's HTTP client to a URL.
    Http(&'a Client<HttpConnector, Full<Bytes>>, &'a str),
    /// Written as a line to a command's stdin, answered on its stdout.
    Stdio(&'a mut Door),
}

/// Round-trip times in µs of each route, one call at a time: `in_a_row`
/// calls on each route in turn until each has made [`ROUND_TRIPS`], each
/// turn (and each `run`) starting with the next route, so that load coming
/// and going on the machine falls on every route alike.
fn take_turns(
    routes: &mut [Route<'_>],
    in_a_row: usize,
    run: usize,
    runtime: &tokio::runtime::Runtime,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(ROUND_TRIPS); routes.len()];
    for (turn, first) in (1..=ROUND_TRIPS).step_by(in_a_row).enumerate() {
        for next in 0..routes.len() {
            let at = (run + turn + next) % routes.len();
            for id in first..(first + in_a_row).min(ROUND_TRIPS + 1) {
                let line = call(id);
                let start = Instant::now();
                match &mut routes[at] {
                    Route::Http(client, url) => drop(runtime.block_on(post_once(client, url, &line))),
                    Route::Stdio(door) => door.line(&line),
                }
                times[at].push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
    }
    times
}

/// Calls per second with `IN_FLIGHT` clients, each calling in turn.
async fn throughput(url: &str) -> f64 {
    let start = Instant::now();
    let mut clients = Vec::new();
    for c in 0..IN_FLIGHT {
        let url = url.to_owned();
        clients.push(tokio::spawn(async move {
            let client = client();
            for n in 0..CALLS_EACH {
                post_once(&client, &url, &call(c * CALLS_EACH + n)).await;
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    (IN_FLIGHT * CALLS_EACH) as f64 / start.elapsed().as_secs_f64()
}

/// The server: answers `tools/list` with [`LISTING`] and anything else with
/// a small result for its id, as `application/json`. Returns its address.
fn serve() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let _ = stream.set_nodelay(true);
                let service = hyper::service::service_fn(answer);
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
    });
    address
}

async fn answer(
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    // What a streamable-HTTP client such as mcp-remote asks besides calls:
    // OAuth metadata (none: 404), the GET stream and DELETE (not offered:
    // 405), and notifications (accepted: 202).
    let status = |code: u16| {
        let mut response = hyper::Response::new(Full::new(Bytes::new()));
        *response.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
        Ok(response)
    };
    if request.method() != hyper::Method::POST {
        return status(if request.uri().path() == "/mcp" { 405 } else { 404 });
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let text = std::str::from_utf8(&body).unwrap();
    let Some(id) = text
        .split("\"id\":")
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
    else {
        return status(202);
    };
    let result = if text.contains("tools/list") {
        LISTING.to_owned()
    } else if text.contains("\"initialize\"") {
        let version = text
            .split("\"protocolVersion\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("2025-06-18");
        format!(
            r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench","version":"1"}}}}"#
        )
    } else {
        r#"{"content":[{"type":"text","text":"ok"}]}"#.to_owned()
    };
    let mut response = hyper::Response::new(Full::new(Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    Ok(response)
}
