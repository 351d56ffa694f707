//! Reading a tool declaration in any of the forms listings and model APIs
//! write it: the name of the tool and the JSON schema of its arguments.
//!
//! | form | a tool as written | name | schema |
//! |---|---|---|---|
//! | MCP `tools/list` | `{"name","inputSchema"}` | `name` | `inputSchema` |
//! | OpenAI Chat Completions | `{"type":"function","function":{"name","parameters"}}` | `function.name` | `function.parameters` |
//! | OpenAI Responses, OpenTelemetry `gen_ai.tool.definitions` | `{"type":"function","name","parameters"}` | `name` | `parameters` |
//! | Anthropic Messages | `{"name","input_schema"}` | `name` | `input_schema` |
//! | Gemini | `{"functionDeclarations":[{"name","parameters"}…]}` | each `name` | `parameters` or `parametersJsonSchema` |
//! | Amazon Bedrock Converse | `{"toolSpec":{"name","inputSchema":{"json"}}}` | `toolSpec.name` | `toolSpec.inputSchema.json` |
//!
//! Recognition is pure: it looks at one entry of a `tools` array and says
//! what it declares. [`Catalog::extend_tools`](super::Catalog::extend_tools)
//! reads every listing through it, so every door (and the Python package)
//! accepts the same forms.

use serde_json::Value;

/// The members that hold a tool's argument schema, in the order they are
/// tried: MCP, Anthropic, OpenAI (and Gemini), Gemini's JSON Schema form.
const SCHEMA_MEMBERS: [&str; 4] = [
    "inputSchema",
    "input_schema",
    "parameters",
    "parametersJsonSchema",
];

/// The members of a Gemini tool that group function declarations
/// (`functionDeclarations` over REST, `function_declarations` in the SDKs'
/// snake_case dumps).
const GROUP_MEMBERS: [&str; 2] = ["functionDeclarations", "function_declarations"];

/// The name and argument schema one declaration gives, in whichever form it
/// is written; `None` when `tool` declares no named tool (a Gemini group
/// holds several: read it with [`declarations`]).
///
/// The schema is `None` when the declaration gives none; a catalogue then
/// keeps the name as declaring nothing (nothing to check against).
pub(super) fn name_and_schema(tool: &Value) -> Option<(&str, Option<&Value>)> {
    // An MCP tool may carry a vendor `function` member of its own: only a
    // `function` object with a name makes an OpenAI Chat declaration.
    if let Some(function) = tool.get("function").filter(|f| has_name(f)) {
        return Some((name_of(function)?, schema_of(function)));
    }
    if let Some(spec) = tool.get("toolSpec").filter(|s| has_name(s)) {
        let schema = spec
            .get("inputSchema")
            .map(|schema| schema.get("json").unwrap_or(schema));
        return Some((name_of(spec)?, schema.filter(|s| !s.is_null())));
    }
    Some((name_of(tool)?, schema_of(tool)))
}

/// Every declaration one entry of a `tools` array holds, in order: the
/// entry itself in most forms, each of a Gemini tool's
/// `functionDeclarations`, nothing for an entry that declares no function
/// (a provider's built-in tool such as `{"type":"web_search"}`).
///
/// ```
/// use mcp_unknown_keys::audit::declarations;
/// use serde_json::json;
///
/// let gemini = json!({"functionDeclarations": [
///     {"name": "read_file", "parameters": {"type": "OBJECT", "properties": {"path": {}}}},
///     {"name": "list_dir", "parametersJsonSchema": {"type": "object", "properties": {"dir": {}}}},
/// ]});
/// let names: Vec<&str> = declarations(&gemini).map(|(name, _)| name).collect();
/// assert_eq!(names, ["read_file", "list_dir"]);
/// ```
pub fn declarations(tool: &Value) -> impl Iterator<Item = (&str, Option<&Value>)> {
    let group = GROUP_MEMBERS
        .iter()
        .find_map(|member| tool.get(*member).and_then(Value::as_array));
    let single = match group {
        Some(_) => None,
        None => name_and_schema(tool),
    };
    let grouped = group.into_iter().flatten().filter_map(name_and_schema);
    single.into_iter().chain(grouped)
}

fn has_name(value: &Value) -> bool {
    value.get("name").is_some_and(Value::is_string)
}

fn name_of(value: &Value) -> Option<&str> {
    value.get("name").and_then(Value::as_str)
}

/// The first schema member present and not null.
fn schema_of(declaration: &Value) -> Option<&Value> {
    SCHEMA_MEMBERS
        .iter()
        .find_map(|member| declaration.get(*member).filter(|schema| !schema.is_null()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::Catalog;
    use serde_json::json;

    fn schema(keys: &[&str]) -> Value {
        let properties: serde_json::Map<String, Value> = keys
            .iter()
            .map(|k| (k.to_string(), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": properties})
    }

    /// One declaration of `read(path)` in each form a listing or request
    /// writes it.
    fn every_form() -> Vec<(&'static str, Value)> {
        vec![
            (
                "mcp",
                json!({"name": "read", "description": "d", "inputSchema": schema(&["path"])}),
            ),
            (
                "openai chat",
                json!({"type": "function", "function": {"name": "read", "parameters": schema(&["path"])}}),
            ),
            (
                "openai responses",
                json!({"type": "function", "name": "read", "parameters": schema(&["path"]), "strict": true}),
            ),
            (
                "anthropic",
                json!({"name": "read", "description": "d", "input_schema": schema(&["path"])}),
            ),
            (
                "gemini",
                json!({"functionDeclarations": [{"name": "read", "parameters": schema(&["path"])}]}),
            ),
            (
                "gemini json schema",
                json!({"functionDeclarations": [{"name": "read", "parametersJsonSchema": schema(&["path"])}]}),
            ),
            (
                "gemini snake_case",
                json!({"function_declarations": [{"name": "read", "parameters": schema(&["path"])}]}),
            ),
            (
                "bedrock",
                json!({"toolSpec": {"name": "read", "description": "d", "inputSchema": {"json": schema(&["path"])}}}),
            ),
        ]
    }

    #[test]
    fn every_form_declares_its_name_and_schema() {
        for (form, tool) in every_form() {
            let found: Vec<_> = declarations(&tool).collect();
            assert_eq!(found, [("read", Some(&schema(&["path"])))], "{form}");
        }
    }

    #[test]
    fn a_catalogue_reads_every_form() {
        for (form, tool) in every_form() {
            let mut catalog = Catalog::new();
            catalog.extend_tools([&tool]);
            let read = catalog.get("read").unwrap_or_else(|| panic!("{form}: not read"));
            assert_eq!(read.keys().collect::<Vec<_>>(), ["path"], "{form}");
        }
    }

    #[test]
    fn a_gemini_group_declares_each_of_its_functions_in_order() {
        let group = json!({"functionDeclarations": [
            {"name": "a", "parameters": schema(&["x"])},
            {"description": "no name"},
            {"name": "b"},
        ]});
        let found: Vec<_> = declarations(&group).collect();
        assert_eq!(found, [("a", Some(&schema(&["x"]))), ("b", None)]);
    }

    #[test]
    fn entries_that_declare_no_function_yield_nothing() {
        for tool in [
            json!({"type": "web_search_preview"}),
            json!({"type": "function", "function": {"description": "no name"}}),
            json!({"name": 12, "inputSchema": {}}),
            json!("read"),
            json!(null),
            json!({"functionDeclarations": "not a list"}),
        ] {
            assert_eq!(declarations(&tool).count(), 0, "{tool}");
        }
    }

    #[test]
    fn a_vendor_function_member_without_a_name_leaves_an_mcp_tool_as_it_is() {
        let tool = json!({"name": "read", "inputSchema": schema(&["path"]), "function": {"vendor": true}});
        assert_eq!(name_and_schema(&tool), Some(("read", Some(&schema(&["path"])))));
    }

    #[test]
    fn a_null_schema_member_gives_way_to_the_next() {
        let tool = json!({"name": "read", "parameters": null, "parametersJsonSchema": schema(&["path"])});
        assert_eq!(name_and_schema(&tool), Some(("read", Some(&schema(&["path"])))));
        let bare = json!({"name": "read"});
        assert_eq!(name_and_schema(&bare), Some(("read", None)));
    }
}
