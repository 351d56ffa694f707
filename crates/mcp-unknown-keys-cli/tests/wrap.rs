//! `mcp-unknown-keys wrap` and `unwrap` on host configurations written as
//! each host writes them (`tests/fixtures/wrap/`): the edits, the round
//! trip, the refusals and the files around them. Discovery and a wrapped
//! server running are in `wrap_hosts.rs`.

use crate::support;
use crate::wrap_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use support::binary;
use wrap_support::{HOSTS, backups, fixture, run, scratch, succeeded, text, unwrap, wrap};

#[test]
fn each_host_is_wrapped_as_its_golden_file() {
    for (host, name) in HOSTS {
        let (_dir, path) = scratch(name);
        let report = succeeded(&wrap(host, &path));
        assert_eq!(text(&path), fixture(&format!("{name}.wrapped")), "{host}: {name}");
        assert!(report.contains(&format!("({host})")), "{report}");
        assert!(report.contains(": wrapped"), "{report}");
    }
}

#[test]
fn unwrap_gives_back_the_original_bytes() {
    for (host, name) in HOSTS {
        let (_dir, path) = scratch(name);
        // The default command: this binary's absolute path.
        succeeded(&run(&[
            "wrap",
            "--host",
            host,
            "--config",
            path.to_str().unwrap(),
        ]));
        assert_ne!(text(&path), fixture(name));
        let report = succeeded(&unwrap(host, &path));
        assert_eq!(text(&path), fixture(name), "{host}: {name}");
        assert!(report.contains("restored from its backup"), "{report}");
        assert!(!report.contains("rebuilt"), "{report}");
    }
}

#[test]
fn wrapping_twice_changes_nothing() {
    for (host, name) in HOSTS {
        let (dir, path) = scratch(name);
        succeeded(&wrap(host, &path));
        let once = text(&path);
        let report = succeeded(&wrap(host, &path));
        assert_eq!(text(&path), once, "{host}: {name}");
        assert_eq!(backups(dir.path()).len(), 1, "a second backup for {name}");
        assert!(
            report.contains("already wrapped") && report.contains("nothing to change"),
            "{report}"
        );
        assert!(!report.contains(": wrapped"), "{report}");
    }
}

#[test]
fn a_proxy_under_another_name_is_still_known_as_wrapped() {
    for (host, name) in HOSTS {
        let (dir, path) = scratch(name);
        let wrap = || {
            run(&[
                "wrap",
                "--host",
                host,
                "--config",
                path.to_str().unwrap(),
                "--command",
                "/opt/tools/muk-wrapper.sh",
            ])
        };
        succeeded(&wrap());
        let once = text(&path);
        let report = succeeded(&wrap());
        assert_eq!(text(&path), once, "{name}: wrapped twice");
        assert!(report.contains("already wrapped"), "{report}");
        for backup in backups(dir.path()) {
            fs::remove_file(backup).unwrap();
        }
        let report = succeeded(&unwrap(host, &path));
        assert!(!report.contains("not wrapped"), "{report}");
        assert!(!text(&path).contains("muk-wrapper"), "{name}: left wrapped");
    }
}

#[test]
fn without_a_backup_unwrap_rebuilds_each_entry_from_the_proxys_arguments() {
    for (host, name) in [
        ("claude-code", "claude-code-project.json"),
        ("claude-code", "claude-code-user.json"),
        ("cursor", "cursor.json"),
        ("windsurf", "windsurf.json"),
    ] {
        let (dir, path) = scratch(name);
        succeeded(&wrap(host, &path));
        for backup in backups(dir.path()) {
            fs::remove_file(backup).unwrap();
        }
        let report = succeeded(&unwrap(host, &path));
        assert!(report.contains("rebuilt from the proxy's arguments"), "{report}");
        let rebuilt: Value = serde_json::from_str(&text(&path)).unwrap();
        let original: Value = serde_json::from_str(&fixture(name)).unwrap();
        assert_eq!(rebuilt, original, "{name}");
        if name == "claude-code-project.json" {
            // Stdio entries with arguments, and a URL entry without headers,
            // come back byte for byte even so.
            assert_eq!(text(&path), fixture(name));
        }
    }
}

#[test]
fn a_url_entry_becomes_the_stdio_bridge_with_its_headers_in_its_environment() {
    let (_dir, path) = scratch("claude-code-user.json");
    succeeded(&wrap("claude-code", &path));
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    assert_eq!(
        wrapped["mcpServers"]["github"],
        json!({
            "type": "stdio",
            "command": "mcp-unknown-keys",
            "args": [
                "proxy", "--name", "github",
                "--url", "https://api.githubcopilot.com/mcp/",
                "--header", "Authorization: ${MUK_HEADER_1}",
                "--header", "X-MCP-Toolsets: ${MUK_HEADER_2}"
            ],
            "env": {
                "MUK_HEADER_1": "Bearer ${GITHUB_TOKEN}",
                "MUK_HEADER_2": "repos,issues"
            }
        })
    );

    // Windsurf's `serverUrl`, its `${env:…}` reference left for Windsurf.
    let (_dir, path) = scratch("windsurf.json");
    succeeded(&wrap("windsurf", &path));
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    let entry = &wrapped["mcpServers"]["remote-docs"];
    assert_eq!(
        entry["args"],
        json!([
            "proxy",
            "--name",
            "remote-docs",
            "--url",
            "https://docs.example.com/mcp",
            "--header",
            "API_KEY: ${MUK_HEADER_1}"
        ])
    );
    assert_eq!(entry["env"], json!({"MUK_HEADER_1": "${env:DOCS_API_KEY}"}));
    assert!(entry.get("serverUrl").is_none());
}

#[test]
fn a_header_secret_stays_off_the_command_line_and_unwrap_gives_it_back() {
    let original = r#"{
  "mcpServers": {
    "api": {
      "type": "http",
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer sk-live-1234", "X-Team": "core"}
    },
    "mixed": {
      "url": "https://mixed.example.com/mcp",
      "env": {"MUK_HEADER_1": "taken", "OTHER": "1"},
      "headers": {"Authorization": "Bearer sk-live-5678"}
    }
  }
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    fs::write(&path, original).unwrap();
    succeeded(&wrap("claude-code", &path));
    let wrapped = text(&path);
    let document: Value = serde_json::from_str(&wrapped).unwrap();
    for (server, secret, variable) in [
        ("api", "Bearer sk-live-1234", "MUK_HEADER_1"),
        ("mixed", "Bearer sk-live-5678", "MUK_HEADER_2"),
    ] {
        let entry = &document["mcpServers"][server];
        let args = entry["args"].to_string();
        assert!(
            !args.contains("sk-live"),
            "{server}: a secret on the command line: {args}"
        );
        assert!(
            args.contains(&format!("Authorization: ${{{variable}}}")),
            "{args}"
        );
        assert_eq!(entry["env"][variable], secret, "{server}");
        assert!(entry.get("headers").is_none(), "{server}");
    }
    assert_eq!(document["mcpServers"]["mixed"]["env"]["MUK_HEADER_1"], "taken");

    // From the backup, and rebuilt from the entry alone: the same bytes.
    succeeded(&unwrap("claude-code", &path));
    assert_eq!(text(&path), original);
    for backup in backups(dir.path()) {
        fs::remove_file(backup).unwrap();
    }
    fs::write(&path, &wrapped).unwrap();
    let report = succeeded(&unwrap("claude-code", &path));
    assert!(report.contains("api: unwrapped (rebuilt"), "{report}");
    let rebuilt = text(&path);
    let api = |text: &str| text[text.find("\"api\"").unwrap()..text.find("\"mixed\"").unwrap()].to_owned();
    assert_eq!(api(&rebuilt), api(original), "renamed back byte for byte");
    let rebuilt: Value = serde_json::from_str(&rebuilt).unwrap();
    let before: Value = serde_json::from_str(original).unwrap();
    assert_eq!(rebuilt, before);
}

#[test]
fn a_legacy_sse_server_is_left_as_it_is() {
    let (_dir, path) = scratch("claude-code-project.json");
    let report = succeeded(&wrap("claude-code", &path));
    assert!(
        report.contains("legacy: skipped: uses the legacy HTTP+SSE transport"),
        "{report}"
    );
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    let original: Value = serde_json::from_str(&fixture("claude-code-project.json")).unwrap();
    assert_eq!(wrapped["mcpServers"]["legacy"], original["mcpServers"]["legacy"]);
}

#[test]
fn env_cwd_and_every_other_field_are_kept() {
    for (host, name) in HOSTS.into_iter().filter(|(_, name)| name.ends_with(".json")) {
        let (_dir, path) = scratch(name);
        succeeded(&wrap(host, &path));
        let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
        let original: Value = serde_json::from_str(&fixture(name)).unwrap();
        for (location, servers) in server_maps(&original) {
            for (server, entry) in servers.as_object().unwrap() {
                let now = &server_maps(&wrapped)[&location][server];
                for (key, value) in entry.as_object().unwrap() {
                    if !["command", "args", "url", "serverUrl", "headers", "type"].contains(&key.as_str())
                        || (key == "type" && value == "stdio")
                    {
                        assert_eq!(&now[key], value, "{name}: {server}.{key}");
                    }
                }
            }
        }
        // And nothing outside the entries moved.
        let (mut wrapped, mut original) = (wrapped, original);
        strip_servers(&mut wrapped);
        strip_servers(&mut original);
        assert_eq!(wrapped, original, "{name}");
    }
    let sqlite = &serde_json::from_str::<Value>(&fixture("claude-desktop.json.wrapped")).unwrap()["mcpServers"]
        ["sqlite"];
    assert_eq!(sqlite["cwd"], "/Users/me/data");
    assert_eq!(sqlite["env"]["SQLITE_DB"], "/Users/me/data/app.db");
}

/// Each object of servers in a document, by where it is.
fn server_maps(document: &Value) -> std::collections::BTreeMap<String, Value> {
    let mut maps = std::collections::BTreeMap::new();
    if let Some(servers) = document.get("mcpServers") {
        maps.insert("mcpServers".to_owned(), servers.clone());
    }
    for (project, settings) in document
        .get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(servers) = settings.get("mcpServers") {
            maps.insert(format!("projects.{project}"), servers.clone());
        }
    }
    maps
}

fn strip_servers(document: &mut Value) {
    document.as_object_mut().unwrap().remove("mcpServers");
    for settings in document
        .get_mut("projects")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|projects| projects.values_mut())
    {
        settings.as_object_mut().unwrap().remove("mcpServers");
    }
}

#[test]
fn comments_are_kept() {
    let (_dir, path) = scratch("vscode.jsonc");
    succeeded(&wrap("vscode", &path));
    let wrapped = text(&path);
    for comment in [
        "// Servers for this workspace. VS Code reads this file as JSONC.\n",
        "/* The time server, in Python. */",
        "], // no timezone: the host's\n",
    ] {
        assert!(wrapped.contains(comment), "{comment:?} lost:\n{wrapped}");
    }
    // A trailing comma stays where it was.
    assert!(wrapped.contains("\"${workspaceFolder}\",\n      ],"), "{wrapped}");
}

#[test]
fn a_config_that_is_not_json_is_left_untouched_and_the_others_are_done() {
    let (dir, broken) = scratch("not-json.json");
    let good = dir.path().join("cursor.json");
    fs::write(&good, fixture("cursor.json")).unwrap();
    let output = run(&[
        "wrap",
        "--config",
        broken.to_str().unwrap(),
        "--config",
        good.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "{}: line 4, column 5: expected ',' or '}}' after a member; left as it is",
        broken.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(text(&broken), fixture("not-json.json"));
    assert_eq!(text(&good), fixture("cursor.json.wrapped"));
    assert_eq!(backups(dir.path()).len(), 1, "a backup of the good file only");
}

#[test]
fn an_unexpected_shape_is_refused_with_its_position() {
    let cases = [
        (
            "unexpected-shape.json",
            "line 2, column 17: mcpServers should be an object, not an array",
        ),
        (
            "numeric-command.json",
            "line 1, column 34: command should be a string, not a number, boolean or null",
        ),
        (
            "no-command.json",
            "line 1, column 22: a server entry needs a command or a url",
        ),
        (
            "twice.json",
            "line 1, column 39: \"command\" appears twice in one object",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("unexpected-shape.json"),
        fixture("unexpected-shape.json"),
    )
    .unwrap();
    fs::write(
        dir.path().join("numeric-command.json"),
        r#"{"mcpServers": {"a": {"command": 1}}}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("no-command.json"),
        r#"{"mcpServers": {"a": {"args": []}}}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("twice.json"),
        r#"{"mcpServers": {"a": {"command": "x", "command": "y"}}}"#,
    )
    .unwrap();
    for (name, message) in cases {
        let path = dir.path().join(name);
        let before = text(&path);
        let output = run(&["wrap", "--config", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("{}: {message}", path.display())),
            "{name}: {stderr}"
        );
        assert_eq!(text(&path), before, "{name}");
    }
    assert!(backups(dir.path()).is_empty());
}

#[test]
fn a_dry_run_prints_a_diff_and_writes_nothing() {
    let (dir, path) = scratch("claude-desktop.json");
    let output = run(&[
        "wrap",
        "--dry-run",
        "--config",
        path.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ]);
    let report = succeeded(&output);
    assert!(report.contains("dry run: nothing written"), "{report}");
    let diff = String::from_utf8(output.stdout).unwrap();
    let label = path.display();
    assert!(
        diff.starts_with(&format!("--- {label}\n+++ {label}\n@@ -1,27 +1,28 @@\n")),
        "{diff}"
    );
    for line in [
        "-      \"command\": \"npx\",\n",
        "+      \"command\": \"mcp-unknown-keys\",\n",
        "+        \"proxy\", \"--name\", \"filesystem\", \"--\", \"npx\", \"-y\",\n",
        "+      \"args\": [\"proxy\", \"--name\", \"sqlite\", \"--\", \"mcp-server-sqlite\"],\n",
        " \"globalShortcut\": \"Alt+Space\"\n",
    ] {
        assert!(diff.contains(line), "{line:?} missing from\n{diff}");
    }
    assert_eq!(text(&path), fixture("claude-desktop.json"));
    assert!(backups(dir.path()).is_empty());
}

#[test]
fn the_backup_holds_the_original_and_permissions_are_kept() {
    let (dir, path) = scratch("cursor.json");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    let report = succeeded(&wrap("cursor", &path));
    let found = backups(dir.path());
    assert_eq!(found.len(), 1);
    let backup = &found[0];
    let name = backup.file_name().unwrap().to_str().unwrap();
    let stamp = name
        .strip_prefix("cursor.json.")
        .and_then(|rest| rest.strip_suffix(".mcp-unknown-keys.bak"))
        .unwrap();
    assert!(
        stamp.len() == 16 && stamp.starts_with("20") && stamp.ends_with('Z'),
        "{name}"
    );
    assert!(
        report.contains(&format!("backup: {}", backup.display())),
        "{report}"
    );
    assert_eq!(text(backup), fixture("cursor.json"));
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o640);
    assert_eq!(mode(backup), 0o640);
    // No temporary file is left behind.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn a_linked_config_is_edited_where_it_lives_and_stays_a_link() {
    let (dir, real) = scratch("cursor.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    succeeded(&wrap("cursor", &link));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(text(&real), fixture("cursor.json.wrapped"));
}

#[test]
fn only_the_servers_named_are_touched() {
    let (_dir, path) = scratch("claude-desktop.json");
    let config = path.to_str().unwrap();
    let report = succeeded(&run(&[
        "wrap", "--config", config, "--server", "time", "--server", "fetch",
    ]));
    assert!(
        report.contains("time: wrapped") && report.contains("fetch: wrapped"),
        "{report}"
    );
    assert!(
        !report.contains("filesystem") && !report.contains("sqlite"),
        "{report}"
    );
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    assert_eq!(wrapped["mcpServers"]["filesystem"]["command"], "npx");
    assert_eq!(wrapped["mcpServers"]["time"]["args"][0], "proxy");
}

#[test]
fn a_log_dir_gives_each_server_its_own_log_file() {
    let (dir, path) = scratch("claude-desktop.json");
    let logs = dir.path().join("logs/mcp");
    succeeded(&run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
    ]));
    assert!(logs.is_dir(), "the log directory is created");
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    let log = logs.join("filesystem.jsonl");
    assert_eq!(
        wrapped["mcpServers"]["filesystem"]["args"].as_array().unwrap()[..6],
        json!([
            "proxy",
            "--name",
            "filesystem",
            "--log",
            log.to_str().unwrap(),
            "--"
        ])
        .as_array()
        .unwrap()[..]
    );
    let program = fs::canonicalize(binary()).unwrap();
    assert_eq!(
        wrapped["mcpServers"]["filesystem"]["command"],
        program.to_str().unwrap()
    );
}

#[test]
fn the_guides_before_and_after_are_what_wrap_does() {
    let guide = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/wrap.md")).unwrap();
    let start = guide.find("## Before and after, host by host").unwrap();
    let end = guide[start..].find("\n## ").map_or(guide.len(), |at| start + at);
    let hosts = [
        ("Claude Desktop", "claude-desktop"),
        ("Claude Code", "claude-code"),
        ("Cursor", "cursor"),
        ("VS Code", "vscode"),
        ("Windsurf", "windsurf"),
    ];
    let sections: Vec<&str> = guide[start..end].split("\n### ").skip(1).collect();
    assert_eq!(sections.len(), hosts.len());
    for (section, (title, host)) in sections.into_iter().zip(hosts) {
        assert!(section.starts_with(title), "{section}");
        let blocks: Vec<&str> = section
            .split("```")
            .skip(1)
            .step_by(2)
            .map(|block| block.split_once('\n').unwrap().1)
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        fs::write(&path, blocks[0]).unwrap();
        succeeded(&wrap(host, &path));
        assert_eq!(text(&path), blocks[1], "{title}");
    }
}

/// The binary placed at `relative` under `dir`, as a package manager
/// installs it (a link is no use: the binary reads its real path).
fn installed_at(dir: &Path, relative: &str) -> std::path::PathBuf {
    let exe = dir.join(relative);
    fs::create_dir_all(exe.parent().unwrap()).unwrap();
    if fs::hard_link(binary(), &exe).is_err() {
        fs::copy(binary(), &exe).unwrap();
    }
    exe
}

#[test]
fn run_from_a_package_managers_cache_wrap_writes_the_launcher_pinned() {
    let version = env!("CARGO_PKG_VERSION");
    let cases = [
        (
            ".npm/_npx/0a1b2c/node_modules/mcp-unknown-keys-linux-x64-gnu/mcp-unknown-keys",
            format!("npx -y mcp-unknown-keys@{version}"),
            format!(r#""args": ["-y", "mcp-unknown-keys@{version}", "proxy", "--name", "sqlite""#),
        ),
        (
            ".cache/uv/archive-v0/EA7JV5tRMNHu/bin/mcp-unknown-keys",
            format!("uvx mcp-unknown-keys@{version}"),
            format!(r#""args": ["mcp-unknown-keys@{version}", "proxy", "--name", "sqlite""#),
        ),
    ];
    for (relative, said, written) in cases {
        let (dir, path) = scratch("claude-desktop.json");
        let exe = installed_at(dir.path(), relative);
        let config = path.to_str().unwrap();
        let dry = std::process::Command::new(&exe)
            .args(["wrap", "--dry-run", "--config", config])
            .env("PATH", "/usr/bin:/bin")
            .env_remove("UV_CACHE_DIR")
            .output()
            .unwrap();
        let report = succeeded(&dry);
        assert!(
            report.contains(&format!("hosts will run the proxy as: {said} (")),
            "{report}"
        );
        let wrapped = std::process::Command::new(&exe)
            .args(["wrap", "--config", config])
            .env_remove("UV_CACHE_DIR")
            .output()
            .unwrap();
        succeeded(&wrapped);
        let written_text = text(&path);
        assert!(written_text.contains(&written), "{written_text}");
        assert!(
            !written_text.contains(dir.path().to_str().unwrap()),
            "no cache path: {written_text}"
        );
        let again = run(&["wrap", "--config", config, "--command", "mcp-unknown-keys"]);
        assert!(succeeded(&again).contains("sqlite: already wrapped"));
        succeeded(&run(&["unwrap", "--config", config]));
        assert_eq!(text(&path), fixture("claude-desktop.json"));
    }
}
