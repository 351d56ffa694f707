//! Between MCP's forms and the wire's: a tool as a declaration, a call's
//! arguments as MCP wants them, a tool result as the wire's.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool};
use serde_json::{Value, json};

use crate::wire::{ToolDeclaration, ToolResult};

/// An MCP tool as an OpenAI function declaration.
pub(super) fn declaration(tool: &Tool) -> ToolDeclaration {
    let schema = if tool.input_schema.is_empty() {
        json!({"type": "object", "properties": {}})
    } else {
        Value::Object(JsonObject::clone(&tool.input_schema))
    };
    ToolDeclaration::new(tool.name.to_string(), tool.description.as_deref(), schema)
}

/// A call's arguments as MCP wants them: an object, or none at all.
pub(super) fn read_arguments(arguments: Option<&Value>) -> Result<Option<JsonObject>, String> {
    let parsed;
    let value = match arguments {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(None),
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|error| format!("the arguments are not valid JSON: {error}"))?;
            &parsed
        }
        Some(value) => value,
    };
    match value {
        Value::Object(object) => Ok(Some(object.clone())),
        other => Err(format!(
            "the arguments must be a JSON object, not {}",
            json_type(other)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An MCP tool result as the wire's [`ToolResult`].
pub(super) fn tool_result(id: String, result: CallToolResult) -> ToolResult {
    let content = result
        .content
        .iter()
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n");
    let mut answer = if result.is_error.unwrap_or(false) {
        ToolResult::error(id, content)
    } else {
        ToolResult::ok(id, content)
    };
    answer.structured_content = result.structured_content;
    answer
}

/// A content block as text: text as it is, anything else as a placeholder.
fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio: {}]", audio.mime_type),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, .. }
            | ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
            _ => "[resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        _ => "[unsupported content]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_declared_with_its_schema_verbatim() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}},
                            "required": ["path"], "additionalProperties": true});
        let Value::Object(object) = schema.clone() else {
            unreachable!()
        };
        let tool = Tool::new("read", "Read a file", object);
        let declared = declaration(&tool);
        assert_eq!(
            declared.as_value(),
            &json!({"type": "function", "function": {
                "name": "read", "description": "Read a file", "parameters": schema}})
        );
    }

    #[test]
    fn a_tool_without_schema_or_description_gets_an_empty_object_schema() {
        let tool = Tool::new_with_raw("ping", None, JsonObject::new());
        let declared = declaration(&tool);
        assert_eq!(
            declared.as_value(),
            &json!({"type": "function", "function": {
                "name": "ping", "parameters": {"type": "object", "properties": {}}}})
        );
    }

    #[test]
    fn arguments_are_read_as_an_object_or_none() {
        let object = json!({"b": 1, "a": [2]});
        assert_eq!(read_arguments(None), Ok(None));
        assert_eq!(read_arguments(Some(&Value::Null)), Ok(None));
        assert_eq!(read_arguments(Some(&json!(""))), Ok(None));
        assert_eq!(read_arguments(Some(&json!(" \n\t"))), Ok(None));
        assert_eq!(
            read_arguments(Some(&json!(object.to_string()))),
            Ok(object.as_object().cloned())
        );
        assert_eq!(read_arguments(Some(&object)), Ok(object.as_object().cloned()));

        let problem = |value: Value| read_arguments(Some(&value)).unwrap_err();
        assert!(problem(json!("{\"a\":")).starts_with("the arguments are not valid JSON"));
        assert_eq!(
            problem(json!("[1]")),
            "the arguments must be a JSON object, not an array"
        );
        assert_eq!(
            problem(json!("null")),
            "the arguments must be a JSON object, not null"
        );
        assert_eq!(
            problem(json!(true)),
            "the arguments must be a JSON object, not a boolean"
        );
    }

    #[test]
    fn content_blocks_become_text_and_placeholders() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ContentBlock::audio("UklGRg==", "audio/wav"),
            ContentBlock::embedded_text("file:///a.txt", "the text"),
            ContentBlock::resource(ResourceContents::blob("AAEC", "file:///b.bin")),
            ContentBlock::resource_link(rmcp::model::Resource::new("file:///c.md", "c")),
            ContentBlock::text("last"),
        ]);
        result.structured_content = Some(json!({"n": 1}));
        let answer = tool_result("call_1".into(), result);
        assert_eq!(
            answer.content,
            "first\n[image: image/png]\n[audio: audio/wav]\n[resource: file:///a.txt]\n\
             [resource: file:///b.bin]\n[resource link: file:///c.md]\nlast"
        );
        assert!(!answer.is_error);
        assert_eq!(answer.tool_call_id, "call_1");
        assert_eq!(answer.structured_content, Some(json!({"n": 1})));
    }

    #[test]
    fn is_error_becomes_is_error() {
        let failed = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        let answer = tool_result("7".into(), failed);
        assert!(answer.is_error);
        assert_eq!(answer.content, "no such file");
        assert_eq!(answer.structured_content, None);
    }
}
