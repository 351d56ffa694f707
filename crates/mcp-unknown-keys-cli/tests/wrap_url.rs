//! `wrap` of a remote server whose URL carries its secret (userinfo, or a
//! key in the query): the secret parts move to the entry's `env`, out of
//! the bridge's command line, and `unwrap` puts the URL back byte for byte.

use crate::wrap_support;

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use wrap_support::{backups, run, succeeded, text, unwrap, wrap};

const SERVERS: &str = r#"{
  "mcpServers": {
    "query": {
      "type": "http",
      "url": "https://mcp.example.com/mcp?api_key=sk-live-1&region=eu"
    },
    "userinfo": {
      "url": "https://me:sk-live-2@mcp.example.com/mcp?token=sk-live-3#top",
      "headers": {
        "Authorization": "Bearer sk-live-4"
      }
    },
    "mixed": {
      "url": "https://mcp.example.com/mcp?key=${API_KEY}",
      "env": {"MUK_URL_1": "taken", "OTHER": "1"},
      "headers": {"X-Team": "core"}
    },
    "path": {
      "url": "https://mcp.example.com/s/sk-live-5/mcp"
    },
    "plain": {
      "url": "https://mcp.example.com/mcp"
    }
  }
}
"#;

fn scratch() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    fs::write(&path, SERVERS).unwrap();
    (dir, path)
}

fn entry(path: &Path, server: &str) -> Value {
    let document: Value = serde_json::from_str(&text(path)).unwrap();
    document["mcpServers"][server].clone()
}

/// The `--url` argument of a wrapped entry.
fn url_argument(entry: &Value) -> String {
    let args = entry["args"].as_array().unwrap();
    let at = args.iter().position(|arg| arg == "--url").unwrap();
    args[at + 1].as_str().unwrap().to_owned()
}

#[test]
fn a_urls_userinfo_and_query_move_to_the_environment() {
    let (_dir, path) = scratch();
    succeeded(&wrap("claude-code", &path));
    let wrapped = text(&path);
    let document: Value = serde_json::from_str(&wrapped).unwrap();
    for (server, entry) in document["mcpServers"].as_object().unwrap() {
        let args = entry["args"].to_string();
        if server != "path" {
            assert!(
                !args.contains("sk-live"),
                "{server}: a secret on the command line: {args}"
            );
        }
    }

    let query = entry(&path, "query");
    assert_eq!(url_argument(&query), "https://mcp.example.com/mcp?${MUK_URL_1}");
    assert_eq!(query["env"], json!({"MUK_URL_1": "api_key=sk-live-1&region=eu"}));

    let userinfo = entry(&path, "userinfo");
    assert_eq!(
        url_argument(&userinfo),
        "https://${MUK_URL_1}@mcp.example.com/mcp?${MUK_URL_2}#top"
    );
    assert_eq!(
        userinfo["env"],
        json!({
            "MUK_HEADER_1": "Bearer sk-live-4",
            "MUK_URL_1": "me:sk-live-2",
            "MUK_URL_2": "token=sk-live-3"
        })
    );

    // The host resolves its own reference in `env` as it did in `url`; a
    // variable already there keeps its name.
    let mixed = entry(&path, "mixed");
    assert_eq!(url_argument(&mixed), "https://mcp.example.com/mcp?${MUK_URL_2}");
    assert_eq!(mixed["env"]["MUK_URL_2"], "key=${API_KEY}");
    assert_eq!(mixed["env"]["MUK_URL_1"], "taken");

    // A key in the path cannot be told from a name there: it stays.
    assert_eq!(
        url_argument(&entry(&path, "path")),
        "https://mcp.example.com/s/sk-live-5/mcp"
    );
    let plain = entry(&path, "plain");
    assert_eq!(url_argument(&plain), "https://mcp.example.com/mcp");
    assert!(plain.get("env").is_none(), "{plain}");
}

#[test]
fn unwrap_gives_the_url_back_byte_for_byte() {
    let (dir, path) = scratch();
    succeeded(&wrap("claude-code", &path));
    let wrapped = text(&path);
    let report = succeeded(&unwrap("claude-code", &path));
    assert!(
        report.contains("query: unwrapped (restored from its backup)"),
        "{report}"
    );
    assert_eq!(text(&path), SERVERS);

    // Without a backup: rebuilt from the entry alone.
    for backup in backups(dir.path()) {
        fs::remove_file(backup).unwrap();
    }
    fs::write(&path, &wrapped).unwrap();
    let report = succeeded(&unwrap("claude-code", &path));
    assert!(report.contains("query: unwrapped (rebuilt"), "{report}");
    let rebuilt = text(&path);
    let server = |text: &str, name: &str, next: &str| {
        let start = text.find(&format!("\"{name}\"")).unwrap();
        let end = text.find(&format!("\"{next}\"")).unwrap();
        text[start..end].to_owned()
    };
    for (name, next) in [("query", "userinfo"), ("userinfo", "mixed"), ("path", "plain")] {
        assert_eq!(
            server(&rebuilt, name, next),
            server(SERVERS, name, next),
            "{name}"
        );
    }
    let rebuilt: Value = serde_json::from_str(&rebuilt).unwrap();
    let before: Value = serde_json::from_str(SERVERS).unwrap();
    assert_eq!(rebuilt, before);
}

#[test]
fn windsurfs_server_url_is_kept_off_the_command_line_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp_config.json");
    let original = r#"{"mcpServers": {"docs": {"serverUrl": "https://docs.example.com/mcp?key=sk-live-6"}}}"#;
    fs::write(&path, original).unwrap();
    succeeded(&run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ]));
    let docs = entry(&path, "docs");
    assert_eq!(url_argument(&docs), "https://docs.example.com/mcp?${MUK_URL_1}");
    assert_eq!(docs["env"], json!({"MUK_URL_1": "key=sk-live-6"}));
    for backup in backups(dir.path()) {
        fs::remove_file(backup).unwrap();
    }
    succeeded(&run(&["unwrap", "--config", path.to_str().unwrap()]));
    assert_eq!(text(&path), original);
}

#[test]
fn an_env_that_cannot_take_the_urls_secret_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    let original = r#"{"mcpServers": {"odd": {"url": "https://a.test/mcp?key=sk-live-7", "env": "x"}}}"#;
    fs::write(&path, original).unwrap();
    let output = wrap("claude-code", &path);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("env should be an object, not a string"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-live"), "a secret in a message: {stderr}");
    assert_eq!(text(&path), original);
}
