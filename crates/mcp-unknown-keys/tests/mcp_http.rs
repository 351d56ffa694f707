//! `McpServer` over streamable HTTP, against a real server on the official
//! Python SDK (tests/support/http_server.py) listening on loopback.
//!
//! Only built with the `http` feature; `scripts/test` runs it with
//! `cargo test -p mcp-unknown-keys --features http --test mcp_http`.

#![cfg(feature = "http")]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use mcp_unknown_keys::audit::{Auditor, Warning};
use mcp_unknown_keys::{McpServer, Provider, ToolCall, ToolResult, UnknownKeys};
use serde_json::json;

/// How long the Python server may take to start (imports included).
const STARTUP: Duration = Duration::from_secs(30);

/// A streamable-HTTP MCP server in a child process, killed on drop.
struct PythonHttpServer {
    child: Child,
    port: u16,
}

impl PythonHttpServer {
    /// Starts the server and waits until it accepts connections.
    fn start() -> PythonHttpServer {
        PythonHttpServer::start_with(&[])
    }

    /// Starts the server with these arguments (`--tls CERT KEY`).
    fn start_with(args: &[&str]) -> PythonHttpServer {
        let python = python();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/http_server.py");
        let mut child = Command::new(&python)
            .arg(script)
            .args(args)
            // Closing its stdin (our death included) stops it too.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {python}: {error}"));
        let stdout = child.stdout.take().unwrap();
        // Owned from here on, so a failure below still kills the child.
        let mut server = PythonHttpServer { child, port: 0 };
        server.port = first_line_as_port(stdout);
        server.wait_until_it_accepts();
        server
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn wait_until_it_accepts(&mut self) {
        let deadline = Instant::now() + STARTUP;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the Python HTTP server exited with {status}");
            }
            assert!(Instant::now() < deadline, "the Python HTTP server never accepted");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills it and reaps it, leaving no process behind.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PythonHttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn python() -> String {
    match std::env::var("MCP_UK_PYTHON") {
        Ok(path) if std::path::Path::new(&path).exists() => path,
        Ok(path) => panic!("MCP_UK_PYTHON={path} does not exist: run scripts/test, which installs it"),
        Err(_) => panic!(
            "MCP_UK_PYTHON is not set: run scripts/test, which installs it (or eval \"$(scripts/test-deps)\")"
        ),
    }
}

/// The port the server prints on its first line, read on a thread of its
/// own so a server that never prints cannot hang the test.
fn first_line_as_port(stdout: std::process::ChildStdout) -> u16 {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = receiver
        .recv_timeout(STARTUP)
        .expect("the Python HTTP server did not print its port");
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("the Python HTTP server printed {line:?}, not a port"))
}

async fn connect(server: &PythonHttpServer) -> McpServer {
    McpServer::http(server.url())
        .name("python-http")
        .timeout(Duration::from_secs(20))
        .connect()
        .await
        .unwrap_or_else(|error| panic!("{error}"))
}

async fn call(provider: &impl Provider, name: &str, arguments: &str) -> ToolResult {
    let calls = vec![ToolCall::new("call_1", name, arguments)];
    let mut results = provider.execute_tool_calls(calls).await.unwrap();
    assert_eq!(results.len(), 1);
    results.remove(0)
}

#[tokio::test]
async fn tools_are_listed_with_their_schemas_as_parameters() {
    let server = PythonHttpServer::start();
    let mcp = connect(&server).await;

    let tools = mcp.tools_for_llm().await.unwrap();
    let mut names: Vec<_> = tools.iter().filter_map(|tool| tool.name()).collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "echo", "header"]);

    let add = tools.iter().find(|tool| tool.name() == Some("add")).unwrap();
    assert_eq!(add.description(), Some("Add two integers."));
    let parameters = add.parameters().unwrap();
    assert_eq!(parameters["type"], "object");
    assert_eq!(parameters["properties"]["a"]["type"], "integer");
    assert_eq!(parameters["properties"]["b"]["type"], "integer");
    assert_eq!(parameters["required"], json!(["a", "b"]));

    let echo = tools.iter().find(|tool| tool.name() == Some("echo")).unwrap();
    assert_eq!(echo.parameters().unwrap()["properties"]["text"]["type"], "string");
    mcp.close().await;
}

#[tokio::test]
async fn calls_with_string_arguments_answer_the_tools_results() {
    let server = PythonHttpServer::start();
    let mcp = connect(&server).await;

    let echoed = call(&mcp, "echo", r#"{"text":"hello over http"}"#).await;
    assert!(!echoed.is_error, "{echoed:?}");
    assert_eq!(echoed.content, "hello over http");
    assert_eq!(echoed.tool_call_id, "call_1");

    let sum = call(&mcp, "add", r#"{"a":2,"b":40}"#).await;
    assert!(!sum.is_error, "{sum:?}");
    assert_eq!(sum.content, "42");
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));

    // Side by side over one session, answered in the caller's order.
    let batch = vec![
        ToolCall::new("x", "add", r#"{"a":1,"b":1}"#),
        ToolCall::new("y", "echo", json!({"text": "as an object"})),
    ];
    let results = mcp.execute_tool_calls(batch).await.unwrap();
    let answers: Vec<_> = results
        .iter()
        .map(|r| (r.tool_call_id.as_str(), r.content.as_str()))
        .collect();
    assert_eq!(answers, [("x", "2"), ("y", "as an object")]);
    mcp.close().await;
}

#[tokio::test]
async fn an_undeclared_key_is_reported_once_and_the_call_still_succeeds() {
    let server = PythonHttpServer::start();
    let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
    let seen = warnings.clone();
    let auditor =
        Auditor::new().with_sink(move |warning: &Warning| seen.lock().unwrap().push(warning.clone()));
    let audited = UnknownKeys::with_auditor(connect(&server).await, auditor);

    audited.tools_for_llm().await.unwrap();
    let echoed = call(&audited, "echo", r#"{"text":"still echoed","loud":true}"#).await;

    assert!(!echoed.is_error, "{echoed:?}");
    assert_eq!(echoed.content, "still echoed");
    let warnings = warnings.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].tool, "echo");
    assert_eq!(warnings[0].unknown_keys, ["loud"]);
    assert_eq!(warnings[0].declared_keys, ["text"]);
    assert_eq!(warnings[0].id, "call_1");
    audited.get_ref().close().await;
}

#[tokio::test]
async fn failures_are_is_error_results() {
    let mut server = PythonHttpServer::start();
    let mcp = connect(&server).await;

    let unknown = call(&mcp, "no_such_tool", "{}").await;
    assert!(unknown.is_error, "{unknown:?}");
    assert!(unknown.content.contains("no_such_tool"), "{unknown:?}");

    let not_an_object = call(&mcp, "echo", "[1]").await;
    assert!(not_an_object.is_error);
    assert_eq!(
        not_an_object.content,
        "the arguments must be a JSON object, not an array"
    );

    // A server that goes away answers errors, never a hang or a panic.
    server.stop();
    let gone = call(&mcp, "echo", r#"{"text":"anyone?"}"#).await;
    assert!(gone.is_error, "{gone:?}");
    // Said plainly: no Rust type names, and the cause reqwest keeps inside.
    let said = &gone.content;
    assert!(
        said.starts_with("MCP server `python-http` cannot be reached ("),
        "{said}"
    );
    assert!(said.contains("Connection refused"), "{said}");
    assert!(!said.contains("rmcp::"), "{said}");
    let listing = mcp.tools_for_llm().await.unwrap_err().to_string();
    assert!(
        listing.starts_with("MCP server `python-http` cannot be reached ("),
        "{listing}"
    );
    mcp.close().await;
}

#[tokio::test]
async fn a_closed_connection_answers_errors() {
    let server = PythonHttpServer::start();
    let mcp = connect(&server).await;
    assert!(!call(&mcp, "echo", r#"{"text":"before"}"#).await.is_error);

    mcp.close().await;
    mcp.close().await; // twice is harmless
    let after = call(&mcp, "echo", r#"{"text":"after"}"#).await;
    assert!(after.is_error, "{after:?}");
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    // A port that was free a moment ago: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = McpServer::http(format!("http://127.0.0.1:{port}/mcp"))
        .timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap_err();
    let message = error.to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    assert!(
        message.starts_with(&format!("cannot connect to MCP server `{url}`: ")),
        "{message}"
    );
    assert!(message.contains("Connection refused"), "{message}");
    assert!(message.ends_with("(when send initialize request)"), "{message}");
    assert!(!message.contains("rmcp::"), "{message}");
}

#[test]
fn the_server_is_not_left_behind() {
    let server = PythonHttpServer::start();
    let pid = server.child.id();
    drop(server);
    let alive = Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false);
    assert!(!alive, "the Python HTTP server {pid} is still running");
}

/// A private CA and a certificate it signed for `localhost`, as PEM files.
fn certificates(dir: &std::path::Path) -> [std::path::PathBuf; 3] {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let paths = [dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem")];
    std::fs::write(&paths[0], ca.pem()).unwrap();
    std::fs::write(&paths[1], leaf.pem()).unwrap();
    std::fs::write(&paths[2], key.serialize_pem()).unwrap();
    paths
}

#[tokio::test]
async fn https_with_a_private_ca_and_headers() {
    let dir = std::env::temp_dir().join(format!("mcp-unknown-keys-https-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let [ca, cert, key] = certificates(&dir);
    let server = PythonHttpServer::start_with(&["--tls", cert.to_str().unwrap(), key.to_str().unwrap()]);
    let url = format!("https://localhost:{}/mcp", server.port);

    let mcp = McpServer::http(&url)
        .header("X-Tenant", "blue")
        .header("Authorization", "Bearer s3cret")
        .ca_cert(&ca)
        .timeout(Duration::from_secs(20))
        .connect()
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        call(&mcp, "header", r#"{"name":"x-tenant"}"#).await.content,
        "blue"
    );
    assert_eq!(call(&mcp, "add", r#"{"a":1,"b":2}"#).await.content, "3");
    mcp.close().await;

    // Without the CA, the certificate is refused; the secret is never shown.
    let refused = McpServer::http(&url)
        .header("Authorization", "Bearer s3cret")
        .timeout(Duration::from_secs(20));
    assert!(!format!("{refused:?}").contains("s3cret"));
    let error = refused.connect().await.unwrap_err().to_string();
    assert!(
        error.contains("certificate") || error.contains("Unknown"),
        "{error}"
    );
    assert!(!error.contains("s3cret"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
