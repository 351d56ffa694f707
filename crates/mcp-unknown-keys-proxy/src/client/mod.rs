//! The HTTP client the remote doors reach the server with, and OTLP its
//! collector: hyper's HTTP/1.1 connections over plain TCP or rustls.
//!
//! - [`pool`] keeps the connections open between requests;
//! - [`tls`] builds the rustls configuration (system and Mozilla roots,
//!   `--ca-cert`);
//! - [`url`] expands `${VAR}` in a URL and keeps its secret parts out of
//!   what is said;
//! - [`headers`] reads the user's `--header`s, values never said.

pub(crate) mod headers;
mod pool;
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
pub use self::pool::ResetBeforeAnswer;
use self::url::shown;

/// Any error, boxed.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// A request or response body on its way through.
pub type Body = BoxBody<Bytes, BoxError>;

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The server, and the client that reaches it.
#[derive(Clone)]
pub struct Upstream {
    pool: Pool,
    url: Uri,
    shown: Arc<str>,
}

impl Upstream {
    /// A client for the MCP endpoint at `url` (`http` or `https`).
    pub fn new(url: &str, ca_certs: &[PathBuf]) -> Result<Upstream, String> {
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
    pub fn url(&self) -> &Uri {
        &self.url
    }

    /// The endpoint as messages name it: without credentials or query,
    /// which may hold secrets.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// [`Upstream::shown`], shared: for what outlives a borrow of this.
    pub fn shown_shared(&self) -> Arc<str> {
        self.shown.clone()
    }

    /// Sends a request (its URL on the endpoint's origin), on a connection
    /// kept from an earlier one when one is free.
    pub async fn request(&self, request: hyper::Request<Body>) -> Result<Response, BoxError> {
        self.pool.send(request).await
    }
}

/// A failed request in words: the error and each cause not already said
/// ("tcp connect error: Connection refused (os error 111)").
pub fn describe(error: &(dyn StdError + 'static)) -> String {
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
                return Ok(Stream::Plain(tcp));
            };
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let name = ServerName::try_from(host.to_owned())?;
            let stream = tls.connect(name, tcp.into_inner()).await?;
            Ok(Stream::Tls(Box::new(TokioIo::new(stream))))
        })
    }
}

/// A connection: plain or TLS.
enum Stream {
    Plain(TokioIo<TcpStream>),
    Tls(Box<TokioIo<TlsStream<TcpStream>>>),
}

impl Stream {
    /// The TCP socket under it, TLS or not.
    fn socket(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Plain(tcp) => tcp.inner().as_raw_fd(),
            Stream::Tls(tls) => tls.inner().get_ref().0.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl Write for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The body of a response, as it arrives.
pub type Response = hyper::Response<Incoming>;

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
