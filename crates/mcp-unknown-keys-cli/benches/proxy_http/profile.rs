//! `PROXY_BENCH_PROFILE=1`: the instructions one call costs the bridge and
//! each bare bridge, counted by callgrind (valgrind), split where the call
//! waits on nothing of the bridge's: from the host's line read to the
//! answer written (the call's own path, the server's work aside), and from
//! there to the next line (what the host does not wait for). Counts, unlike
//! times, move by a few hundred from run to run (the runtime's timers):
//! this says where a bridge's own work goes, the timed runs what it costs.

use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use super::floors::{BARE, BARE_BRIDGE, BARE_KIND, HYPER_BARE, TOKIO_BARE};
use super::{Door, call};

/// The calls counted.
const CALLS: usize = 100;

/// The calls made first and not counted: connections opened, caches and
/// the allocator's pools filled.
const WARM_UP: usize = 20;

/// Set, the bench profiles instead of timing.
pub const PROFILE: &str = "PROXY_BENCH_PROFILE";

/// Prints, for the bridge of `proxy` in front of `url` and for each bare
/// bridge in front of `server`, the instructions per call on each side of
/// the answer, on the thread that carries the call and on any other.
pub fn profile(proxy: &str, url: &str, server: &str) {
    let found = Command::new("valgrind").arg("--version").output();
    if !found.is_ok_and(|output| output.status.success()) {
        panic!(
            "{PROFILE} counts instructions with valgrind's callgrind: install valgrind (Debian: apt-get install valgrind)"
        );
    }
    let bench = std::env::current_exe().unwrap();
    let bench = bench.to_str().unwrap();
    let routes: [(&str, &[&str], Option<&str>); 4] = [
        (
            "bridge (--url, stdio)",
            &[proxy, "proxy", "--quiet", "--url", url],
            None,
        ),
        (HYPER_BARE, &[bench], Some("hyper")),
        (TOKIO_BARE, &[bench], Some("tokio")),
        (BARE, &[bench], Some("blocking")),
    ];
    println!("### Instructions per call ({CALLS} calls, callgrind)\n");
    println!("| route | line read → answer written | answer written → next line | other threads |");
    println!("|---|---:|---:|---:|");
    for (name, program, kind) in routes {
        let out = std::env::temp_dir().join(format!("proxy-bench-profile-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        // The other threads' counts come once, at exit, whole: what a
        // call costs them is the difference between two runs.
        let [path, after, once] = count(program, kind, server, &out, CALLS);
        let [.., twice] = count(program, kind, server, &out, 2 * CALLS);
        std::fs::remove_dir_all(&out).unwrap();
        let per_call = |total: u64| total / CALLS as u64;
        let (path, after, others) = (
            per_call(path),
            per_call(after),
            per_call(twice.saturating_sub(once)),
        );
        println!("| {name} | {path} | {after} | {others} |");
    }
}

/// Runs `program` under callgrind for `calls` calls after the warm-up,
/// dumping the counts of the thread that carries them as each line is read
/// and before each write; returns the instructions of the last [`CALLS`]
/// calls on their path and after it, and those of every other thread over
/// the whole run.
fn count(program: &[&str], kind: Option<&str>, server: &str, out: &Path, calls: usize) -> [u64; 3] {
    let file = out.join("callgrind.out");
    let mut command = Command::new("valgrind");
    command.args([
        "--tool=callgrind",
        "--separate-threads=yes",
        "--dump-after=read",
        "--dump-before=write",
        "--dump-before=writev",
    ]);
    command.arg(format!("--callgrind-out-file={}", file.display()));
    command.args(program);
    if let Some(kind) = kind {
        command.env(BARE_BRIDGE, server).env(BARE_KIND, kind);
    }
    let mut door = Door::command(command.stderr(std::process::Stdio::null()));
    door.line(&r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#.to_owned());
    for id in 1..=WARM_UP + calls {
        // Apart, as a host's calls are: the runtime parks between them.
        thread::sleep(Duration::from_millis(5));
        door.line(&call(id));
    }
    drop(door.child.stdin.take());
    door.child.wait().unwrap();
    let counted = split(out, "callgrind.out");
    for entry in std::fs::read_dir(out).unwrap().flatten() {
        std::fs::remove_file(entry.path()).unwrap();
    }
    counted
}

/// Adds up the dumps of the last [`CALLS`] calls. Each line read ends a
/// dump of thread 1, which carries the calls (the work since the last
/// answer); each write begins one (the line's path so far). Dumps are
/// numbered in order; the other threads' counts are written at exit.
fn split(out: &Path, name: &str) -> [u64; 3] {
    let mut dumps: Vec<(usize, String)> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name().into_string().ok()?;
            let number = file.strip_prefix(name)?.strip_prefix('.')?.strip_suffix("-01")?;
            Some((number.parse().ok()?, file))
        })
        .collect();
    dumps.sort();
    let read = |file: &str| {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let field = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(key))
                .map(str::to_owned)
        };
        let instructions = field("summary: ").and_then(|count| count.trim().parse().ok());
        let is_read = field("desc: Trigger: ").is_some_and(|trigger| trigger.contains("--dump-after=read"));
        (is_read, instructions.unwrap_or(0))
    };
    let main: Vec<(bool, u64)> = dumps.iter().map(|(_, file)| read(file)).collect();
    // Reads are numbered from 1; the last one finds the end of stdin, and
    // the counted calls are the lines of the reads before it (a program
    // reads files of its own as it starts: the warm-up's lines come
    // between). A line's path is the dumps after its read, what comes
    // after it the next read's dump.
    let reads = main.iter().filter(|(is_read, _)| *is_read).count();
    assert!(
        reads > CALLS + WARM_UP + 1,
        "callgrind saw {reads} reads for {CALLS} calls"
    );
    let counted_lines = reads - CALLS..=reads - 1;
    let mut lines = 0;
    let mut counted = [0; 3];
    for &(is_read, instructions) in &main {
        // The line of read number `lines`: its path, or (this dump ending
        // in the next read) what came after it.
        let line = lines;
        lines += usize::from(is_read);
        if counted_lines.contains(&line) {
            counted[usize::from(is_read)] += instructions;
        }
    }
    counted[2] = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|file| {
            file.strip_prefix(name)
                .and_then(|thread| thread.strip_prefix('-'))
                .is_some_and(|thread| thread != "01")
        })
        .map(|file| read(&file).1)
        .sum();
    counted
}
