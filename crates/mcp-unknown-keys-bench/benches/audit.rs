//! The audit's cost per call, against the floor (a bare validating scan of
//! the same argument string with serde_json and `IgnoredAny`) and against the
//! alternative a user would reach for (parse to a `Value`, then a compiled
//! `jsonschema` validator with `additionalProperties: false` injected).
//!
//! Also: a call whose arguments hold an array of 100 declared objects, read
//! against the items' schema (`nested`); lookups in a table of keys that
//! share their length and both ends (`key_table`); and reading a listing of
//! 1,000 tools written plainly or with `allOf` and `$ref` (`listing`); and
//! keys declared by `patternProperties` patterns as the core matches them,
//! in linear time, against the backtracking ECMA-262 engine that matched
//! them before (`patterns`); and the `per_call` calls audited with the
//! check of `required` keys on (the default) and off, one after the other
//! (`required`).
//!
//! Run `cargo bench -p mcp-unknown-keys-bench --bench audit`, then
//! `scripts/bench-ratios` prints the ratios recorded in BENCHMARKS.md
//! (`scripts/bench-required` those of the `required` group).

use std::hint::black_box;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_unknown_keys::audit::{Auditor, Catalog, Declared};
use mcp_unknown_keys_bench::calls::{TOOL, arguments_of_size, audit, catalogue_of, floor, inputs, schema};
use serde_json::{Value, json};

fn strict_validator() -> jsonschema::Validator {
    let mut strict = schema();
    strict["additionalProperties"] = json!(false);
    jsonschema::validator_for(&strict).expect("the schema compiles")
}

fn jsonschema_check(validator: &jsonschema::Validator, text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|value| validator.is_valid(&value))
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

/// The cost of checking the keys the schema lists in `required` (`path`
/// and `content`, carried by every call): each clean call of `per_call`
/// audited with the check on (the default) and then off.
fn against_required_check(c: &mut Criterion) {
    let checked = Auditor::new().with_sink(());
    let unchecked = Auditor::new().with_sink(()).check_required(false);
    let catalog = catalogue_of(10);
    let mut group = c.benchmark_group("required");
    for (name, text) in inputs() {
        assert!(audit(&checked, &catalog, &text) && audit(&unchecked, &catalog, &text));
        if text.len() > 100_000 {
            group.sample_size(20);
        }
        group.bench_with_input(BenchmarkId::new("checked", name), &text, |b, t| {
            b.iter(|| audit(&checked, &catalog, black_box(t)))
        });
        group.bench_with_input(BenchmarkId::new("unchecked", name), &text, |b, t| {
            b.iter(|| audit(&unchecked, &catalog, black_box(t)))
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

/// `create_entities`: an array of entity objects, each declaring three keys.
fn entities_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"entities": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "entityType", "observations"],
        }}},
        "required": ["entities"],
    })
}

/// A clean call creating 100 entities (about 8 KiB).
fn entities_arguments() -> String {
    let entities: Vec<Value> = (0..100)
        .map(|i| json!({"name": format!("entity_{i}"), "entityType": "person", "observations": ["wrote notes", "likes tea"]}))
        .collect();
    json!({ "entities": entities }).to_string()
}

fn against_nesting(c: &mut Criterion) {
    let catalog = Catalog::from_mcp_tools(&[json!({"name": TOOL, "inputSchema": entities_schema()})]);
    assert!(catalog.get(TOOL).unwrap().has_nested());
    let nested = Auditor::new().with_sink(());
    let top_level_only = Auditor::new().with_sink(()).top_level_only(true);
    let text = entities_arguments();
    assert!(audit(&nested, &catalog, &text) && audit(&top_level_only, &catalog, &text));
    let mut group = c.benchmark_group("nested");
    group.bench_function("floor", |b| b.iter(|| floor(black_box(&text))));
    group.bench_function("audit", |b| b.iter(|| audit(&nested, &catalog, black_box(&text))));
    group.bench_function("top_level_only", |b| {
        b.iter(|| audit(&top_level_only, &catalog, black_box(&text)))
    });
    group.finish();
}

fn sensor(i: usize) -> String {
    format!("sensor_{i:06}_temperature")
}

/// The listing of a tool declaring `declared` keys of one shape
/// (`sensor_000001_temperature`, …).
fn sensor_listing(declared: usize) -> [Value; 1] {
    let properties: serde_json::Map<String, Value> = (0..declared).map(|i| (sensor(i), json!({}))).collect();
    [json!({"name": TOOL, "inputSchema": {"properties": properties}})]
}

/// A clean call carrying 100 of the keys of [`sensor_listing`].
fn sensor_arguments(declared: usize) -> String {
    let arguments: serde_json::Map<String, Value> = (0..100)
        .map(|i| (sensor(i * declared / 100), json!(20.5)))
        .collect();
    Value::Object(arguments).to_string()
}

fn against_key_table_size(c: &mut Criterion) {
    let auditor = Auditor::new().with_sink(());
    let mut group = c.benchmark_group("key_table");
    for declared in [2_000, 16_000] {
        let catalog = Catalog::from_mcp_tools(&sensor_listing(declared));
        let text = sensor_arguments(declared);
        assert!(audit(&auditor, &catalog, &text));
        group.bench_with_input(BenchmarkId::new("audit", declared), &text, |b, t| {
            b.iter(|| audit(&auditor, &catalog, black_box(t)))
        });
    }
    group.sample_size(10);
    for declared in [2_000, 16_000] {
        let listing = sensor_listing(declared);
        group.bench_function(BenchmarkId::new("listing", declared), |b| {
            b.iter(|| Catalog::from_mcp_tools(black_box(&listing)))
        });
    }
    group.finish();
}

/// 1,000 tools, each declaring the benchmark's seven keys: written plainly,
/// or through `allOf` and `$ref` to `$defs` as schema generators write them.
fn listing_of(composed: bool) -> Vec<Value> {
    let plain = schema();
    (0..1_000)
        .map(|i| {
            let schema = if composed {
                let properties = plain["properties"].as_object().unwrap();
                let (first, rest): (Vec<_>, Vec<_>) =
                    properties.iter().enumerate().partition(|(at, _)| at % 2 == 0);
                let half = |pairs: Vec<(usize, (&String, &Value))>| -> serde_json::Map<String, Value> {
                    pairs
                        .into_iter()
                        .map(|(_, (k, v))| (k.clone(), v.clone()))
                        .collect()
                };
                json!({
                    "type": "object",
                    "allOf": [{"$ref": "#/$defs/first"}, {"$ref": "#/$defs/rest"}],
                    "$defs": {"first": {"properties": half(first)}, "rest": {"properties": half(rest)}},
                })
            } else {
                plain.clone()
            };
            json!({"name": format!("tool_{i:04}"), "inputSchema": schema})
        })
        .collect()
}

fn against_composition(c: &mut Criterion) {
    let mut group = c.benchmark_group("listing");
    group.sample_size(20);
    for (name, composed) in [("plain", false), ("composed", true)] {
        let listing = listing_of(composed);
        let catalog = Catalog::from_mcp_tools(&listing);
        assert_eq!(catalog.get("tool_0001").unwrap().keys().len(), 7, "{name}");
        group.bench_function(BenchmarkId::new("read_1000_tools", name), |b| {
            b.iter(|| Catalog::from_mcp_tools(black_box(&listing)))
        });
    }
    group.finish();
}

/// Patterns as servers write them.
const PATTERNS: [&str; 4] = [
    "^x-[a-z]+$",
    "^meta_[0-9]{1,3}$",
    "^[a-z]+(_[a-z]+)*$",
    "\\bid\\b",
];

/// Keys a call carries against them: most match one, some none.
const PATTERN_KEYS: [&str; 8] = [
    "x-trace",
    "meta_12",
    "snake_case_key",
    "user id",
    "x-request-id",
    "nomatch-Key!",
    "meta_1234",
    "Query",
];

fn against_patterns(c: &mut Criterion) {
    let properties: serde_json::Map<String, Value> =
        PATTERNS.iter().map(|p| (p.to_string(), json!({}))).collect();
    let declared = Declared::from_schema(&json!({ "patternProperties": properties })).unwrap();
    let unicode = regress::Flags {
        unicode: true,
        ..regress::Flags::default()
    };
    let backtracking: Vec<regress::Regex> = PATTERNS
        .iter()
        .map(|p| regress::Regex::with_flags(p, unicode).unwrap())
        .collect();
    let linear = |keys: &[&str]| keys.iter().filter(|key| declared.declares(key)).count();
    let before = |keys: &[&str]| {
        keys.iter()
            .filter(|key| backtracking.iter().any(|regex| regex.find(key).is_some()))
            .count()
    };
    assert_eq!(linear(&PATTERN_KEYS), before(&PATTERN_KEYS));
    let mut group = c.benchmark_group("patterns");
    group.bench_function("linear", |b| b.iter(|| linear(black_box(&PATTERN_KEYS))));
    group.bench_function("backtracking", |b| b.iter(|| before(black_box(&PATTERN_KEYS))));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = against_floor_and_jsonschema, against_catalogue_size, against_sharing, against_nesting,
        against_key_table_size, against_composition, against_patterns, against_required_check
}
criterion_main!(benches);
