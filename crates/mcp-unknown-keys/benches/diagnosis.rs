//! What the diagnosis costs: a call that raises no warning must cost what it
//! cost before; a call that raises one pays for the diagnosis, once per pair.
//!
//! For each argument size, four measurements in one run:
//!
//! - `floor`: a bare validating scan of the argument text with `IgnoredAny`;
//! - `clean`: auditing a call whose keys are all declared;
//! - `said_before`: auditing a call whose undeclared keys were already said
//!   (no warning, so no diagnosis);
//! - `warning`: auditing a call that raises a warning (a fresh auditor per
//!   iteration, so the pairs are new each time), diagnosis included, and
//!   dropping the warning.
//!
//! Quote ratios between them, never absolute times.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog};
use serde::de::IgnoredAny;
use serde_json::json;

fn catalog() -> Catalog {
    let tool = |name: &str, properties: serde_json::Value| json!({"name": name, "inputSchema": {"type": "object", "properties": properties}});
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = diagnosis
}
criterion_main!(benches);
