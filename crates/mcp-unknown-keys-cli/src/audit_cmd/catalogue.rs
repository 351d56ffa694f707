//! Reading catalogues: the `--tools` file, and listings met in the input.

use std::path::Path;

use mcp_unknown_keys::audit::Catalog;
use serde_json::Value;

/// Reads the `--tools` file: a JSON array of tools, an object with a `tools`
/// array, or a JSON-RPC response whose `result.tools` is one. The error says
/// which file and why, for a usage message.
pub fn read_file(path: &Path) -> Result<Catalog, String> {
    let shown = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read the catalogue {shown}: {e}"))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("the catalogue {shown} is not JSON: {e}"))?;
    let tools = tools_of(value).ok_or_else(|| {
        format!(
            "the catalogue {shown} holds no tools: expected a JSON array of tools, an object with a \
             `tools` array, or a tools/list response with `result.tools`"
        )
    })?;
    let mut catalog = Catalog::new();
    catalog.extend_tools(&tools);
    Ok(catalog)
}

fn tools_of(value: Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(tools) => Some(tools),
        Value::Object(mut object) => {
            let tools = match object.remove("tools") {
                Some(tools) => tools,
                None => object.remove("result")?.get_mut("tools")?.take(),
            };
            match tools {
                Value::Array(tools) => Some(tools),
                _ => None,
            }
        }
        _ => None,
    }
}
