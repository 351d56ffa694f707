//! `mcp-unknown-keys example-server [--root DIR]`: a real MCP server over
//! stdio with a small filesystem toolkit confined to one directory.
//!
//! It is the server the demo, the docs and the tests use. Like most servers
//! in the wild (FastMCP, zod-based TypeScript servers, typed rmcp servers),
//! it silently ignores arguments its tools never declared: `read` called
//! with `ffset` instead of `offset` reads from the first line and says
//! nothing. That is the failure `mcp-unknown-keys` exists to make visible.
//!
//! Tools:
//! - `read` {path, offset?, limit?}: a text file's lines, from line `offset`
//!   (0-based, default 0), at most `limit` of them; only regular files, and
//!   at most their first [`files::MAX_READ_BYTES`] (the answer says so when
//!   a file is longer);
//! - `write` {path, content}: writes a regular file, creating its
//!   directories;
//! - `list` {path?}: a directory's entries (default `.`), with structured
//!   content `{"entries":[{"name","kind"}]}`;
//! - `task` {prompt}: pretends to start a task and echoes a summary of the
//!   prompt it got;
//! - `sleep` {ms}: waits, then answers. For timeout tests only: listed and
//!   callable only with the hidden flag `--with-sleep-tool`.
//!
//! The hidden flag `--page-size N` answers `tools/list` in pages of N tools,
//! for pagination tests.
//!
//! Paths are relative to the root (or absolute, under it); a path that
//! leads outside it (`..`, an absolute path elsewhere, a symbolic link out,
//! even one swapped in while the call runs) is refused with a tool error:
//! see [`files`]. Unknown tools are refused with a JSON-RPC
//! `invalid params` error. A request longer than
//! [`oversized::MAX_REQUEST_BYTES`] (16 MiB) is answered with an
//! `invalid request` error that says so: see [`oversized`].

mod files;
mod oversized;

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use self::files::{MAX_READ_BYTES, Root};
use self::oversized::{MAX_REQUEST_BYTES, OVERSIZED};

/// The command line of `example-server`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The directory the tools are confined to [default: a fresh temporary
    /// directory seeded with a few files, removed when the server exits]
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Also offer `sleep` {ms}, a tool that only waits (for timeout tests).
    #[arg(long, hide = true)]
    with_sleep_tool: bool,

    /// Answer `tools/list` in pages of this many tools (for pagination tests).
    #[arg(long, hide = true, value_name = "N")]
    page_size: Option<usize>,
}

/// Runs `example-server` until its client closes stdin.
pub(crate) fn run(args: Args) -> ExitCode {
    let (root, scratch) = match args.root {
        Some(root) => (root, None),
        None => match seeded_scratch_root() {
            Ok(root) => (root.clone(), Some(root)),
            Err(error) => {
                eprintln!("mcp-unknown-keys: cannot create the example root: {error}");
                return ExitCode::FAILURE;
            }
        },
    };
    let code = match serve(&root, args.with_sleep_tool, args.page_size) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-unknown-keys: example-server: {error}");
            ExitCode::FAILURE
        }
    };
    if let Some(scratch) = scratch {
        let _ = std::fs::remove_dir_all(scratch);
    }
    code
}

fn serve(root: &Path, with_sleep_tool: bool, page_size: Option<usize>) -> Result<(), String> {
    let server = ExampleServer {
        root: Arc::new(Root::open(root)?),
        tools: Arc::new(tools(with_sleep_tool)),
        page_size: page_size.filter(|&n| n > 0),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    eprintln!(
        "mcp-unknown-keys example-server: serving {} over stdio",
        server.root.path().display()
    );
    runtime.block_on(async {
        // Requests reach rmcp through `bound_lines`, which answers those too
        // long to read; rmcp's own limit is then never met.
        let (requests, bounded) = tokio::io::duplex(64 * 1024);
        tokio::spawn(oversized::bound_lines(tokio::io::stdin(), bounded));
        let transport = AsyncRwTransport::new_server(requests, tokio::io::stdout())
            .with_max_line_length(MAX_REQUEST_BYTES + 1024);
        let service = server.serve(transport).await.map_err(|error| error.to_string())?;
        service.waiting().await.map_err(|error| error.to_string())?;
        Ok(())
    })
}

/// A fresh temporary directory with a few files to read.
fn seeded_scratch_root() -> io::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let root = std::env::temp_dir().join(format!("mcp-unknown-keys-example-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(root.join("src/app.rs"), SEED_APP)?;
    std::fs::write(root.join("notes.txt"), SEED_NOTES)?;
    std::fs::write(root.join("README.md"), SEED_README)?;
    Ok(root)
}

const SEED_APP: &str = "\
//! A small application to read.

use std::env;

/// Greets whoever is named on the command line.
fn main() {
    let name = env::args().nth(1).unwrap_or_else(|| \"world\".to_owned());
    let greeting = greet(&name);
    println!(\"{greeting}\");
}

fn greet(name: &str) -> String {
    // Line 12 (0-based): the line a model asks for with offset 12.
    format!(\"Hello, {name}!\")
}

#[cfg(test)]
mod tests {
    #[test]
    fn greets() {
        assert_eq!(super::greet(\"Ada\"), \"Hello, Ada!\");
    }
}
";

const SEED_NOTES: &str = "\
Notes
- fs_read takes path, offset and limit.
- task takes a prompt; the rest of a truncated prompt is lost without a word.
";

const SEED_README: &str = "\
# Example project

A scratch directory served by `mcp-unknown-keys example-server`.
Read `src/app.rs`, list the directory, write a file.
";

/// The tools, as their declarations.
fn tools(with_sleep_tool: bool) -> Vec<Tool> {
    let mut tools = vec![
        tool(
            "read",
            "Read a text file under the root, by lines: from line `offset` (0-based, default 0), \
             at most `limit` lines (default: all).",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file, relative to the root."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0,
                               "description": "The first line to return, 0-based."},
                    "limit": {"type": "integer", "minimum": 0,
                              "description": "The most lines to return."}
                },
                "required": ["path"]
            }),
        ),
        tool(
            "write",
            "Write a text file under the root, creating its directories.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file, relative to the root."},
                    "content": {"type": "string", "description": "The whole new content."}
                },
                "required": ["path", "content"]
            }),
        ),
        tool(
            "list",
            "List a directory under the root (default: the root itself).",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "default": ".",
                             "description": "The directory, relative to the root."}
                }
            }),
        ),
        tool(
            "task",
            "Start a task from a prompt (here: echo what was understood).",
            json!({
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "description": "What to do, in full."}
                },
                "required": ["prompt"]
            }),
        ),
    ];
    if with_sleep_tool {
        tools.push(tool(
            "sleep",
            "Wait `ms` milliseconds, then answer (for timeout tests).",
            json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0}},
                "required": ["ms"]
            }),
        ));
    }
    tools
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("every schema above is an object literal")
    };
    Tool::new(name, description, schema)
}

/// The server: its root, its tools, and how it pages `tools/list`.
#[derive(Clone)]
struct ExampleServer {
    root: Arc<Root>,
    tools: Arc<Vec<Tool>>,
    page_size: Option<usize>,
}

/// A tool's answer: text for the model, or a tool error.
type Answer = Result<CallToolResult, String>;

impl ServerHandler for ExampleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "mcp-unknown-keys-example",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("Small filesystem tools confined to one directory.")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&start| start <= self.tools.len())
                .ok_or_else(|| ErrorData::invalid_params("unknown cursor", None))?,
        };
        let end = match self.page_size {
            Some(size) => (start + size).min(self.tools.len()),
            None => self.tools.len(),
        };
        let mut page = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|tool| tool.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        }
        // Undeclared keys are ignored, as most servers do: see the module docs.
        let arguments = request.arguments.unwrap_or_default();
        let answer = match &*request.name {
            "read" => self.read(&arguments),
            "write" => self.write(&arguments),
            "list" => self.list(&arguments),
            "task" => task(&arguments),
            // A client that gave up sends `notifications/cancelled`: stop then.
            "sleep" => tokio::select! {
                answer = sleep(&arguments) => answer,
                () = context.ct.cancelled() => Err("cancelled by the client".to_owned()),
            },
            _ => unreachable!("checked against the tools above"),
        };
        Ok(answer
            .unwrap_or_else(|problem| CallToolResult::error(vec![ContentBlock::text(problem)]))
            .into())
    }

    /// Answers the stand-in for a request too long to read.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != OVERSIZED {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let bytes = request
            .params
            .as_ref()
            .and_then(|params| params.get("bytes"))
            .and_then(Value::as_u64)
            .unwrap_or_default();
        Err(ErrorData::invalid_request(
            format!(
                "the request is {bytes} bytes long; this server reads requests of at most {} MiB",
                MAX_REQUEST_BYTES >> 20
            ),
            None,
        ))
    }
}

impl ExampleServer {
    fn read(&self, arguments: &JsonObject) -> Answer {
        let read = self.root.read(required_str(arguments, "path")?)?;
        let offset = optional_count(arguments, "offset")?.unwrap_or(0);
        let limit = optional_count(arguments, "limit")?.unwrap_or(usize::MAX);
        let lines: Vec<&str> = read.text.lines().skip(offset).take(limit).collect();
        let mut content = vec![ContentBlock::text(lines.join("\n"))];
        if let Some(size) = read.cut_from {
            content.push(ContentBlock::text(format!(
                "[only the first {} MiB of this {size}-byte file were read]",
                MAX_READ_BYTES >> 20
            )));
        }
        Ok(CallToolResult::success(content))
    }

    fn write(&self, arguments: &JsonObject) -> Answer {
        let path = required_str(arguments, "path")?;
        let content = required_str(arguments, "content")?;
        let written = self.root.write(path, content)?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "wrote {} bytes to {}",
            content.len(),
            self.root.shown(&written)
        ))]))
    }

    fn list(&self, arguments: &JsonObject) -> Answer {
        let path = match arguments.get("path") {
            None | Some(Value::Null) => ".",
            Some(Value::String(path)) => path,
            Some(_) => return Err("`path` must be a string".to_owned()),
        };
        let entries = self.root.list(path)?;
        let text = entries
            .iter()
            .map(|(name, is_dir)| if *is_dir { format!("{name}/") } else { name.clone() })
            .collect::<Vec<_>>()
            .join("\n");
        let structured = json!({
            "entries": entries
                .iter()
                .map(|(name, is_dir)| json!({"name": name, "kind": if *is_dir { "directory" } else { "file" }}))
                .collect::<Vec<_>>()
        });
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(structured);
        Ok(result)
    }
}

fn task(arguments: &JsonObject) -> Answer {
    let prompt = required_str(arguments, "prompt")?;
    let words = prompt.split_whitespace().count();
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "task started with a prompt of {words} word(s): {prompt:?}"
    ))]))
}

async fn sleep(arguments: &JsonObject) -> Answer {
    let ms = optional_count(arguments, "ms")?.ok_or("`ms` is required")?;
    tokio::time::sleep(Duration::from_millis(ms as u64)).await;
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "slept {ms} ms"
    ))]))
}

fn required_str<'a>(arguments: &'a JsonObject, key: &str) -> Result<&'a str, String> {
    match arguments.get(key) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(format!("`{key}` must be a string")),
        None => Err(format!("`{key}` is required")),
    }
}

fn optional_count(arguments: &JsonObject, key: &str) -> Result<Option<usize>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`{key}` must be a non-negative integer")),
    }
}
