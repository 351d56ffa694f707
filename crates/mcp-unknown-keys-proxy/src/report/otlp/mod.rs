//! `--otlp URL`: each warning and verdict sent to an OpenTelemetry
//! collector as an OTLP/HTTP log record (JSON encoding, `/v1/logs`), and,
//! for a call that carried a `traceparent` in its `_meta`, also as a span
//! event on a span of the call's trace (`/v1/traces`); each warning also as
//! `gen_ai.evaluation.result` events, and the calls that carried undeclared
//! keys counted in the metric `mcp_unknown_keys.tool.calls`
//! (`/v1/metrics`, [`metrics`], sent after each batch of records).
//!
//! Nothing waits for the collector: records are handed to a thread of its
//! own through a bounded queue, sent in batches (by count and by time), and
//! dropped with a count when the queue is full or the collector does not
//! take them. The count is said in the summary, and on stderr at exit.
//!
//! One exporter serves the whole run, every session of the reverse proxy
//! included: a session that ends only reads the counts ([`Exporter::counts`]),
//! so a slow collector never costs the records other sessions have queued.
//! The queue is flushed (and what is left unsent counted as dropped) once,
//! when the run ends ([`Exporter::flush`], [`Exporter::finish`]).
//!
//! Without the feature `remote` (whose HTTP client sends the records) there
//! is no `--otlp`, and no exporter is ever made.

#![cfg_attr(not(feature = "remote"), allow(dead_code, unused_imports))]

mod encode;
pub(crate) mod metrics;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use mcp_unknown_keys::audit::{Judged, Warning};
use serde::Serialize;
use serde_json::Value;

use self::encode::Encoded;
pub(crate) use self::encode::Origin;
use self::metrics::CallCounter;
use super::attribution::Attribution;
use mcp_unknown_keys::trace::TraceContext;

/// The most records waiting for the exporter; beyond it a record is
/// dropped and counted.
pub(crate) const MAX_QUEUED: usize = 4096;

/// The most records in one request.
pub(crate) const MAX_BATCH: usize = 256;

/// How long a record may wait for others to share its request.
pub(crate) const BATCH_DELAY: Duration = Duration::from_secs(1);

/// How long one request may take.
pub(crate) const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the summary and the exit, together, wait for the records
/// queued to be sent: one deadline, set by the first of them, which the
/// second keeps (waiting for it anew let a stuck collector hold the exit
/// until its send timed out, 5 s).
pub(crate) const FLUSH_WITHIN: Duration = Duration::from_secs(3);

/// What the exporter sent and dropped, as a session's summary reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    /// The collector, as given (without userinfo or query).
    pub(crate) collector: String,
    /// Records the collector took.
    pub(crate) sent: u64,
    /// Records dropped: the queue was full, or the collector did not take
    /// them.
    pub(crate) dropped: u64,
}

/// The exporter of one run.
pub(crate) struct Exporter {
    shared: Arc<Shared>,
    origin: Origin,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Encoded>,
    /// Records handed over, and records sent or dropped by the thread.
    pushed: u64,
    done: u64,
    counts: Counts,
    /// Someone waits for the queue to be sent now.
    flushing: bool,
    /// When the run's last flush gives up: set by the first flush, kept by
    /// the next.
    deadline: Option<Instant>,
    /// Records of the batch the thread is sending now (0 once a flush that
    /// gave up counted them as dropped).
    in_flight: u64,
    closed: bool,
    /// The dropped count the last summary reported.
    reported: u64,
    /// The collector's failure was said.
    said: bool,
    /// The calls that carried undeclared keys, counted for `/v1/metrics`.
    counter: CallCounter,
}

impl Exporter {
    /// The exporter `--otlp` asks for, to the collector at `url`, if any
    /// (`remote_url`: the remote server's, which records name as its
    /// address); an error for a URL that cannot be used.
    #[cfg(feature = "remote")]
    pub(crate) fn open(
        url: Option<&str>,
        remote_url: Option<&str>,
        attribution: &Attribution,
    ) -> Result<Option<Exporter>, String> {
        let Some(url) = url else { return Ok(None) };
        let transport = transport::Transport::new(url)?;
        let origin = Origin {
            server: attribution.server.clone(),
            session: attribution.session.clone(),
            address: remote_url.and_then(super::attribution::url_host),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                counts: Counts {
                    collector: transport.shown().to_owned(),
                    ..Counts::default()
                },
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let resource = encode::resource(&origin);
        let sender = shared.clone();
        thread::Builder::new()
            .name("otlp".into())
            .spawn(move || sender.send_all(&transport, &resource))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(Some(Exporter { shared, origin }))
    }

    /// Without the feature `remote`, there is no `--otlp`.
    #[cfg(not(feature = "remote"))]
    pub fn open(_: Option<&str>, _: Option<&str>, _: &Attribution) -> Result<Option<Exporter>, String> {
        Ok(None)
    }

    /// Sends a warning, and its evaluation events.
    pub(crate) fn warning(&self, warning: &Warning, trace: Option<&TraceContext>, upstream: Option<&str>) {
        self.shared.state().counter.warned(warning);
        self.push(encode::warning(&self.origin, warning, trace, upstream));
        for evaluation in encode::evaluations(&self.origin, warning, trace, upstream) {
            self.push(evaluation);
        }
    }

    /// Sends a verdict, and counts its call.
    pub(crate) fn verdict(&self, judged: &Judged, trace: Option<&TraceContext>, upstream: Option<&str>) {
        self.shared.state().counter.judged(judged);
        self.push(encode::verdict(&self.origin, judged, trace, upstream));
    }

    /// Queues a record, or drops it when the queue is full: never waits.
    fn push(&self, encoded: Encoded) {
        let mut state = self.shared.state();
        if state.closed || state.queue.len() >= MAX_QUEUED {
            state.counts.dropped += 1;
            return;
        }
        state.queue.push_back(encoded);
        state.pushed += 1;
        // The first record of a batch starts its clock ([`BATCH_DELAY`]); a
        // full batch goes at once. Without the first wake, records would
        // wait for a flush.
        let wake = state.queue.len() == 1 || state.queue.len() >= MAX_BATCH;
        drop(state);
        if wake {
            self.shared.changed.notify_all();
        }
    }

    /// What was sent and dropped so far, for the summary of a session that
    /// ends while the run goes on: never waits, and leaves the records
    /// queued (its own and other sessions') to the exporter's schedule.
    pub(crate) fn counts(&self) -> Counts {
        let mut state = self.shared.state();
        state.reported = state.counts.dropped;
        state.counts.clone()
    }

    /// The run's last summary is due: sends what is queued now, waiting up
    /// to [`FLUSH_WITHIN`], counts what is still unsent as dropped, and
    /// returns the counts, which the summary reports.
    pub(crate) fn flush(&self) -> Counts {
        let mut state = self.shared.flush(FLUSH_WITHIN);
        state.reported = state.counts.dropped;
        state.counts.clone()
    }

    /// The run ends: what is queued gets its last try, and stderr says how
    /// many records were dropped since the last summary said it, `--quiet`
    /// or not.
    pub(crate) fn finish(&self) {
        let mut state = self.shared.flush(FLUSH_WITHIN);
        state.closed = true;
        let unsaid = state.counts.dropped - state.reported;
        if unsaid > 0 {
            eprintln!(
                "mcp-unknown-keys: the OTLP collector at {} did not take {unsaid} record(s); they were dropped ({} sent)",
                state.counts.collector, state.counts.sent
            );
        }
        drop(state);
        self.shared.changed.notify_all();
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the thread to send what is queued now and waits, up to
    /// `within`, until it has; the records still unsent then are counted
    /// as dropped, so no count is ever short.
    fn flush(&self, within: Duration) -> MutexGuard<'_, State> {
        let mut state = self.state();
        let until = *state.deadline.get_or_insert_with(|| Instant::now() + within);
        let target = state.pushed;
        state.flushing = true;
        self.changed.notify_all();
        while state.done < target {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // The batch on its way is given up too: the thread does not
                // count it again when its send ends.
                let unsent = state.queue.len() as u64 + std::mem::take(&mut state.in_flight);
                state.queue.clear();
                state.counts.dropped += unsent;
                state.done += unsent;
                break;
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.flushing = false;
        state
    }

    /// The thread: waits for a batch (full, or its first record
    /// [`BATCH_DELAY`] old, or a flush), sends it, counts, until closed.
    #[cfg(feature = "remote")]
    fn send_all(&self, transport: &transport::Transport, resource: &Value) {
        loop {
            let batch = {
                let mut state = self.state();
                let mut since: Option<Instant> = None;
                loop {
                    if state.closed && state.queue.is_empty() {
                        return;
                    }
                    let due = since.is_some_and(|at| at.elapsed() >= BATCH_DELAY);
                    if !state.queue.is_empty()
                        && (state.flushing || state.closed || due || state.queue.len() >= MAX_BATCH)
                    {
                        break;
                    }
                    if !state.queue.is_empty() && since.is_none() {
                        since = Some(Instant::now());
                    }
                    state = match since {
                        None => self.changed.wait(state).unwrap_or_else(PoisonError::into_inner),
                        Some(at) => {
                            let left = BATCH_DELAY.saturating_sub(at.elapsed());
                            self.changed
                                .wait_timeout(state, left)
                                .unwrap_or_else(PoisonError::into_inner)
                                .0
                        }
                    };
                }
                let take = state.queue.len().min(MAX_BATCH);
                state.in_flight = take as u64;
                state.queue.drain(..take).collect::<Vec<Encoded>>()
            };
            let sent = transport.send(resource, &batch);
            // The counts so far, once the batch that brought them is sent
            // (a collector that failed it is not sent more): cumulative,
            // so an export lost is made up by the next.
            let counts = sent
                .is_ok()
                .then(|| self.state().counter.export(resource))
                .flatten();
            if let Some(counts) = counts {
                let _ = transport.send_metrics(&counts);
            }
            let mut state = self.state();
            let count = std::mem::take(&mut state.in_flight);
            if count == 0 {
                // A flush gave up on this batch and counted it as dropped.
                drop(state);
                self.changed.notify_all();
                continue;
            }
            state.done += count;
            match sent {
                Ok(()) => state.counts.sent += count,
                Err(error) => {
                    state.counts.dropped += count;
                    if !state.said {
                        state.said = true;
                        eprintln!(
                            "mcp-unknown-keys: the OTLP collector at {} failed: {error}; \
                             records are dropped and counted until it takes them again",
                            state.counts.collector
                        );
                    }
                }
            }
            drop(state);
            self.changed.notify_all();
        }
    }
}

/// Where the records go: `URL/v1/logs` and `URL/v1/traces`, over the
/// remote doors' HTTP client (plain HTTP, or HTTPS with rustls).
#[cfg(feature = "remote")]
mod transport {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::header::{CONTENT_TYPE, HeaderValue};
    use hyper::{Method, Request, Uri};
    use serde_json::Value;

    use super::SEND_TIMEOUT;
    use super::encode::{self, Encoded};
    use crate::client::{Upstream, describe};

    pub(super) struct Transport {
        runtime: tokio::runtime::Runtime,
        client: Upstream,
        logs: Uri,
        traces: Uri,
        metrics: Uri,
    }

    impl Transport {
        /// The collector at `url`: its base (`http://host:4318`), or its
        /// logs endpoint (`…/v1/logs`).
        pub(super) fn new(url: &str) -> Result<Transport, String> {
            crate::client::url::check_userinfo(url, "--otlp")?;
            let base = url.trim_end_matches('/');
            let base = base.strip_suffix("/v1/logs").unwrap_or(base);
            let logs = format!("{base}/v1/logs");
            let client = Upstream::new(&logs, &[]).map_err(|e| format!("--otlp {e}"))?;
            let endpoint = |path: &str| {
                format!("{base}/{path}")
                    .parse::<Uri>()
                    .map_err(|e| format!("--otlp {}: {e}", client.shown()))
            };
            let traces = endpoint("v1/traces")?;
            let metrics = endpoint("v1/metrics")?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the runtime: {e}"))?;
            Ok(Transport {
                runtime,
                logs: client.url().clone(),
                client,
                traces,
                metrics,
            })
        }

        /// The collector as messages name it.
        pub(super) fn shown(&self) -> &str {
            self.client.shown()
        }

        /// Sends a batch: its log records, then the spans of those traced.
        pub(super) fn send(&self, resource: &Value, batch: &[Encoded]) -> Result<(), String> {
            let records = batch.iter().map(|encoded| encoded.record.clone()).collect();
            self.post(&self.logs, &encode::logs_request(resource, records))?;
            let spans: Vec<Value> = batch.iter().filter_map(|encoded| encoded.span.clone()).collect();
            if !spans.is_empty() {
                self.post(&self.traces, &encode::traces_request(resource, spans))?;
            }
            Ok(())
        }

        /// Sends the metrics' counts.
        pub(super) fn send_metrics(&self, body: &Value) -> Result<(), String> {
            self.post(&self.metrics, body)
        }

        fn post(&self, uri: &Uri, body: &Value) -> Result<(), String> {
            let body = Full::new(Bytes::from(body.to_string()))
                .map_err(|never| match never {})
                .boxed();
            let mut request = Request::new(body);
            *request.method_mut() = Method::POST;
            *request.uri_mut() = uri.clone();
            request
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            self.runtime.block_on(async {
                let response = tokio::time::timeout(SEND_TIMEOUT, self.client.request(request))
                    .await
                    .map_err(|_| format!("no answer within {} s", SEND_TIMEOUT.as_secs()))?
                    .map_err(|e| describe(&*e))?;
                let status = response.status();
                // Read to the end, so the connection can carry the next batch.
                let _ = tokio::time::timeout(SEND_TIMEOUT, response.into_body().collect()).await;
                if status.is_success() {
                    Ok(())
                } else {
                    Err(format!("HTTP {status}"))
                }
            })
        }
    }
}
