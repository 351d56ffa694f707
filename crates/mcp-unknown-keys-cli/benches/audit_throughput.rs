//! Throughput of `mcp-unknown-keys audit` on a generated Claude Code
//! transcript of a few hundred MB, against a plain read of the same file:
//! a line-counting loop (the same buffered `read_until` the audit reads
//! with) and `wc -l`. Each figure is the best of a few runs; the ratios are
//! the figures to quote (see BENCHMARKS.md).
//!
//! `cargo bench -p mcp-unknown-keys-cli --bench audit_throughput`;
//! `AUDIT_BENCH_MB` sets the transcript's size (default 300);
//! `AUDIT_BENCH_KEEP=1` keeps the file afterwards, to profile against;
//! `AUDIT_BENCH_ROUNDS` sets the number of rounds (default 5);
//! `AUDIT_BENCH_BASELINE=PATH` times another build of the binary (an earlier
//! commit's, say) in the same rounds.
//!
//! Two costs are taken as ratios within each round, the runs taking turns:
//! grouping (`audit --by model --by tool` against `audit`) and the check of
//! the keys the schemas list in `required` (`audit`, which checks them,
//! against `audit --no-missing`, which does not; every tool of the
//! transcript's catalogue requires a key, which its calls carry).

#[path = "../tests/support/transcript.rs"]
mod transcript;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rounds without `AUDIT_BENCH_ROUNDS`.
const RUNS: usize = 5;

/// A named thing to time.
type Measure<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn main() {
    let megabytes: u64 = std::env::var("AUDIT_BENCH_MB")
        .ok()
        .and_then(|mb| mb.parse().ok())
        .unwrap_or(300);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("audit-bench-transcript.jsonl");
    let written = generate(&path, megabytes << 20);
    let bytes = written.bytes as f64;
    println!(
        "transcript: {:.0} MB, {} lines, {} calls ({} with an undeclared key)",
        bytes / 1e6,
        written.lines,
        written.calls,
        written.undeclared
    );

    let bin = env!("CARGO_BIN_EXE_mcp-unknown-keys");
    let baseline = std::env::var("AUDIT_BENCH_BASELINE").ok();
    let mut measures: Vec<Measure> = vec![
        ("line-counting loop", Box::new(|| count_lines(&path))),
        ("wc -l", Box::new(|| run(Command::new("wc").arg("-l").arg(&path)))),
        (
            "read + validate each line (floor)",
            Box::new(|| validate_lines(&path)),
        ),
        (
            "audit --format jsonl",
            Box::new(|| run(Command::new(bin).arg("audit").arg(&path))),
        ),
        (
            "audit --format text",
            Box::new(|| run(Command::new(bin).args(["audit", "--format", "text"]).arg(&path))),
        ),
        (
            "audit --by model --by tool",
            Box::new(|| {
                run(Command::new(bin)
                    .args(["audit", "--by", "model", "--by", "tool"])
                    .arg(&path))
            }),
        ),
        (
            "audit --no-missing",
            Box::new(|| run(Command::new(bin).args(["audit", "--no-missing"]).arg(&path))),
        ),
    ];
    if let Some(baseline) = baseline.as_deref() {
        let path = &path;
        measures.push((
            "baseline audit --format jsonl",
            Box::new(move || run(Command::new(baseline).arg("audit").arg(path))),
        ));
    }
    let rounds = interleaved(&mut measures);
    let times: Vec<Duration> = rounds
        .iter()
        .map(|round| round.iter().copied().min().expect("a round"))
        .collect();
    let [count_loop, wc, json_floor, audit_jsonl, _, audit_by, no_missing] = times[..7] else {
        unreachable!("seven measures")
    };

    let rate = |time: Duration| bytes / time.as_secs_f64() / 1e6;
    println!("{:<36} {:>10} {:>12}", "", "MB/s", "time vs loop");
    for ((name, _), &time) in measures.iter().zip(&times) {
        println!(
            "{name:<36} {:>10.0} {:>11.2}x",
            rate(time),
            time.as_secs_f64() / count_loop.as_secs_f64()
        );
    }
    println!(
        "audit (jsonl) runs at {:.2}x the line-counting loop's rate and {:.2}x wc -l's",
        count_loop.as_secs_f64() / audit_jsonl.as_secs_f64(),
        wc.as_secs_f64() / audit_jsonl.as_secs_f64()
    );
    println!(
        "audit (jsonl) takes {:.2}x the time of reading and validating each line with serde_json",
        audit_jsonl.as_secs_f64() / json_floor.as_secs_f64()
    );
    // Grouping's cost and the required check's: the ratio of each round
    // (the runs take turns), with its spread over the rounds, and the ratio
    // of the best times.
    println!(
        "audit --by model --by tool takes {:.3}x the time of audit (best times); per round: {}",
        audit_by.as_secs_f64() / audit_jsonl.as_secs_f64(),
        spread(&per_round(&rounds[5], &rounds[3]))
    );
    println!(
        "audit (required keys checked) takes {:.3}x the time of audit --no-missing (best times); per round: {}",
        audit_jsonl.as_secs_f64() / no_missing.as_secs_f64(),
        spread(&per_round(&rounds[3], &rounds[6]))
    );
    if let Some(&baseline) = times.get(7) {
        println!(
            "audit (jsonl) takes {:.2}x the time of the baseline build",
            audit_jsonl.as_secs_f64() / baseline.as_secs_f64()
        );
    }
    if std::env::var_os("AUDIT_BENCH_KEEP").is_some() {
        println!("kept for profiling: {}", path.display());
    } else {
        let _ = std::fs::remove_file(&path);
    }
}

/// The ratio of `numerators` to `denominators` in each round, sorted.
fn per_round(numerators: &[Duration], denominators: &[Duration]) -> Vec<f64> {
    let mut ratios: Vec<f64> = numerators
        .iter()
        .zip(denominators)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios
}

/// Sorted ratios as "median M, Q1 to Q3, MIN to MAX".
fn spread(ratios: &[f64]) -> String {
    let at = |quantile: f64| ratios[((ratios.len() - 1) as f64 * quantile).round() as usize];
    format!(
        "median {:.3}x, quartiles {:.3}x to {:.3}x, {:.3}x to {:.3}x",
        at(0.5),
        at(0.25),
        at(0.75),
        ratios[0],
        ratios[ratios.len() - 1]
    )
}

fn generate(path: &Path, min_bytes: u64) -> transcript::Written {
    let mut out = BufWriter::new(File::create(path).expect("create the transcript"));
    let written = transcript::write_transcript(&mut out, min_bytes).expect("write the transcript");
    out.flush().expect("write the transcript");
    written
}

/// Each measure's time in each of `RUNS` rounds (or `AUDIT_BENCH_ROUNDS`),
/// the measures taking turns within a round so that a burst of load on a
/// shared machine hits them alike.
fn interleaved(measures: &mut [Measure<'_>]) -> Vec<Vec<Duration>> {
    let rounds = std::env::var("AUDIT_BENCH_ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .filter(|&rounds| rounds > 0)
        .unwrap_or(RUNS);
    let mut times = vec![Vec::with_capacity(rounds); measures.len()];
    for _ in 0..rounds {
        for ((_, measure), times) in measures.iter().zip(&mut times) {
            let start = Instant::now();
            measure();
            times.push(start.elapsed());
        }
    }
    times
}

fn count_lines(path: &Path) {
    let mut reader = BufReader::with_capacity(256 << 10, File::open(path).expect("open"));
    let mut line = Vec::with_capacity(64 << 10);
    let mut lines = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).expect("read") == 0 {
            break;
        }
        lines += 1;
    }
    std::hint::black_box(lines);
}

/// The floor: each line read as the audit reads it and checked to be JSON
/// with `IgnoredAny`, which builds nothing. No audit can know a line's shape
/// for less.
fn validate_lines(path: &Path) {
    let mut reader = BufReader::with_capacity(256 << 10, File::open(path).expect("open"));
    let mut line = Vec::with_capacity(64 << 10);
    let mut valid = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).expect("read") == 0 {
            break;
        }
        let text = std::str::from_utf8(&line).expect("UTF-8");
        valid += u64::from(serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok());
    }
    std::hint::black_box(valid);
}

fn run(command: &mut Command) {
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .expect("run");
    assert!(status.success(), "{command:?} failed: {status}");
}
