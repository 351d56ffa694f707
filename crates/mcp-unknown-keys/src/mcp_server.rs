//! `McpServer`: a provider over one MCP server, on rmcp (feature `mcp`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock, Implementation,
    JsonObject, ResourceContents, Tool,
};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientCacheConfig, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

use crate::join::join_all;
use crate::provider::{BoxError, Provider};
use crate::wire::{ToolCall, ToolDeclaration, ToolResult};

/// How long a call, a listing or the handshake may take before it is given
/// up on, unless set otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many of the server's last stderr lines are kept to explain its death.
const STDERR_TAIL_LINES: usize = 20;

/// A provider over one MCP server, spoken to with rmcp, the official Rust
/// SDK: a child process over stdio ([`McpServer::stdio`]) or, with the
/// `http` feature, a streamable HTTP endpoint (`McpServer::http`).
///
/// - [`tools_for_llm`](Provider::tools_for_llm) lists every page of
///   `tools/list` and declares each tool as an OpenAI function whose
///   `parameters` is its `inputSchema`, verbatim (an empty schema becomes
///   `{"type":"object","properties":{}}`). rmcp's response cache is turned
///   off: a listing that fails is an error, never a stale list.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) sends the calls
///   side by side and answers one result per call, in the caller's order. It
///   never fails the batch: arguments that are not a JSON object, an unknown
///   tool, a server error, a timeout or a dead server each become an
///   `is_error` result for that call. Content blocks become text (texts
///   joined by newlines, other blocks as bracketed placeholders such as
///   `[image: image/png]`), `isError` becomes `is_error` and
///   `structuredContent` becomes `structured_content`.
///
/// A server that dies is reported with the tail of its stderr, which is
/// otherwise passed on to this process's stderr line by line (see
/// [`StdioServer::forward_stderr`]). [`close`](McpServer::close) shuts a child
/// down the way the MCP specification asks: its stdin is closed, then it is
/// sent `SIGTERM`, then killed. Dropping an `McpServer` without closing it
/// does the same in the background, and the child is killed at the latest
/// when the async runtime goes away.
///
/// Cloning is cheap and the clones share one connection: hand one to a
/// [`Registry`](crate::Registry) and keep another to close it.
///
/// ```no_run
/// use mcp_unknown_keys::{BoxError, McpServer, Provider, ToolCall};
///
/// # async fn run() -> Result<(), BoxError> {
/// let time = McpServer::stdio("mcp-server-time")
///     .args(["--local-timezone", "UTC"])
///     .connect()
///     .await?;
/// for tool in time.tools_for_llm().await? {
///     println!("{}", tool.name().unwrap_or("?"));
/// }
/// let call = ToolCall::new("call_1", "get_current_time", r#"{"timezone":"Europe/Paris"}"#);
/// let results = time.execute_tool_calls(vec![call]).await?;
/// println!("{}", results[0].content);
/// time.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    name: String,
    peer: Peer<RoleClient>,
    service: Arc<tokio::sync::Mutex<Option<RunningService<RoleClient, ClientConfig>>>>,
    timeout: Duration,
    stderr: Option<StderrTail>,
    process_id: Option<u32>,
}

impl McpServer {
    /// Describes a server to start as a child process speaking MCP over
    /// stdio; [`StdioServer::connect`] starts it.
    pub fn stdio(program: impl Into<OsString>) -> StdioServer {
        let program = program.into();
        let name = PathBuf::from(&program)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.to_string_lossy().into_owned());
        StdioServer {
            program,
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            name,
            timeout: DEFAULT_TIMEOUT,
            forward_stderr: true,
        }
    }

    /// Describes a server reached over streamable HTTP at `url`;
    /// [`HttpServer::connect`] connects to it.
    #[cfg(feature = "http")]
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

    /// The name errors call this server by: the program's file name, the
    /// URL, or what [`StdioServer::name`] set.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long a call or a listing may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The child's process id (a child process only).
    pub fn process_id(&self) -> Option<u32> {
        self.process_id
    }

    /// The last lines the server wrote to stderr (a child process only).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.as_ref().map(StderrTail::lines).unwrap_or_default()
    }

    /// Shuts the connection down, for every clone, and waits for it: a child
    /// process has its stdin closed, and is sent `SIGTERM` and then killed if
    /// it does not exit within a few seconds of each. Calls made afterwards
    /// answer `is_error` results. Closing twice is harmless.
    pub async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            let _ = service.close().await;
        }
    }

    async fn start<T, E, A>(
        name: String,
        timeout: Duration,
        transport: T,
        stderr: Option<StderrTail>,
        process_id: Option<u32>,
    ) -> Result<McpServer, ConnectError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-unknown-keys", env!("CARGO_PKG_VERSION")),
        );
        let handshake = tokio::time::timeout(timeout, client.serve(transport)).await;
        let failure = match handshake {
            Ok(Ok(service)) => {
                // A failed re-listing must be an error, never the last good list.
                service
                    .set_response_cache_config(ClientCacheConfig::disabled())
                    .await;
                return Ok(McpServer {
                    name,
                    peer: service.peer().clone(),
                    service: Arc::new(tokio::sync::Mutex::new(Some(service))),
                    timeout,
                    stderr,
                    process_id,
                });
            }
            Ok(Err(error)) => initialize_error_text(&error),
            Err(_) => format!("no answer to `initialize` within {}", seconds(timeout)),
        };
        let stderr_tail = match &stderr {
            Some(tail) => tail.lines_at_exit().await,
            None => Vec::new(),
        };
        Err(ConnectError {
            name,
            reason: failure,
            stderr_tail,
        })
    }

    async fn call(&self, call: &ToolCall) -> ToolResult {
        let id = call.id_text();
        let Some(name) = call.name() else {
            return ToolResult::error(id, "malformed tool call: it has no `function.name` string");
        };
        let arguments = match read_arguments(call.arguments()) {
            Ok(arguments) => arguments,
            Err(problem) => return ToolResult::error(id, problem),
        };
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match tokio::time::timeout(self.timeout, self.peer.call_tool(params)).await {
            Ok(Ok(result)) => tool_result(id, result),
            Ok(Err(error)) => ToolResult::error(id, self.describe(name, error).await),
            Err(_) => ToolResult::error(
                id,
                format!(
                    "`{name}` on MCP server `{}` did not answer within {}",
                    self.name,
                    seconds(self.timeout)
                ),
            ),
        }
    }

    /// Words for a failed request; a dead server comes with its last words.
    async fn describe(&self, tool: &str, error: ServiceError) -> String {
        match error {
            ServiceError::McpError(error) => format!(
                "MCP server `{}` refused `{tool}`: {} (error {})",
                self.name, error.message, error.code.0
            ),
            ServiceError::UnexpectedResponse => format!(
                "MCP server `{}` answered `{tool}` with something other than a tool result \
                 (input requests and tasks are not supported by this client)",
                self.name
            ),
            error if self.peer.is_transport_closed() || is_transport_error(&error) => {
                self.gone(&service_error_text(&error)).await
            }
            error => format!(
                "MCP server `{}` failed on `{tool}`: {}",
                self.name,
                service_error_text(&error)
            ),
        }
    }

    async fn gone(&self, error: &str) -> String {
        let state = match self.process_id {
            Some(_) => "is not running",
            None => "cannot be reached",
        };
        let mut message = format!("MCP server `{}` {state} ({error})", self.name);
        if let Some(stderr) = &self.stderr {
            append_tail(&mut message, &stderr.lines_at_exit().await);
        }
        message
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Provider for McpServer {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let listing = tokio::time::timeout(self.timeout, self.peer.list_all_tools()).await;
        let tools = match listing {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => {
                let message = match error {
                    ServiceError::McpError(error) => format!(
                        "MCP server `{}` could not list its tools: {} (error {})",
                        self.name, error.message, error.code.0
                    ),
                    error if self.peer.is_transport_closed() || is_transport_error(&error) => {
                        self.gone(&service_error_text(&error)).await
                    }
                    error => format!(
                        "MCP server `{}` could not list its tools: {}",
                        self.name,
                        service_error_text(&error)
                    ),
                };
                return Err(message.into());
            }
            Err(_) => {
                return Err(format!(
                    "MCP server `{}` did not list its tools within {}",
                    self.name,
                    seconds(self.timeout)
                )
                .into());
            }
        };
        Ok(tools.iter().map(declaration).collect())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        // Side by side: rmcp matches each answer to its request by id.
        let results = join_all(calls.iter().map(|call| self.call(call))).await;
        // A call that panicked is that call's failure, never the batch's.
        Ok(results
            .into_iter()
            .zip(&calls)
            .map(|(result, call)| {
                result.unwrap_or_else(|_| ToolResult::error(call.id_text(), "the call panicked in McpServer"))
            })
            .collect())
    }
}

/// An MCP tool as an OpenAI function declaration.
fn declaration(tool: &Tool) -> ToolDeclaration {
    let schema = if tool.input_schema.is_empty() {
        json!({"type": "object", "properties": {}})
    } else {
        Value::Object(JsonObject::clone(&tool.input_schema))
    };
    ToolDeclaration::new(tool.name.to_string(), tool.description.as_deref(), schema)
}

/// A call's arguments as MCP wants them: an object, or none at all.
fn read_arguments(arguments: Option<&Value>) -> Result<Option<JsonObject>, String> {
    let parsed;
    let value = match arguments {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => return Ok(None),
        Some(Value::String(text)) => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|error| format!("the arguments are not valid JSON: {error}"))?;
            &parsed
        }
        Some(value) => value,
    };
    match value {
        Value::Object(object) => Ok(Some(object.clone())),
        other => Err(format!(
            "the arguments must be a JSON object, not {}",
            json_type(other)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An MCP tool result as the wire's [`ToolResult`].
fn tool_result(id: String, result: CallToolResult) -> ToolResult {
    let content = result
        .content
        .iter()
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n");
    let mut answer = if result.is_error.unwrap_or(false) {
        ToolResult::error(id, content)
    } else {
        ToolResult::ok(id, content)
    };
    answer.structured_content = result.structured_content;
    answer
}

/// A content block as text: text as it is, anything else as a placeholder.
fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio: {}]", audio.mime_type),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, .. }
            | ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
            _ => "[resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        _ => "[unsupported content]".to_owned(),
    }
}

fn is_transport_error(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed | ServiceError::TransportSend(_)
    )
}

/// A failed request in words. A transport's error is given by its own
/// error and causes, without rmcp's `Transport [type name]` wrapper.
fn service_error_text(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => error_chain(&*error.error),
        error => error_chain(error),
    }
}

/// A failed handshake in words, like [`service_error_text`].
fn initialize_error_text(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (when {context})", error_chain(&*error.error))
        }
        error => error_chain(error),
    }
}

/// An error followed by its causes, each said once: reqwest's "error
/// sending request" keeps "Connection refused" in its sources.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = cause_of(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause_of(cause);
    }
    text
}

/// The error's cause. rmcp's HTTP transport does not give reqwest's error
/// as its source, so it is dug out here.
fn cause_of<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    #[cfg(feature = "http")]
    {
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        if let Some(StreamableHttpError::Client(client)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(client);
        }
    }
    error.source()
}

fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

fn append_tail(message: &mut String, tail: &[String]) {
    if tail.is_empty() {
        message.push_str("; it wrote nothing to stderr");
    } else {
        message.push_str("; the end of its stderr:\n");
        message.push_str(&tail.join("\n"));
    }
}

/// A server to start as a child process, from [`McpServer::stdio`].
#[derive(Clone, Debug)]
pub struct StdioServer {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
    name: String,
    timeout: Duration,
    forward_stderr: bool,
}

impl StdioServer {
    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> StdioServer {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> StdioServer {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the child (the rest is inherited).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> StdioServer {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The directory the child starts in.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> StdioServer {
        self.current_dir = Some(dir.into());
        self
    }

    /// The name errors call the server by (the program's file name unless
    /// set).
    pub fn name(mut self, name: impl Into<String>) -> StdioServer {
        self.name = name.into();
        self
    }

    /// How long the handshake, a listing or a call may take
    /// ([`DEFAULT_TIMEOUT`] unless set).
    pub fn timeout(mut self, timeout: Duration) -> StdioServer {
        self.timeout = timeout;
        self
    }

    /// Whether the child's stderr lines are copied to this process's stderr
    /// (yes, unless set). Its last lines are kept either way, to explain a
    /// death.
    pub fn forward_stderr(mut self, forward: bool) -> StdioServer {
        self.forward_stderr = forward;
        self
    }

    /// Starts the child and completes the MCP handshake. Must be called
    /// within a Tokio runtime.
    pub async fn connect(self) -> Result<McpServer, ConnectError> {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args).envs(self.env.iter().cloned());
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        // The last line of defence, should the runtime go away first.
        command.kill_on_drop(true);

        let spawned = TokioChildProcess::builder(command).stderr(Stdio::piped()).spawn();
        let (transport, stderr) = spawned.map_err(|error| ConnectError {
            name: self.name.clone(),
            reason: format!("cannot start {:?}: {error}", self.program),
            stderr_tail: Vec::new(),
        })?;
        let stderr = stderr.map(|stderr| StderrTail::spawn(stderr, self.forward_stderr));
        let process_id = transport.id();
        McpServer::start(self.name, self.timeout, transport, stderr, process_id).await
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
#[cfg(feature = "http")]
#[derive(Clone)]
pub struct HttpServer {
    url: String,
    name: String,
    timeout: Duration,
    headers: Vec<(String, String)>,
    ca_certs: Vec<PathBuf>,
}

#[cfg(feature = "http")]
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

#[cfg(feature = "http")]
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
#[cfg(feature = "http")]
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

/// Why an MCP server could not be started or connected to.
#[derive(Debug)]
pub struct ConnectError {
    name: String,
    reason: String,
    stderr_tail: Vec<String>,
}

impl ConnectError {
    /// The last lines the server wrote to stderr before it failed.
    pub fn stderr_tail(&self) -> &[String] {
        &self.stderr_tail
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut message = format!("cannot connect to MCP server `{}`: {}", self.name, self.reason);
        if !self.stderr_tail.is_empty() {
            append_tail(&mut message, &self.stderr_tail);
        }
        f.write_str(&message)
    }
}

impl std::error::Error for ConnectError {}

/// The last lines a child wrote to stderr, read by a task of its own (a
/// child whose stderr pipe fills up would block).
#[derive(Clone)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    closed: watch::Receiver<bool>,
}

impl StderrTail {
    fn spawn(stderr: impl AsyncRead + Unpin + Send + 'static, forward: bool) -> StderrTail {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let (closed_tx, closed) = watch::channel(false);
        let keep = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if forward {
                    eprintln!("{line}");
                }
                let mut lines = keep.lock().unwrap_or_else(|e| e.into_inner());
                if lines.len() == STDERR_TAIL_LINES {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
            let _ = closed_tx.send(true);
        });
        StderrTail { lines, closed }
    }

    fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.iter().cloned().collect()
    }

    /// The tail once the child has closed its stderr, or after a short wait:
    /// a server that just died may still have its last words in the pipe.
    async fn lines_at_exit(&self) -> Vec<String> {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(Duration::from_millis(500), closed.wait_for(|c| *c)).await;
        self.lines()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_declared_with_its_schema_verbatim() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}},
                            "required": ["path"], "additionalProperties": true});
        let Value::Object(object) = schema.clone() else {
            unreachable!()
        };
        let tool = Tool::new("read", "Read a file", object);
        let declared = declaration(&tool);
        assert_eq!(
            declared.as_value(),
            &json!({"type": "function", "function": {
                "name": "read", "description": "Read a file", "parameters": schema}})
        );
    }

    #[test]
    fn a_tool_without_schema_or_description_gets_an_empty_object_schema() {
        let tool = Tool::new_with_raw("ping", None, JsonObject::new());
        let declared = declaration(&tool);
        assert_eq!(
            declared.as_value(),
            &json!({"type": "function", "function": {
                "name": "ping", "parameters": {"type": "object", "properties": {}}}})
        );
    }

    #[test]
    fn arguments_are_read_as_an_object_or_none() {
        let object = json!({"b": 1, "a": [2]});
        assert_eq!(read_arguments(None), Ok(None));
        assert_eq!(read_arguments(Some(&Value::Null)), Ok(None));
        assert_eq!(read_arguments(Some(&json!(""))), Ok(None));
        assert_eq!(read_arguments(Some(&json!(" \n\t"))), Ok(None));
        assert_eq!(
            read_arguments(Some(&json!(object.to_string()))),
            Ok(object.as_object().cloned())
        );
        assert_eq!(read_arguments(Some(&object)), Ok(object.as_object().cloned()));

        let problem = |value: Value| read_arguments(Some(&value)).unwrap_err();
        assert!(problem(json!("{\"a\":")).starts_with("the arguments are not valid JSON"));
        assert_eq!(
            problem(json!("[1]")),
            "the arguments must be a JSON object, not an array"
        );
        assert_eq!(
            problem(json!("null")),
            "the arguments must be a JSON object, not null"
        );
        assert_eq!(
            problem(json!(true)),
            "the arguments must be a JSON object, not a boolean"
        );
    }

    #[test]
    fn content_blocks_become_text_and_placeholders() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ContentBlock::audio("UklGRg==", "audio/wav"),
            ContentBlock::embedded_text("file:///a.txt", "the text"),
            ContentBlock::resource(ResourceContents::blob("AAEC", "file:///b.bin")),
            ContentBlock::resource_link(rmcp::model::Resource::new("file:///c.md", "c")),
            ContentBlock::text("last"),
        ]);
        result.structured_content = Some(json!({"n": 1}));
        let answer = tool_result("call_1".into(), result);
        assert_eq!(
            answer.content,
            "first\n[image: image/png]\n[audio: audio/wav]\n[resource: file:///a.txt]\n\
             [resource: file:///b.bin]\n[resource link: file:///c.md]\nlast"
        );
        assert!(!answer.is_error);
        assert_eq!(answer.tool_call_id, "call_1");
        assert_eq!(answer.structured_content, Some(json!({"n": 1})));
    }

    #[test]
    fn an_error_is_said_with_each_new_cause_once() {
        #[derive(Debug)]
        struct Failure(&'static str, Option<Box<Failure>>);
        impl fmt::Display for Failure {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Failure {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|cause| cause as _)
            }
        }
        let refused = Failure("connection refused", None);
        let connect = Failure("client error (Connect)", Some(Box::new(refused)));
        let echoed = Failure("send failed: client error (Connect)", Some(Box::new(connect)));
        assert_eq!(
            error_chain(&echoed),
            "send failed: client error (Connect): connection refused"
        );
        assert_eq!(error_chain(&Failure("alone", None)), "alone");
    }

    #[test]
    fn is_error_becomes_is_error() {
        let failed = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        let answer = tool_result("7".into(), failed);
        assert!(answer.is_error);
        assert_eq!(answer.content, "no such file");
        assert_eq!(answer.structured_content, None);
    }
}
