//! `--otlp URL`: each warning and verdict reaches an OpenTelemetry
//! collector as an OTLP/HTTP log record (JSON), and as a span event on the
//! call's trace when the call carried a `traceparent`; a collector that is
//! down or stuck costs dropped records, counted, never a delayed message.
//!
//! Each warning is also a `gen_ai.evaluation.result` event (the GenAI
//! semantic conventions'), and the calls that carried undeclared keys are
//! counted in the metric `mcp_unknown_keys.tool.calls`.
//!
//! The receiver here decodes what arrives with the official protocol
//! definitions (`opentelemetry-proto`, its serde support for OTLP/JSON).

#![cfg(feature = "remote")]

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use serde_json::Value;
use support::remote::post;
use support::reverse::Reverse;
use support::scripted::{Reply, Scripted};
use support::{PATIENCE, Session, block_on, call, list_request, list_response};

/// One request the collector received.
struct Received {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// A minimal OTLP/HTTP collector on loopback: answers each POST `200 {}`
/// and keeps what it got.
struct Collector {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Collector {
    fn start() -> Collector {
        Collector::slow_at_first(Duration::ZERO)
    }

    /// A collector that holds its answer to the first request for `delay`
    /// (a slow collector), and answers the rest at once.
    fn slow_at_first(delay: Duration) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let keep = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let keep = keep.clone();
                thread::spawn(move || serve(stream, &keep, delay));
            }
        });
        Collector { port, received }
    }

    /// How many requests have arrived.
    fn requests(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The log records received, decoded.
    fn logs(&self) -> Vec<Record> {
        self.bodies("/v1/logs")
            .iter()
            .flat_map(|body| {
                let request: ExportLogsServiceRequest = serde_json::from_slice(body).expect("OTLP/JSON logs");
                request.resource_logs
            })
            .flat_map(|resource| resource.scope_logs)
            .flat_map(|scope| scope.log_records)
            .map(|record| Record {
                event: record.event_name,
                severity: record.severity_number,
                trace_id: record.trace_id,
                span_id: record.span_id,
                attributes: attributes(&record.attributes),
            })
            .collect()
    }

    /// The last `/v1/metrics` request's metrics, decoded (the counts are
    /// cumulative: the last holds them all).
    fn last_metrics(&self) -> Vec<opentelemetry_proto::tonic::metrics::v1::Metric> {
        let bodies = self.bodies("/v1/metrics");
        let Some(body) = bodies.last() else {
            return Vec::new();
        };
        let request: ExportMetricsServiceRequest = serde_json::from_slice(body).expect("OTLP/JSON metrics");
        request
            .resource_metrics
            .into_iter()
            .flat_map(|resource| resource.scope_metrics)
            .flat_map(|scope| scope.metrics)
            .collect()
    }

    /// The spans received, decoded: (trace id, parent span id, event names).
    fn spans(&self) -> Vec<(Vec<u8>, Vec<u8>, Vec<String>)> {
        self.bodies("/v1/traces")
            .iter()
            .flat_map(|body| {
                let request: ExportTraceServiceRequest =
                    serde_json::from_slice(body).expect("OTLP/JSON traces");
                request.resource_spans
            })
            .flat_map(|resource| resource.scope_spans)
            .flat_map(|scope| scope.spans)
            .map(|span| {
                let events = span.events.into_iter().map(|event| event.name).collect();
                (span.trace_id, span.parent_span_id, events)
            })
            .collect()
    }

    fn bodies(&self, path: &str) -> Vec<Vec<u8>> {
        let received = self.received.lock().unwrap();
        for request in received.iter() {
            assert_eq!(request.content_type, "application/json");
        }
        received
            .iter()
            .filter(|request| request.path == path)
            .map(|request| request.body.clone())
            .collect()
    }
}

/// Reads HTTP/1.1 requests with a Content-Length body from one connection;
/// the answer to the collector's first request waits for `delay`.
fn serve(stream: TcpStream, keep: &Mutex<Vec<Received>>, delay: Duration) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split(' ').nth(1).unwrap_or("").to_owned();
        let mut headers = BTreeMap::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
        }
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let first = {
            let mut kept = keep.lock().unwrap();
            kept.push(Received {
                path,
                content_type: headers.get("content-type").cloned().unwrap_or_default(),
                body,
            });
            kept.len() == 1
        };
        if first {
            thread::sleep(delay);
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// A log record as the test reads it.
struct Record {
    event: String,
    severity: i32,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    attributes: BTreeMap<String, Attribute>,
}

#[derive(Debug, PartialEq)]
enum Attribute {
    Text(String),
    List(Vec<String>),
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, Attribute> {
    list.iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Any::StringValue(text)) => Attribute::Text(text.clone()),
                Some(Any::ArrayValue(array)) => Attribute::List(array.values.iter().map(text).collect()),
                other => panic!("{}: {other:?}", kv.key),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(Any::StringValue(text)) => text.clone(),
        other => panic!("{other:?}"),
    }
}

fn t(text: &str) -> Attribute {
    Attribute::Text(text.to_owned())
}

fn l(items: &[&str]) -> Attribute {
    Attribute::List(items.iter().map(|item| item.to_string()).collect())
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap())
        .collect()
}

#[test]
fn warnings_and_verdicts_arrive_as_log_records_and_a_traced_call_s_as_span_events() {
    let collector = Collector::start();
    let mut s = Session::start(
        &["--quiet", "--name", "files", "--otlp", &collector.url()],
        &["cat"],
    );
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path", "offset"])], None));
    let traced = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"a","ffset":1}},"_meta":{{"traceparent":"00-{TRACE_ID}-{PARENT_SPAN}-01"}}}}}}"#
    );
    s.echo(&traced);
    s.echo(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
    s.echo(&call("3", "fs_read", r#"{"path":"a","recursive":true}"#));
    let finished = s.finish();
    let session = finished.log.lines().next().map(|l| {
        let line: serde_json::Value = serde_json::from_str(l).unwrap();
        line["session"].as_str().unwrap().to_owned()
    });

    let records: Vec<Record> = collector
        .logs()
        .into_iter()
        .filter(|record| record.event.starts_with("mcp_unknown_keys."))
        .collect();
    let events: Vec<(&str, Option<&Attribute>)> = records
        .iter()
        .map(|r| (r.event.as_str(), r.attributes.get("mcp_unknown_keys.verdict")))
        .collect();
    assert_eq!(
        events,
        [
            ("mcp_unknown_keys.warning", None),
            ("mcp_unknown_keys.verdict", Some(&t("ignored"))),
            ("mcp_unknown_keys.warning", None),
            ("mcp_unknown_keys.verdict", Some(&t("unanswered"))),
        ]
    );
    let warning = &records[0];
    assert_eq!(warning.severity, 13, "WARN");
    let expected = [
        ("gen_ai.tool.name", t("fs_read")),
        ("mcp.method.name", t("tools/call")),
        ("jsonrpc.request.id", t("2")),
        ("mcp.session.id", t(session.as_deref().unwrap())),
        ("mcp_unknown_keys.unknown_keys", l(&["ffset"])),
        ("mcp_unknown_keys.declared_keys", l(&["offset", "path"])),
        ("mcp_unknown_keys.cause", l(&["truncated"])),
    ];
    for (key, value) in &expected {
        assert_eq!(warning.attributes.get(*key), Some(value), "{key}");
    }
    // The traced call's records carry its trace; the other's do not.
    assert_eq!(warning.trace_id, unhex(TRACE_ID));
    assert_eq!(warning.span_id, unhex(PARENT_SPAN));
    assert_eq!(records[1].trace_id, unhex(TRACE_ID));
    assert!(records[2].trace_id.is_empty());
    assert_eq!(records[3].attributes.get("jsonrpc.request.id"), Some(&t("3")));
    // And as span events, on spans whose parent is the call's span.
    let spans = collector.spans();
    assert_eq!(
        spans,
        [
            (
                unhex(TRACE_ID),
                unhex(PARENT_SPAN),
                vec!["mcp_unknown_keys.warning".to_owned()]
            ),
            (
                unhex(TRACE_ID),
                unhex(PARENT_SPAN),
                vec!["mcp_unknown_keys.verdict".to_owned()]
            ),
        ]
    );
    let otlp = &finished.logged_summary()["otlp"];
    // Two warnings, two verdicts, and an evaluation event per warning.
    assert_eq!(
        (&otlp["sent"], &otlp["dropped"]),
        (&6.into(), &0.into()),
        "{otlp}"
    );
}

#[test]
fn a_collector_that_is_down_costs_dropped_records_counted_and_said() {
    let port = support::remote::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut s = Session::start(&["--quiet", "--otlp", &url], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path"])], None));
    for id in 2..5 {
        s.echo(&call(
            &id.to_string(),
            "fs_read",
            &format!(r#"{{"path":"a","k{id}":1}}"#),
        ));
    }
    let finished = s.finish();
    let otlp = &finished.logged_summary()["otlp"];
    // Three warnings, their three evaluation events, three verdicts
    // (unanswered): none taken.
    assert_eq!(
        (&otlp["sent"], &otlp["dropped"]),
        (&0.into(), &9.into()),
        "{otlp}"
    );
    assert!(
        finished.stderr.contains(&format!(
            "the OTLP collector at http://127.0.0.1:{port}/v1/logs failed"
        )),
        "{}",
        finished.stderr
    );
    assert_eq!(finished.warnings.len(), 3, "the log has everything");
}

#[test]
fn a_collector_that_never_answers_delays_no_message() {
    // Accepts connections (the backlog does) and never answers.
    let stuck = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", stuck.local_addr().unwrap());
    let mut s = Session::start(&["--quiet", "--otlp", &url], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path"])], None));
    // Many warnings, each sent as a record the collector never takes:
    // each message still comes straight back.
    let started = Instant::now();
    for id in 2..300 {
        s.echo(&call(
            &id.to_string(),
            "fs_read",
            &format!(r#"{{"path":"a","k{id}":1}}"#),
        ));
    }
    let relayed = started.elapsed();
    assert!(
        relayed < Duration::from_secs(4),
        "300 messages took {relayed:?} while the collector was stuck"
    );
    let finished = s.finish();
    let otlp = &finished.logged_summary()["otlp"];
    assert_eq!(otlp["sent"], 0, "{otlp}");
    assert!(otlp["dropped"].as_u64().unwrap() >= 298, "{otlp}");
    drop(stuck);
}

#[test]
fn a_collector_that_never_answers_holds_the_exit_no_longer_than_the_flush_promises() {
    // Accepts connections (the backlog does) and never answers: the batch
    // sent at exit waits for an answer until its send times out (5 s).
    let stuck = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", stuck.local_addr().unwrap());
    let mut s = Session::start(&["--quiet", "--otlp", &url], &["cat"]);
    s.echo(&list_request("1", None));
    s.echo(&list_response("1", &[("fs_read", &["path"])], None));
    for id in 2..5 {
        s.echo(&call(
            &id.to_string(),
            "fs_read",
            &format!(r#"{{"path":"a","k{id}":1}}"#),
        ));
    }
    let closed = Instant::now();
    let finished = s.finish();
    let exit = closed.elapsed();
    // The summary and the exit share one 3 s wait (with room for a loaded
    // machine, below the 5 s a send may take).
    assert!(
        exit < Duration::from_millis(4400),
        "the proxy exited {exit:?} after stdin closed"
    );
    let otlp = &finished.logged_summary()["otlp"];
    // Three warnings, their evaluation events, three verdicts: each
    // counted once, as dropped.
    assert_eq!(
        (&otlp["sent"], &otlp["dropped"]),
        (&0.into(), &9.into()),
        "{otlp}"
    );
    drop(stuck);
}

#[test]
fn each_warning_is_a_gen_ai_evaluation_result_and_calls_are_counted_by_tool_cause_and_verdict() {
    let collector = Collector::start();
    let mut s = Session::start(&["--quiet", "--otlp", &collector.url()], &["cat"]);
    s.echo(&list_request("1", None));
    // `options` is an object whose keys are audited too.
    s.echo(
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{},"offset":{},"options":{"type":"object","properties":{"recursive":{}}}}}}]}}"#,
    );
    let traced = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"secret-path","ffset":1}},"_meta":{{"traceparent":"00-{TRACE_ID}-{PARENT_SPAN}-01"}}}}}}"#
    );
    s.echo(&traced);
    s.echo(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
    // The same key again: said once, counted again.
    s.echo(&call("3", "fs_read", r#"{"path":"b","ffset":2}"#));
    s.echo(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#);
    // A key of another cause and a nested key, never answered.
    s.echo(&call(
        "4",
        "fs_read",
        r#"{"path":"c","zzqx":true,"options":{"recursve":true}}"#,
    ));
    let finished = s.finish();
    assert_eq!(finished.warnings.len(), 2, "{}", finished.stderr);

    let evaluations: Vec<Record> = collector
        .logs()
        .into_iter()
        .filter(|record| record.event == "gen_ai.evaluation.result")
        .collect();
    let labels: Vec<(&Attribute, &Attribute)> = evaluations
        .iter()
        .map(|r| {
            (
                &r.attributes["gen_ai.evaluation.score.label"],
                &r.attributes["gen_ai.tool.call.id"],
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            (&t("truncated"), &t("2")),
            (&t("invented"), &t("4")),
            (&t("nested"), &t("4"))
        ]
    );
    let first = &evaluations[0];
    assert_eq!(first.attributes["gen_ai.evaluation.name"], t("mcp.unknown_keys"));
    assert_eq!(first.attributes["gen_ai.tool.name"], t("fs_read"));
    let Attribute::Text(explanation) = &first.attributes["gen_ai.evaluation.explanation"] else {
        panic!("a string")
    };
    assert!(
        explanation.contains("ffset → offset? (truncated)"),
        "{explanation}"
    );
    assert!(
        !explanation.contains("secret-path"),
        "no argument value: {explanation}"
    );
    assert_eq!(first.trace_id, unhex(TRACE_ID), "on the call's trace");

    let metrics = collector.last_metrics();
    assert_eq!(metrics.len(), 1);
    let metric = &metrics[0];
    assert_eq!(
        (metric.name.as_str(), metric.unit.as_str()),
        ("mcp_unknown_keys.tool.calls", "{call}")
    );
    use opentelemetry_proto::tonic::metrics::v1::{metric::Data, number_data_point::Value as Number};
    let Some(Data::Sum(sum)) = &metric.data else {
        panic!("a sum: {metric:?}")
    };
    assert!(sum.is_monotonic);
    assert_eq!(sum.aggregation_temporality, 2, "cumulative");
    let mut points: Vec<(BTreeMap<String, Attribute>, i64)> = sum
        .data_points
        .iter()
        .map(|point| {
            let Some(Number::AsInt(count)) = point.value else {
                panic!("{point:?}")
            };
            (attributes(&point.attributes), count)
        })
        .collect();
    points.sort_by_key(|(labels, _)| format!("{labels:?}"));
    let point = |cause: &str, verdict: &str, count: i64| {
        let labels = [
            ("gen_ai.tool.name", t("fs_read")),
            ("mcp_unknown_keys.cause", t(cause)),
            ("mcp_unknown_keys.verdict", t(verdict)),
        ];
        (
            labels
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<BTreeMap<_, _>>(),
            count,
        )
    };
    assert_eq!(
        points,
        [
            point("invented", "unanswered", 1),
            point("nested", "unanswered", 1),
            point("truncated", "ignored", 2),
        ]
    );
}

/// The reverse proxy's sessions share one exporter: a session that ends
/// while the collector is slow leaves the records other sessions queued to
/// be sent, never drops them.
#[test]
fn records_of_two_sessions_both_arrive_when_one_ends_while_the_other_s_are_queued() {
    // Longer than a flush waits (3 s), shorter than a send may take (5 s).
    let collector = Collector::slow_at_first(Duration::from_secs(4));
    let upstream = Scripted::start(|seen| {
        if seen.method == "DELETE" {
            return Reply::status(200);
        }
        let request: Value = serde_json::from_slice(&seen.body).unwrap();
        let id = request["id"].to_string();
        if request["method"] == "tools/list" {
            Reply::json(&list_response(&id, &[("fs_read", &["path"])], None))
        } else {
            Reply::json(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
            ))
        }
    });
    let proxy = Reverse::start(&upstream.url(), &["--otlp", &collector.url()]);
    let session = |name: &str, key: &str| {
        let headers = [("mcp-session-id", name)];
        block_on(async {
            post(&proxy.url(), &headers, &list_request("1", None)).await;
            let sent = call("2", "fs_read", &format!(r#"{{"path":"a","{key}":1}}"#));
            assert_eq!(post(&proxy.url(), &headers, &sent).await.status, 200);
        });
    };
    session("a", "from_a");
    // Session a's records are on their way to the collector, which holds
    // them; session b's wait in the queue behind them.
    let deadline = Instant::now() + PATIENCE;
    while collector.requests() == 0 {
        assert!(
            Instant::now() < deadline,
            "the collector is sent a first batch: {}",
            proxy.stderr()
        );
        thread::sleep(Duration::from_millis(20));
    }
    session("b", "from_b");
    proxy.wait_for_stderr(|line| line.contains("undeclared argument(s) from_b"));
    block_on(delete(&proxy.url(), "a"));
    proxy.wait_for_stderr(|line| line.contains("summary:"));

    let keys = || -> Vec<Attribute> {
        let mut keys: Vec<Attribute> = collector
            .logs()
            .into_iter()
            .filter(|record| record.event == "mcp_unknown_keys.warning")
            .filter_map(|mut record| record.attributes.remove("mcp_unknown_keys.unknown_keys"))
            .collect();
        keys.sort_by_key(|keys| format!("{keys:?}"));
        keys
    };
    let deadline = Instant::now() + PATIENCE;
    while keys().len() < 2 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    let (stderr, _) = proxy.stop();
    assert_eq!(keys(), [l(&["from_a"]), l(&["from_b"])], "{stderr}");
    assert!(!stderr.contains("dropped"), "{stderr}");
}

/// DELETE with an `Mcp-Session-Id`: the end of a session.
async fn delete(url: &str, session: &str) {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::TokioExecutor;
    let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let request = hyper::Request::delete(url)
        .header("mcp-session-id", session)
        .body(Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let _ = response.into_body().collect().await;
}
