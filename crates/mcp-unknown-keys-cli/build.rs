//! Puts the commit the binary was built from into `--version`:
//! `MCP_UNKNOWN_KEYS_VERSION` is `0.1.0 (commit abc1234)`, or `0.1.0` when
//! the commit cannot be told.
//!
//! A crate built from its registry tarball has no git, but cargo packaged
//! `.cargo_vcs_info.json` with the commit it was published from: that is
//! read first, so a tarball unpacked inside some other repository never
//! reports that repository's commit. Otherwise `git rev-parse` is asked,
//! and the build reruns when HEAD moves.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let commit = packaged_commit(&manifest).or_else(|| git_commit(&manifest));
    let full = match commit {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version,
    };
    println!("cargo:rustc-env=MCP_UNKNOWN_KEYS_VERSION={full}");
    println!("cargo:rerun-if-changed=build.rs");
}

/// The commit in `.cargo_vcs_info.json`, written by `cargo package`.
fn packaged_commit(manifest: &Path) -> Option<String> {
    let info = manifest.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&info).ok()?;
    watch(&info);
    let after = text.split("\"sha1\"").nth(1)?;
    let sha: String = after
        .trim_start_matches(|c: char| c == ':' || c == '"' || c.is_whitespace())
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() >= 7).then(|| sha[..7].to_owned())
}

/// `git rev-parse --short HEAD`, with the files that move HEAD watched.
fn git_commit(manifest: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(args)
            .current_dir(manifest)
            .output()
            .ok()?;
        let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
        (output.status.success() && !text.is_empty()).then_some(text)
    };
    let commit = git(&["rev-parse", "--short", "HEAD"])?;
    // HEAD names a branch (or a commit); the branch's ref file, or
    // packed-refs, moves on each commit, and HEAD's log grows on each
    // commit and checkout. In a worktree HEAD is per worktree and refs are
    // shared, hence git is asked for each path.
    for path in ["HEAD", "logs/HEAD", "packed-refs"] {
        if let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", path]) {
            watch(Path::new(&file));
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", &branch])
    {
        watch(Path::new(&file));
    }
    Some(commit)
}

/// Reruns the build when `file` changes. Only a file that exists: cargo
/// reruns on every build for one that does not.
fn watch(file: &Path) {
    if file.exists() {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}
