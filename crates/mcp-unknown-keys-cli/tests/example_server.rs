//! `mcp-unknown-keys example-server`: its seeded default root and its
//! confinement, driven through `McpServer`.

use crate::support;

use std::path::PathBuf;

use mcp_unknown_keys::{McpServer, Provider, ToolCall, ToolResult};
use serde_json::json;
use support::{ScratchDir, block_on, prerequisite, stderr_of};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

async fn call(server: &McpServer, name: &str, arguments: serde_json::Value) -> ToolResult {
    let mut results = server
        .execute_tool_calls(vec![ToolCall::new("1", name, arguments.to_string())])
        .await
        .unwrap();
    results.remove(0)
}

#[test]
fn the_default_root_is_seeded_and_removed_on_exit() {
    block_on(async {
        let server = McpServer::stdio(BINARY)
            .arg("example-server")
            .forward_stderr(false)
            .connect()
            .await
            .unwrap();
        let listing = call(&server, "list", json!({})).await;
        assert_eq!(listing.content, "README.md\nnotes.txt\nsrc/");

        let line = call(
            &server,
            "read",
            json!({"path": "src/app.rs", "offset": 12, "limit": 1}),
        )
        .await;
        assert!(line.content.contains("Line 12 (0-based)"), "{}", line.content);

        // The server names its root on stderr.
        let announced = stderr_of(&server).await.join("\n");
        let root = announced
            .split("serving ")
            .nth(1)
            .and_then(|rest| rest.split(" over stdio").next())
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no root announced in {announced:?}"));
        assert!(root.join("notes.txt").is_file());

        server.close().await;
        assert!(!root.exists(), "{} was left behind", root.display());
    });
}

#[test]
fn paths_outside_the_root_are_refused() {
    let root = ScratchDir::seeded();
    let outside = ScratchDir::new();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("escape")).unwrap();
    block_on(async {
        let server = McpServer::stdio(BINARY)
            .args(["example-server", "--root"])
            .arg(root.path())
            .forward_stderr(false)
            .connect()
            .await
            .unwrap();
        let secret = outside.path().join("secret.txt");
        for (tool, arguments) in [
            ("read", json!({"path": "../secret.txt"})),
            ("read", json!({"path": "src/../../secret.txt"})),
            ("read", json!({"path": secret})),
            ("read", json!({"path": "escape/secret.txt"})),
            ("write", json!({"path": "escape/new.txt", "content": "x"})),
            ("write", json!({"path": "../new.txt", "content": "x"})),
            ("list", json!({"path": ".."})),
            ("list", json!({"path": "escape"})),
        ] {
            let result = call(&server, tool, arguments.clone()).await;
            assert!(result.is_error, "{tool} {arguments} was allowed");
            assert!(result.content.contains("outside the root"), "{}", result.content);
        }
        assert!(!outside.path().join("new.txt").exists());

        let inside = call(&server, "read", json!({"path": "src/../notes.txt", "limit": 1})).await;
        assert_eq!(inside.content, "Notes");
        let absolute = root.path().join("notes.txt");
        let inside = call(&server, "read", json!({"path": absolute, "limit": 1})).await;
        assert_eq!(inside.content, "Notes");
        let sneaky = format!("{}/../secret.txt", root.path().display());
        let refused = call(&server, "read", json!({"path": sneaky})).await;
        assert!(
            refused.content.contains("outside the root"),
            "{}",
            refused.content
        );
        server.close().await;
    });
}

#[test]
fn write_then_read_and_task_echoes_its_prompt() {
    let root = ScratchDir::new();
    block_on(async {
        let server = McpServer::stdio(BINARY)
            .args(["example-server", "--root"])
            .arg(root.path())
            .forward_stderr(false)
            .connect()
            .await
            .unwrap();
        let written = call(
            &server,
            "write",
            json!({"path": "a/b.txt", "content": "one\ntwo\nthree"}),
        )
        .await;
        assert_eq!(written.content, "wrote 13 bytes to a/b.txt");
        let read = call(&server, "read", json!({"path": "a/b.txt", "offset": 1})).await;
        assert_eq!(read.content, "two\nthree");

        let task = call(
            &server,
            "task",
            json!({"prompt": "Investigate the", "nvestigate": "…", "the rest": "…"}),
        )
        .await;
        assert!(!task.is_error);
        assert_eq!(
            task.content,
            "task started with a prompt of 2 word(s): \"Investigate the\""
        );

        let missing = call(&server, "task", json!({})).await;
        assert!(missing.is_error);
        assert!(missing.content.contains("`prompt` is required"));
        server.close().await;
    });
}

/// A client nobody here wrote: the official Python SDK.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool(
                "read", {"path": "src/app.rs", "offset": 2, "limit": 1, "ffset": 9})
            print(json.dumps({
                "tools": [tool.name for tool in tools.tools],
                "text": result.content[0].text,
                "is_error": result.is_error,
            }))

asyncio.run(main())
"#;

#[test]
fn the_python_sdk_client_talks_to_it() {
    let root = ScratchDir::seeded();
    let output = std::process::Command::new(prerequisite("MCP_UK_PYTHON"))
        .args(["-c", PYTHON_CLIENT, BINARY, "example-server", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        answer,
        json!({"tools": ["read", "write", "list", "task"], "text": "fn main() {}", "is_error": false})
    );
}
