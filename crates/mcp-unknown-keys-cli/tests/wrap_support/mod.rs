//! Shared by the `wrap` tests: the fixtures, scratch copies of them, and
//! the binary run where no real configuration can be touched.

#![allow(dead_code)] // each test file uses a part

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::binary;

/// Each host, the fixture written as it writes its configuration, and the
/// golden file of that fixture wrapped with `--command mcp-unknown-keys`.
pub const HOSTS: [(&str, &str); 6] = [
    ("claude-desktop", "claude-desktop.json"),
    ("claude-code", "claude-code-user.json"),
    ("claude-code", "claude-code-project.json"),
    ("cursor", "cursor.json"),
    ("vscode", "vscode.jsonc"),
    ("windsurf", "windsurf.json"),
];

pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wrap")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A scratch folder with `name` in it, holding the fixture `name`.
pub fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    fs::write(&path, fixture(name)).unwrap();
    (dir, path)
}

/// Runs the binary with `args`, in an environment that names no real
/// configuration folder.
pub fn run(args: &[&str]) -> Output {
    command(args).output().unwrap()
}

pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command.args(args);
    for var in [
        "XDG_CONFIG_HOME",
        "APPDATA",
        "CLAUDE_CONFIG_DIR",
        "XDG_STATE_HOME",
        "MCP_UNKNOWN_KEYS_STATE_DIR",
    ] {
        command.env_remove(var);
    }
    // `unwrap` of a Claude Code file reads the settings of its scope: never
    // the real user's. A test that means a home gives its own.
    command.env(
        "HOME",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("wrap-tests-no-home"),
    );
    command
}

pub fn succeeded(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    stderr
}

pub fn text(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

pub fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".mcp-unknown-keys.bak"))
        .collect();
    found.sort();
    found
}

pub fn wrap(host: &str, path: &Path) -> Output {
    run(&[
        "wrap",
        "--host",
        host,
        "--config",
        path.to_str().unwrap(),
        "--command",
        "mcp-unknown-keys",
    ])
}

pub fn unwrap(host: &str, path: &Path) -> Output {
    run(&["unwrap", "--host", host, "--config", path.to_str().unwrap()])
}
