//! The time the check of `required` keys costs per call, measured so that
//! a shared machine's load meets both sides alike: batches of the
//! benchmark's clean calls (`crates/mcp-unknown-keys-bench/src/calls.rs`) audited with the
//! check on (the default) and off ([`Auditor::check_required`]`(false)`)
//! take turns, and the ratio of each pair of batches is kept. Prints, per
//! input, the median ratio with its quartiles and extremes, and the median
//! time per call of each side.
//!
//! ```text
//! cargo build --release -p mcp-unknown-keys-bench --example required_time
//! target/release/examples/required_time          # 300 pairs of batches per input
//! target/release/examples/required_time 1000     # more pairs
//! ```
//!
//! Criterion's `required` group (`cargo bench -p mcp-unknown-keys-bench --bench
//! audit -- required`) times the two sides one after the other, seconds
//! apart, so the load between them moves its ratio; the instruction counts
//! (`examples/instructions.rs`) are the figures that decide.

use std::env;
use std::hint::black_box;
use std::time::Instant;

use mcp_unknown_keys::audit::{Auditor, Catalog};
use mcp_unknown_keys_bench::calls;

/// Nanoseconds per call taken by `calls` audits of `text`.
fn batch(auditor: &Auditor, catalog: &Catalog, text: &str, calls: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(calls::audit(auditor, catalog, black_box(text)));
    }
    start.elapsed().as_nanos() as f64 / calls as f64
}

/// The value at `quantile` of sorted `values`.
fn at(values: &[f64], quantile: f64) -> f64 {
    values[((values.len() - 1) as f64 * quantile).round() as usize]
}

fn main() {
    let pairs: usize = env::args()
        .nth(1)
        .and_then(|pairs| pairs.parse().ok())
        .filter(|&pairs| pairs > 0)
        .unwrap_or(300);
    let checked = Auditor::new().with_sink(());
    let unchecked = Auditor::new().with_sink(()).check_required(false);
    let catalog = calls::catalogue_of(10);
    println!(
        "| arguments | not checked, ns per call | checked, ns per call | checked / not, per pair: median (quartiles; extremes) |"
    );
    println!("|---|---:|---:|---|");
    for (input, text) in calls::inputs() {
        assert!(calls::audit(&checked, &catalog, &text) && calls::audit(&unchecked, &catalog, &text));
        // About a millisecond per batch: long enough to time, short enough
        // that a burst of load rarely covers one side of a pair only.
        let calls = (1_000_000 / text.len().max(1)).clamp(4, 20_000);
        batch(&checked, &catalog, &text, calls);
        batch(&unchecked, &catalog, &text, calls);
        let (mut on, mut off, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for pair in 0..pairs {
            // Which side goes first alternates, so neither always meets a
            // warmer cache.
            let (a, b) = if pair % 2 == 0 {
                let a = batch(&checked, &catalog, &text, calls);
                (a, batch(&unchecked, &catalog, &text, calls))
            } else {
                let b = batch(&unchecked, &catalog, &text, calls);
                (batch(&checked, &catalog, &text, calls), b)
            };
            on.push(a);
            off.push(b);
            ratios.push(a / b);
        }
        for values in [&mut on, &mut off, &mut ratios] {
            values.sort_by(f64::total_cmp);
        }
        println!(
            "| {input} | {:.1} | {:.1} | {:.3}× ({:.3}×–{:.3}×; {:.3}×–{:.3}×) |",
            at(&off, 0.5),
            at(&on, 0.5),
            at(&ratios, 0.5),
            at(&ratios, 0.25),
            at(&ratios, 0.75),
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}
