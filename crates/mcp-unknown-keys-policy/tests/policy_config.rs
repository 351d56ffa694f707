//! The policy the library guide shows, read from the guide itself: it
//! loads, and each rule decides as the guide says.

use crate::policy_support;

use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::command::Command;
use mcp_unknown_keys_policy::{PolicyConfig, Tristate};
use policy_support::{Fate, Harness};
use serde_json::json;

/// The first JSON block after the guide's "Policy rules" heading.
fn documented_policy() -> String {
    let guide = include_str!("../../../docs/library.md");
    let section = &guide[guide
        .find("### Policy rules")
        .expect("the guide has a Policy rules section")..];
    let start = section.find("```json\n").expect("it shows a policy") + "```json\n".len();
    let end = start + section[start..].find("```").expect("the block ends");
    section[start..end].to_owned()
}

fn deploys(command: &Command) -> Tristate {
    match command.is_complete() {
        true if command.args.iter().any(|target| target == "deploy") => Tristate::Yes,
        true => Tristate::No,
        false => Tristate::Unknown,
    }
}

#[tokio::test]
async fn the_documented_policy_decides_as_documented() {
    let config = PolicyConfig::from_json(&documented_policy()).unwrap();
    assert_eq!(config.rules.len(), 6);
    let harness = Harness::new(PolicyLayer::from_config(config).check("deploys", deploys));
    let shell = |command: &str| json!({ "command": command });
    let cases = [
        ("fs_read", json!({"path": "src/main.rs"}), Fate::Allowed),
        ("fs_read", json!({"path": "secrets/key.pem"}), Fate::Denied),
        (
            "fs_write",
            json!({"path": "/srv/project/secrets/x"}),
            Fate::Denied,
        ),
        (
            "web_fetch",
            json!({"url": "https://api.docs.rs/x"}),
            Fate::Allowed,
        ),
        ("web_fetch", json!({"url": "https://docs.rs/x"}), Fate::Asked),
        (
            "shell_run",
            shell("cargo test && cargo build --release"),
            Fate::Allowed,
        ),
        ("shell_run", shell("cargo test && rm -rf target"), Fate::Asked),
        ("shell_run", shell("kubectl delete pods --all"), Fate::Asked),
        ("shell_run", shell("kubectl delete pod web-1"), Fate::Asked),
        ("shell_run", shell("git push -f"), Fate::Asked),
        ("shell_run", shell("make deploy"), Fate::Denied),
        ("shell_run", shell("make $TARGET"), Fate::Denied),
        ("shell_run", shell("rm -rf ~"), Fate::Denied),
        (
            "ci_run",
            json!({"script": "echo x > /srv/agent/policy.json"}),
            Fate::Denied,
        ),
    ];
    for (tool, arguments, expected) in cases {
        assert_eq!(
            harness.fate(tool, arguments.clone()).await,
            expected,
            "{tool} {arguments}"
        );
    }
    harness
        .fate("shell_run", shell("kubectl delete pods --all"))
        .await;
    let question = harness.last_question();
    assert!(question.is_danger());
    assert_eq!(
        question.rule.unwrap().note.as_deref(),
        Some("deletes every resource of a kind")
    );
    harness.fate("shell_run", shell("kubectl delete pod web-1")).await;
    assert!(!harness.last_question().is_danger(), "no rule: a plain ask");
}
