//! Findings as OTLP/JSON: a log record each, and for a call that carried a
//! `traceparent`, a span event on a span of the call's trace. Attribute
//! names follow the OpenTelemetry semantic conventions for MCP where they
//! have one (`gen_ai.tool.name`, `mcp.method.name`, `jsonrpc.request.id`,
//! `mcp.session.id`, `server.address`); the rest are `mcp_unknown_keys.*`.
//!
//! Each warning is also said in the OpenTelemetry GenAI semantic
//! conventions' own event, `gen_ai.evaluation.result` ([`evaluations`]).

use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_unknown_keys::audit::{Cause, Judged, Verdict, Warning};
use serde_json::{Value, json};

use super::super::attribution::hex;
use mcp_unknown_keys::trace::TraceContext;

/// The most items of one list attribute (declared keys can run to
/// thousands); the count of all is in `…_count`.
pub(super) const MAX_LISTED: usize = 1000;

/// WARN, in OTLP's severity numbers.
const SEVERITY_WARN: u32 = 13;
/// INFO.
const SEVERITY_INFO: u32 = 9;

/// What every record of one run shares.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    /// `--name`, or the command's base name, or the URL's host.
    pub server: String,
    /// The run's session id.
    pub session: String,
    /// The host of a remote server (`server.address`).
    pub address: Option<String>,
}

/// One finding, encoded: its log record, and its span when the call was
/// traced.
#[derive(Clone, Debug)]
pub(super) struct Encoded {
    pub record: Value,
    pub span: Option<Value>,
}

/// A warning's record.
pub(super) fn warning(
    origin: &Origin,
    warning: &Warning,
    trace: Option<&TraceContext>,
    upstream: Option<&str>,
) -> Encoded {
    let mut attributes = common(origin, &warning.tool, &warning.id, upstream);
    list(
        &mut attributes,
        "mcp_unknown_keys.unknown_keys",
        &warning.unknown_keys,
    );
    list(
        &mut attributes,
        "mcp_unknown_keys.unknown_paths",
        &warning.unknown_paths,
    );
    list(
        &mut attributes,
        "mcp_unknown_keys.declared_keys",
        &warning.declared_keys,
    );
    let causes: Vec<&str> = warning.hints.iter().map(|hint| hint.cause.as_str()).collect();
    list(&mut attributes, "mcp_unknown_keys.cause", &causes);
    encode(
        "mcp_unknown_keys.warning",
        SEVERITY_WARN,
        &format!("{} was called with undeclared keys", warning.tool),
        &warning.to_string(),
        attributes,
        trace,
    )
}

/// The name of the evaluation, `gen_ai.evaluation.name`.
pub(super) const EVALUATION_NAME: &str = "mcp.unknown_keys";

/// A warning as `gen_ai.evaluation.result` events (semantic conventions
/// v1.38 to v1.41, now in the GenAI conventions' own repository; status
/// Development): one per cause its keys have ([`causes_of`]),
/// labelled with it (`gen_ai.evaluation.score.label`), explained by the
/// warning's line (keys and schema facts, never an argument's value), on
/// the call's trace when it carried one. No body, no score value.
pub(super) fn evaluations(
    origin: &Origin,
    warning: &Warning,
    trace: Option<&TraceContext>,
    upstream: Option<&str>,
) -> Vec<Encoded> {
    let explanation = warning.to_string();
    causes_of(warning)
        .into_iter()
        .map(|cause| {
            let mut attributes = common(origin, &warning.tool, &warning.id, upstream);
            attributes.push(attribute("gen_ai.evaluation.name", string(EVALUATION_NAME)));
            attributes.push(attribute("gen_ai.evaluation.score.label", string(cause)));
            attributes.push(attribute("gen_ai.evaluation.explanation", string(&explanation)));
            if !warning.id.is_empty() {
                attributes.push(attribute("gen_ai.tool.call.id", string(&warning.id)));
            }
            let mut encoded = encode(
                "gen_ai.evaluation.result",
                SEVERITY_WARN,
                "",
                "",
                attributes,
                trace,
            );
            if let Some(record) = encoded.record.as_object_mut() {
                record.remove("body");
            }
            // The warning's own record already carries the span event.
            encoded.span = None;
            encoded
        })
        .collect()
}

/// A verdict's record.
pub(super) fn verdict(
    origin: &Origin,
    judged: &Judged,
    trace: Option<&TraceContext>,
    upstream: Option<&str>,
) -> Encoded {
    let mut attributes = common(origin, &judged.tool, &judged.id, upstream);
    attributes.push(attribute(
        "mcp_unknown_keys.verdict",
        string(judged.verdict.as_str()),
    ));
    list(
        &mut attributes,
        "mcp_unknown_keys.unknown_keys",
        &judged.unknown_keys,
    );
    list(
        &mut attributes,
        "mcp_unknown_keys.unknown_paths",
        &judged.unknown_paths,
    );
    let what = match judged.verdict {
        Verdict::Ignored => "the server ignored them: the call succeeded",
        Verdict::Rejected => "the server rejected the call",
        Verdict::Unanswered => "the server never answered",
        Verdict::Ambiguous => "another request in flight shared its id, so its answer cannot be told apart",
    };
    let severity = if judged.verdict == Verdict::Ignored {
        SEVERITY_WARN
    } else {
        SEVERITY_INFO
    };
    encode(
        "mcp_unknown_keys.verdict",
        severity,
        &format!("{} call with undeclared keys {}", judged.tool, judged.verdict),
        &format!("a call to {} carried undeclared keys; {what}", judged.tool),
        attributes,
        trace,
    )
}

/// The body of one `/v1/logs` request.
pub(super) fn logs_request(resource: &Value, records: Vec<Value>) -> Value {
    json!({"resourceLogs": [{
        "resource": resource,
        "scopeLogs": [{"scope": scope(), "logRecords": records}],
    }]})
}

/// The body of one `/v1/traces` request.
pub(super) fn traces_request(resource: &Value, spans: Vec<Value>) -> Value {
    json!({"resourceSpans": [{
        "resource": resource,
        "scopeSpans": [{"scope": scope(), "spans": spans}],
    }]})
}

/// What produced the records: this program.
pub(super) fn resource(origin: &Origin) -> Value {
    let mut attributes = vec![
        attribute("service.name", string("mcp-unknown-keys")),
        attribute("service.version", string(env!("CARGO_PKG_VERSION"))),
    ];
    attributes.push(attribute("mcp_unknown_keys.server", string(&origin.server)));
    json!({ "attributes": attributes })
}

/// This program, as the scope of what it sends.
pub(super) fn scope() -> Value {
    json!({"name": "mcp-unknown-keys", "version": env!("CARGO_PKG_VERSION")})
}

fn common(origin: &Origin, tool: &str, id: &str, upstream: Option<&str>) -> Vec<Value> {
    let mut attributes = vec![
        attribute("gen_ai.tool.name", string(tool)),
        attribute("mcp.method.name", string("tools/call")),
        attribute("mcp.session.id", string(&origin.session)),
    ];
    if !id.is_empty() {
        attributes.push(attribute("jsonrpc.request.id", string(id)));
    }
    if let Some(address) = &origin.address {
        attributes.push(attribute("server.address", string(address)));
    }
    if let Some(upstream) = upstream {
        attributes.push(attribute("mcp_unknown_keys.upstream_session", string(upstream)));
    }
    attributes
}

fn encode(
    event: &str,
    severity: u32,
    span_name: &str,
    body: &str,
    attributes: Vec<Value>,
    trace: Option<&TraceContext>,
) -> Encoded {
    let now = unix_nanos();
    let mut record = json!({
        "timeUnixNano": now,
        "observedTimeUnixNano": now,
        "severityNumber": severity,
        "severityText": if severity == SEVERITY_WARN { "WARN" } else { "INFO" },
        "eventName": event,
        "body": string(body),
        "attributes": attributes,
    });
    let span = trace.map(|trace| {
        record["traceId"] = hex(&trace.trace_id).into();
        record["spanId"] = hex(&trace.span_id).into();
        record["flags"] = u32::from(trace.flags).into();
        json!({
            "traceId": hex(&trace.trace_id),
            "spanId": hex(&new_span_id()),
            "parentSpanId": hex(&trace.span_id),
            "flags": u32::from(trace.flags),
            "name": format!("mcp-unknown-keys: {span_name}"),
            // SPAN_KIND_INTERNAL: the proxy's look at a call it relays.
            "kind": 1,
            "startTimeUnixNano": now,
            "endTimeUnixNano": now,
            "attributes": record["attributes"],
            "events": [{"timeUnixNano": now, "name": event, "attributes": record["attributes"]}],
        })
    });
    Encoded { record, span }
}

/// One OTLP/JSON attribute.
pub(super) fn attribute(key: &str, value: Value) -> Value {
    json!({"key": key, "value": value})
}

/// A string value.
pub(super) fn string(text: &str) -> Value {
    json!({ "stringValue": text })
}

/// A list attribute, at most [`MAX_LISTED`] items, and its full count when
/// longer; nothing when empty.
fn list<T: AsRef<str>>(attributes: &mut Vec<Value>, key: &str, items: &[T]) {
    if items.is_empty() {
        return;
    }
    let values: Vec<Value> = items
        .iter()
        .take(MAX_LISTED)
        .map(|item| string(item.as_ref()))
        .collect();
    attributes.push(attribute(key, json!({"arrayValue": {"values": values}})));
    if items.len() > MAX_LISTED {
        attributes.push(attribute(
            &format!("{key}_count"),
            json!({"intValue": items.len().to_string()}),
        ));
    }
}

/// Now, in nanoseconds since the epoch, as OTLP/JSON writes 64-bit
/// integers: a decimal string.
pub(super) fn unix_nanos() -> String {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        .to_string()
}

/// A random, non-zero span id.
fn new_span_id() -> [u8; 8] {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNT.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    (hasher.finish() | 1).to_be_bytes()
}

/// The label of an undeclared nested key (the diagnosis reads top-level
/// keys only).
pub(super) const NESTED: &str = "nested";

/// The labels of the causes a finding carries: each hint's cause, and
/// [`NESTED`] for undeclared nested keys. Sorted, without duplicates.
pub(super) fn causes_of(warning: &Warning) -> BTreeSet<&'static str> {
    let mut causes: BTreeSet<&'static str> = warning.hints.iter().map(|hint| hint.cause.as_str()).collect();
    if !warning.unknown_paths.is_empty() {
        causes.insert(NESTED);
    }
    // What the call lost: `missing_required`, or `emptied`.
    if let Some(cause) = warning.missing_cause {
        causes.insert(cause.as_str());
    }
    if causes.is_empty() {
        causes.insert(Cause::Undiagnosed.as_str());
    }
    causes
}
