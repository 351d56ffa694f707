//! What the diagnosis costs: a call that raises no warning must cost what it
//! cost before; a call that raises one pays for the diagnosis, once per pair,
//! at most a small multiple of its clean audit whatever the size.
//!
//! `diagnosis/{100B,10KiB}`: an `fs_write` call against a five-tool
//! catalogue, four measurements in one run:
//!
//! - `floor`: a bare validating scan of the argument text with `IgnoredAny`;
//! - `clean`: auditing a call whose keys are all declared;
//! - `said_before`: auditing a call whose undeclared keys were already said
//!   (no warning, so no diagnosis);
//! - `warning`: auditing a call that raises a warning (a fresh auditor per
//!   iteration, so the pairs are new each time), diagnosis included, and
//!   dropping the warning.
//!
//! `diagnosis_scale/{100,10000,100000}`: a tool declaring N keys of one
//! shape (`sensor_000042_temperature`: one length, one set of initials, the
//! same first and last bytes: the worst case for the diagnosis's indexes and
//! for the key check), in one run:
//!
//! - `clean`: a call carrying the N declared keys;
//! - `some_undeclared`: the same call with 3 % of its keys (at most 300)
//!   misspelt (`sensor_000042_temperatuer`);
//! - `all_undeclared`: the same call with every key misspelt;
//! - `clean_300` and `undeclared_300`: a call of 300 keys (at most N),
//!   declared or all misspelt: the issue's "300 undeclared keys among
//!   100,000 declared";
//! - `copy_declared_keys`: copying the N declared keys into `String`s, as
//!   the auditor does for a warning's `declared_keys`;
//! - `listing` and `listing_first_warning`: reading the listing, then also
//!   raising its first warning (one misspelt key), which builds the
//!   diagnosis's indexes.
//!
//! The warnings are raised by a fresh auditor each iteration against one
//! catalogue, whose indexes are built once (during the warm-up): as in a
//! session, where a listing is read once and warned about many times.
//!
//! At the end, the ratios of this run are printed. Quote them, never
//! absolute times. Run with
//! `cargo bench -p mcp-unknown-keys-bench --bench diagnosis -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

fn catalog() -> Catalog {
    let tool = |name: &str, properties: Value| json!({"name": name, "inputSchema": {"type": "object", "properties": properties}});
    Catalog::from_mcp_tools(&[
        tool(
            "fs_read",
            json!({"path": {}, "offset": {"default": 0}, "limit": {}}),
        ),
        tool(
            "fs_write",
            json!({"path": {}, "content": {}, "create_dirs": {"default": false}}),
        ),
        tool(
            "grep_search",
            json!({"pattern": {}, "path": {}, "glob": {}, "context_lines": {"default": 0}}),
        ),
        tool(
            "run_shell",
            json!({"command": {}, "timeout_ms": {"default": 120000}, "working_dir": {}}),
        ),
        tool(
            "task",
            json!({"prompt": {}, "description": {}, "subagent_type": {}}),
        ),
    ])
}

/// `fs_write` arguments of about `size` bytes: declared keys only, or with
/// the first incident's truncated key and fragment added.
fn arguments(size: usize, mangled: bool) -> String {
    let extra = if mangled {
        r#","ffset":12,"the rest":"…""#
    } else {
        ""
    };
    let content = "lorem ipsum dolor sit amet ".repeat(size / 27 + 1);
    format!(
        r#"{{"path":"src/app.rs","content":"{}"{extra}}}"#,
        &content[..size.saturating_sub(40)]
    )
}

/// Audits `text` as a call to `tool` with a fresh auditor (so every pair is
/// new), returning the outcome, warning included, to be dropped.
fn audit_fresh(catalog: &Catalog, tool: &str, text: &str) -> Outcome {
    Auditor::new()
        .with_sink(())
        .audit(catalog, Call::new(tool, Arguments::Json(black_box(text))))
}

fn diagnosis(c: &mut Criterion) {
    let catalog = catalog();
    for (label, size) in [("100B", 100), ("10KiB", 10 << 10)] {
        let clean = arguments(size, false);
        let mangled = arguments(size, true);
        let mut group = c.benchmark_group(format!("diagnosis/{label}"));
        group.bench_function("floor", |b| {
            b.iter(|| serde_json::from_str::<IgnoredAny>(black_box(&clean)).is_ok())
        });
        let auditor = Auditor::new().with_sink(());
        group.bench_function("clean", |b| {
            b.iter(|| {
                auditor.audit(
                    &catalog,
                    Call::new("fs_write", Arguments::Json(black_box(&clean))),
                )
            })
        });
        auditor.audit(&catalog, Call::new("fs_write", Arguments::Json(&mangled)));
        group.bench_function("said_before", |b| {
            b.iter(|| {
                auditor.audit(
                    &catalog,
                    Call::new("fs_write", Arguments::Json(black_box(&mangled))),
                )
            })
        });
        group.bench_function("warning", |b| {
            // One fresh auditor per iteration, so that the pairs are new; the
            // warning is dropped inside the timing, as a delivered one is.
            b.iter_batched(
                || Auditor::new().with_sink(()),
                |fresh| {
                    let call = Call::new("fs_write", Arguments::Json(black_box(&mangled)));
                    drop(black_box(fresh.audit(&catalog, call)));
                    fresh
                },
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

/// The sizes of the scale benchmark, in keys.
const SCALES: [usize; 3] = [100, 10_000, 100_000];

/// The tool of the scale benchmark.
const WIDE: &str = "sensors";

/// Declared key `i`.
fn declared_key(i: usize) -> String {
    format!("sensor_{i:06}_temperature")
}

/// Declared key `i` misspelt: two letters swapped, as a typo does.
fn misspelt_key(i: usize) -> String {
    format!("sensor_{i:06}_temperatuer")
}

/// The listing of the scale benchmark: `WIDE` declaring `keys` keys, and
/// a small tool beside it.
fn wide_listing(keys: usize) -> Vec<Value> {
    let properties: Map<String, Value> = (0..keys)
        .map(|i| (declared_key(i), json!({"type": "number"})))
        .collect();
    vec![
        json!({"name": WIDE, "inputSchema": {"type": "object", "properties": properties}}),
        json!({"name": "fs_read", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}}),
    ]
}

/// A call carrying `keys` keys, one per declared key, of which those whose
/// index is a multiple of `misspelt_every` are misspelt (none when it is 0).
fn wide_call(keys: usize, misspelt_every: usize) -> String {
    let arguments: Map<String, Value> = (0..keys)
        .map(|i| match misspelt_every {
            0 => (declared_key(i), json!(20.5)),
            every if i % every == 0 => (misspelt_key(i), json!(20.5)),
            _ => (declared_key(i), json!(20.5)),
        })
        .collect();
    serde_json::to_string(&arguments).expect("plain JSON")
}

fn diagnosis_scale(c: &mut Criterion) {
    for keys in SCALES {
        let listing = wide_listing(keys);
        let catalog = Catalog::from_mcp_tools(&listing);
        // 3 % of the keys misspelt, at most 300: one key in `every`.
        let every = (keys / (keys * 3 / 100).clamp(1, 300)).max(1);
        let calls = [
            ("clean", wide_call(keys, 0)),
            ("some_undeclared", wide_call(keys, every)),
            ("all_undeclared", wide_call(keys, 1)),
            ("clean_300", wide_call(keys.min(300), 0)),
            ("undeclared_300", wide_call(keys.min(300), 1)),
        ];
        let one_misspelt = wide_call(1, 1);
        let mut group = c.benchmark_group(format!("diagnosis_scale/{keys}"));
        if keys >= 10_000 {
            group.sample_size(10);
        }
        // Build the indexes outside the timing, as the first warning of a
        // session does.
        assert!(audit_fresh(&catalog, WIDE, &calls[2].1).warning().is_some());
        for (name, call) in &calls {
            group.bench_function(*name, |b| {
                b.iter(|| drop(black_box(audit_fresh(&catalog, WIDE, call))))
            });
        }
        let declared = catalog.get(WIDE).expect("listed");
        group.bench_function("copy_declared_keys", |b| {
            b.iter(|| black_box(declared.keys().map(str::to_owned).collect::<Vec<String>>()))
        });
        group.bench_function("listing", |b| {
            b.iter(|| black_box(Catalog::from_mcp_tools(black_box(&listing))))
        });
        group.bench_function("listing_first_warning", |b| {
            b.iter(|| {
                let catalog = Catalog::from_mcp_tools(black_box(&listing));
                drop(black_box(audit_fresh(&catalog, WIDE, &one_misspelt)));
                catalog
            })
        });
        group.finish();
    }
}

/// The median of one benchmark of this run, in nanoseconds, from
/// criterion's report next to this executable (`target/criterion`).
fn median_ns(group: &str, bench: &str) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<bench> → target/criterion
    let target: PathBuf = exe.parent()?.parent()?.parent()?.into();
    // Criterion files a group under its name with `/` made `_`.
    let path = target
        .join("criterion")
        .join(group.replace('/', "_"))
        .join(bench)
        .join("new/estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// Prints the ratios of this run, as BENCHMARKS.md quotes them.
fn print_ratios() {
    let ratio = |group: &str, bench: &str, base: &str| -> String {
        match (median_ns(group, bench), median_ns(group, base)) {
            (Some(bench), Some(base)) => format!("{:.2}×", bench / base),
            _ => "–".into(),
        }
    };
    println!("\n| call | floor | clean / floor | said before / floor | warning / floor | warning / clean |");
    println!("|---|---|---|---|---|---|");
    for size in ["100B", "10KiB"] {
        let group = format!("diagnosis/{size}");
        let floor = median_ns(&group, "floor").map_or("–".into(), |ns| format!("{ns:.0} ns"));
        println!(
            "| {size} | {floor} | {} | {} | {} | {} |",
            ratio(&group, "clean", "floor"),
            ratio(&group, "said_before", "floor"),
            ratio(&group, "warning", "floor"),
            ratio(&group, "warning", "clean"),
        );
    }
    println!(
        "\n| declared keys | clean call | some undeclared / clean | all undeclared / clean | \
         300 undeclared / 300 clean | copy of declared keys / 300 clean | first warning / listing |"
    );
    println!("|---|---|---|---|---|---|---|");
    for keys in SCALES {
        let group = format!("diagnosis_scale/{keys}");
        let clean = median_ns(&group, "clean").map_or("–".into(), |ns| format!("{:.1} µs", ns / 1e3));
        let first_warning = match (
            median_ns(&group, "listing_first_warning"),
            median_ns(&group, "listing"),
        ) {
            (Some(with), Some(without)) => format!("+{:.0} %", 100.0 * (with / without - 1.0)),
            _ => "–".into(),
        };
        println!(
            "| {keys} | {clean} | {} | {} | {} | {} | {first_warning} |",
            ratio(&group, "some_undeclared", "clean"),
            ratio(&group, "all_undeclared", "clean"),
            ratio(&group, "undeclared_300", "clean_300"),
            ratio(&group, "copy_declared_keys", "clean_300"),
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = diagnosis, diagnosis_scale
}

fn main() {
    benches();
    let criterion = Criterion::default().configure_from_args();
    criterion.final_summary();
    print_ratios();
}
