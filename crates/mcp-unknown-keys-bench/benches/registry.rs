//! What a `Registry` adds to a batch: routing, renaming and putting results
//! back, against the same batch sent straight to the provider.
//!
//! `cargo bench -p mcp-unknown-keys-bench --bench registry`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_unknown_keys::{BoxError, Provider, Registry, ToolCall, ToolDeclaration, ToolResult};
use serde_json::json;

/// A provider with `tools` tools that answers every call at once.
struct Toolkit {
    tools: usize,
}

impl Provider for Toolkit {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        Ok((0..self.tools)
            .map(|i| {
                ToolDeclaration::new(
                    format!("tool{i}"),
                    Some("a tool"),
                    json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                )
            })
            .collect())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        Ok(calls
            .iter()
            .map(|call| ToolResult::ok(call.id_text(), "ok"))
            .collect())
    }
}

fn batch(prefix: &str) -> Vec<ToolCall> {
    (0..10)
        .map(|i| {
            ToolCall::new(
                format!("call_{i}"),
                format!("{prefix}tool{i}"),
                r#"{"path":"a.txt"}"#,
            )
        })
        .collect()
}

fn registry_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let direct = Toolkit { tools: 20 };
    let registry = Registry::new();
    for prefix in ["fs", "git", "time", "jira", "web"] {
        registry.add(Toolkit { tools: 20 }, prefix).unwrap();
    }

    let mut group = c.benchmark_group("registry");
    group.bench_function("batch of 10, straight to the provider", |b| {
        b.iter_batched(
            || batch(""),
            |calls| runtime.block_on(direct.execute_tool_calls(black_box(calls))),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("batch of 10, through a registry of 5", |b| {
        b.iter_batched(
            || batch("time_"),
            |calls| runtime.block_on(registry.execute_tool_calls(black_box(calls))),
            criterion::BatchSize::SmallInput,
        )
    });
    let hundred = Toolkit { tools: 100 };
    group.bench_function("listing 100 tools, straight", |b| {
        b.iter(|| runtime.block_on(hundred.tools_for_llm()))
    });
    group.bench_function("listing 5 x 20 tools, through a registry", |b| {
        b.iter(|| runtime.block_on(registry.tools_for_llm()))
    });
    group.finish();
}

criterion_group!(benches, registry_overhead);
criterion_main!(benches);
