//! Reading catalogues: the `--tools` file, and listings met in the input.

use std::path::Path;

use mcp_unknown_keys::ToolDeclaration;
use mcp_unknown_keys::audit::Catalog;
use serde_json::Value;

/// Adds the tools of one listing to `catalog`, in order, so the last one of a
/// name wins: OpenAI function declarations (`function.name`,
/// `function.parameters`) and MCP tools (`name`, `inputSchema`) alike. What
/// each schema declares, and what is kept, is the core's to decide.
pub fn add_tools(catalog: &mut Catalog, tools: Vec<Value>) {
    for tool in tools {
        if tool.get("function").is_some() {
            let declaration = ToolDeclaration::from(tool);
            if let Some(name) = declaration.name() {
                catalog.insert(name, declaration.parameters());
            }
        } else {
            catalog.extend_mcp_tools([&tool]);
        }
    }
}

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
    add_tools(&mut catalog, tools);
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
