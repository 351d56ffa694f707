//! `mcp-unknown-keys --version` names the version and the commit the
//! binary was built from.

use crate::support;

use std::process::Command;

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let output = Command::new(support::binary()).arg("--version").output().unwrap();
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    // The tests run from the repository, so git can say which commit that is.
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    assert!(head.status.success(), "the tests run in a git checkout");
    let commit = String::from_utf8(head.stdout).unwrap();
    assert_eq!(
        printed,
        format!(
            "mcp-unknown-keys {} (commit {})\n",
            env!("CARGO_PKG_VERSION"),
            commit.trim()
        )
    );
}
