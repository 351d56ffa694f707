//! A `Registry` of two real MCP servers under `UnknownKeys`: the example
//! server under `fs`, mcp-server-time under `time`.
//!
//! ```sh
//! cargo install --path crates/mcp-unknown-keys-cli   # mcp-unknown-keys on PATH
//! pip install mcp-server-time                          # mcp-server-time on PATH
//! cargo run -p mcp-unknown-keys --features mcp --example two_servers
//! ```
//!
//! `MCP_UK_EXAMPLE_SERVER` and `MCP_UK_SERVER_TIME` name the programs when
//! they are not on `PATH` (`eval "$(scripts/test-deps)"` sets the second).

use std::process::ExitCode;

use mcp_unknown_keys::{BoxError, McpServer, Provider, Registry, ToolCall, UnknownKeys};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let time = program("MCP_UK_SERVER_TIME", "mcp-server-time");
    let time = match McpServer::stdio(&time).connect().await {
        Ok(server) => server,
        Err(error) => return explain(error, "MCP_UK_SERVER_TIME"),
    };
    let example = program("MCP_UK_EXAMPLE_SERVER", "mcp-unknown-keys");
    let files = match McpServer::stdio(&example).arg("example-server").connect().await {
        Ok(server) => server,
        Err(error) => {
            time.close().await;
            return explain(error, "MCP_UK_EXAMPLE_SERVER");
        }
    };

    let outcome = run(files.clone(), time.clone()).await;
    files.close().await;
    time.close().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("two_servers: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(files: McpServer, time: McpServer) -> Result<(), BoxError> {
    // The dozen lines: one namespace over two servers, audited.
    let registry = Registry::new();
    registry.add(files, "fs")?;
    registry.add(time, "time")?;
    let stack = UnknownKeys::new(registry); // warns on stderr

    for tool in stack.tools_for_llm().await? {
        println!("tool: {}", tool.name().unwrap_or("?"));
    }
    let results = stack
        .execute_tool_calls(vec![
            // `ffset` is a truncated `offset`: the server reads from line 0, and says nothing.
            ToolCall::new(
                "call_1",
                "fs_read",
                r#"{"path":"src/app.rs","ffset":12,"limit":2}"#,
            ),
            ToolCall::new("call_2", "time_get_current_time", r#"{"timezone":"UTC"}"#),
        ])
        .await?;
    for result in &results {
        println!(
            "{} (error: {}):\n{}",
            result.tool_call_id, result.is_error, result.content
        );
    }
    // What the alarm saw, and what it could not: `2 call(s): all audited`.
    println!("{}", stack.coverage());
    Ok(())
}

fn program(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_owned())
}

fn explain(error: mcp_unknown_keys::ConnectError, var: &str) -> ExitCode {
    eprintln!("two_servers: {error}\n(put the program on PATH, or name it in {var})");
    ExitCode::FAILURE
}
