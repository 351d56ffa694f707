//! `McpServer` against the example server, a real MCP server over stdio.

use crate::support;

use std::time::{Duration, Instant};

use mcp_unknown_keys::{McpServer, Provider, StdioServer, ToolCall};
use serde_json::{Value, json};
use support::{ScratchDir, alive, block_on, stderr_of};

const BINARY: &str = env!("CARGO_BIN_EXE_mcp-unknown-keys");

fn example(root: &ScratchDir) -> StdioServer {
    McpServer::stdio(BINARY)
        .args(["example-server", "--root"])
        .arg(root.path())
        .name("example")
        .forward_stderr(false)
}

fn call(id: &str, name: &str, arguments: impl Into<Value>) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

#[test]
fn lists_the_tools_with_their_schemas_verbatim() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let tools = server.tools_for_llm().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t.name()).collect();
        assert_eq!(names, ["read", "write", "list", "task"]);

        let read = tools[0].as_value();
        assert_eq!(read["type"], "function");
        assert!(
            read["function"]["description"]
                .as_str()
                .unwrap()
                .starts_with("Read a text file")
        );
        assert_eq!(
            read["function"]["parameters"],
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
            })
        );
        server.close().await;
    });
}

#[test]
fn lists_every_page() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root)
            .args(["--page-size", "2", "--with-sleep-tool"])
            .connect()
            .await
            .unwrap();
        let tools = server.tools_for_llm().await.unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t.name()).collect();
        assert_eq!(names, ["read", "write", "list", "task", "sleep"]);
        server.close().await;
    });
}

#[test]
fn calls_with_string_object_empty_and_absent_arguments() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let mut absent = call("5", "list", "");
        absent.function_mut().unwrap().remove("arguments");
        let results = server
            .execute_tool_calls(vec![
                call("1", "read", r#"{"path":"notes.txt","offset":1,"limit":1}"#),
                call("2", "read", json!({"path": "notes.txt", "offset": 1, "limit": 1})),
                call("3", "list", ""),
                call("4", "list", "  \n"),
                absent,
                call("6", "list", Value::Null),
            ])
            .await
            .unwrap();

        let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
        assert!(
            results.iter().all(|r| !r.is_error && r.role == "tool"),
            "{results:?}"
        );
        assert_eq!(results[0].content, "- fs_read takes path, offset and limit.");
        assert_eq!(results[1].content, results[0].content);
        for listing in &results[2..] {
            assert_eq!(listing.content, "README.md\nnotes.txt\nsrc/");
            assert_eq!(
                listing.structured_content,
                Some(json!({"entries": [
                    {"name": "README.md", "kind": "file"},
                    {"name": "notes.txt", "kind": "file"},
                    {"name": "src", "kind": "directory"},
                ]}))
            );
        }
        assert_eq!(results[0].structured_content, None);
        server.close().await;
    });
}

#[test]
fn starts_the_child_in_the_given_directory() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = McpServer::stdio(BINARY)
            .args(["example-server", "--root", "."])
            .current_dir(root.path())
            .env("RUST_BACKTRACE", "0")
            .forward_stderr(false)
            .connect()
            .await
            .unwrap();
        let results = server
            .execute_tool_calls(vec![call("1", "read", r#"{"path":"notes.txt","limit":1}"#)])
            .await
            .unwrap();
        assert_eq!(results[0].content, "Notes");
        assert!(stderr_of(&server).await[0].contains(&*root.path().to_string_lossy()));
        server.close().await;
    });
}

#[test]
fn undeclared_keys_are_silently_ignored_by_the_server() {
    // The failure this project exists for: the read "succeeds" from line 0.
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let results = server
            .execute_tool_calls(vec![call(
                "1",
                "read",
                r#"{"path":"src/app.rs","ffset":12,"limit":1}"#,
            )])
            .await
            .unwrap();
        assert!(!results[0].is_error);
        assert_eq!(results[0].content, "//! A small application to read.");
        server.close().await;
    });
}

#[test]
fn bad_arguments_fail_only_their_call() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let results = server
            .execute_tool_calls(vec![
                call("1", "read", r#"{"path": "notes.txt""#),
                call("2", "read", "[1, 2]"),
                call("3", "read", json!(42)),
                call("4", "read", r#""notes.txt""#),
                call("5", "read", r#"{"path":"notes.txt","limit":1}"#),
            ])
            .await
            .unwrap();
        assert!(results[0].is_error);
        assert!(
            results[0].content.contains("not valid JSON"),
            "{}",
            results[0].content
        );
        assert!(results[1].content.contains("must be a JSON object, not an array"));
        assert!(results[2].content.contains("not a number"));
        assert!(results[3].content.contains("not a string"));
        assert!(results[..4].iter().all(|r| r.is_error));
        assert!(!results[4].is_error);
        assert_eq!(results[4].content, "Notes");
        server.close().await;
    });
}

#[test]
fn tool_errors_and_unknown_tools_become_error_results() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let results = server
            .execute_tool_calls(vec![
                call("1", "read", r#"{"path":"../outside.txt"}"#),
                call("2", "raed", r#"{"path":"notes.txt"}"#),
                call("3", "read", r#"{"path":"missing.txt"}"#),
                call("4", "write", r#"{"path":"out/new.txt","content":"hello"}"#),
            ])
            .await
            .unwrap();
        assert!(results[0].is_error);
        assert!(
            results[0].content.contains("outside the root"),
            "{}",
            results[0].content
        );
        assert!(results[1].is_error);
        assert!(
            results[1].content.contains("unknown tool: raed"),
            "{}",
            results[1].content
        );
        assert!(results[1].content.contains("example"), "{}", results[1].content);
        assert!(results[2].is_error);
        assert!(!results[3].is_error, "{}", results[3].content);
        assert_eq!(
            std::fs::read_to_string(root.path().join("out/new.txt")).unwrap(),
            "hello"
        );
        server.close().await;
    });
}

#[test]
fn a_slow_tool_hits_the_timeout_and_the_rest_goes_on() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root)
            .arg("--with-sleep-tool")
            .timeout(Duration::from_secs(1))
            .connect()
            .await
            .unwrap();
        let started = Instant::now();
        let results = server
            .execute_tool_calls(vec![
                call("slow", "sleep", r#"{"ms": 20000}"#),
                call("quick", "sleep", r#"{"ms": 10}"#),
            ])
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(results[0].is_error);
        assert!(
            results[0].content.contains("did not answer within 1 s"),
            "{}",
            results[0].content
        );
        assert_eq!(results[1].content, "slept 10 ms");

        // The server is still there for the next call.
        let again = server
            .execute_tool_calls(vec![call("next", "read", r#"{"path":"notes.txt","limit":1}"#)])
            .await
            .unwrap();
        assert_eq!(again[0].content, "Notes");
        server.close().await;
    });
}

#[test]
fn a_server_killed_mid_session_is_reported_with_its_stderr() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        assert_eq!(server.tools_for_llm().await.unwrap().len(), 4);
        let ok = server
            .execute_tool_calls(vec![call("1", "list", "")])
            .await
            .unwrap();
        assert!(!ok[0].is_error);

        let pid = server.process_id().unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());

        let results = server
            .execute_tool_calls(vec![call("2", "list", ""), call("3", "read", "{}")])
            .await
            .unwrap();
        assert_eq!(results.len(), 2);
        for result in &results {
            assert!(result.is_error);
            assert!(
                result.content.contains("MCP server `example` is not running"),
                "{}",
                result.content
            );
            assert!(
                result.content.contains("example-server: serving"),
                "no stderr tail in: {}",
                result.content
            );
        }
        // A failed re-listing is an error, never the last good list.
        let listing = server.tools_for_llm().await.unwrap_err().to_string();
        assert!(listing.contains("is not running"), "{listing}");
        server.close().await;
    });
}

#[test]
fn close_shuts_the_child_down() {
    let root = ScratchDir::seeded();
    block_on(async {
        let server = example(&root).connect().await.unwrap();
        let pid = server.process_id().unwrap();
        assert!(alive(pid));
        server.close().await;
        assert!(!alive(pid), "the example server outlived close()");

        let results = server
            .execute_tool_calls(vec![call("1", "list", "")])
            .await
            .unwrap();
        assert!(results[0].is_error);
        assert!(server.tools_for_llm().await.is_err());
        server.close().await; // twice is harmless
    });
}

#[test]
fn dropping_without_close_leaves_no_process_behind() {
    let root = ScratchDir::seeded();
    let pid = block_on(async {
        let server = example(&root).connect().await.unwrap();
        server.process_id().unwrap()
        // dropped here, then the runtime goes away
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the example server outlived its McpServer");
}

#[test]
fn a_server_that_cannot_start_is_a_connect_error() {
    block_on(async {
        let missing = McpServer::stdio("/nonexistent/mcp-server").connect().await;
        let error = missing.unwrap_err().to_string();
        assert!(error.contains("cannot start"), "{error}");

        let root = ScratchDir::seeded();
        let bad_root = McpServer::stdio(BINARY)
            .args(["example-server", "--root"])
            .arg(root.path().join("no-such-dir"))
            .forward_stderr(false)
            .connect()
            .await;
        let error = bad_root.unwrap_err();
        assert!(
            error
                .stderr_tail()
                .iter()
                .any(|line| line.contains("no-such-dir")),
            "{error}"
        );
        assert!(error.to_string().contains("the end of its stderr"), "{error}");
    });
}
