//! The 2026-07-28 request headers taken from a message: `Mcp-Name` and the
//! `Mcp-Param-{Name}` headers a tool's schema asks for with `x-mcp-header`.
//!
//! A host on stdio knows nothing of these headers (the stdio transport may
//! ignore `x-mcp-header`), so the bridge, which is the HTTP client, learns
//! the annotations from the `tools/list` results it carries and mirrors
//! each annotated argument of a `tools/call` into its header, encoded as
//! the transport specifies. The message itself is never touched.

use std::collections::HashMap;

use hyper::header::{HeaderName, HeaderValue};
use mcp_unknown_keys::jsonrpc::ListingPage;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::client::headers::base64;

/// The largest integer a `Mcp-Param` header may carry (JavaScript's safe
/// range).
const SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Per tool, the arguments mirrored into headers.
#[derive(Debug, Default)]
pub(super) struct ParamHeaders {
    by_tool: HashMap<String, Vec<Annotation>>,
}

/// One `x-mcp-header` annotation: the argument's path of `properties`
/// keys, and the header it goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Annotation {
    path: Vec<String>,
    header: HeaderName,
}

impl ParamHeaders {
    /// Learns from one page of a `tools/list` result; the first page of a
    /// listing forgets the previous one. Returns the tools whose
    /// annotations break the transport's rules (their calls get no
    /// `Mcp-Param` header), with the reason.
    ///
    /// The page is read by the core's reader, as the tap reads it: tool by
    /// tool, the last of a repeated member counting.
    pub(super) fn learn(&mut self, result: &RawValue, first_page: bool) -> Vec<(String, &'static str)> {
        let Some(page) = ListingPage::read(result.get()) else {
            return Vec::new();
        };
        if first_page {
            self.by_tool.clear();
        }
        let mut rejected = Vec::new();
        for tool in &page.tools.tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
            let mut found = Vec::new();
            match annotations(schema, &mut Vec::new(), &mut found) {
                Ok(()) if found.is_empty() => {
                    self.by_tool.remove(name);
                }
                Ok(()) => {
                    self.by_tool.insert(name.to_owned(), found);
                }
                Err(reason) => {
                    self.by_tool.remove(name);
                    rejected.push((name.to_owned(), reason));
                }
            }
        }
        rejected
    }

    /// The `Mcp-Param` headers of a call to `tool` with these arguments.
    pub(super) fn headers(&self, tool: &str, arguments: Option<&RawValue>) -> Vec<(HeaderName, HeaderValue)> {
        let Some(annotated) = self.by_tool.get(tool) else {
            return Vec::new();
        };
        let Some(arguments) = arguments.and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok()) else {
            return Vec::new();
        };
        annotated
            .iter()
            .filter_map(|annotation| {
                let value = annotation
                    .path
                    .iter()
                    .try_fold(&arguments, |value, key| value.get(key))?;
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Bool(flag) => flag.to_string(),
                    Value::Number(number) => number.as_i64().filter(|n| n.abs() <= SAFE_INTEGER)?.to_string(),
                    _ => return None,
                };
                let value = HeaderValue::from_str(&header_text(&text)).ok()?;
                Some((annotation.header.clone(), value))
            })
            .collect()
    }
}

/// Collects the annotations reachable from `schema` through `properties`
/// alone; an annotation that breaks a rule rejects the tool.
fn annotations(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<Annotation>,
) -> Result<(), &'static str> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(name) = property.get("x-mcp-header") {
            let name = name.as_str().ok_or("an x-mcp-header that is not a string")?;
            let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes())
                .ok()
                .filter(|_| !name.is_empty())
                .ok_or("an x-mcp-header that is not a header name")?;
            let primitive = matches!(
                property.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            );
            if !primitive {
                return Err("an x-mcp-header on a parameter that is not a string, integer or boolean");
            }
            if found.iter().any(|a| a.header == header) {
                return Err("two parameters with the same x-mcp-header");
            }
            found.push(Annotation {
                path: path.clone(),
                header,
            });
        }
        annotations(property, path, found)?;
        path.pop();
    }
    Ok(())
}

/// A value as the transport writes it in a header: as it is when it is
/// plain visible ASCII without surrounding whitespace, else
/// `=?base64?…?=` of its UTF-8 bytes.
pub(super) fn header_text(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|byte| byte == b'\t' || (0x20..=0x7e).contains(&byte));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = visible && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64(value.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn values_are_encoded_as_the_transport_says() {
        // The specification's own examples.
        assert_eq!(header_text("us-west1"), "us-west1");
        assert_eq!(header_text("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(header_text(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_text("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_text("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn annotated_arguments_become_headers() {
        let mut params = ParamHeaders::default();
        let listing = raw(
            r#"{"tools":[{"name":"execute_sql","inputSchema":{"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"},
                "query":{"type":"string"},
                "opts":{"type":"object","properties":{"shard":{"type":"integer","x-mcp-header":"Shard"},
                                                      "dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}},
              {"name":"plain","inputSchema":{"properties":{"a":{}}}}]}"#,
        );
        assert!(params.learn(&listing, true).is_empty());
        let headers = params.headers(
            "execute_sql",
            Some(&raw(
                r#"{"region":"us-west1","query":"SELECT 1","opts":{"shard":42,"dry":false}}"#,
            )),
        );
        let shown: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            shown,
            [
                ("mcp-param-dry".to_owned(), "false".to_owned()),
                ("mcp-param-shard".to_owned(), "42".to_owned()),
                ("mcp-param-region".to_owned(), "us-west1".to_owned()),
            ]
        );
        // Absent or null: no header.
        assert!(
            params
                .headers("execute_sql", Some(&raw(r#"{"region":null}"#)))
                .is_empty()
        );
        assert!(params.headers("plain", Some(&raw(r#"{"a":1}"#))).is_empty());
    }

    #[test]
    fn a_listing_is_read_as_the_tap_reads_it_the_last_repeated_member_counting() {
        let mut params = ParamHeaders::default();
        // A server's parser keeps the last `tools`, and the last
        // `inputSchema`; a tool too deep to read whole declares nothing.
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let listing = raw(&format!(
            r#"{{"tools":[],"\u0074ools":[
                {{"name":"t","inputSchema":{{}},"inputSchema":{{"properties":{{"r":{{"type":"string","x-mcp-header":"R"}}}}}}}},
                {{"name":"deep","inputSchema":{{"properties":{{"d":{{"type":"string","x-mcp-header":"D","default":{deep}}}}}}}}}]}}"#
        ));
        assert_eq!(params.learn(&listing, true), []);
        let headers = params.headers("t", Some(&raw(r#"{"r":"eu"}"#)));
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].0.as_str(), "mcp-param-r");
        assert!(params.headers("deep", Some(&raw(r#"{"d":"x"}"#))).is_empty());
    }

    #[test]
    fn a_broken_annotation_is_reported_and_not_mirrored() {
        let mut params = ParamHeaders::default();
        let listing = raw(r#"{"tools":[{"name":"t","inputSchema":{"properties":{
                "n":{"type":"number","x-mcp-header":"N"}}}}]}"#);
        assert_eq!(params.learn(&listing, true).len(), 1);
        assert!(params.headers("t", Some(&raw(r#"{"n":1}"#))).is_empty());
        let twice = raw(r#"{"tools":[{"name":"t","inputSchema":{"properties":{
                "a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}}]}"#);
        assert_eq!(
            params.learn(&twice, true)[0].1,
            "two parameters with the same x-mcp-header"
        );
    }
}
