//! Grants: a human's "always" answers, kept in a store a fleet of policies
//! reads live, and what they may never override.

use crate::common;
use crate::policy_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::Toolkit;
use mcp_unknown_keys::{Provider, ToolCall};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, Grants, Policy, Question, Rule};
use policy_support::{Fate, Harness, rules};
use serde_json::json;
use tokio::sync::Barrier;
use tower_layer::Layer;

fn write(path: &str) -> serde_json::Value {
    json!({ "path": path })
}

#[test]
fn a_store_round_trips_through_json() {
    let grants = Grants::new(rules(
        r#"[{"tool": "fs_write", "decision": "allow", "under": "notes"},
            {"tool": "web_fetch", "decision": "allow", "host": "*.docs.rs"},
            {"tool": "shell_run", "decision": "deny", "command": "git", "args": ["push"]}]"#,
    ));
    let json = serde_json::to_string(&grants).unwrap();
    let again: Grants = serde_json::from_str(&json).unwrap();
    assert_eq!(again, grants);
    assert_eq!(again.len(), 3);
    assert!(serde_json::from_str::<Grants>(r#"[{"tool": "x", "decision": "allow", "undr": "a"}]"#).is_err());
    assert!(Grants::default().is_empty());
}

#[tokio::test]
async fn policies_sharing_a_store_read_each_others_grants_live() {
    let store = Grants::default();
    let layer = PolicyLayer::new(Vec::new()).grant_store(store.clone());
    let parent = Harness::answering(layer.clone(), Answer::AlwaysAllow(None));
    let child = Harness::new(layer);

    assert_eq!(child.fate("fs_write", write("notes/a.md")).await, Fate::Asked);
    assert_eq!(parent.fate("fs_write", write("notes/a.md")).await, Fate::Asked);
    assert_eq!(
        store.list(),
        [Rule::allow("fs_write").unwrap().under("notes").unwrap()]
    );
    assert_eq!(
        child.fate("fs_write", write("notes/b.md")).await,
        Fate::Allowed,
        "the parent's grant is in force for the child at its next call"
    );
    assert_eq!(child.policy.grants(), parent.policy.grants());

    store.add(Rule::allow("fs_task").unwrap());
    assert_eq!(
        child.fate("fs_task", json!({})).await,
        Fate::Allowed,
        "a grant the host added"
    );
    let later = Harness::new(PolicyLayer::new(Vec::new()).grant_store(store.clone()));
    assert_eq!(
        later.fate("fs_write", write("notes/c.md")).await,
        Fate::Allowed,
        "a policy built later"
    );
}

#[tokio::test]
async fn without_a_store_each_policy_keeps_its_own() {
    let layer = PolicyLayer::new(Vec::new());
    let one = Harness::answering(layer.clone(), Answer::AlwaysAllow(None));
    let other = Harness::new(layer);
    one.fate("fs_write", write("notes/a.md")).await;
    assert_eq!(other.fate("fs_write", write("notes/b.md")).await, Fate::Asked);
    assert!(other.policy.grants().is_empty());
}

#[tokio::test]
async fn on_grant_runs_after_the_lock_is_released() {
    let store = Grants::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (record, inside) = (seen.clone(), store.clone());
    let layer = PolicyLayer::new(Vec::new()).grant_store(store.clone()).on_grant(
        move |grant: &Rule, all: &[Rule]| {
            // Reading and writing the store here would deadlock were its
            // lock still held.
            let listed = inside.list();
            inside.add(Rule::deny("fs_task").unwrap());
            record.lock().unwrap().push((grant.clone(), all.to_vec(), listed));
        },
    );
    let harness = Harness::answering(layer, Answer::AlwaysAllow(None));
    harness.fate("fs_write", write("notes/a.md")).await;

    let seen = seen.lock().unwrap();
    let grant = Rule::allow("fs_write").unwrap().under("notes").unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, grant);
    assert_eq!(seen[0].1, std::slice::from_ref(&grant));
    assert_eq!(seen[0].2, [grant]);
    assert_eq!(store.len(), 2);
}

#[tokio::test]
async fn a_panicking_on_grant_changes_nothing() {
    let layer = PolicyLayer::new(Vec::new()).on_grant(|_: &Rule, _: &[Rule]| panic!("the disk is full"));
    let harness = Harness::answering(layer, Answer::AlwaysAllow(None));
    let results = harness
        .policy
        .execute_tool_calls(vec![ToolCall::new("1", "fs_write", write("notes/a.md"))])
        .await
        .unwrap();
    assert!(!results[0].is_error);
    assert_eq!(harness.policy.grants().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_asks_with_a_shared_store_lose_no_grant() {
    const AGENTS: usize = 8;
    let store = Grants::default();
    let granted = Arc::new(AtomicUsize::new(0));
    // Every agent's question is open at once before any is answered.
    let all_asked = Arc::new(Barrier::new(AGENTS));
    let counter = granted.clone();
    let layer = PolicyLayer::new(Vec::new())
        .grant_store(store.clone())
        .on_grant(move |_: &Rule, _: &[Rule]| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .on_ask_async(move |question: Question| {
            let all_asked = all_asked.clone();
            async move {
                all_asked.wait().await;
                Answer::AlwaysAllow(question.suggested_grant)
            }
        });
    let agents: Vec<Arc<Policy<Toolkit>>> = (0..AGENTS)
        .map(|_| Arc::new(layer.layer(Toolkit::new(Vec::new()).0)))
        .collect();

    let tasks: Vec<_> = agents
        .iter()
        .enumerate()
        .map(|(index, agent)| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let call = ToolCall::new("1", "fs_write", write(&format!("dir{index}/file")));
                agent.execute_tool_calls(vec![call]).await.unwrap()
            })
        })
        .collect();
    for task in tasks {
        assert!(!task.await.unwrap()[0].is_error);
    }

    assert_eq!(store.len(), AGENTS);
    assert_eq!(granted.load(Ordering::SeqCst), AGENTS);
    // Any agent may now write where any other was allowed, unasked.
    let first = &agents[0];
    for index in 0..AGENTS {
        let call = ToolCall::new("2", "fs_write", write(&format!("dir{index}/other")));
        assert!(!first.execute_tool_calls(vec![call]).await.unwrap()[0].is_error);
    }
}

#[tokio::test]
async fn a_grant_never_overrides_a_static_deny() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "shell_run", "decision": "deny", "command": "rm"},
            {"tool": "fs_write", "decision": "deny", "under": "secrets"}]"#,
    ))
    .grants(rules(
        r#"[{"tool": "shell_run", "decision": "allow"}, {"tool": "fs_write", "decision": "allow"}]"#,
    ));
    let harness = Harness::new(layer);
    assert_eq!(
        harness.fate("shell_run", json!({"command": "rm x"})).await,
        Fate::Denied
    );
    assert_eq!(
        harness.fate("shell_run", json!({"command": "ls && rm x"})).await,
        Fate::Denied
    );
    assert_eq!(harness.fate("fs_write", write("secrets/key")).await, Fate::Denied);
    assert_eq!(
        harness.fate("shell_run", json!({"command": "ls"})).await,
        Fate::Allowed
    );
    assert_eq!(harness.fate("fs_write", write("notes/a")).await, Fate::Allowed);
}

#[tokio::test]
async fn grants_cover_each_command_the_rules_ask_about() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "shell_run", "decision": "allow", "command": "git"}]"#,
    ))
    .grants(rules(
        r#"[{"tool": "shell_run", "decision": "allow", "command": "make"}]"#,
    ));
    let harness = Harness::new(layer);
    assert_eq!(
        harness
            .fate("shell_run", json!({"command": "git pull && make"}))
            .await,
        Fate::Allowed
    );
    assert_eq!(
        harness
            .fate("shell_run", json!({"command": "git pull && make && ls"}))
            .await,
        Fate::Asked
    );
}

#[tokio::test]
async fn suggestions_go_from_directory_to_host_to_program_to_tool() {
    let harness = Harness::new(
        PolicyLayer::new(Vec::new()).root("fs_", mcp_unknown_keys_policy::Dir::new("/srv").unwrap()),
    );
    let suggested = |harness: &Harness| harness.last_question().suggested_grant.unwrap();
    let tool = |name: &str| Rule::allow(name).unwrap();

    harness
        .fate("fs_write", json!({"from": "/srv/notes/a/x", "to": "notes/b/y"}))
        .await;
    assert_eq!(
        suggested(&harness),
        tool("fs_write").under("notes").unwrap(),
        "under the root"
    );
    harness
        .fate("web_fetch", json!({"url": "https://docs.rs/x"}))
        .await;
    assert_eq!(suggested(&harness), tool("web_fetch").host("docs.rs").unwrap());
    harness
        .fate("shell_run", json!({"command": "cargo test -q"}))
        .await;
    assert_eq!(suggested(&harness), tool("shell_run").command("cargo").unwrap());
    harness
        .fate("shell_run", json!({"command": "cargo test | tee log"}))
        .await;
    assert_eq!(suggested(&harness), tool("shell_run"));
    harness.fate("fs_task", json!({"prompt": "p"})).await;
    assert_eq!(suggested(&harness), tool("fs_task"));
}
