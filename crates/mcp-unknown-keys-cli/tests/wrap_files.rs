//! `wrap` and `unwrap` on the files around a configuration: what is not a
//! regular file, what is too large, what its user made read-only, and the
//! log files `--log-dir` names.

use crate::support;
use crate::wrap_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;
use support::wait_with_patience;
use wrap_support::{backups, command, fixture, run, scratch, succeeded, text};

/// Runs the binary, failing (not hanging) when it does not exit in time.
fn run_with_patience(args: &[&str]) -> Output {
    let mut child = command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_with_patience(&mut child);
    child.wait_with_output().unwrap()
}

fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

#[test]
fn what_is_not_a_regular_file_is_refused_without_waiting_or_reading_forever() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("mcp.json");
    mkfifo(&fifo);
    for (path, kind) in [
        (fifo.to_str().unwrap(), "a FIFO"),
        ("/dev/zero", "a character device"),
        (dir.path().to_str().unwrap(), "a directory"),
    ] {
        for verb in ["wrap", "unwrap"] {
            let stderr = refused(&run_with_patience(&[verb, "--config", path]));
            assert!(
                stderr.contains(&format!("not a regular file but {kind}")),
                "{verb} {path}: {stderr}"
            );
        }
    }
}

#[test]
fn a_backup_that_is_not_a_regular_file_is_passed_over() {
    let (dir, path) = scratch("cursor.json");
    succeeded(&run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ]));
    for backup in backups(dir.path()) {
        fs::remove_file(backup).unwrap();
    }
    // Named like a backup, newer than any: reading it would wait forever.
    mkfifo(
        &dir.path()
            .join("cursor.json.29991231T235959Z.mcp-unknown-keys.bak"),
    );
    let output = run_with_patience(&["unwrap", "--config", path.to_str().unwrap()]);
    let report = succeeded(&output);
    assert!(report.contains("unwrapped (rebuilt"), "{report}");
}

#[test]
fn a_file_larger_than_any_configuration_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    // Sparse: 64 MiB and one byte, of NULs, which are UTF-8.
    fs::File::create(&path).unwrap().set_len((64 << 20) + 1).unwrap();
    let stderr = refused(&run_with_patience(&["wrap", "--config", path.to_str().unwrap()]));
    assert!(
        stderr.contains("larger than 64 MiB: not an MCP configuration"),
        "{stderr}"
    );
}

#[test]
fn a_read_only_file_is_refused_even_for_root() {
    let (dir, path) = scratch("claude-desktop.json");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let output = run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ]);
    let stderr = refused(&output);
    assert!(
        stderr.contains("read-only (mode 0444): nothing written; make it writable (chmod u+w)"),
        "{stderr}"
    );
    assert_eq!(text(&path), fixture("claude-desktop.json"));
    assert!(backups(dir.path()).is_empty(), "no backup of an unchanged file");
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o444);

    // A dry run still shows what would change; writable again, it is done.
    let dry = succeeded(&run(&["wrap", "--config", path.to_str().unwrap(), "--dry-run"]));
    assert!(
        dry.contains("without --dry-run, refused: it is read-only (mode 0444)"),
        "{dry}"
    );
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    succeeded(&run(&["wrap", "--config", path.to_str().unwrap()]));
}

#[test]
fn a_server_name_too_long_for_a_file_name_gets_a_log_file_that_can_be_made() {
    let long = "a".repeat(300);
    let other = format!("{}b", "a".repeat(299));
    let config = format!(
        r#"{{"mcpServers": {{"{long}": {{"command": "x"}}, "{other}": {{"command": "y"}}, "short": {{"command": "z"}}}}}}"#
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    fs::write(&path, config).unwrap();
    let logs = dir.path().join("logs");
    succeeded(&run(&[
        "wrap",
        "--config",
        path.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
    ]));
    let wrapped: Value = serde_json::from_str(&text(&path)).unwrap();
    let log = |server: &str| {
        let args = wrapped["mcpServers"][server]["args"].as_array().unwrap().clone();
        assert_eq!(args[3], "--log");
        args[4].as_str().unwrap().to_owned()
    };
    let (first, second) = (log(&long), log(&other));
    assert_ne!(first, second, "two long names keep files of their own");
    assert_eq!(log("short"), logs.join("short.jsonl").to_str().unwrap());
    for file in [&first, &second] {
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        assert!(name.len() <= 143 && name.ends_with(".jsonl"), "{name}");
        assert!(name.starts_with("aaaa"), "{name}");
        fs::write(file, "").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
