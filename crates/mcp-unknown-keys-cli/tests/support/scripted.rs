//! A scripted HTTP server on loopback, for the remote doors' tests of what
//! no real server does on purpose: odd ids, bodies on a notification's
//! answer, slow or endless answers, compressed bodies, 404s. Each request is
//! answered by a closure; every request (and whether its answer was taken to
//! the end) is reported.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};
use hyper::HeaderMap;
use hyper_util::rt::TokioIo;

use super::block_on;

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The request's target: its path and query.
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    /// A header's value, as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How one request is answered.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// The body's pieces, each sent after its delay.
    pub pieces: Vec<(Duration, Vec<u8>)>,
    /// Whether the body stays open after its pieces (an endless stream).
    pub endless: bool,
}

impl Reply {
    /// A JSON body.
    pub fn json(body: &str) -> Reply {
        Reply::status(200)
            .header("content-type", "application/json")
            .piece(Duration::ZERO, body.as_bytes())
    }

    /// An SSE body with these events' data, one `data:` line each.
    pub fn events(data: &[&str]) -> Reply {
        let body: String = data.iter().map(|d| format!("data: {d}\n\n")).collect();
        Reply::sse(&body)
    }

    /// An SSE body, written as it is.
    pub fn sse(body: &str) -> Reply {
        Reply::status(200)
            .header("content-type", "text/event-stream")
            .piece(Duration::ZERO, body.as_bytes())
    }

    /// An empty body with this status.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            pieces: Vec::new(),
            endless: false,
        }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Reply {
        self.headers.push((name, value.to_owned()));
        self
    }

    pub fn piece(mut self, after: Duration, bytes: &[u8]) -> Reply {
        self.pieces.push((after, bytes.to_vec()));
        self
    }

    pub fn endless(mut self) -> Reply {
        self.endless = true;
        self
    }
}

/// What happened to one request's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Every piece was taken by the client.
    Delivered,
    /// The client went away before the answer's end.
    Cancelled,
}

/// The server, running until the test ends.
pub struct Scripted {
    pub address: String,
    /// Connections accepted so far.
    connections: Arc<std::sync::atomic::AtomicUsize>,
    seen: mpsc::Receiver<Seen>,
    fates: Arc<Mutex<Vec<(Seen, Fate)>>>,
}

impl Scripted {
    /// Serves each request with `answer`.
    pub fn start(answer: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Scripted {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        listener.set_nonblocking(true).unwrap();
        let (report, seen) = mpsc::channel();
        let fates = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let kept = fates.clone();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let accepted = connections.clone();
        std::thread::spawn(move || {
            block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let (report, answer, fates) = (report.clone(), answer.clone(), kept.clone());
                    let service =
                        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let (report, answer, fates) = (report.clone(), answer.clone(), fates.clone());
                            async move {
                                use http_body_util::BodyExt;
                                let (parts, body) = request.into_parts();
                                let body = body
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes().to_vec())
                                    .unwrap_or_default();
                                let seen = Seen {
                                    method: parts.method.to_string(),
                                    uri: parts.uri.to_string(),
                                    headers: parts.headers,
                                    body,
                                };
                                let _ = report.send(seen.clone());
                                let reply = answer(&seen);
                                Ok::<_, Infallible>(respond(reply, seen, fates))
                            }
                        });
                    tokio::spawn(
                        hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service),
                    );
                }
            });
        });
        Scripted {
            address,
            connections,
            seen,
            fates,
        }
    }

    /// How many connections the server accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// The next request received, within `patience`.
    pub fn next(&self, patience: Duration) -> Option<Seen> {
        self.seen.recv_timeout(patience).ok()
    }

    /// Every request received so far (and not yet taken by `next`).
    pub fn drain(&self) -> Vec<Seen> {
        self.seen.try_iter().collect()
    }

    /// What became of each answer whose fate is known.
    pub fn fates(&self) -> Vec<(Seen, Fate)> {
        self.fates.lock().unwrap().clone()
    }
}

fn respond(reply: Reply, seen: Seen, fates: Fates) -> hyper::Response<Piecewise> {
    let (send, receive) = tokio::sync::mpsc::channel(1);
    let endless = reply.endless;
    tokio::spawn(async move {
        for (after, piece) in reply.pieces {
            tokio::time::sleep(after).await;
            if send.send(Bytes::from(piece)).await.is_err() {
                return;
            }
        }
        if endless {
            send.closed().await;
        }
        // Otherwise the body ends with the last piece, as a server's does.
    });
    let mut response = hyper::Response::new(Piecewise {
        pieces: receive,
        fate: Some((seen, fates)),
    });
    *response.status_mut() = hyper::StatusCode::from_u16(reply.status).unwrap();
    for (name, value) in reply.headers {
        response.headers_mut().append(name, value.parse().unwrap());
    }
    response
}

/// What became of each answer, as [`Scripted::fates`] reports it.
type Fates = Arc<Mutex<Vec<(Seen, Fate)>>>;

/// A body sent piece by piece, as the script's task hands the pieces over;
/// its fate is known when it is read to its end (delivered) or dropped
/// before (cancelled).
pub struct Piecewise {
    pieces: tokio::sync::mpsc::Receiver<Bytes>,
    fate: Option<(Seen, Fates)>,
}

impl Piecewise {
    fn settle(&mut self, fate: Fate) {
        if let Some((seen, fates)) = self.fate.take() {
            fates.lock().unwrap().push((seen, fate));
        }
    }
}

impl HttpBody for Piecewise {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.pieces.poll_recv(cx) {
            Poll::Ready(None) => {
                self.settle(Fate::Delivered);
                Poll::Ready(None)
            }
            polled => polled.map(|piece| piece.map(|piece| Ok(Frame::data(piece)))),
        }
    }
}

impl Drop for Piecewise {
    fn drop(&mut self) {
        self.settle(Fate::Cancelled);
    }
}

/// A gate the test opens: lets a script hold an answer (its status and
/// headers, blocking the script's server meanwhile) until the test has seen
/// what must come first.
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    pub fn new() -> Arc<Gate> {
        Arc::default()
    }

    /// Lets the held answer go.
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    /// Waits until the gate is open, at most `patience`; returns whether it
    /// was opened (rather than given up on).
    pub fn wait(&self, patience: Duration) -> bool {
        let open = self.open.lock().unwrap();
        let (open, _) = self
            .opened
            .wait_timeout_while(open, patience, |open| !*open)
            .unwrap();
        *open
    }
}
