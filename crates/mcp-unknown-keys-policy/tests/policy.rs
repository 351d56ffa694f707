//! The `Policy` layer, rule by rule, over an in-process provider.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{Answering, Received, Toolkit, declaration};
use mcp_unknown_keys::{Provider, ToolCall, ToolResult};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{
    Answer, Decision, Dir, PathArgument, Policy, PolicyConfig, Question, Rule, ToolPattern, default_rules,
};
use serde_json::json;
use tower_layer::Layer;

fn rules(json: &str) -> Vec<Rule> {
    serde_json::from_str(json).unwrap()
}

/// A policy over the example server's tools with these rules and no one to
/// ask.
fn policy(layer: PolicyLayer) -> (Policy<Toolkit>, Received) {
    let (toolkit, received) = Toolkit::files();
    (layer.layer(toolkit), received)
}

/// Runs one call and tells whether it was run.
async fn runs(policy: &Policy<Toolkit>, tool: &str, arguments: &str) -> bool {
    let results = policy
        .execute_tool_calls(vec![ToolCall::new("c", tool, arguments)])
        .await
        .unwrap();
    assert_eq!(results.len(), 1);
    !results[0].is_error
}

/// A layer with these rules that records every question and answers each
/// with `answer`.
fn answering(rules: Vec<Rule>, answer: Answer) -> (PolicyLayer, Arc<Mutex<Vec<Question>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let layer = PolicyLayer::new(rules).on_ask(move |question: &Question| {
        record.lock().unwrap().push(question.clone());
        answer.clone()
    });
    (layer, asked)
}

fn ids(results: &[ToolResult]) -> Vec<&str> {
    results.iter().map(|r| r.tool_call_id.as_str()).collect()
}

// --- Construction ---

#[test]
fn patterns_are_names_or_prefixes_followed_by_a_star() {
    let name = ToolPattern::new("fs_read").unwrap();
    assert!(name.matches("fs_read"));
    assert!(!name.matches("fs_read2"));
    assert!(!name.matches("fs_rea"));

    let prefix = ToolPattern::new("fs_*").unwrap();
    assert!(prefix.matches("fs_write"));
    assert!(prefix.matches("fs_"));
    assert!(!prefix.matches("git_fs_write"));

    assert!(ToolPattern::new("*").unwrap().matches("anything"));
}

#[test]
fn bad_globs_are_construction_errors() {
    for bad in [
        "",
        "*fs",
        "fs_*_write",
        "**",
        "fs_?",
        "fs_[rw]*",
        "fs_{read,list}",
    ] {
        assert!(ToolPattern::new(bad).is_err(), "{bad:?} was accepted");
        let json = format!(r#"[{{"tool": {}, "decision": "allow"}}]"#, json!(bad));
        let error = serde_json::from_str::<Vec<Rule>>(&json).unwrap_err();
        assert!(error.to_string().contains("pattern"), "{error}");
    }
}

#[test]
fn unknown_rule_keys_are_construction_errors() {
    let error =
        serde_json::from_str::<Vec<Rule>>(r#"[{"tool": "fs_read", "decison": "allow"}]"#).unwrap_err();
    assert!(error.to_string().contains("unknown field `decison`"), "{error}");
    assert!(serde_json::from_str::<Vec<Rule>>(r#"[{"tool": "fs_read", "decision": "maybe"}]"#).is_err());
    assert!(serde_json::from_str::<Vec<Rule>>(r#"[{"tool": "fs_read"}]"#).is_err());
    assert!(PolicyConfig::from_json(r#"{"rules": [], "root": {}}"#).is_err());
}

#[test]
fn directories_that_cannot_be_placed_lexically_are_construction_errors() {
    for bad in ["", "src/../secrets", "..", "a\\b", "a\0b", "file:///srv"] {
        assert!(Dir::new(bad).is_err(), "{bad:?} was accepted");
    }
    assert!(
        serde_json::from_str::<Rule>(r#"{"tool": "fs_*", "decision": "deny", "under": "../x"}"#).is_err()
    );
    assert!(PolicyConfig::from_json(r#"{"roots": {"fs_": "/srv/../etc"}}"#).is_err());
}

#[test]
fn rules_and_configurations_round_trip_through_json() {
    let config = PolicyConfig::from_json(
        r#"{"rules": [{"tool": "fs_*", "decision": "deny", "under": "secrets"}],
            "roots": {"fs_": "/srv"}, "path_arguments": {"fs_task": ["cwd"]}, "hide_denied": false}"#,
    )
    .unwrap();
    let again = PolicyConfig::from_json(&serde_json::to_string(&config).unwrap()).unwrap();
    assert_eq!(again, config);
    assert_eq!(config.default_path_arguments, ["path", "from", "to"]);
}

// --- Decisions ---

#[tokio::test]
async fn deny_wins_over_ask_and_ask_over_allow() {
    let (layer, asked) = answering(
        rules(
            r#"[{"tool": "fs_*", "decision": "allow"},
                {"tool": "fs_write", "decision": "ask"},
                {"tool": "fs_task", "decision": "ask"},
                {"tool": "fs_task", "decision": "deny"}]"#,
        ),
        Answer::DenyOnce,
    );
    let (policy, _) = policy(layer);

    assert!(runs(&policy, "fs_read", "{}").await, "allow alone");
    assert!(
        !runs(&policy, "fs_write", "{}").await,
        "ask over allow: asked, and refused"
    );
    assert!(!runs(&policy, "fs_task", "{}").await, "deny over ask");
    let asked = asked.lock().unwrap();
    assert_eq!(
        asked.iter().map(|q| q.tool.as_str()).collect::<Vec<_>>(),
        ["fs_write"]
    );
    assert_eq!(asked[0].rule, Some(Rule::ask("fs_write").unwrap()));
}

#[tokio::test]
async fn no_matching_rule_means_ask() {
    let (layer, asked) = answering(Vec::new(), Answer::AllowOnce);
    let (policy, _) = policy(layer);
    assert!(runs(&policy, "fs_write", r#"{"path":"a"}"#).await);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].rule, None);
}

#[tokio::test]
async fn without_a_callback_every_ask_is_refused_in_words_for_the_model() {
    let (policy, received) = policy(PolicyLayer::new(default_rules()));
    let results = policy
        .execute_tool_calls(vec![ToolCall::new(
            "w",
            "fs_write",
            r#"{"path":"a","content":""}"#,
        )])
        .await
        .unwrap();

    assert!(results[0].is_error);
    assert_eq!(results[0].tool_call_id, "w");
    assert_eq!(
        results[0].content,
        "fs_write was not run: it needs the user's approval, and no one is here to give it."
    );
    assert!(received.calls().is_empty());
}

#[tokio::test]
async fn a_deny_rule_says_which_rule_refused() {
    let (policy, _) = policy(PolicyLayer::new(rules(
        r#"[{"tool": "fs_*", "decision": "deny", "under": "secrets"}]"#,
    )));
    let results = policy
        .execute_tool_calls(vec![ToolCall::new(
            "r",
            "fs_read",
            r#"{"path":"secrets/key.pem"}"#,
        )])
        .await
        .unwrap();
    assert_eq!(
        results[0].content,
        "fs_read was not run: the permission policy denies it (deny fs_* under secrets)."
    );
}

#[tokio::test]
async fn default_rules_allow_the_read_only_tools_and_ask_about_the_rest() {
    let (layer, asked) = answering(Policy::default_rules(), Answer::DenyOnce);
    let (policy, _) = policy(layer);

    assert!(runs(&policy, "fs_read", r#"{"path":"a"}"#).await);
    assert!(runs(&policy, "fs_list", "{}").await);
    assert!(!runs(&policy, "fs_write", r#"{"path":"a"}"#).await);
    assert!(!runs(&policy, "fs_task", r#"{"prompt":"p"}"#).await);
    let asked = asked.lock().unwrap();
    assert_eq!(
        asked.iter().map(|q| q.tool.as_str()).collect::<Vec<_>>(),
        ["fs_write", "fs_task"]
    );
}

#[tokio::test]
async fn the_provider_never_sees_a_refused_call_and_gets_the_allowed_ones_as_one_batch() {
    let (policy, received) = policy(PolicyLayer::new(rules(
        r#"[{"tool": "fs_read", "decision": "allow"}, {"tool": "fs_list", "decision": "allow"},
            {"tool": "fs_write", "decision": "deny"}]"#,
    )));
    let read: ToolCall = json!({"id": "1", "index": 0, "x-vendor": 1,
        "function": {"name": "fs_read", "arguments": "{ \"path\" : \"a\", \"reason\": \"r\" }"}})
    .into();
    let batch = vec![
        read.clone(),
        ToolCall::new("2", "fs_write", r#"{"path":"a"}"#),
        ToolCall::new("3", "fs_list", json!({"path": "."})),
        ToolCall::new("4", "fs_task", r#"{"prompt":"p"}"#),
        ToolCall::new("5", "fs_read", r#"{"path":"b"}"#),
    ];
    let results = policy.execute_tool_calls(batch.clone()).await.unwrap();

    assert_eq!(
        received.batches(),
        [vec![read, batch[2].clone(), batch[4].clone()]]
    );
    assert_eq!(ids(&results), ["1", "2", "3", "4", "5"]);
    assert_eq!(
        results.iter().map(|r| r.is_error).collect::<Vec<_>>(),
        [false, true, false, true, false]
    );
    assert_eq!(
        results[4].content, r#"{"path":"b"}"#,
        "each answer in its caller's place"
    );
}

#[tokio::test]
async fn a_batch_of_refused_calls_reaches_no_provider() {
    let (policy, received) = policy(PolicyLayer::new(Vec::new()));
    let results = policy
        .execute_tool_calls(vec![ToolCall::new("1", "fs_write", "{}")])
        .await
        .unwrap();
    assert!(results[0].is_error);
    assert!(received.batches().is_empty());
}

#[tokio::test]
async fn a_call_without_a_tool_name_is_refused() {
    let (policy, received) = policy(PolicyLayer::new(rules(r#"[{"tool": "*", "decision": "allow"}]"#)));
    let results = policy
        .execute_tool_calls(vec![json!({"id": "x", "function": {"arguments": "{}"}}).into()])
        .await
        .unwrap();
    assert!(results[0].is_error);
    assert_eq!(results[0].tool_call_id, "x");
    assert!(received.batches().is_empty());
}

// --- Paths ---

#[tokio::test]
async fn allow_under_a_directory_needs_every_path_inside_it() {
    let (policy, _) = policy(PolicyLayer::new(rules(
        r#"[{"tool": "fs_*", "decision": "allow", "under": "src"}]"#,
    )));
    assert!(runs(&policy, "fs_read", r#"{"path":"src/main.rs"}"#).await);
    assert!(runs(&policy, "fs_read", r#"{"path":"./src//lib.rs"}"#).await);
    assert!(runs(&policy, "fs_list", r#"{"path":"src"}"#).await);
    assert!(runs(&policy, "fs_write", r#"{"from":"src/a","to":"src/b"}"#).await);
    assert!(!runs(&policy, "fs_read", r#"{"path":"src2/main.rs"}"#).await);
    assert!(!runs(&policy, "fs_write", r#"{"from":"src/a","to":"docs/b"}"#).await);
    assert!(
        !runs(&policy, "fs_list", "{}").await,
        "a call naming no path is under no directory"
    );
}

#[tokio::test]
async fn deny_and_ask_under_a_directory_fold_case_and_allow_does_not() {
    // On a case-insensitive file system `SECRETS/key.pem` is the file a
    // `deny under secrets` rule is about.
    let rules = rules(
        r#"[{"tool": "fs_*", "decision": "allow", "under": "src"},
            {"tool": "fs_*", "decision": "deny", "under": "secrets"},
            {"tool": "fs_*", "decision": "ask", "under": "Élan"}]"#,
    );
    let ask_rule = rules[2].clone();
    let (layer, asked) = answering(rules, Answer::DenyOnce);
    let (policy, _) = policy(layer);
    let run = |path: &str| {
        let call = ToolCall::new("r", "fs_read", json!({ "path": path }).to_string().as_str());
        let results = policy.execute_tool_calls(vec![call]);
        async { results.await.unwrap().remove(0) }
    };
    for path in ["SECRETS/key.pem", "Secrets", "./SeCrEtS//x"] {
        assert_eq!(
            run(path).await.content,
            "fs_read was not run: the permission policy denies it (deny fs_* under secrets).",
            "{path}"
        );
    }
    run("éLAN/notes").await;
    let question = asked.lock().unwrap().pop().expect("asked");
    assert_eq!(question.rule, Some(ask_rule), "asked by the ask rule");
    // Allow stays exact: `SRC` is not the directory the allow rule names.
    assert!(!run("src/main.rs").await.is_error);
    assert!(run("SRC/main.rs").await.is_error);
}

#[tokio::test]
async fn paths_that_cannot_be_placed_fail_closed() {
    let (policy, _) = policy(PolicyLayer::new(rules(
        r#"[{"tool": "fs_read", "decision": "allow", "under": "src"},
            {"tool": "fs_list", "decision": "allow"},
            {"tool": "fs_list", "decision": "deny", "under": "secrets"}]"#,
    )));
    for path in [
        json!("src/../secrets/key.pem"),
        json!("src/a\u{0}b"),
        json!("src\\main.rs"),
        json!("/abs/src/main.rs"),
        json!("file://src/main.rs"),
        json!(["src/a", 7]),
        json!({"nested": "src/a"}),
    ] {
        let arguments = json!({"path": path}).to_string();
        assert!(
            !runs(&policy, "fs_read", &arguments).await,
            "allow under src took {path}"
        );
        assert!(
            !runs(&policy, "fs_list", &arguments).await,
            "deny under secrets let {path} through"
        );
    }
    assert!(runs(&policy, "fs_list", r#"{"path":"docs"}"#).await);
}

#[tokio::test]
async fn unreadable_arguments_leave_paths_unknown() {
    let (policy, _) = policy(PolicyLayer::new(rules(
        r#"[{"tool": "fs_read", "decision": "allow", "under": "src"},
            {"tool": "fs_list", "decision": "allow"},
            {"tool": "fs_list", "decision": "deny", "under": "secrets"},
            {"tool": "fs_task", "decision": "allow"}]"#,
    )));
    let truncated = r#"{"path":"src/a"#;
    assert!(!runs(&policy, "fs_read", truncated).await);
    assert!(!runs(&policy, "fs_list", truncated).await);
    assert!(
        runs(&policy, "fs_task", truncated).await,
        "a rule without `under` needs no paths"
    );
    assert!(runs(&policy, "fs_list", "").await, "empty arguments name no path");

    let results = policy
        .execute_tool_calls(vec![ToolCall::new("1", "fs_read", r#"{"path":"../x"}"#)])
        .await
        .unwrap();
    let truncated_results = policy
        .execute_tool_calls(vec![ToolCall::new("2", "fs_read", truncated)])
        .await
        .unwrap();
    assert!(
        truncated_results[0]
            .content
            .ends_with("Its arguments could not be checked: they are not a JSON object."),
        "{}",
        truncated_results[0].content
    );
    assert!(
        results[0]
            .content
            .contains("`path` could not be checked (it contains `..`)"),
        "{}",
        results[0].content
    );
}

#[tokio::test]
async fn under_is_joined_onto_the_root_of_the_tools_prefix() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "fs_*", "decision": "allow", "under": "src"},
            {"tool": "git_*", "decision": "allow", "under": "/repo"}]"#,
    ))
    .root("fs_", Dir::new("/srv/project").unwrap())
    .root("fs_private_", Dir::new("/srv/private").unwrap());
    let (policy, _) = policy(layer);

    assert!(runs(&policy, "fs_read", r#"{"path":"src/a.rs"}"#).await);
    assert!(runs(&policy, "fs_read", r#"{"path":"/srv/project/src/a.rs"}"#).await);
    assert!(!runs(&policy, "fs_read", r#"{"path":"/srv/other/src/a.rs"}"#).await);
    assert!(
        !runs(&policy, "fs_private_read", r#"{"path":"/srv/project/src/a.rs"}"#).await,
        "longest prefix wins"
    );
    assert!(runs(&policy, "fs_private_read", r#"{"path":"/srv/private/src/a.rs"}"#).await);
    assert!(
        runs(&policy, "git_log", r#"{"path":"/repo/x"}"#).await,
        "an absolute under is used as it is"
    );
    assert!(
        !runs(&policy, "git_log", r#"{"path":"x"}"#).await,
        "a relative path against an absolute dir"
    );
}

#[tokio::test]
async fn path_arguments_are_configurable_per_tool() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "fs_task", "decision": "allow", "under": "work"}]"#,
    ))
    .path_arguments("fs_task", ["cwd", "files"]);
    let (policy, _) = policy(layer);

    assert!(
        runs(
            &policy,
            "fs_task",
            r#"{"cwd":"work","files":["work/a","work/b"],"path":"elsewhere"}"#
        )
        .await
    );
    assert!(
        !runs(
            &policy,
            "fs_task",
            r#"{"cwd":"work","files":["work/a","other/b"]}"#
        )
        .await
    );
    assert!(
        runs(&policy, "fs_task", r#"{"cwd":"work","files":null}"#).await,
        "null is an absent argument"
    );
}

// --- Asking ---

#[tokio::test]
async fn the_question_carries_the_call_the_rule_the_paths_and_a_suggested_grant() {
    let (layer, asked) = answering(
        rules(r#"[{"tool": "fs_write", "decision": "ask", "under": "notes"}]"#),
        Answer::AllowOnce,
    );
    let (policy, received) = policy(layer.root("fs_", Dir::new("/srv").unwrap()));

    let arguments = r#"{"path":"notes/2026/plan.md","content":"…","reason":"to save the plan"}"#;
    assert!(runs(&policy, "fs_write", arguments).await);

    let question = asked.lock().unwrap()[0].clone();
    assert_eq!(question.tool, "fs_write");
    assert_eq!(question.id, "c");
    assert_eq!(
        question.arguments,
        serde_json::from_str::<serde_json::Value>(arguments).unwrap()
    );
    assert_eq!(question.reason.as_deref(), Some("to save the plan"));
    assert_eq!(
        question.rule,
        Some(Rule::ask("fs_write").unwrap().under("notes").unwrap())
    );
    assert_eq!(
        question.paths,
        [PathArgument {
            argument: "path".into(),
            path: "notes/2026/plan.md".into(),
            resolved: Some("/srv/notes/2026/plan.md".into()),
        }]
    );
    assert_eq!(
        question.suggested_grant,
        Some(Rule::allow("fs_write").unwrap().under("notes/2026").unwrap())
    );
    assert_eq!(
        question.to_string(),
        "fs_write (c) path=notes/2026/plan.md — \"to save the plan\""
    );
    // The call asked about is forwarded as it came, reason included.
    assert_eq!(common::arguments_text(&received.calls()[0]), arguments);
}

#[tokio::test]
async fn the_suggested_grant_is_as_narrow_as_the_paths_allow() {
    let (layer, asked) = answering(Vec::new(), Answer::DenyOnce);
    let (policy, _) = policy(layer);
    for arguments in [
        r#"{"from":"notes/a/x.md","to":"notes/b/y.md"}"#,
        r#"{"path":"../x"}"#,
        r#"{"path":"notes/x"#,
        r#"{"prompt":"p"}"#,
        r#"{"path":"/etc/passwd"}"#,
    ] {
        runs(&policy, "fs_write", arguments).await;
    }
    let under: Vec<Option<String>> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|q| {
            q.suggested_grant
                .as_ref()
                .unwrap()
                .under
                .as_ref()
                .map(|d| d.as_str().to_owned())
        })
        .collect();
    let expected = [Some("notes"), Some("."), Some("."), None, Some("/etc")];
    assert_eq!(under, expected.map(|d| d.map(str::to_owned)));
}

#[tokio::test]
async fn a_tool_name_that_is_not_a_pattern_is_never_remembered_as_one() {
    let (layer, asked) = answering(Vec::new(), Answer::AlwaysAllow(None));
    let (policy, _) = policy(layer);
    assert!(runs(&policy, "fs_*", "{}").await, "the call itself was allowed");
    assert_eq!(asked.lock().unwrap()[0].suggested_grant, None);
    assert!(policy.grants().is_empty(), "no grant for every fs_ tool");
    assert!(runs(&policy, "fs_write", "{}").await);
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn always_allow_remembers_the_suggested_grant() {
    let (layer, asked) = answering(Vec::new(), Answer::AlwaysAllow(None));
    let (policy, received) = policy(layer);

    assert!(runs(&policy, "fs_write", r#"{"path":"notes/a.md"}"#).await);
    assert!(runs(&policy, "fs_write", r#"{"path":"notes/sub/b.md"}"#).await);
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "the grant answered the second call"
    );
    assert_eq!(
        policy.grants(),
        [Rule::allow("fs_write").unwrap().under("notes").unwrap()]
    );

    // Outside the grant, the human is asked again.
    assert!(runs(&policy, "fs_write", r#"{"path":"src/main.rs"}"#).await);
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(received.calls().len(), 3);
}

#[tokio::test]
async fn always_answers_with_a_rule_remember_that_rule_with_their_decision() {
    let (layer, asked) = answering(Vec::new(), Answer::AlwaysDeny(Some(Rule::allow("fs_*").unwrap())));
    let (policy, _) = policy(layer);

    assert!(!runs(&policy, "fs_write", r#"{"path":"a"}"#).await);
    assert!(!runs(&policy, "fs_task", r#"{"prompt":"p"}"#).await);
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(policy.grants(), [Rule::deny("fs_*").unwrap()]);
}

#[tokio::test]
async fn a_grant_covers_the_later_calls_of_the_same_batch() {
    let (layer, asked) = answering(Vec::new(), Answer::AlwaysAllow(None));
    let (policy, received) = policy(layer);
    let results = policy
        .execute_tool_calls(vec![
            ToolCall::new("1", "fs_write", r#"{"path":"a"}"#),
            ToolCall::new("2", "fs_write", r#"{"path":"b"}"#),
        ])
        .await
        .unwrap();
    assert!(results.iter().all(|r| !r.is_error));
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(received.batches().len(), 1);
}

#[tokio::test]
async fn grants_are_plain_data_handed_back_to_a_new_policy() {
    let (layer, _) = answering(Vec::new(), Answer::AlwaysAllow(None));
    let (first, _) = policy(layer);
    assert!(runs(&first, "fs_write", r#"{"path":"notes/a"}"#).await);

    let saved = serde_json::to_string(&first.grants()).unwrap();
    assert_eq!(
        saved,
        r#"[{"tool":"fs_write","decision":"allow","under":"notes"}]"#
    );
    let grants: Vec<Rule> = serde_json::from_str(&saved).unwrap();
    let (second, _) = policy(PolicyLayer::new(Vec::new()).grants(grants));

    assert!(
        runs(&second, "fs_write", r#"{"path":"notes/b"}"#).await,
        "no one to ask: the grant allowed it"
    );
    assert!(!runs(&second, "fs_write", r#"{"path":"src/b"}"#).await);
}

#[tokio::test]
async fn grants_are_consulted_only_when_the_rules_say_ask() {
    let grants = rules(r#"[{"tool": "fs_*", "decision": "allow"}, {"tool": "fs_read", "decision": "deny"}]"#);
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "fs_read", "decision": "allow"}, {"tool": "fs_task", "decision": "deny"}]"#,
    ))
    .grants(grants);
    let (policy, _) = policy(layer);

    assert!(
        runs(&policy, "fs_read", "{}").await,
        "a deny grant does not override an allow rule"
    );
    assert!(
        !runs(&policy, "fs_task", "{}").await,
        "an allow grant does not override a deny rule"
    );
    assert!(
        runs(&policy, "fs_write", "{}").await,
        "an ask is answered by the grant"
    );
}

#[tokio::test]
async fn a_panicking_callback_refuses_the_call() {
    let layer = PolicyLayer::new(Vec::new()).on_ask(|_: &Question| panic!("the prompt broke"));
    let (policy, received) = policy(layer);
    assert!(!runs(&policy, "fs_write", "{}").await);
    assert!(received.calls().is_empty());
}

#[tokio::test]
async fn an_async_callback_is_awaited() {
    let layer = PolicyLayer::new(Vec::new()).on_ask_async(|question: Question| async move {
        tokio::task::yield_now().await;
        if question.reason.is_some() {
            Answer::AllowOnce
        } else {
            Answer::DenyOnce
        }
    });
    let (policy, _) = policy(layer);
    assert!(runs(&policy, "fs_write", r#"{"reason":"r"}"#).await);
    assert!(!runs(&policy, "fs_write", "{}").await);

    let panicking = PolicyLayer::new(Vec::new()).on_ask_async(|_: Question| async move {
        tokio::task::yield_now().await;
        panic!("the user interface went away")
    });
    let (policy, _) = self::policy(panicking);
    assert!(!runs(&policy, "fs_write", "{}").await);
}

// --- Listing and failures ---

#[tokio::test]
async fn tools_a_blanket_deny_refuses_are_hidden() {
    let denying = rules(
        r#"[{"tool": "fs_task", "decision": "deny"},
            {"tool": "fs_write", "decision": "deny", "under": "secrets"}]"#,
    );
    let (policy, _) = policy(PolicyLayer::new(denying.clone()));
    let names = |tools: Vec<mcp_unknown_keys::ToolDeclaration>| -> Vec<String> {
        tools.iter().map(|t| t.name().unwrap().to_owned()).collect()
    };
    assert_eq!(
        names(policy.tools_for_llm().await.unwrap()),
        ["fs_read", "fs_list", "fs_write"]
    );

    let (shown, _) = self::policy(PolicyLayer::new(denying).hide_denied(false));
    assert_eq!(names(shown.tools_for_llm().await.unwrap()).len(), 4);
}

#[tokio::test]
async fn a_failed_listing_fails() {
    let (policy, _) = policy(PolicyLayer::new(Vec::new()));
    *policy.get_ref().fail_listing.lock().unwrap() = true;
    assert!(policy.tools_for_llm().await.is_err());
}

#[tokio::test]
async fn an_inner_failure_becomes_an_error_result_per_allowed_call() {
    let (toolkit, _) = Toolkit::new(vec![declaration("fs_read", json!({"path": {}}), &[])]);
    let policy = PolicyLayer::new(default_rules()).layer(toolkit.answering(Answering::Fail));
    let results = policy
        .execute_tool_calls(vec![
            ToolCall::new("1", "fs_read", "{}"),
            ToolCall::new("2", "fs_write", "{}"),
            ToolCall::new("3", "fs_list", "{}"),
        ])
        .await
        .unwrap();

    assert_eq!(ids(&results), ["1", "2", "3"]);
    assert!(results[0].content.contains("the server crashed"));
    assert!(results[1].content.contains("approval"));
    assert!(results[2].content.contains("the server crashed"));
}

#[tokio::test]
async fn a_short_answer_gets_error_results_for_the_missing_calls() {
    let (toolkit, _) = Toolkit::files();
    let policy = PolicyLayer::new(default_rules()).layer(toolkit.answering(Answering::First(1)));
    let results = policy
        .execute_tool_calls(vec![
            ToolCall::new("1", "fs_read", "{}"),
            ToolCall::new("2", "fs_write", "{}"),
            ToolCall::new("3", "fs_list", "{}"),
        ])
        .await
        .unwrap();
    assert_eq!(ids(&results), ["1", "2", "3"]);
    assert_eq!(
        results.iter().map(|r| r.is_error).collect::<Vec<_>>(),
        [false, true, true]
    );
}

#[test]
fn decisions_order_deny_over_ask_over_allow() {
    assert!(Decision::Deny > Decision::Ask && Decision::Ask > Decision::Allow);
}
