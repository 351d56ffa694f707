//! The connections to the one server a door reaches, kept open between
//! requests: HTTP/1.1, one request at a time on each, as many side by side
//! as there are requests.
//!
//! A door only ever speaks to one origin, so the pool is a list, not a map
//! by origin as hyper-util's pooling client keeps, and it needs no task of
//! its own: a connection is put back as soon as its response's head has
//! come, and taken again once hyper says it is ready for the next request,
//! which it is when that response's body has been read to its end and the
//! server has not closed it. (BENCHMARKS.md, sixth round, counts the
//! bridge's instructions and connections with it.) Before a kept connection
//! is taken, its socket is asked whether the server closed it: hyper learns
//! of a close only once the runtime has polled its events, and a request
//! sent on a connection the server closed is lost.

use std::future::Future;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HOST, HeaderValue};
use hyper::http::uri::PathAndQuery;
use hyper::{Request, Uri};
use tower_service::Service;

use super::stall::{Progress, Stalled, idle};
use super::{Body, BoxError, Connector, Response};

/// How long after its last response began a connection may still be taken
/// (the pool does not see when the response's body ends); an older one is
/// let go instead: servers close idle connections, and a request sent on
/// one as it closes is lost.
const IDLE_FOR: Duration = Duration::from_secs(60);

/// How many connections are kept, used or not: past it the oldest is
/// closed once its answer is in (a door with more requests side by side
/// opens more, and closes them after).
const KEPT: usize = 256;

/// The server's connections, and how to open more.
#[derive(Clone)]
pub(super) struct Pool {
    connector: Connector,
    /// Where connections go.
    origin: Uri,
    /// What `Host` says, when a request does not say it itself.
    host: HeaderValue,
    /// Connections put back, the most recent last.
    kept: Arc<Mutex<Vec<Kept>>>,
}

/// A connection put back, and when its last response began.
struct Kept {
    connection: Connection,
    since: Instant,
}

/// A connection's sending half, its socket, and its progress.
struct Connection {
    sender: SendRequest<Body>,
    socket: RawFd,
    progress: Arc<Progress>,
}

impl Pool {
    /// A pool of connections to `url`'s origin (scheme, host and port).
    pub(super) fn new(connector: Connector, url: &Uri) -> Result<Pool, String> {
        let host = url.host().unwrap_or_default();
        let host = match url.port_u16() {
            Some(port) if Some(port) != default_port(url) => format!("{host}:{port}"),
            _ => host.to_owned(),
        };
        let host =
            HeaderValue::from_str(&host).map_err(|_| "the URL's host is not a valid Host".to_owned())?;
        let mut origin = url.clone().into_parts();
        origin.path_and_query = Some(PathAndQuery::from_static("/"));
        let origin = Uri::from_parts(origin).map_err(|e| e.to_string())?;
        Ok(Pool {
            connector,
            origin,
            host,
            kept: Arc::default(),
        })
    }

    /// Sends `request` (its URI on the pool's origin) on a ready connection,
    /// or on a new one. A request that a kept connection turned out to be
    /// closed for, before it went out, goes on a new connection.
    pub(super) async fn send(&self, mut request: Request<Body>) -> Result<Response, BoxError> {
        self.to_origin_form(&mut request)?;
        let Some(mut connection) = self.take() else {
            return self.send_on_new(request).await;
        };
        match connection.sender.try_send_request(request).await {
            Ok(response) => Ok(self.put_back(connection, response)),
            Err(mut failed) => match failed.take_message() {
                Some(request) => self.send_on_new(request).await,
                None if connection.progress.was_stalled() => Err(Box::new(Stalled(idle()))),
                None if lost_on_kept(failed.error()) => Err(Box::new(ResetBeforeAnswer(failed.into_error()))),
                None => Err(failed.into_error().into()),
            },
        }
    }

    /// Boxed: opening a connection is a large future, and a rare one; a
    /// request on a kept connection need not carry its room (every future
    /// that awaits this one is moved whole, with that room, into its task).
    fn send_on_new(
        &self,
        request: Request<Body>,
    ) -> Pin<Box<dyn Future<Output = Result<Response, BoxError>> + Send + '_>> {
        Box::pin(self.open_and_send(request))
    }

    async fn open_and_send(&self, request: Request<Body>) -> Result<Response, BoxError> {
        let mut connection = self.connect().await?;
        match connection.sender.send_request(request).await {
            Ok(response) => Ok(self.put_back(connection, response)),
            Err(_) if connection.progress.was_stalled() => Err(Box::new(Stalled(idle()))),
            Err(error) => Err(error.into()),
        }
    }

    /// An HTTP/1.1 request names its path only, and its server in `Host`.
    /// A request for another server is refused: it would go to this one.
    fn to_origin_form(&self, request: &mut Request<Body>) -> Result<(), BoxError> {
        if request.uri().authority() != self.origin.authority() {
            return Err("a request for another server than the endpoint's".into());
        }
        let path = match request.uri().path_and_query() {
            Some(path) => Uri::from(path.clone()),
            None => Uri::from_static("/"),
        };
        *request.uri_mut() = path;
        if !request.headers().contains_key(HOST) {
            request.headers_mut().insert(HOST, self.host.clone());
        }
        Ok(())
    }

    /// The most recently used connection ready for a request; closed and
    /// long-idle ones are let go on the way.
    fn take(&self) -> Option<Connection> {
        let mut kept = self.kept();
        let now = Instant::now();
        kept.retain(|kept| !kept.connection.sender.is_closed() && now.duration_since(kept.since) < IDLE_FOR);
        loop {
            // hyper 1.12 (pinned) says ready only once the connection's
            // last response has been read to its end, and takes it back if
            // the connection is then closed: a busy one is never handed
            // out. A ready one still owns its socket.
            let ready = kept.iter().rposition(|kept| kept.connection.sender.is_ready())?;
            let Kept { connection, .. } = kept.remove(ready);
            if !closed_by_peer(connection.socket) {
                return Some(connection);
            }
        }
    }

    /// Keeps the connection for the next request, which it can carry once
    /// this response's body has been read.
    fn put_back(&self, connection: Connection, response: Response) -> Response {
        let mut kept = self.kept();
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            connection,
            since: Instant::now(),
        });
        response
    }

    /// A new connection, driven by a task of its own until it closes or
    /// stalls ([`stall`](super::stall): then it is dropped, its socket
    /// closed, and the request on it fails).
    async fn connect(&self) -> Result<Connection, BoxError> {
        let stream = self.connector.clone().call(self.origin.clone()).await?;
        let socket = stream.socket();
        let progress = stream.progress.clone();
        let (sender, driven) = http1::handshake(stream).await?;
        let watched = progress.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = driven => {}
                () = watched.stall(idle()) => {}
            }
        });
        Ok(Connection {
            sender,
            socket,
            progress,
        })
    }

    /// The kept connections, locked (a panic while they were held left
    /// the list whole: every change to it is one call).
    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<Kept>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A request a kept connection lost: the server reset the connection, or
/// closed it, before it answered. A socket resets when it is closed with
/// what came unread, or when bytes come after it closed: the server did not
/// read the request whole. A close that crosses the request on the wire (a
/// server whose keep-alive time ran out just then, unannounced: the one case
/// the look at the socket cannot foresee) reads as the connection ending
/// before an answer. Either way the request can be sent again, once, on a
/// new connection, as curl does for a request a reused connection lost.
#[derive(Debug)]
pub(crate) struct ResetBeforeAnswer(hyper::Error);

impl std::fmt::Display for ResetBeforeAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ResetBeforeAnswer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Whether hyper's error on a kept connection is the server resetting it,
/// or closing it before an answer came.
fn lost_on_kept(error: &hyper::Error) -> bool {
    error.is_incomplete_message() || was_reset(error)
}

/// Whether hyper's error is the server resetting the connection.
fn was_reset(error: &hyper::Error) -> bool {
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::ConnectionReset;
        }
        cause = error.source();
    }
    false
}

/// Whether the server closed (or reset) an idle connection: asked of the
/// socket itself, without taking anything from it. Bytes waiting (a TLS
/// session ticket, say) are hyper's to read: the connection stays.
fn closed_by_peer(socket: RawFd) -> bool {
    let mut byte = 0u8;
    // SAFETY: peeks at most one byte into a live local, from a socket its
    // ready connection still owns (a harmless failure, were it not).
    let peeked = unsafe {
        libc::recv(
            socket,
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match peeked {
        0 => true,
        n if n > 0 => false,
        _ => !matches!(
            std::io::Error::last_os_error().kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
        ),
    }
}

/// The port a URL's scheme implies.
fn default_port(url: &Uri) -> Option<u16> {
    match url.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::super::Upstream;
    use super::*;

    fn sent(endpoint: &str, to: &str) -> Result<Request<Body>, BoxError> {
        let upstream = Upstream::new(endpoint, &[]).unwrap();
        let empty = http_body_util::Empty::new().map_err(|never| match never {});
        let mut request = Request::new(empty.boxed());
        *request.uri_mut() = to.parse().unwrap();
        upstream.pool.to_origin_form(&mut request).map(|()| request)
    }

    #[test]
    fn a_request_names_its_path_and_its_server_as_hyper_util_s_client_did() {
        let request = sent("http://a.example:8080/mcp", "http://a.example:8080/mcp?k=v").unwrap();
        assert_eq!(request.uri(), "/mcp?k=v");
        assert_eq!(request.headers()[HOST], "a.example:8080");
        let request = sent("https://a.example/mcp", "https://a.example/").unwrap();
        assert_eq!(request.uri(), "/");
        assert_eq!(request.headers()[HOST], "a.example");
        let request = sent("http://[::1]:80/mcp", "http://[::1]:80/mcp").unwrap();
        assert_eq!(request.headers()[HOST], "[::1]");
    }

    #[test]
    fn a_request_for_another_server_is_refused_not_sent_to_this_one() {
        assert!(sent("http://a.example/mcp", "http://b.example/mcp").is_err());
        assert!(sent("http://a.example/mcp", "http://a.example:81/mcp").is_err());
    }
}
