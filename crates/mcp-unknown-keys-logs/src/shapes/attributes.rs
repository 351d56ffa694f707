//! OpenTelemetry span attributes, as exporters write them: an object of
//! dotted names (`{"gen_ai.tool.name":"read_file"}`), or OTLP JSON's list of
//! key/value pairs whose values are typed
//! (`[{"key":"gen_ai.tool.name","value":{"stringValue":"read_file"}}]`).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// The raw value of attribute `name` in `attributes`; for an OTLP value,
/// the raw text of its typed member (a `stringValue` is a JSON string).
pub(super) fn find<'a>(attributes: &'a RawValue, name: &str) -> Option<&'a RawValue> {
    let mut deserializer = serde_json::Deserializer::from_str(attributes.get());
    deserializer.deserialize_any(Find { name }).ok().flatten()
}

struct Find<'n> {
    name: &'n str,
}

impl<'de> Visitor<'de> for Find<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("span attributes")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if key.0 == self.name {
                found = Some(map.next_value::<&RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        #[derive(Deserialize)]
        struct KeyValue<'a> {
            #[serde(borrow)]
            key: Option<Key<'a>>,
            #[serde(borrow)]
            value: Option<&'a RawValue>,
        }
        let mut found = None;
        while let Some(pair) = seq.next_element::<KeyValue<'de>>()? {
            if pair.key.is_some_and(|key| key.0 == self.name) {
                found = pair.value.and_then(typed_value);
            }
        }
        Ok(found)
    }
}

/// An OTLP `AnyValue`: the raw text of whichever typed member it has.
fn typed_value(value: &RawValue) -> Option<&RawValue> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct AnyValue<'a> {
        #[serde(borrow)]
        string_value: Option<&'a RawValue>,
        #[serde(borrow)]
        int_value: Option<&'a RawValue>,
        #[serde(borrow)]
        bool_value: Option<&'a RawValue>,
        #[serde(borrow)]
        double_value: Option<&'a RawValue>,
    }
    let any: AnyValue<'_> = serde_json::from_str(value.get()).ok()?;
    any.string_value
        .or(any.int_value)
        .or(any.bool_value)
        .or(any.double_value)
}

/// A member name, borrowed unless it holds escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

#[cfg(test)]
mod tests {
    use super::*;

    fn found(attributes: &str, name: &str) -> Option<String> {
        let raw: &RawValue = serde_json::from_str(attributes).unwrap();
        find(raw, name).map(|raw| raw.get().to_owned())
    }

    #[test]
    fn an_attribute_is_found_in_an_object_or_an_otlp_list() {
        let flat = r#"{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"read_file"}"#;
        assert_eq!(found(flat, "gen_ai.tool.name").as_deref(), Some(r#""read_file""#));
        let otlp = r#"[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},
                       {"key":"gen_ai.tool.name","value":{"stringValue":"read_file"}},
                       {"key":"retries","value":{"intValue":"2"}}]"#;
        assert_eq!(found(otlp, "gen_ai.tool.name").as_deref(), Some(r#""read_file""#));
        assert_eq!(found(otlp, "retries").as_deref(), Some(r#""2""#));
        assert_eq!(found(otlp, "missing"), None);
        assert_eq!(found("12", "x"), None);
    }
}
