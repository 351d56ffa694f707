//! Adding the `reason` property to a declaration's schema.

use serde_json::{Map, Value, json};

use super::REASON_PARAMETER;
use crate::wire::ToolDeclaration;

/// What adding `reason` to one declaration did.
pub(super) enum Augmented {
    /// `reason` was added to the tool of this name.
    Added(String),
    /// The declaration was left as it was: it cannot be read, or it already
    /// declares or requires `reason`. Calls to the tool of this name (if any)
    /// keep their `reason`.
    Untouched(Option<String>),
}

/// Adds an optional `reason` string property to `declaration`, when it can be
/// read: it has a name and a `parameters` object whose `type`, if any, is
/// `"object"` and whose `properties`, if any, is an object. `required` is
/// never touched.
pub(super) fn augment(declaration: &mut ToolDeclaration, description: &str) -> Augmented {
    let Some(name) = declaration.name().map(str::to_owned) else {
        return Augmented::Untouched(None);
    };
    let Some(schema) = readable_schema(declaration) else {
        return Augmented::Untouched(Some(name));
    };
    if declares_or_requires_reason(schema) {
        return Augmented::Untouched(Some(name));
    }
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("readable_schema checked that properties is an object");
    properties.insert(
        REASON_PARAMETER.to_owned(),
        json!({"type": "string", "description": description}),
    );
    Augmented::Added(name)
}

fn readable_schema(declaration: &mut ToolDeclaration) -> Option<&mut Map<String, Value>> {
    let schema = declaration
        .function_mut()?
        .get_mut("parameters")?
        .as_object_mut()?;
    let object_typed = schema.get("type").is_none_or(|kind| kind == "object");
    let properties_readable = schema.get("properties").is_none_or(Value::is_object);
    (object_typed && properties_readable).then_some(schema)
}

fn declares_or_requires_reason(schema: &Map<String, Value>) -> bool {
    let declared = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| properties.contains_key(REASON_PARAMETER));
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.iter().any(|key| key == REASON_PARAMETER));
    declared || required
}
