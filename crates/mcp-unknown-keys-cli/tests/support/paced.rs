//! A server that takes request bodies at its own pace, for the remote
//! doors' tests of a slow server: one that reads a long body slowly (the
//! proxy's writes wait on it, and move), or stops reading one until the
//! test lets it go on (the writes wait, and nothing moves). It answers a
//! `tools/list` declaring `path` for `fs_read`, and any other request with
//! an empty result, each with the request's id.

use std::convert::Infallible;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::scripted::Gate;
use super::{block_on, list_response};

/// The server, running until the test ends.
pub struct Paced {
    pub address: String,
    /// The length of each body whose head came, as it comes.
    heads: mpsc::Receiver<u64>,
    /// Every body taken whole, in order.
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// How the server takes bodies.
#[derive(Clone)]
pub struct Pace {
    /// Between two reads of at most 8 KiB.
    pub between: Duration,
    /// Bodies longer than this many bytes are not read at all until the
    /// gate opens.
    pub held_over: u64,
    pub gate: Arc<Gate>,
}

impl Pace {
    /// Every body read at once.
    pub fn eager() -> Pace {
        Pace {
            between: Duration::ZERO,
            held_over: u64::MAX,
            gate: Gate::new(),
        }
    }
}

impl Paced {
    pub fn start(pace: Pace) -> Paced {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        // A small receive window: the proxy's writes wait on the reads,
        // not on what the kernel would take in meanwhile.
        let size: libc::c_int = 16 * 1024;
        // SAFETY: sets an int option of a live socket, from a live int.
        unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&raw const size).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        let address = listener.local_addr().unwrap().to_string();
        listener.set_nonblocking(true).unwrap();
        let (report, heads) = mpsc::channel();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    let (report, kept, pace) = (report.clone(), kept.clone(), pace.clone());
                    let service = hyper::service::service_fn(move |request| {
                        take(request, pace.clone(), report.clone(), kept.clone())
                    });
                    tokio::spawn(
                        hyper::server::conn::http1::Builder::new()
                            .max_buf_size(8192)
                            .serve_connection(TokioIo::new(stream), service),
                    );
                }
            });
        });
        Paced {
            address,
            heads,
            bodies,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Waits for the head of a request whose body is longer than `bytes`.
    pub fn wait_for_head_over(&self, bytes: u64) {
        loop {
            let length = self
                .heads
                .recv_timeout(super::PATIENCE)
                .expect("the request's head came in time");
            if length > bytes {
                return;
            }
        }
    }

    /// Every body taken whole so far.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.bodies.lock().unwrap().clone()
    }
}

async fn take(
    request: hyper::Request<hyper::body::Incoming>,
    pace: Pace,
    report: mpsc::Sender<u64>,
    kept: Arc<Mutex<Vec<Vec<u8>>>>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let length = request
        .headers()
        .get("content-length")
        .and_then(|value| value.to_str().ok()?.parse().ok())
        .unwrap_or(0u64);
    let _ = report.send(length);
    if length > pace.held_over {
        let gate = pace.gate.clone();
        tokio::task::spawn_blocking(move || gate.wait(Duration::from_secs(600)))
            .await
            .unwrap();
    }
    let mut body = request.into_body();
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Ok(hyper::Response::new(Full::default()));
        };
        if let Some(data) = frame.data_ref() {
            read.extend_from_slice(data);
        }
        tokio::time::sleep(pace.between).await;
    }
    let message: Value = serde_json::from_slice(&read).unwrap_or_default();
    let id = message["id"].to_string();
    let answer = if message["method"] == "tools/list" {
        list_response(&id, &[("fs_read", &["path"])], None)
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#)
    };
    kept.lock().unwrap().push(read);
    let mut response = hyper::Response::new(Full::new(Bytes::from(answer)));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    Ok(response)
}
