//! `McpServer`, `Registry` and `UnknownKeys` over MCP servers nobody here
//! wrote, installed at pinned versions by `scripts/test-deps`:
//! `mcp-server-time` (PyPI) and `@modelcontextprotocol/server-filesystem`
//! (npm).

use crate::support;

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::Warning;
use mcp_unknown_keys::{McpServer, Provider, Registry, ToolCall, UnknownKeysLayer};
use serde_json::json;
use support::{ScratchDir, block_on, prerequisite};
use tower_layer::Layer;

async fn time_server() -> McpServer {
    McpServer::stdio(prerequisite("MCP_UK_SERVER_TIME"))
        .args(["--local-timezone", "UTC"])
        .forward_stderr(false)
        .connect()
        .await
        .unwrap()
}

async fn filesystem_server(root: &ScratchDir) -> McpServer {
    McpServer::stdio(prerequisite("MCP_UK_SERVER_FILESYSTEM"))
        .arg(root.path())
        .forward_stderr(false)
        .connect()
        .await
        .unwrap()
}

#[test]
fn mcp_server_time_lists_and_answers() {
    block_on(async {
        let time = time_server().await;
        let tools = time.tools_for_llm().await.unwrap();
        let current = tools
            .iter()
            .find(|t| t.name() == Some("get_current_time"))
            .expect("mcp-server-time offers get_current_time");
        let parameters = current.parameters().unwrap();
        assert_eq!(parameters["type"], "object");
        assert!(parameters["properties"]["timezone"].is_object(), "{parameters}");

        let results = time
            .execute_tool_calls(vec![
                ToolCall::new("1", "get_current_time", r#"{"timezone":"Europe/Paris"}"#),
                ToolCall::new("2", "get_current_time", json!({"timezone": "Asia/Tokyo"})),
                ToolCall::new("3", "no_such_tool", "{}"),
            ])
            .await
            .unwrap();
        assert!(!results[0].is_error, "{}", results[0].content);
        assert!(
            results[0].content.contains("Europe/Paris"),
            "{}",
            results[0].content
        );
        assert!(
            results[1].content.contains("Asia/Tokyo"),
            "{}",
            results[1].content
        );
        assert!(results[2].is_error, "{}", results[2].content);
        time.close().await;
    });
}

#[test]
fn server_filesystem_lists_and_answers() {
    let root = ScratchDir::seeded();
    block_on(async {
        let files = filesystem_server(&root).await;
        let tools = files.tools_for_llm().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t.name()).collect();
        assert!(names.contains(&"read_text_file"), "{names:?}");
        assert!(names.contains(&"list_directory"), "{names:?}");

        let notes = root.path().join("notes.txt");
        let outside = std::env::temp_dir().join("not-allowed.txt");
        let results = files
            .execute_tool_calls(vec![
                ToolCall::new("1", "read_text_file", json!({"path": notes}).to_string()),
                ToolCall::new("2", "list_directory", json!({"path": root.path()})),
                ToolCall::new("3", "read_text_file", json!({"path": outside})),
            ])
            .await
            .unwrap();
        assert!(!results[0].is_error, "{}", results[0].content);
        assert!(results[0].content.starts_with("Notes"), "{}", results[0].content);
        assert!(results[1].content.contains("notes.txt"), "{}", results[1].content);
        assert!(results[2].is_error, "{}", results[2].content);
        files.close().await;
    });
}

/// The full stack, `UnknownKeys(Registry(McpServer…))`, over both servers:
/// an undeclared key is reported and the call still succeeds.
#[test]
fn the_full_stack_reports_undeclared_keys_and_changes_nothing() {
    let root = ScratchDir::seeded();
    block_on(async {
        // Clones share the connection: keep one to close the server.
        let time = time_server().await;
        let files = filesystem_server(&root).await;
        let registry = Registry::new();
        registry.add(time.clone(), "time").unwrap();
        registry.add(files.clone(), "fs").unwrap();

        let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
        let record = warnings.clone();
        let stack = UnknownKeysLayer::new()
            .on_warn(move |w: &Warning| record.lock().unwrap().push(w.clone()))
            .layer(registry);

        let tools = stack.tools_for_llm().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t.name()).collect();
        assert!(names.contains(&"time_get_current_time"), "{names:?}");
        assert!(names.contains(&"fs_read_text_file"), "{names:?}");
        assert!(stack.audited_tools().contains(&"fs_read_text_file".to_owned()));

        let notes = root.path().join("notes.txt");
        let results = stack
            .execute_tool_calls(vec![
                ToolCall::new(
                    "call_1",
                    "time_get_current_time",
                    r#"{"timezone":"UTC","tz_fallback":"Europe/Paris"}"#,
                ),
                ToolCall::new(
                    "call_2",
                    "fs_read_text_file",
                    json!({"path": notes, "ffset": 1, "the rest": "…"}).to_string(),
                ),
                ToolCall::new("call_3", "time_get_current_time", r#"{"timezone":"UTC"}"#),
            ])
            .await
            .unwrap();

        // Every call still ran, as it would have without the layer.
        assert!(results.iter().all(|r| !r.is_error), "{results:?}");
        assert!(results[0].content.contains("UTC"), "{}", results[0].content);
        assert!(results[1].content.starts_with("Notes"), "{}", results[1].content);

        let warnings = warnings.lock().unwrap().clone();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(warnings[0].tool, "time_get_current_time");
        assert_eq!(warnings[0].unknown_keys, ["tz_fallback"]);
        assert_eq!(warnings[0].id, "call_1");
        assert!(warnings[0].declared_keys.contains(&"timezone".to_owned()));
        assert_eq!(warnings[1].tool, "fs_read_text_file");
        assert_eq!(warnings[1].unknown_keys, ["ffset", "the rest"]);
        assert!(warnings[1].declared_keys.contains(&"path".to_owned()));

        time.close().await;
        files.close().await;
    });
}
