//! What `wrap` and `unwrap` print never holds a secret the configuration
//! gives: a header value, a URL's userinfo or query, an `env` value. The
//! dry run's diff shows each as the variable that holds it (`${MUK_…}`,
//! or an `env` member's own name); the reports and errors never quote a
//! value.

use crate::wrap_support;

use std::fs;
use std::process::Output;

use wrap_support::{run, succeeded, text};

/// Every secret of [`SERVERS`]: none may be printed.
const SECRETS: [&str; 8] = [
    "sk-header-1",
    "sk-userinfo-2",
    "sk-query-3",
    "sk-env-4",
    "sk-args-5",
    "sk-other-6",
    "sk-windsurf-7",
    "hunter2",
];

const SERVERS: &str = r#"{
  "primaryApiKey": "sk-other-6",
  "mcpServers": {
    "remote": {
      "type": "http",
      "url": "https://me:sk-userinfo-2@mcp.example.com/mcp?token=sk-query-3&region=eu",
      "headers": {
        "Authorization": "Bearer sk-header-1",
        "X-Password": "hunter2"
      }
    },
    "both": {
      "url": "https://mcp.example.com/mcp?api_key=sk-query-3",
      "env": {"EXISTING": "sk-env-4"},
      "headers": {"Authorization": "Bearer sk-header-1"}
    },
    "local": {
      "command": "npx",
      "args": ["mcp-remote", "https://me:sk-args-5@mcp.example.com/mcp", "--header", "Authorization: Bearer sk-args-5"],
      "env": {
        "GITHUB_TOKEN": "sk-env-4"
      }
    }
  }
}
"#;

fn output_of(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn assert_no_secret(printed: &str) {
    for secret in SECRETS {
        assert!(!printed.contains(secret), "{secret} printed:\n{printed}");
    }
}

#[test]
fn a_dry_run_diff_names_the_variables_never_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    fs::write(&path, SERVERS).unwrap();
    let config = path.to_str().unwrap();
    let dry = run(&[
        "wrap",
        "--config",
        config,
        "--command",
        "mcp-unknown-keys",
        "--dry-run",
    ]);
    succeeded(&dry);
    let printed = output_of(&dry);
    assert_no_secret(&printed);
    // The diff still says what moves where, by the variables' names.
    for line in [
        "-      \"url\": \"https://${MUK_URL_1}@mcp.example.com/mcp?${MUK_URL_2}\",\n",
        "+        \"MUK_HEADER_1\": \"${MUK_HEADER_1}\",\n",
        "+        \"MUK_HEADER_2\": \"${MUK_HEADER_2}\"",
        "\"env\": {\"EXISTING\": \"${EXISTING}\"",
        "\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"",
    ] {
        assert!(printed.contains(line), "{line:?} missing from\n{printed}");
    }
    assert_eq!(text(&path), SERVERS, "a dry run writes nothing");

    // Wrapped for real, the report says nothing of the values either; and
    // unwrap's dry run, which puts them back, shows none of them.
    let wrapped = run(&["wrap", "--config", config, "--command", "mcp-unknown-keys"]);
    assert_no_secret(&output_of(&wrapped));
    succeeded(&wrapped);
    for args in [
        &["unwrap", "--config", config, "--dry-run"][..],
        &["wrap", "--config", config, "--dry-run"],
        &["unwrap", "--config", config],
    ] {
        let output = run(args);
        succeeded(&output);
        assert_no_secret(&output_of(&output));
    }
    assert_eq!(text(&path), SERVERS, "unwrap gives every value back");
}

#[test]
fn an_unwrap_dry_run_without_a_backup_hides_the_values_it_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp_config.json");
    let original = r#"{"mcpServers": {"docs": {"serverUrl": "https://docs.example.com/mcp?key=sk-windsurf-7", "headers": {"Authorization": "Bearer sk-header-1"}}}}"#;
    fs::write(&path, original).unwrap();
    let config = path.to_str().unwrap();
    succeeded(&run(&[
        "wrap",
        "--config",
        config,
        "--command",
        "mcp-unknown-keys",
    ]));
    for backup in wrap_support::backups(dir.path()) {
        fs::remove_file(backup).unwrap();
    }
    let dry = run(&["unwrap", "--config", config, "--dry-run"]);
    succeeded(&dry);
    let printed = output_of(&dry);
    assert_no_secret(&printed);
    assert!(
        printed.contains("\"serverUrl\": \"https://docs.example.com/mcp?${MUK_URL_1}\""),
        "{printed}"
    );
}

#[test]
fn an_error_in_a_configuration_quotes_none_of_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        r#"{"mcpServers": {"r": {"url": "https://a.test/mcp?k=sk-query-3", "headers": {"A": "sk-header-1"}, "env": 12}}}"#,
        r#"{"mcpServers": {"r": {"url": "https://a.test/mcp", "headers": {"A": 12, "B": "sk-header-1"}}}}"#,
        r#"{"mcpServers": {"r": {"url": "https://a.test/mcp", "headers": {"A": "sk-header-1" "B": 1}}}}"#,
        "{\"mcpServers\": {\"r\": {\"command\": \"x\", \"env\": {\"T\": \"sk-env-4\u{1}\"}}}}",
    ];
    for (n, case) in cases.iter().enumerate() {
        let path = dir.path().join(format!("{n}.mcp.json"));
        fs::write(&path, case).unwrap();
        let output = run(&[
            "wrap",
            "--config",
            path.to_str().unwrap(),
            "--host",
            "claude-code",
            "--dry-run",
        ]);
        assert_eq!(output.status.code(), Some(2), "{case}: {}", output_of(&output));
        assert_no_secret(&output_of(&output));
    }
}
