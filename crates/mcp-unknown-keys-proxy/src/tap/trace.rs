//! The W3C trace context a call may carry in `params._meta.traceparent`,
//! as the OpenTelemetry conventions for MCP propagate it: read only for a
//! call that raised a finding, so that the finding joins the call's trace.

use serde_json::value::RawValue;

use mcp_unknown_keys::jsonrpc::{Id, members};

/// A call's trace context: `00-<trace id>-<parent span id>-<flags>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub flags: u8,
}

impl TraceContext {
    /// Reads a `traceparent` value; `None` unless it is a valid version-00
    /// header with non-zero ids.
    pub fn parse(text: &str) -> Option<TraceContext> {
        let mut parts = text.trim().split('-');
        let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if version != "00" || parts.next().is_some() {
            return None;
        }
        let context = TraceContext {
            trace_id: unhex(trace)?,
            span_id: unhex(span)?,
            flags: unhex::<1>(flags)?[0],
        };
        let zero = context.trace_id == [0; 16] || context.span_id == [0; 8];
        (!zero).then_some(context)
    }

    /// Reads the trace context of the call with `id` in `line` (a message,
    /// or a batch holding it). Ids are compared exactly, as [`Id`]s: a
    /// number too large for a float is still found.
    pub fn of_call(line: &[u8], id: Option<&Id>) -> Option<TraceContext> {
        let text = std::str::from_utf8(line).ok()?;
        if text.trim_start().starts_with('[') {
            let elements: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            return elements.into_iter().find_map(|element| {
                let [element_id] = members(element.get(), ["id"])?;
                (element_id.and_then(Id::read).as_ref() == id).then(|| of_message(element.get()))?
            });
        }
        of_message(text)
    }
}

fn of_message(text: &str) -> Option<TraceContext> {
    let [params] = members(text, ["params"])?;
    let [meta] = members(params?.get(), ["_meta"])?;
    let [traceparent] = members(meta?.get(), ["traceparent"])?;
    let text: String = serde_json::from_str(traceparent?.get()).ok()?;
    TraceContext::parse(&text)
}

/// `N` bytes from exactly `2N` lower-case hex digits.
fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
        let digit = |d: u8| match d {
            b'0'..=b'9' => Some(d - b'0'),
            b'a'..=b'f' => Some(d - b'a' + 10),
            _ => None,
        };
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_is_read_from_the_call_s_meta() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"t","_meta":{{"traceparent":"{PARENT}"}}}}}}"#
        );
        let context = TraceContext::of_call(line.as_bytes(), None).unwrap();
        assert_eq!(context.trace_id[..2], [0x4b, 0xf9]);
        assert_eq!(context.span_id[7], 0xb7);
        assert_eq!(context.flags, 1);
        let batch = format!(
            r#"[{{"id":1,"method":"tools/call","params":{{}}}},{{"id":2,"method":"tools/call","params":{{"_meta":{{"traceparent":"{PARENT}"}}}}}}]"#
        );
        assert_eq!(
            TraceContext::of_call(batch.as_bytes(), Some(&id("2"))),
            Some(context)
        );
        assert_eq!(TraceContext::of_call(batch.as_bytes(), Some(&id("1"))), None);
    }

    fn id(text: &str) -> Id {
        Id::read(&RawValue::from_string(text.to_owned()).unwrap()).unwrap()
    }

    #[test]
    fn a_call_in_a_batch_is_found_by_an_id_too_large_for_a_float() {
        let batch = format!(
            r#"[{{"id":12345678901234567890124,"method":"tools/call","params":{{}}}},{{"id":12345678901234567890123,"method":"tools/call","params":{{"_meta":{{"traceparent":"{PARENT}"}}}}}}]"#
        );
        let wanted = id("12345678901234567890123");
        assert_eq!(
            TraceContext::of_call(batch.as_bytes(), Some(&wanted)),
            TraceContext::parse(PARENT)
        );
        assert_eq!(
            TraceContext::of_call(batch.as_bytes(), Some(&id("12345678901234567890124"))),
            None,
            "ids that differ only past a float's precision are told apart"
        );
    }

    #[test]
    fn only_a_valid_version_00_traceparent_counts() {
        for bad in [
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad), None, "{bad}");
        }
    }
}
