//! The HTTP client the remote doors reach the server with, and OTLP its
//! collector: hyper's HTTP/1.1 connections over plain TCP or rustls.
//!
//! - [`pool`] keeps the connections open between requests, and gives up
//!   one whose server stopped taking a request ([`stall`]);
//! - [`tls`] builds the rustls configuration (system and Mozilla roots,
//!   `--ca-cert`);
//! - [`url`] expands `${VAR}` in a URL and keeps its secret parts out of
//!   what is said;
//! - [`headers`] reads the user's `--header`s, values never said.

pub(crate) mod headers;
pub(crate) mod pool;
pub(crate) mod stall;
pub(crate) mod tls;
pub(crate) mod url;

use std::error::Error as StdError;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::Uri;
use hyper::body::Incoming;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use self::pool::Pool;
use self::stall::Progress;

use self::url::shown;

/// Any error, boxed.
// `pub` for the fuzz targets (the crate's `fuzzing` module).
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// A request or response body on its way through.
pub(crate) type Body = BoxBody<Bytes, BoxError>;

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The server, and the client that reaches it.
#[derive(Clone)]
pub(crate) struct Upstream {
    pool: Pool,
    url: Uri,
    shown: Arc<str>,
}

impl Upstream {
    /// A client for the MCP endpoint at `url` (`http` or `https`).
    pub(crate) fn new(url: &str, ca_certs: &[PathBuf]) -> Result<Upstream, String> {
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("{}: not a URL: {e}", shown(url)))?;
        let tls = match uri.scheme_str() {
            Some("https") => Some(TlsConnector::from(self::tls::client_config(ca_certs)?)),
            Some("http") => None,
            _ => {
                return Err(format!(
                    "{}: the URL must start with http:// or https://",
                    shown(url)
                ));
            }
        };
        if uri.host().is_none_or(str::is_empty) {
            return Err(format!("{}: the URL names no host", shown(url)));
        }
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let pool = Pool::new(Connector { tcp, tls }, &uri).map_err(|e| format!("{}: {e}", shown(url)))?;
        Ok(Upstream {
            pool,
            shown: shown(url).into(),
            url: uri,
        })
    }

    /// The MCP endpoint.
    pub(crate) fn url(&self) -> &Uri {
        &self.url
    }

    /// The endpoint as messages name it: without credentials or query,
    /// which may hold secrets.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// [`Upstream::shown`], shared: for what outlives a borrow of this.
    pub(crate) fn shown_shared(&self) -> Arc<str> {
        self.shown.clone()
    }

    /// Sends a request (its URL on the endpoint's origin), on a connection
    /// kept from an earlier one when one is free.
    pub(crate) async fn request(&self, request: hyper::Request<Body>) -> Result<Response, BoxError> {
        self.pool.send(request).await
    }
}

/// A failed request in words: the error and each cause not already said
/// ("tcp connect error: Connection refused (os error 111)").
pub(crate) fn describe(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// The first error of type `E` in `error`'s chain: `error` itself, or one
/// of its causes.
pub(crate) fn cause<'a, E: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        next = error.source();
    }
    None
}

/// Opens TCP connections, wrapped in TLS for `https`.
#[derive(Clone)]
struct Connector {
    tcp: HttpConnector,
    tls: Option<TlsConnector>,
}

impl tower_service::Service<Uri> for Connector {
    type Response = Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.tcp.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.tcp.call(uri.clone());
        let tls = self.tls.clone();
        Box::pin(async move {
            let tcp = connecting.await?;
            let Some(tls) = tls else {
                return Ok(Stream::new(Io::Plain(tcp)));
            };
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let name = ServerName::try_from(host.to_owned())?;
            let stream = tls.connect(name, tcp.into_inner()).await?;
            Ok(Stream::new(Io::Tls(Box::new(TokioIo::new(stream)))))
        })
    }
}

/// A connection: plain or TLS, and what its writes tell of its progress.
struct Stream {
    io: Io,
    progress: Arc<Progress>,
}

/// The bytes of a connection.
enum Io {
    Plain(TokioIo<TcpStream>),
    Tls(Box<TokioIo<TlsStream<TcpStream>>>),
}

impl Stream {
    fn new(io: Io) -> Stream {
        Stream {
            progress: Arc::new(Progress::new(io.socket())),
            io,
        }
    }

    /// The TCP socket under it, TLS or not.
    fn socket(&self) -> std::os::fd::RawFd {
        self.io.socket()
    }

    /// Notes what a write did: bytes written, or none taken.
    fn noted(&self, written: Poll<std::io::Result<usize>>) -> Poll<std::io::Result<usize>> {
        match &written {
            Poll::Ready(Ok(n)) if *n > 0 => self.progress.moved(),
            Poll::Pending => self.progress.blocked(),
            Poll::Ready(_) => {}
        }
        written
    }
}

impl Io {
    fn socket(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Io::Plain(tcp) => tcp.inner().as_raw_fd(),
            Io::Tls(tls) => tls.inner().get_ref().0.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl Write for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let written = match &mut this.io {
            Io::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        };
        this.noted(written)
    }

    /// Vectored, so that hyper queues a body's bytes as they are rather than
    /// copying them into a buffer of its own: a body is let go (and the
    /// reverse proxy's budget with it) once written, and no connection
    /// keeps a buffer the size of the largest body it ever sent.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let written = match &mut this.io {
            Io::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        };
        this.noted(written)
    }

    fn is_write_vectored(&self) -> bool {
        match &self.io {
            Io::Plain(tcp) => tcp.is_write_vectored(),
            Io::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The body of a response, as it arrives.
pub(crate) type Response = hyper::Response<Incoming>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_are_taken() {
        let error = |url: &str| Upstream::new(url, &[]).err().unwrap();
        assert!(error("ftp://example.com/").contains("http:// or https://"));
        assert!(error("/mcp").contains("http:// or https://"));
        assert!(error("http://a b/").contains("not a URL"));
    }
}
