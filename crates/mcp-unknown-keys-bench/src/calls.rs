//! The calls the core's benchmarks audit, shared by the criterion
//! benchmark (`benches/audit.rs`) and the instruction counts
//! (`examples/instructions.rs`), so that both measure the same bytes.

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// The tool every benchmark calls.
pub const TOOL: &str = "fs_write";

/// The schema of [`TOOL`]: seven properties.
pub fn schema() -> Value {
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
pub fn arguments_of_size(size: usize) -> String {
    let frame = json!({"path": "src/app.rs", "content": "", "offset": 12, "mode": "append"}).to_string();
    let content = "lorem ipsum ".repeat(size.saturating_sub(frame.len()) / 12 + 1);
    let mut text =
        json!({"path": "src/app.rs", "content": &content[..size.saturating_sub(frame.len())], "offset": 12, "mode": "append"})
            .to_string();
    text.shrink_to_fit();
    text
}

/// About 2 KiB of arguments made of many small nested values.
pub fn nested_arguments() -> String {
    let entries: Vec<Value> = (0..24)
        .map(|i| json!({"id": i, "tag": format!("t{i}"), "on": i % 2 == 0, "w": [i, i + 1, 0.5]}))
        .collect();
    json!({"path": "data.json", "content": "x", "metadata": {"entries": entries, "owner": {"name": "a", "uid": 1000}}})
        .to_string()
}

/// A listing of `tools` tools declaring the same schema, [`TOOL`] last.
pub fn catalogue_of(tools: usize) -> Catalog {
    let mut listing: Vec<Value> = (1..tools)
        .map(|i| json!({"name": format!("tool_{i:05}"), "inputSchema": schema()}))
        .collect();
    listing.push(json!({"name": TOOL, "inputSchema": schema()}));
    Catalog::from_mcp_tools(&listing)
}

/// Audits a call of [`TOOL`]; whether it was audited and found clean.
pub fn audit(auditor: &Auditor, catalog: &Catalog, text: &str) -> bool {
    let outcome = auditor.audit(catalog, Call::new(TOOL, Arguments::Json(text)));
    matches!(outcome, Outcome::Audited { warning: None, .. })
}

/// The floor: a bare validating scan of the same text.
pub fn floor(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

/// The clean calls of the `per_call` group, by name.
pub fn inputs() -> Vec<(&'static str, String)> {
    vec![
        ("100B", arguments_of_size(100)),
        ("10KiB", arguments_of_size(10 * 1024)),
        ("1MiB", arguments_of_size(1024 * 1024)),
        ("nested2KiB", nested_arguments()),
    ]
}
