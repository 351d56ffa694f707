//! Instructions per call of the core's benchmark calls, counted by
//! callgrind: deterministic, so unaffected by whatever else the machine
//! runs, and comparable between two versions of the code where criterion's
//! times at 100 B move by tens of percent from run to run.
//!
//! ```text
//! cargo build --release -p mcp-unknown-keys-bench --example instructions
//! target/release/examples/instructions
//! ```
//!
//! With no argument, it runs itself under `valgrind --tool=callgrind` for
//! each case, twice (with `n` and `2n` calls), counting only inside
//! [`measured_calls`] (`--toggle-collect`), and prints the difference per
//! call: setup and the loop's constant cost drop out. With `<case> <calls>`
//! it runs the calls once, for callgrind to profile by hand:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*measured_calls*' \
//!     --callgrind-out-file=audit-100B.out target/release/examples/instructions audit/100B 20000
//! callgrind_annotate --inclusive=yes audit-100B.out | head -40
//! ```
//!
//! The `unchecked/<input>` cases audit the same calls with
//! [`Auditor::check_required`]`(false)`: the cost of checking the keys the
//! schema lists in `required` (on by default; the benchmark's tool requires
//! `path` and `content`, which every call carries) is `audit/<input>`
//! against `unchecked/<input>`, printed as ratios after the table.

use std::env;
use std::hint::black_box;
use std::process::{Command, ExitCode};

use mcp_unknown_keys::audit::{Auditor, Catalog};
use mcp_unknown_keys_bench::calls;

/// The cases: `floor/<input>`, `audit/<input>` and `unchecked/<input>`
/// (required keys not checked) for each input of the `per_call`
/// benchmark, and the 100 B call against 10,000 tools.
fn cases() -> Vec<String> {
    let mut cases = Vec::new();
    for (input, _) in calls::inputs() {
        cases.push(format!("floor/{input}"));
        cases.push(format!("audit/{input}"));
        cases.push(format!("unchecked/{input}"));
    }
    cases.push("audit/100B@10000tools".to_owned());
    cases.push("unchecked/100B@10000tools".to_owned());
    cases
}

/// How a case reads its calls.
#[derive(Clone, Copy)]
enum What {
    /// The floor: a bare validating scan.
    Floor,
    /// The audit, checking required keys or not.
    Audit { check_required: bool },
}

/// What `case` measures, its arguments and the catalogue it is audited
/// against.
fn prepare(case: &str) -> Option<(What, String, Catalog)> {
    let (what, rest) = case.split_once('/')?;
    let (input, tools) = match rest.split_once('@') {
        Some((input, tools)) => (input, tools.strip_suffix("tools")?.parse().ok()?),
        None => (rest, 10),
    };
    let text = calls::inputs().into_iter().find(|(name, _)| *name == input)?.1;
    let what = match what {
        "audit" => What::Audit { check_required: true },
        "unchecked" => What::Audit {
            check_required: false,
        },
        "floor" => What::Floor,
        _ => return None,
    };
    Some((what, text, calls::catalogue_of(tools)))
}

/// The calls counted: everything callgrind sees is in here.
#[inline(never)]
fn measured_calls(audit: bool, auditor: &Auditor, catalog: &Catalog, text: &str, calls: usize) -> usize {
    let mut clean = 0;
    for _ in 0..calls {
        let ok = if audit {
            calls::audit(auditor, catalog, black_box(text))
        } else {
            calls::floor(black_box(text))
        };
        clean += usize::from(black_box(ok));
    }
    clean
}

/// Enough calls that the difference between `n` and `2n` dwarfs any noise,
/// few enough that callgrind is quick at 1 MiB.
fn calls_for(text_len: usize) -> usize {
    (2_000_000 / text_len.max(1)).clamp(2, 2_000)
}

/// Instructions callgrind counted running `case` `calls` times.
fn count(exe: &str, case: &str, calls: usize) -> Result<u64, String> {
    let output = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--toggle-collect=*measured_calls*",
            "--callgrind-out-file=/dev/null",
            exe,
            case,
            &calls.to_string(),
        ])
        .output()
        .map_err(|error| format!("cannot run valgrind ({error}): install it (apt-get install valgrind)"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("valgrind failed on {case}: {stderr}"));
    }
    stderr
        .lines()
        .find_map(|line| line.split_once("Collected :").map(|(_, n)| n.trim().parse().ok()))
        .flatten()
        .ok_or_else(|| format!("no instruction count in valgrind's output for {case}: {stderr}"))
}

fn run_all() -> Result<(), String> {
    let exe = env::current_exe().map_err(|error| error.to_string())?;
    let exe = exe.to_str().ok_or("the executable's path is not UTF-8")?;
    println!("| case | instructions per call |");
    println!("|---|---:|");
    let mut counted = Vec::new();
    for case in cases() {
        let (_, text, _) = prepare(&case).ok_or("unknown case")?;
        let n = calls_for(text.len());
        let (once, twice) = (count(exe, &case, n)?, count(exe, &case, 2 * n)?);
        let per_call = twice.saturating_sub(once) as f64 / n as f64;
        println!("| {case} | {per_call:.0} |");
        counted.push((case, per_call));
    }
    // The cost of checking required keys: each audit against the same
    // audit with the check turned off.
    println!();
    println!("| arguments | required not checked | required checked | checked / not |");
    println!("|---|---:|---:|---:|");
    for (case, checked) in &counted {
        let Some(input) = case.strip_prefix("audit/") else {
            continue;
        };
        let unchecked = format!("unchecked/{input}");
        if let Some((_, off)) = counted.iter().find(|(case, _)| *case == unchecked) {
            println!("| {input} | {off:.0} | {checked:.0} | {:.3}× |", checked / off);
        }
    }
    Ok(())
}

fn usage() -> String {
    format!(
        "usage: instructions [<case> <calls>]; cases: {}",
        cases().join(", ")
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.as_slice() {
        [] => run_all(),
        [case, calls] => match (prepare(case), calls.parse::<usize>()) {
            (Some((what, text, catalog)), Ok(calls)) => {
                let (audit, check_required) = match what {
                    What::Floor => (false, true),
                    What::Audit { check_required } => (true, check_required),
                };
                let auditor = Auditor::new().with_sink(()).check_required(check_required);
                let clean = measured_calls(audit, &auditor, &catalog, &text, calls);
                if clean == calls {
                    Ok(())
                } else {
                    Err(format!(
                        "{case}: {} of {calls} calls were not clean",
                        calls - clean
                    ))
                }
            }
            _ => Err(usage()),
        },
        _ => Err(usage()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
