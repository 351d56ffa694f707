//! Reading the keys of a call's arguments without building values.
//!
//! A model's arguments travel as a JSON string. Parsing it into a `Value`
//! would allocate every string and number only to throw them away; this scan
//! hands each top-level key to a callback as a borrowed `&str` (decoded when
//! it held escapes) and skips every value with [`IgnoredAny`], so auditing
//! costs little more than checking the string is JSON at all. A small flat
//! object, most calls, is read by `flat` in one pass of its own instead,
//! which answers only where serde_json would read the same keys. When a
//! tool declares nested objects, `nested` reads the values that have a
//! shape of their own the same way, and `path` says how a nested key is
//! written.

mod flat;
pub(crate) mod nested;

pub use nested::NestedScan;
pub(crate) use nested::scan;

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// A call's arguments as the auditor reads them.
#[derive(Clone, Copy, Debug)]
pub enum Arguments<'a> {
    /// JSON text: the string a model's call carries, or the raw text of an
    /// object in a JSON-RPC request.
    Json(&'a str),
    /// Arguments already parsed into an object.
    Object(&'a Map<String, Value>),
    /// Arguments held as an object of the host's own language, such as a
    /// Python dict: its keys are read in place, and its values are
    /// converted only when they must be read ([`HostObject`]).
    Host(&'a dyn HostObject),
}

/// A call's arguments as an object of the host's language (the Python
/// package's dicts), read without a round trip through JSON text.
///
/// The auditor reads a call's top-level keys through
/// [`HostObject::for_each_key`], runs its scan of nested keys through
/// [`HostObject::scan`] for a tool declaring nested shapes, and asks for
/// [`HostObject::to_object`] only when it must read values: for a
/// warning's diagnosis (and for the nested scan, unless the host walks its
/// objects itself). Neither may fail on what a model wrote:
/// arguments that do not read as a JSON object are [`NotAnObject`], and a
/// value that has no JSON form may be read as `null`.
///
/// ```
/// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, HostObject, NotAnObject};
/// use serde_json::{Map, Value, json};
///
/// /// Arguments as a host keeps them: here, pairs of strings.
/// #[derive(Debug)]
/// struct Pairs(Vec<(String, String)>);
///
/// impl HostObject for Pairs {
///     fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
///         self.0.iter().for_each(|(key, _)| on_key(key));
///         Ok(())
///     }
///
///     fn to_object(&self) -> Option<Map<String, Value>> {
///         Some(self.0.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect())
///     }
/// }
///
/// let auditor = Auditor::new().with_sink(());
/// auditor.replace_catalog(Catalog::from_mcp_tools(&[json!({
///     "name": "fs_read", "inputSchema": {"properties": {"path": {}, "offset": {}}},
/// })]));
/// let pairs = Pairs(vec![("path".into(), "a".into()), ("ffset".into(), "12".into())]);
/// let call = Call::new("fs_read", Arguments::Host(&pairs));
/// let warning = auditor.audit(&auditor.catalog(), call).warning().unwrap();
/// assert_eq!(warning.unknown_keys, ["ffset"]);
/// ```
pub trait HostObject: fmt::Debug {
    /// Calls `on_key` with every top-level key, in order, as
    /// [`Arguments::for_each_key`] does; fails when the object has no JSON
    /// object form (a key that is not text, say).
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject>;

    /// The object with its values, as JSON; `None` when it has no JSON
    /// object form.
    fn to_object(&self) -> Option<Map<String, Value>>;

    /// Runs the auditor's scan of nested keys over the object, for a tool
    /// that declares nested shapes. The default converts the object with
    /// [`HostObject::to_object`]; a host with a serde `Deserializer` over
    /// its objects walks them in place instead:
    /// `deserializer.deserialize_map(scan)`.
    fn scan(&self, scan: NestedScan<'_, '_, '_>) -> Result<(), NotAnObject> {
        scan.over_object(&self.to_object().ok_or(NotAnObject)?)
    }
}

impl<'a> Arguments<'a> {
    /// Reads a call's `arguments` member: a string is JSON text, an object is
    /// used as it is, and anything else cannot be audited.
    pub fn from_value(value: &'a Value) -> Option<Arguments<'a>> {
        match value {
            Value::String(text) => Some(Arguments::Json(text)),
            Value::Object(object) => Some(Arguments::Object(object)),
            _ => None,
        }
    }

    /// Calls `on_key` with every top-level key, in order, duplicates
    /// included. Fails, having perhaps called `on_key` already, when the
    /// arguments are not a JSON object: empty or whitespace text, text that
    /// does not parse, or JSON of another type.
    pub fn for_each_key(self, mut on_key: impl FnMut(&str)) -> Result<(), NotAnObject> {
        match self {
            Arguments::Object(object) => {
                object.keys().map(String::as_str).for_each(on_key);
                Ok(())
            }
            Arguments::Json(text) => {
                // A small flat object, most calls, is read in one pass;
                // serde_json reads the rest, and decides what is refused.
                if let Some(keys) = flat::flat_keys(text) {
                    for key in keys.iter() {
                        on_key(key);
                    }
                    return Ok(());
                }
                scan_keys(text, on_key).map_err(|_| NotAnObject)
            }
            Arguments::Host(host) => host.for_each_key(&mut on_key),
        }
    }
}

/// The text to scan for a call's `arguments` member, given the member's raw
/// JSON text as a message carries it: a JSON string is decoded (an OpenAI
/// call's arguments travel as JSON text inside a string; some MCP clients
/// send them so too, and servers that accept it run the call), borrowed
/// when it holds no escape; any other value is its own text (an object
/// scans as one, anything else is refused by the scan). The proxy and the
/// `audit` command both read arguments through it, so they agree on every
/// line.
///
/// ```
/// use mcp_unknown_keys::audit::arguments_text;
///
/// assert_eq!(arguments_text(r#"{"path":"a"}"#), r#"{"path":"a"}"#);
/// assert_eq!(arguments_text(r#""{\"path\":\"a\"}""#), r#"{"path":"a"}"#);
/// assert_eq!(arguments_text("12"), "12");
/// // Borrowed from the message when the string holds no escape:
/// assert!(matches!(arguments_text(r#""{}""#), std::borrow::Cow::Borrowed("{}")));
/// ```
pub fn arguments_text(member: &str) -> Cow<'_, str> {
    if !member.starts_with('"') {
        return Cow::Borrowed(member);
    }
    // Decoded with one copy at most (none without escapes). Not a JSON
    // string after all: the scan will refuse it as it is.
    crate::json_string::decode(member).unwrap_or(Cow::Borrowed(member))
}

/// The arguments did not read as a JSON object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAnObject;

impl fmt::Display for NotAnObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the arguments are not a JSON object")
    }
}

impl std::error::Error for NotAnObject {}

fn scan_keys(text: &str, on_key: impl FnMut(&str)) -> serde_json::Result<()> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(TopLevelKeys { on_key })?;
    deserializer.end()
}

/// Visits the top-level object; refuses any other JSON type.
struct TopLevelKeys<F> {
    on_key: F,
}

impl<'de, F: FnMut(&str)> Visitor<'de> for TopLevelKeys<F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key(&mut self.on_key))?.is_some() {
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// Hands one key to the callback as a borrowed `&str`: no `String` is built.
struct Key<'f, F>(&'f mut F);

impl<'de, F: FnMut(&str)> DeserializeSeed<'de> for Key<'_, F> {
    type Value = ();

    // Inlined, with the callback, into the scan's loop: the key check is
    // a few compares, which a call per key would double.
    #[inline(always)]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, F: FnMut(&str)> Visitor<'de> for Key<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    #[inline(always)]
    fn visit_str<E>(self, key: &str) -> Result<(), E> {
        (self.0)(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Result<Vec<String>, NotAnObject> {
        let mut keys = Vec::new();
        Arguments::Json(text).for_each_key(|k| keys.push(k.to_owned()))?;
        Ok(keys)
    }

    #[test]
    fn reads_top_level_keys_in_order_and_skips_nested_ones() {
        let text = r#"{"path":"a","nested":{"inner":1,"deep":[{"x":2}]},"offset":12}"#;
        assert_eq!(keys(text).unwrap(), ["path", "nested", "offset"]);
    }

    #[test]
    fn decodes_escaped_keys() {
        assert_eq!(keys(r#"{"pa\u0074h":1,"a\nb":2}"#).unwrap(), ["path", "a\nb"]);
    }

    #[test]
    fn keeps_duplicate_keys() {
        assert_eq!(keys(r#"{"a":1,"a":2}"#).unwrap(), ["a", "a"]);
    }

    #[test]
    fn refuses_what_is_not_an_object() {
        for text in [
            "",
            "   ",
            "[1]",
            "\"{}\"",
            "12",
            "null",
            "{\"a\":",
            "{} {}",
            "{\"a\":1,}",
        ] {
            assert_eq!(keys(text), Err(NotAnObject), "{text:?}");
        }
    }

    #[test]
    fn skips_deeply_nested_values_without_recursing() {
        let deep = format!("{{\"a\":{}{},\"b\":1}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(keys(&deep).unwrap(), ["a", "b"]);
        let unbalanced = format!("{{\"a\":{}}}", "[".repeat(100_000));
        assert_eq!(keys(&unbalanced), Err(NotAnObject));
    }
}
