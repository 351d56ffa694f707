//! The OpenAI wire shapes a provider speaks: declarations, calls and results.
//!
//! Declarations and calls are thin wrappers over a [`serde_json::Value`]:
//! whatever a model, a host or a provider put in them — `type`, `index`,
//! vendor fields, even a shape nobody expected — survives the trip through a
//! layer untouched. The accessors read the members the layers care about and
//! answer `None` when a value is not of the expected shape.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A tool as a model is shown it: an OpenAI function-tool declaration,
/// `{"type":"function","function":{"name","description"?,"parameters"}}`.
///
/// ```
/// use mcp_unknown_keys::ToolDeclaration;
/// use serde_json::json;
///
/// let declaration = ToolDeclaration::new(
///     "fs_read",
///     Some("Read a file"),
///     json!({"type": "object", "properties": {"path": {"type": "string"}}}),
/// );
/// assert_eq!(declaration.name(), Some("fs_read"));
/// assert!(declaration.parameters().is_some());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolDeclaration(Value);

impl ToolDeclaration {
    /// Builds a function declaration; `parameters` is the tool's JSON schema.
    pub fn new(name: impl Into<String>, description: Option<&str>, parameters: Value) -> Self {
        let mut function = Map::new();
        function.insert("name".into(), Value::String(name.into()));
        if let Some(description) = description {
            function.insert("description".into(), Value::String(description.into()));
        }
        function.insert("parameters".into(), parameters);
        ToolDeclaration(json!({"type": "function", "function": function}))
    }

    /// The tool's name, when the declaration has one.
    pub fn name(&self) -> Option<&str> {
        self.function()?.get("name")?.as_str()
    }

    /// The tool's description, when the declaration has one.
    pub fn description(&self) -> Option<&str> {
        self.function()?.get("description")?.as_str()
    }

    /// The tool's JSON schema (`function.parameters`), whatever its type.
    pub fn parameters(&self) -> Option<&Value> {
        self.function()?.get("parameters")
    }

    /// The `function` object, when there is one.
    pub fn function(&self) -> Option<&Map<String, Value>> {
        self.0.get("function")?.as_object()
    }

    /// The `function` object for editing, when there is one.
    pub fn function_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.0.get_mut("function")?.as_object_mut()
    }

    /// The declaration as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The declaration as JSON, for editing.
    pub fn as_value_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    /// Unwraps the declaration into its JSON.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl From<Value> for ToolDeclaration {
    fn from(value: Value) -> Self {
        ToolDeclaration(value)
    }
}

/// A model's tool call: `{"id","type"?,"function":{"name","arguments"}}`.
///
/// `arguments` is usually the JSON *string* a model's call travels as, but it
/// may also be an object, or empty or absent for a call without arguments.
/// A call of any other shape is kept as it is: layers forward it untouched
/// and the auditor does not read it.
///
/// ```
/// use mcp_unknown_keys::ToolCall;
///
/// let call = ToolCall::new("call_1", "fs_read", r#"{"path":"a.txt"}"#);
/// assert_eq!(call.id_text(), "call_1");
/// assert_eq!(call.name(), Some("fs_read"));
/// assert_eq!(call.arguments().and_then(|a| a.as_str()), Some(r#"{"path":"a.txt"}"#));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCall(Value);

impl ToolCall {
    /// Builds a function call; `arguments` is a JSON string or an object.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<Value>) -> Self {
        ToolCall(json!({
            "id": id.into(),
            "type": "function",
            "function": {"name": name.into(), "arguments": arguments.into()},
        }))
    }

    /// The call's id as it came, of whatever JSON type.
    pub fn id(&self) -> Option<&Value> {
        self.0.get("id")
    }

    /// The call's id as text: a string as is, any other JSON as its text,
    /// `""` when the call has none.
    pub fn id_text(&self) -> String {
        id_text(self.id())
    }

    /// The name of the tool called, when the call has one.
    pub fn name(&self) -> Option<&str> {
        self.function()?.get("name")?.as_str()
    }

    /// The call's arguments as they came, of whatever JSON type.
    pub fn arguments(&self) -> Option<&Value> {
        self.function()?.get("arguments")
    }

    /// The call's arguments as text, to show or log: a string as it is,
    /// other JSON as its text, `""` when absent.
    pub fn arguments_text(&self) -> String {
        match self.arguments() {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    }

    /// The `function` object, when there is one.
    pub fn function(&self) -> Option<&Map<String, Value>> {
        self.0.get("function")?.as_object()
    }

    /// The `function` object for editing, when there is one.
    pub fn function_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.0.get_mut("function")?.as_object_mut()
    }

    /// The call as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The call as JSON, for editing.
    pub fn as_value_mut(&mut self) -> &mut Value {
        &mut self.0
    }

    /// Unwraps the call into its JSON.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl From<Value> for ToolCall {
    fn from(value: Value) -> Self {
        ToolCall(value)
    }
}

/// A call id as text: a string as is, a number as its digits, other JSON as
/// its text, and `""` for none.
pub fn id_text(id: Option<&Value>) -> String {
    match id {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// What a tool call returned:
/// `{"role":"tool","tool_call_id","content","is_error","structured_content"?}`.
///
/// Members a provider adds beyond these are kept in [`ToolResult::extra`].
///
/// ```
/// use mcp_unknown_keys::ToolResult;
///
/// let result = ToolResult::error("call_1", "no such tool: fs_raed");
/// assert!(result.is_error);
/// assert_eq!(result.role, "tool");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Always `"tool"` for results built here.
    #[serde(default = "tool_role")]
    pub role: String,
    /// The id of the call this answers, as text.
    #[serde(default)]
    pub tool_call_id: String,
    /// What the tool said, as text for the model.
    #[serde(default)]
    pub content: String,
    /// Whether the tool (or a layer on its behalf) reports a failure.
    #[serde(default)]
    pub is_error: bool,
    /// The tool's structured output, when it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Any other member, kept as it came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn tool_role() -> String {
    "tool".to_owned()
}

impl ToolResult {
    /// A successful result for the call with this id.
    pub fn ok(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResult {
            role: tool_role(),
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            is_error: false,
            structured_content: None,
            extra: Map::new(),
        }
    }

    /// A failed result for the call with this id; `content` tells the model
    /// what went wrong.
    pub fn error(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResult {
            is_error: true,
            ..ToolResult::ok(tool_call_id, content)
        }
    }

    /// Adds the tool's structured output.
    pub fn with_structured_content(mut self, structured_content: Value) -> Self {
        self.structured_content = Some(structured_content);
        self
    }
}
