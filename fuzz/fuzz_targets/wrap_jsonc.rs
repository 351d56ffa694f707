//! `wrap`'s JSONC reader (`mcp_unknown_keys_wrap::jsonc`), on any text. Nothing
//! may panic or hang; every span it gives lies in the text on character
//! boundaries and holds its value; and a text `serde_json` reads as JSON it
//! reads as the same value (keys in order, the last of a repeated key
//! being the one `serde_json` keeps), unless it is nested past its bound.

#![no_main]

use mcp_unknown_keys_wrap::jsonc::{self, Kind, Span, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let strict = serde_json::from_str::<serde_json::Value>(&text);
    match jsonc::parse(&text) {
        Ok(value) => {
            check_spans(&text, &value);
            if let Ok(strict) = strict {
                assert!(same(&value, &strict), "read otherwise than serde_json: {strict}");
            }
        }
        Err(fault) => {
            assert!(fault.offset <= text.len(), "{fault}: offset past the end");
            let _ = jsonc::position(&text, fault.offset);
            if strict.is_ok() {
                assert!(fault.message.contains("nested deeper"), "JSON refused: {fault}");
            }
        }
    }
});

fn slice<'t>(text: &'t str, span: Span) -> &'t str {
    assert!(span.start <= span.end && span.end <= text.len(), "{span:?}");
    text.get(span.start..span.end).expect("a span on character boundaries")
}

/// Every value's span holds it: a string token decodes to its text, an
/// object or array is bracketed.
fn check_spans(text: &str, value: &Value) {
    let token = slice(text, value.span);
    match &value.kind {
        Kind::Object(members) => {
            assert!(token.starts_with('{') && token.ends_with('}'), "{token}");
            for member in members {
                check_string(slice(text, member.key_span), &member.key);
                check_spans(text, &member.value);
            }
        }
        Kind::Array(elements) => {
            assert!(token.starts_with('[') && token.ends_with(']'), "{token}");
            elements.iter().for_each(|element| check_spans(text, element));
        }
        Kind::String(decoded) => check_string(token, decoded),
        Kind::Other => assert!(!token.is_empty()),
    }
}

/// A string token decodes to `decoded`, when `serde_json` reads it (it
/// refuses a lone surrogate escape, which the reader may replace).
fn check_string(token: &str, decoded: &str) {
    assert!(token.len() >= 2 && token.starts_with('"') && token.ends_with('"'), "{token}");
    if let Ok(strict) = serde_json::from_str::<String>(token) {
        assert_eq!(strict, decoded, "{token}");
    }
}

fn same(value: &Value, strict: &serde_json::Value) -> bool {
    match (&value.kind, strict) {
        (Kind::Object(members), serde_json::Value::Object(map)) => {
            let last = |key: &str| members.iter().rev().find(|m| m.key == key);
            members.iter().all(|m| map.contains_key(&m.key))
                && map
                    .iter()
                    .all(|(key, strict)| last(key).is_some_and(|m| same(&m.value, strict)))
        }
        (Kind::Array(elements), serde_json::Value::Array(strict)) => {
            elements.len() == strict.len() && elements.iter().zip(strict).all(|(a, b)| same(a, b))
        }
        (Kind::String(decoded), serde_json::Value::String(strict)) => decoded == strict,
        (Kind::Other, serde_json::Value::Number(_) | serde_json::Value::Bool(_) | serde_json::Value::Null) => true,
        _ => false,
    }
}
