//! The audit's cost per call, against the floor (a bare validating scan of
//! the same argument string with serde_json and `IgnoredAny`) and against the
//! alternative a user would reach for (parse to a `Value`, then a compiled
//! `jsonschema` validator with `additionalProperties: false` injected).
//!
//! Run `cargo bench -p mcp-unknown-keys --bench audit`, then
//! `scripts/bench-ratios` prints the ratios recorded in BENCHMARKS.md.

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// The tool every benchmark calls.
const TOOL: &str = "fs_write";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "offset": {"type": "integer", "default": 0},
            "mode": {"type": "string", "enum": ["overwrite", "append"]},
            "create_dirs": {"type": "boolean"},
            "encoding": {"type": "string"},
            "metadata": {"type": "object"},
        },
        "required": ["path", "content"],
    })
}

/// A clean call whose `content` pads the arguments to about `size` bytes.
fn arguments_of_size(size: usize) -> String {
    let frame = json!({"path": "src/app.rs", "content": "", "offset": 12, "mode": "append"}).to_string();
    let content = "lorem ipsum ".repeat(size.saturating_sub(frame.len()) / 12 + 1);
    let mut text =
        json!({"path": "src/app.rs", "content": &content[..size.saturating_sub(frame.len())], "offset": 12, "mode": "append"})
            .to_string();
    text.shrink_to_fit();
    text
}

/// About 2 KiB of arguments made of many small nested values.
fn nested_arguments() -> String {
    let entries: Vec<Value> = (0..24)
        .map(|i| json!({"id": i, "tag": format!("t{i}"), "on": i % 2 == 0, "w": [i, i + 1, 0.5]}))
        .collect();
    json!({"path": "data.json", "content": "x", "metadata": {"entries": entries, "owner": {"name": "a", "uid": 1000}}})
        .to_string()
}

fn catalogue_of(tools: usize) -> Catalog {
    let mut listing: Vec<Value> = (1..tools)
        .map(|i| json!({"name": format!("tool_{i:05}"), "inputSchema": schema()}))
        .collect();
    listing.push(json!({"name": TOOL, "inputSchema": schema()}));
    Catalog::from_mcp_tools(&listing)
}

fn audit(auditor: &Auditor, catalog: &Catalog, text: &str) -> bool {
    let outcome = auditor.audit(catalog, Call::new(TOOL, Arguments::Json(text)));
    matches!(outcome, Outcome::Audited { warning: None, .. })
}

fn floor(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

fn strict_validator() -> jsonschema::Validator {
    let mut strict = schema();
    strict["additionalProperties"] = json!(false);
    jsonschema::validator_for(&strict).expect("the schema compiles")
}

fn jsonschema_check(validator: &jsonschema::Validator, text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|value| validator.is_valid(&value))
}

fn inputs() -> Vec<(&'static str, String)> {
    vec![
        ("100B", arguments_of_size(100)),
        ("10KiB", arguments_of_size(10 * 1024)),
        ("1MiB", arguments_of_size(1024 * 1024)),
        ("nested2KiB", nested_arguments()),
    ]
}

fn against_floor_and_jsonschema(c: &mut Criterion) {
    let auditor = Auditor::new().with_sink(());
    let catalog = catalogue_of(10);
    let validator = strict_validator();
    let mut group = c.benchmark_group("per_call");
    for (name, text) in inputs() {
        assert!(audit(&auditor, &catalog, &text), "{name} is a clean call");
        assert!(floor(&text) && jsonschema_check(&validator, &text));
        if text.len() > 100_000 {
            group.sample_size(20);
        }
        group.bench_with_input(BenchmarkId::new("floor", name), &text, |b, t| {
            b.iter(|| floor(black_box(t)))
        });
        group.bench_with_input(BenchmarkId::new("audit", name), &text, |b, t| {
            b.iter(|| audit(&auditor, &catalog, black_box(t)))
        });
        group.bench_with_input(BenchmarkId::new("jsonschema", name), &text, |b, t| {
            b.iter(|| jsonschema_check(&validator, black_box(t)))
        });
    }
    group.finish();
}

fn against_catalogue_size(c: &mut Criterion) {
    let auditor = Auditor::new().with_sink(());
    let text = arguments_of_size(100);
    let mut group = c.benchmark_group("catalogue_size");
    for tools in [10, 10_000] {
        let catalog = catalogue_of(tools);
        group.bench_with_input(BenchmarkId::new("audit", tools), &text, |b, t| {
            b.iter(|| audit(&auditor, &catalog, black_box(t)))
        });
    }
    // The per-batch snapshot: one reference count, whatever the size.
    for tools in [10, 10_000] {
        let auditor = Auditor::new().with_sink(());
        auditor.replace_catalog(catalogue_of(tools));
        group.bench_function(BenchmarkId::new("snapshot", tools), |b| {
            b.iter(|| auditor.catalog())
        });
    }
    group.finish();
}

/// Per-call time with `threads` threads auditing through one shared auditor.
fn shared(auditor: &Auditor, text: &str, threads: u64, iters: u64) -> Duration {
    let start = Instant::now();
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for _ in 0..iters {
                    let catalog = auditor.catalog();
                    black_box(audit(auditor, &catalog, black_box(text)));
                }
            });
        }
    });
    start.elapsed() / threads as u32
}

fn against_sharing(c: &mut Criterion) {
    let auditor = Auditor::new().with_sink(());
    auditor.replace_catalog(catalogue_of(10));
    let text = arguments_of_size(100);
    let mut group = c.benchmark_group("sharing");
    for threads in [1, 2] {
        group.bench_function(BenchmarkId::new("threads", threads), |b| {
            b.iter_custom(|iters| shared(&auditor, &text, threads, iters))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = against_floor_and_jsonschema, against_catalogue_size, against_sharing
}
criterion_main!(benches);
