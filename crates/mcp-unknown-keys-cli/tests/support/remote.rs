//! For the tests of the remote doors: real servers on loopback (the Python
//! SDK's, `@modelcontextprotocol/server-everything`), the Python SDK's
//! client, certificates made at test time, and a plain HTTP client to talk
//! to a server directly.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::{PATIENCE, binary, prerequisite};

/// How long a server may take to start (Python's imports, node's).
const STARTUP: Duration = Duration::from_secs(30);

/// The version every modern message here declares.
pub const MODERN: &str = "2026-07-28";

/// A server in a child process, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    scheme: &'static str,
}

impl Server {
    /// tests/support/remote_server.py (both eras, on the Python SDK).
    pub fn python(args: &[&str]) -> Server {
        let python = prerequisite("MCP_UK_PYTHON");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/remote_server.py");
        let mut child = Command::new(&python)
            .arg(script)
            .args(args)
            .stdin(Stdio::piped()) // closing it stops the server
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {python}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let scheme = if args.contains(&"--tls") { "https" } else { "http" };
        let mut server = Server {
            child,
            port: 0,
            scheme,
        };
        server.port = first_line_as_port(stdout);
        server.wait_until_it_accepts();
        server
    }

    /// `@modelcontextprotocol/server-everything streamableHttp` (npm).
    pub fn everything() -> Server {
        let program = prerequisite("MCP_UK_SERVER_EVERYTHING");
        let port = free_port();
        let child = Command::new(&program)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let mut server = Server {
            child,
            port,
            scheme: "http",
        };
        server.wait_until_it_accepts();
        server
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        let host = if self.scheme == "https" {
            "localhost"
        } else {
            "127.0.0.1"
        };
        format!("{}://{host}:{}/mcp", self.scheme, self.port)
    }

    fn wait_until_it_accepts(&mut self) {
        let deadline = Instant::now() + STARTUP;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the server exited with {status}");
            }
            assert!(Instant::now() < deadline, "the server never accepted connections");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn first_line_as_port(stdout: std::process::ChildStdout) -> u16 {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = receiver
        .recv_timeout(STARTUP)
        .expect("the server printed its port");
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("the server printed {line:?}, not a port"))
}

/// Runs tests/support/remote_client.py (the Python SDK's client) with this
/// spec; returns its report, or panics with its stderr.
pub fn sdk_client(spec: &Value) -> Value {
    let python = prerequisite("MCP_UK_PYTHON");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/remote_client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(spec.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints its report")
}

/// A private CA and a certificate it signed for `localhost`, as PEM files.
pub struct Certificates {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certificates {
    pub fn new(dir: &Path) -> Certificates {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mcp-unknown-keys test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap()).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let files = Certificates {
            ca: dir.join("ca.pem"),
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        std::fs::write(&files.ca, ca.pem()).unwrap();
        std::fs::write(&files.cert, leaf.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        files
    }
}

/// What a server sent back to one POST, read directly.
pub struct Answer {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    /// The messages: the body, or each SSE event's data.
    pub messages: Vec<Vec<u8>>,
}

/// POSTs `body` to `url` with `headers` (besides `Accept` and
/// `Content-Type`), as any streamable-HTTP client would.
pub async fn post(url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let client = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let mut request = Request::post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).unwrap();
    let response = tokio::time::timeout(PATIENCE, client.request(request))
        .await
        .expect("the server answers in time")
        .expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let is_stream = headers
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let body = tokio::time::timeout(PATIENCE, response.into_body().collect())
        .await
        .expect("the body ends in time")
        .unwrap()
        .to_bytes();
    let messages = if is_stream {
        event_data(&body)
    } else if body.is_empty() {
        Vec::new()
    } else {
        vec![body.to_vec()]
    };
    Answer {
        status,
        headers,
        messages,
    }
}

/// The data of each event of a whole SSE body (one `data:` line each, as
/// MCP servers write them).
pub fn event_data(body: &[u8]) -> Vec<Vec<u8>> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            let data = data.join("\n");
            (!data.is_empty()).then(|| data.into_bytes())
        })
        .collect()
}

/// `proxy --url URL OPTIONS`, spoken to line by line.
pub fn bridge(url: &str, options: &[&str]) -> super::Session {
    let mut all = vec!["--url", url];
    all.extend_from_slice(options);
    super::Session::start(&all, &[])
}

/// `_meta` as a 2026-07-28 client writes it.
pub fn modern_meta() -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientInfo":{{"name":"test","version":"1"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}"#
    )
}

/// The `initialize` of a 2025-11-25 client.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

/// The notification that ends the 2025 handshake.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The `mcp-unknown-keys` binary, for host configurations.
pub fn proxy_binary() -> String {
    binary()
}

/// Waits until `log` holds at least `count` whole lines.
pub fn wait_for_lines(log: &Path, count: usize) {
    let deadline = Instant::now() + PATIENCE;
    while super::read_lines(log).len() < count {
        assert!(Instant::now() < deadline, "{count} log line(s) in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}
