//! A server reached over streamable HTTP (`http` or `https`), with rustls.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::errors::ConnectError;
use super::errors::error_chain;
use super::{DEFAULT_TIMEOUT, McpServer};

impl McpServer {
    /// Describes a server reached over streamable HTTP at `url`;
    /// [`HttpServer::connect`] connects to it.
    pub fn http(url: impl Into<String>) -> HttpServer {
        let url = url.into();
        HttpServer {
            name: url.clone(),
            url,
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
            ca_certs: Vec::new(),
        }
    }
}

/// A server reached over streamable HTTP (`http` or `https`), from
/// `McpServer::http`.
///
/// TLS is rustls with the ring provider, trusting the system's roots, the
/// Mozilla roots of webpki-roots and any [`HttpServer::ca_cert`].
///
/// ```no_run
/// use mcp_unknown_keys::McpServer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let token = std::env::var("TOKEN")?;
/// let remote = McpServer::http("https://mcp.example.com/mcp")
///     .header("Authorization", format!("Bearer {token}"))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct HttpServer {
    url: String,
    name: String,
    timeout: Duration,
    headers: Vec<(String, String)>,
    ca_certs: Vec<PathBuf>,
}

impl fmt::Debug for HttpServer {
    /// Header values are secrets (tokens): only their names are shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpServer")
            .field("url", &self.url)
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("headers", &headers)
            .field("ca_certs", &self.ca_certs)
            .finish()
    }
}

impl HttpServer {
    /// The name errors call the server by (its URL unless set).
    pub fn name(mut self, name: impl Into<String>) -> HttpServer {
        self.name = name.into();
        self
    }

    /// How long the handshake, a listing or a call may take
    /// ([`DEFAULT_TIMEOUT`] unless set).
    pub fn timeout(mut self, timeout: Duration) -> HttpServer {
        self.timeout = timeout;
        self
    }

    /// Sends a header with every request, such as `Authorization`. Its
    /// value is never shown, in errors or in `Debug`; a name or a value a
    /// header cannot carry fails [`HttpServer::connect`].
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpServer {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Trusts the CA certificates of a PEM file too, for a server whose
    /// certificate a private CA signed.
    pub fn ca_cert(mut self, path: impl Into<PathBuf>) -> HttpServer {
        self.ca_certs.push(path.into());
        self
    }

    /// Connects and completes the MCP handshake. Must be called within a
    /// Tokio runtime.
    pub async fn connect(self) -> Result<McpServer, ConnectError> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

        let client = self.client().map_err(|reason| ConnectError {
            name: self.name.clone(),
            reason,
            stderr_tail: Vec::new(),
        })?;
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        let transport = StreamableHttpClientTransport::with_client(client, config);
        McpServer::start(self.name, self.timeout, transport, None, None).await
    }

    /// The HTTP client: the headers, and TLS as the type's docs say.
    fn client(&self) -> Result<reqwest::Client, String> {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &self.headers {
            let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name:?} is not a header name"))?;
            let mut value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header {name} holds a character a header cannot carry"))?;
            value.set_sensitive(true);
            headers.append(header, value);
        }
        // As rmcp's own client: no idle pool (a half-read body would stall a
        // reused connection), and only same-origin 307 and 308 redirects,
        // which keep the message and send the headers nowhere else.
        let same_origin = reqwest::redirect::Policy::custom(|attempt| {
            let kept = matches!(attempt.status().as_u16(), 307 | 308);
            let origin = |url: &reqwest::Url| {
                (
                    url.scheme().to_owned(),
                    url.host_str().map(str::to_owned),
                    url.port_or_known_default(),
                )
            };
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| origin(first) == origin(attempt.url()));
            if kept && same && attempt.previous().len() <= 10 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin)
            .default_headers(headers)
            .tls_backend_preconfigured(tls_config(&self.ca_certs)?)
            .build()
            .map_err(|error| error_chain(&error))
    }
}

/// rustls with the ring provider, trusting the system's roots, webpki-roots
/// and the PEM files given.
fn tls_config(ca_certs: &[PathBuf]) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    for path in ca_certs {
        let shown = path.display();
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|error| format!("cannot read the CA certificates of {shown}: {error}"))?;
        if certs.is_empty() {
            return Err(format!("{shown} holds no CERTIFICATE block"));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|error| format!("{shown}: not a usable CA certificate: {error}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("cannot set up TLS: {error}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
