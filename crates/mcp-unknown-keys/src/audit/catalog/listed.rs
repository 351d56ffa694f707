//! The tools of one listing page, read one by one: what a catalogue is
//! built from.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The tools of a listing's `tools` array, each read on its own.
///
/// A schema may nest deeper than a JSON parser will build (serde_json stops
/// at 128 levels). Read as a whole, such a listing would be lost with every
/// tool in it; read tool by tool, only the one tool's schema is lost, and
/// named. A tool whose name can still be read stays listed, declaring
/// nothing (`{"name": …}` alone), so that its calls are counted as
/// `declares_nothing`, never as calls to a tool the server did not list.
/// The proxy and the `audit` command both read listings through
/// [`ListedTools::read`], so they read the same tools.
///
/// ```
/// use mcp_unknown_keys::audit::ListedTools;
///
/// let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
/// let array = format!(
///     r#"[{{"name":"read","inputSchema":{{"properties":{{"path":{{}}}}}}}},
///        {{"name":"deep","inputSchema":{{"properties":{{"x":{deep}}}}}}}]"#
/// );
/// let listed = ListedTools::read(&array).expect("an array");
/// assert_eq!(listed.tools.len(), 2);
/// assert_eq!(listed.tools[0]["name"], "read");
/// assert_eq!(listed.tools[1], serde_json::json!({"name": "deep"}));
/// assert_eq!(listed.unreadable, ["deep"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ListedTools {
    /// Every tool listed, in order: as it was written, or, for one that
    /// could not be read whole but whose name could, `{"name": …}` alone.
    pub tools: Vec<Value>,
    /// The tools that could not be read whole, by name (`#N`, counted from
    /// 0, for one whose name cannot be read either), in order.
    pub unreadable: Vec<String>,
}

impl ListedTools {
    /// Reads the raw JSON text of a `tools` array, tool by tool; `None`
    /// when the text is not a JSON array at all.
    pub fn read(array: &str) -> Option<ListedTools> {
        // Raw values are only delimited, not built: no depth limit applies.
        let elements: Vec<&RawValue> = serde_json::from_str(array).ok()?;
        let mut listed = ListedTools::default();
        for (index, element) in elements.iter().enumerate() {
            match serde_json::from_str::<Value>(element.get()) {
                Ok(tool) => listed.tools.push(tool),
                Err(_) => match name_of(element) {
                    Some(name) => {
                        listed.tools.push(serde_json::json!({ "name": name }));
                        listed.unreadable.push(name);
                    }
                    None => listed.unreadable.push(format!("#{index}")),
                },
            }
        }
        Some(listed)
    }

    /// One declaration given on its own (in any form [`declarations`]
    /// reads), as a listing of one; `None` when it declares nothing.
    ///
    /// [`declarations`]: crate::audit::declarations
    pub fn declaration(value: Value) -> Option<ListedTools> {
        let declares = value.is_object() && crate::audit::declarations(&value).next().is_some();
        declares.then(|| ListedTools {
            tools: vec![value],
            unreadable: Vec::new(),
        })
    }
}

/// The `name` of a tool that cannot be read whole, if that much can be: its
/// other members are skipped without being built.
fn name_of(tool: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
    }
    // Other members are skipped as `IgnoredAny`, at any depth.
    let named: Named<'_> = serde_json::from_str(tool.get()).ok()?;
    Some(named.name.into_owned())
}
