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
//!   (0-based, default 0), at most `limit` of them;
//! - `write` {path, content}: writes a file, creating its directories;
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
//! leads outside it (`..`, an absolute path elsewhere, a symbolic link out)
//! is refused with a tool error. Unknown tools are refused with a JSON-RPC
//! `invalid params` error.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The command line of `example-server`.
#[derive(clap::Args, Debug)]
pub struct Args {
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
pub fn run(args: Args) -> ExitCode {
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
    let root = root
        .canonicalize()
        .map_err(|error| format!("root {}: {error}", root.display()))?;
    if !root.is_dir() {
        return Err(format!("root {} is not a directory", root.display()));
    }
    let server = ExampleServer {
        root,
        tools: Arc::new(tools(with_sleep_tool)),
        page_size: page_size.filter(|&n| n > 0),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    eprintln!(
        "mcp-unknown-keys example-server: serving {} over stdio",
        server.root.display()
    );
    runtime.block_on(async {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| error.to_string())?;
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
    root: PathBuf,
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
}

impl ExampleServer {
    fn read(&self, arguments: &JsonObject) -> Answer {
        let path = self.resolve(required_str(arguments, "path")?)?;
        let offset = optional_count(arguments, "offset")?.unwrap_or(0);
        let limit = optional_count(arguments, "limit")?.unwrap_or(usize::MAX);
        let text = std::fs::read_to_string(&path).map_err(|error| self.io_problem(&path, error))?;
        let lines: Vec<&str> = text.lines().skip(offset).take(limit).collect();
        Ok(CallToolResult::success(vec![ContentBlock::text(
            lines.join("\n"),
        )]))
    }

    fn write(&self, arguments: &JsonObject) -> Answer {
        let path = self.resolve(required_str(arguments, "path")?)?;
        let content = required_str(arguments, "content")?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| self.io_problem(parent, error))?;
        }
        std::fs::write(&path, content).map_err(|error| self.io_problem(&path, error))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "wrote {} bytes to {}",
            content.len(),
            self.shown(&path)
        ))]))
    }

    fn list(&self, arguments: &JsonObject) -> Answer {
        let path = match arguments.get("path") {
            None | Some(Value::Null) => ".",
            Some(Value::String(path)) => path,
            Some(_) => return Err("`path` must be a string".to_owned()),
        };
        let dir = self.resolve(path)?;
        let read = std::fs::read_dir(&dir).map_err(|error| self.io_problem(&dir, error))?;
        let mut entries: Vec<(String, &str)> = read
            .filter_map(Result::ok)
            .map(|entry| {
                let kind = match entry.file_type() {
                    Ok(kind) if kind.is_dir() => "directory",
                    _ => "file",
                };
                (entry.file_name().to_string_lossy().into_owned(), kind)
            })
            .collect();
        entries.sort();
        let text = entries
            .iter()
            .map(|(name, kind)| match *kind {
                "directory" => format!("{name}/"),
                _ => name.clone(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let structured = json!({
            "entries": entries
                .iter()
                .map(|(name, kind)| json!({"name": name, "kind": kind}))
                .collect::<Vec<_>>()
        });
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(structured);
        Ok(result)
    }

    /// The path under the root that `path` names, or a refusal when it
    /// leads outside the root, even through a symbolic link.
    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let outside = || format!("refused: {path:?} is outside the root");
        let relative = match Path::new(path) {
            absolute if absolute.is_absolute() => absolute.strip_prefix(&self.root).map_err(|_| outside())?,
            relative => relative,
        };
        let mut resolved = self.root.clone();
        for component in relative.components() {
            match component {
                Component::CurDir => {}
                Component::Normal(part) => resolved.push(part),
                Component::ParentDir => {
                    if resolved == self.root {
                        return Err(outside());
                    }
                    resolved.pop();
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        // Follow symbolic links in the part of the path that exists.
        let mut existing = resolved.as_path();
        while !existing.exists() {
            existing = existing.parent().ok_or_else(outside)?;
        }
        let real = existing.canonicalize().map_err(|_| outside())?;
        if !real.starts_with(&self.root) {
            return Err(outside());
        }
        Ok(resolved)
    }

    fn shown(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        match relative.as_os_str().is_empty() {
            true => ".".to_owned(),
            false => relative.display().to_string(),
        }
    }

    fn io_problem(&self, path: &Path, error: io::Error) -> String {
        format!("{}: {error}", self.shown(path))
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
