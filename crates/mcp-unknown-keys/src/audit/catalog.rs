//! The catalogue: which top-level keys each listed tool declares.

use std::collections::HashMap;

use serde_json::Value;

use crate::wire::ToolDeclaration;

/// The tools of one listing, each with the property names it declared.
///
/// Built from OpenAI function declarations ([`Catalog::from_declarations`])
/// or from MCP tools ([`Catalog::from_mcp_tools`]); both follow the same
/// rule for what is kept:
///
/// - a schema that is not an object, or whose `properties` is present but
///   not an object, is not kept: there is nothing to check against;
/// - a schema without `properties` (or with none in it) is kept as
///   declaring nothing: listed by [`Catalog::tool_names`], never audited;
/// - when a listing repeats a name, the last declaration wins.
///
/// ```
/// use mcp_unknown_keys::audit::Catalog;
/// use serde_json::json;
///
/// let catalog = Catalog::from_mcp_tools(&[json!({
///     "name": "fs_read",
///     "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}},
/// })]);
/// let fs_read = catalog.get("fs_read").unwrap();
/// assert!(fs_read.declares("offset"));
/// assert_eq!(fs_read.keys().collect::<Vec<_>>(), ["offset", "path"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    tools: HashMap<Box<str>, Declared>,
}

/// The property names one tool declared, sorted by code point, and the
/// `default` of those properties that give one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    keys: Box<[Box<str>]>,
    /// Only the properties with a `default`, sorted by key: read when a
    /// warning is diagnosed, never by [`Declared::declares`].
    defaults: Box<[(Box<str>, Value)]>,
}

impl Declared {
    /// Reads the declared keys of a JSON schema, or `None` when the schema
    /// cannot be read (not an object, or `properties` not an object).
    pub fn from_schema(schema: &Value) -> Option<Declared> {
        let schema = schema.as_object()?;
        let properties = match schema.get("properties") {
            None => None,
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => return None,
        };
        let mut keys: Vec<Box<str>> = properties
            .into_iter()
            .flat_map(|properties| properties.keys().map(|k| k.as_str().into()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut defaults: Vec<(Box<str>, Value)> = properties
            .into_iter()
            .flatten()
            .filter_map(|(key, property)| Some((key.as_str().into(), property.get("default")?.clone())))
            .collect();
        defaults.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(Declared {
            keys: keys.into(),
            defaults: defaults.into(),
        })
    }

    /// Whether `key` is a declared property.
    pub fn declares(&self, key: &str) -> bool {
        self.keys
            .binary_search_by(|declared| (**declared).cmp(key))
            .is_ok()
    }

    /// Whether the tool declared no property at all. Such a tool is never
    /// audited: every key would be equally undeclared.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The declared keys, sorted by code point.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.keys.iter().map(|k| &**k)
    }

    /// The `default` the schema gives property `key`, if it gives one.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Declared;
    /// use serde_json::json;
    ///
    /// let declared = Declared::from_schema(&json!({
    ///     "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "default": 0}},
    /// }))
    /// .unwrap();
    /// assert_eq!(declared.default_of("offset"), Some(&json!(0)));
    /// assert_eq!(declared.default_of("path"), None);
    /// ```
    pub fn default_of(&self, key: &str) -> Option<&Value> {
        let found = self
            .defaults
            .binary_search_by(|(declared, _)| (**declared).cmp(key));
        found.ok().map(|at| &self.defaults[at].1)
    }
}

impl Catalog {
    /// An empty catalogue: nothing is audited against it.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Reads OpenAI function declarations (`function.name`,
    /// `function.parameters`). Declarations without a name are passed over.
    pub fn from_declarations<'a>(declarations: impl IntoIterator<Item = &'a ToolDeclaration>) -> Catalog {
        let mut catalog = Catalog::new();
        for declaration in declarations {
            if let Some(name) = declaration.name() {
                catalog.insert(name, declaration.parameters());
            }
        }
        catalog
    }

    /// Reads MCP tools (`name`, `inputSchema`), as a `tools/list` result
    /// carries them. Tools without a name are passed over.
    pub fn from_mcp_tools<'a>(tools: impl IntoIterator<Item = &'a Value>) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.extend_mcp_tools(tools);
        catalog
    }

    /// Adds MCP tools to this catalogue, as a further page of one listing.
    pub fn extend_mcp_tools<'a>(&mut self, tools: impl IntoIterator<Item = &'a Value>) {
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                self.insert(name, tool.get("inputSchema"));
            }
        }
    }

    /// Records one tool's schema; the last record of a name wins, even one
    /// that cannot be read (which removes the tool).
    pub fn insert(&mut self, name: &str, schema: Option<&Value>) {
        match schema.and_then(Declared::from_schema) {
            Some(declared) => {
                self.tools.insert(name.into(), declared);
            }
            None => {
                self.tools.remove(name);
            }
        }
    }

    /// The declaration of a listed tool.
    pub fn get(&self, tool: &str) -> Option<&Declared> {
        self.tools.get(tool)
    }

    /// How many tools are kept.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is kept.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The names of the tools kept, sorted by code point.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.keys().map(|name| name.to_string()).collect();
        names.sort_unstable();
        names
    }

    /// The tools kept, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Declared)> {
        self.tools.iter().map(|(name, declared)| (&**name, declared))
    }
}
