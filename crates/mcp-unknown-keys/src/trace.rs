//! The W3C trace context a call may carry in `params._meta.traceparent`,
//! as the OpenTelemetry conventions for MCP propagate it. The session reads
//! it only for a call that raised a finding, and hands it on with the
//! warning and the verdict, so that a door exporting spans joins them to
//! the call's trace.

use crate::jsonrpc::members;

/// The longest JSON string a `traceparent` header can be written as: its
/// 55 characters each escaped as `\uXXXX`, and the quotes.
const MAX_TRACEPARENT_JSON: usize = 55 * 6 + 2;

/// A call's trace context: `00-<trace id>-<parent span id>-<flags>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace the call belongs to.
    pub trace_id: [u8; 16],
    /// The span that made the call: the parent of what is said of it.
    pub span_id: [u8; 8],
    /// The trace flags (`01`: sampled).
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

    /// Reads the trace context from a request's `_meta` (its raw JSON
    /// text): its `traceparent` member, read as the one JSON-RPC reader
    /// reads members (the last of a repeated one, names decoded).
    pub fn of_meta(meta: &str) -> Option<TraceContext> {
        let [traceparent] = members(meta, ["traceparent"])?;
        let raw = traceparent?.get();
        // A header is 55 characters; written with every one escaped
        // (`\u0030`), 332 bytes of JSON. Longer text is no header, and is
        // not copied to find that out.
        if raw.len() > MAX_TRACEPARENT_JSON {
            return None;
        }
        let text: String = serde_json::from_str(raw).ok()?;
        TraceContext::parse(&text)
    }
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
    fn a_traceparent_is_read_from_the_meta() {
        let meta = format!(r#"{{"progressToken":1,"traceparent":"{PARENT}"}}"#);
        let context = TraceContext::of_meta(&meta).unwrap();
        assert_eq!(context.trace_id[..2], [0x4b, 0xf9]);
        assert_eq!(context.span_id[7], 0xb7);
        assert_eq!(context.flags, 1);
        assert_eq!(TraceContext::of_meta(r#"{"traceparent":1}"#), None);
        assert_eq!(TraceContext::of_meta("[]"), None);
        // Every character escaped is still the header; longer is not.
        let escaped: String = PARENT.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        assert_eq!(
            TraceContext::of_meta(&format!(r#"{{"traceparent":"{escaped}"}}"#)),
            Some(context)
        );
        let padded = format!(r#"{{"traceparent":"{PARENT}{}"}}"#, " ".repeat(1000));
        assert_eq!(TraceContext::of_meta(&padded), None);
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
