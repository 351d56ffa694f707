//! Warnings on your traces: [`TracingSink`] emits each warning as a
//! `tracing` event, and `tracing-opentelemetry` turns an event inside a span
//! into an event of that span's OpenTelemetry span. Audit a tool call
//! inside the span your host opens for it, and the undeclared keys show on
//! the call's trace in any OpenTelemetry backend.
//!
//! Here the spans go to an in-memory exporter, and the program prints what
//! a backend would get; in a host, use the OTLP exporter of
//! `opentelemetry-otlp` instead. The attributes are the warning's fields:
//! `tool`, `id`, `unknown_keys`, `unknown_paths`, `declared_keys`, `hints`,
//! `causes`, `missing_keys`.
//!
//! ```sh
//! cargo run -p mcp-unknown-keys --example opentelemetry
//! ```

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, TracingSink};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

fn main() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("host")));

    tracing::subscriber::with_default(subscriber, || {
        let auditor = Auditor::new().with_sink(TracingSink);
        auditor.replace_catalog(Catalog::from_mcp_tools(&[json!({
            "name": "fs_read",
            "inputSchema": {"properties": {"path": {}, "offset": {}}},
        })]));
        // The span a host opens for each tool call, named as the
        // OpenTelemetry conventions for MCP name it.
        let span = tracing::info_span!("tools/call fs_read", gen_ai.tool.name = "fs_read");
        let _inside = span.enter();
        let id = json!("call_1");
        let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":12}"#)).with_id(&id);
        if let Some(warning) = auditor.audit(&auditor.catalog(), call).warning() {
            auditor.warn(&warning);
        }
    });

    provider.force_flush().expect("the spans are exported");
    for span in exporter.get_finished_spans().expect("the exporter holds them") {
        println!("span {:?} in trace {}", span.name, span.span_context.trace_id());
        for event in span.events.iter() {
            println!("  event {:?}", event.name);
            for attribute in &event.attributes {
                println!("    {} = {}", attribute.key, attribute.value);
            }
        }
    }
}
