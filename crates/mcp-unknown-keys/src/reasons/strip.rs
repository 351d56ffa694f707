//! Taking `reason` out of a call's arguments.
//!
//! Object arguments lose the member and stay an object. JSON text is
//! re-serialised without the key, and with everything else as it was: the
//! other members keep their order and their values keep their exact text (a
//! number too large for `f64` is not rounded), so the provider receives what
//! the model wrote, less `reason`.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::REASON_PARAMETER;
use crate::wire::ToolCall;

/// Removes `reason` from the call's arguments and returns it as text (a
/// string as it is, any other JSON as its text). Returns `None`, leaving the
/// call untouched, when the arguments have no `reason` or are not a JSON
/// object: absent, empty, unparseable or of another type.
pub(super) fn strip_reason(call: &mut ToolCall) -> Option<String> {
    let arguments = call.function_mut()?.get_mut("arguments")?;
    match arguments {
        Value::Object(object) => {
            let reason = reason_text(object.get(REASON_PARAMETER)?);
            // `retain` keeps the other members' order, with or without
            // serde_json's `preserve_order`.
            object.retain(|key, _| key != REASON_PARAMETER);
            Some(reason)
        }
        Value::String(text) => {
            let (stripped, reason) = strip_from_json(text)?;
            *text = stripped;
            Some(reason)
        }
        _ => None,
    }
}

fn reason_text(reason: &Value) -> String {
    match reason {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// JSON text without its top-level `reason`, and the last `reason` it held
/// (the one a parser keeping the last duplicate would have seen).
fn strip_from_json(text: &str) -> Option<(String, String)> {
    // Most calls carry no reason: skip the parse when the key cannot be
    // there, written plainly or with escapes.
    if !text.contains(REASON_PARAMETER) && !text.contains('\\') {
        return None;
    }
    let members = Members::parse(text)?;
    let reason = members
        .0
        .iter()
        .rev()
        .find(|(key, _)| key == REASON_PARAMETER)
        .map(|(_, value)| raw_reason_text(value))?;
    let mut stripped = String::with_capacity(text.len());
    stripped.push('{');
    for (key, value) in members.0.iter().filter(|(key, _)| key != REASON_PARAMETER) {
        if stripped.len() > 1 {
            stripped.push(',');
        }
        stripped.push_str(&serde_json::to_string(key).ok()?);
        stripped.push(':');
        stripped.push_str(value.get());
    }
    stripped.push('}');
    Some((stripped, reason))
}

fn raw_reason_text(value: &RawValue) -> String {
    serde_json::from_str::<String>(value.get()).unwrap_or_else(|_| value.get().to_owned())
}

/// The top-level members of a JSON object, in order, duplicates included,
/// each value as its exact text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Members<'a> {
    fn parse(text: &'a str) -> Option<Members<'a>> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let members = deserializer.deserialize_map(MembersVisitor).ok()?;
        deserializer.end().ok()?;
        Some(members)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
            members.push(member);
        }
        Ok(Members(members))
    }
}
