//! `command`, `args`, `args_any` and `check` rules: what a shell tool call
//! runs, simple command by simple command, failing closed on what cannot
//! be read.

use crate::common;
use crate::policy_support;

use common::{Toolkit, declaration};
use mcp_unknown_keys::Provider;
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::command::Command;
use mcp_unknown_keys_policy::{Answer, CommandArguments, PolicyConfig, Rule, ToolPattern, Tristate};
use policy_support::{Fate, Harness, rules};
use serde_json::{Value, json};
use tower_layer::Layer;

fn shell(command: &str) -> Value {
    json!({ "command": command })
}

async fn fate(rules_json: &str, command: &str) -> Fate {
    Harness::new(PolicyLayer::new(rules(rules_json)))
        .fate("shell_run", shell(command))
        .await
}

const ALLOW_GIT: &str = r#"[{"tool": "shell_run", "decision": "allow", "command": "git"}]"#;
const DENY_RM: &str = r#"[{"tool": "shell_run", "decision": "deny", "command": "rm"}]"#;

// --- The rule data ---

#[test]
fn command_rules_round_trip_and_refuse_what_cannot_match() {
    let json = r#"{"tool":"shell_*","decision":"ask","command":"git","args":["push"],"args_any":["--force","-f"],"check":"mine","severity":"danger","note":"history"}"#;
    let rule: Rule = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&rule).unwrap(), json);
    assert_eq!(
        rule,
        Rule::ask("shell_*")
            .unwrap()
            .command("git")
            .unwrap()
            .args(["push"])
            .unwrap()
            .args_any(["--force", "-f"])
            .unwrap()
            .check("mine")
            .unwrap()
            .danger()
            .note("history")
    );

    for (bad, says) in [
        (
            r#"{"tool":"sh","decision":"deny","command":"/bin/rm"}"#,
            "command pattern",
        ),
        (
            r#"{"tool":"sh","decision":"deny","command":"r*m"}"#,
            "command pattern",
        ),
        (r#"{"tool":"sh","decision":"deny","command":""}"#, "empty"),
        (
            r#"{"tool":"sh","decision":"deny","args":["-rf"]}"#,
            "narrows a `command`",
        ),
        (
            r#"{"tool":"sh","decision":"deny","args_any":["-rf"]}"#,
            "narrows a `command`",
        ),
        (
            r#"{"tool":"sh","decision":"deny","command":"rm","args":[]}"#,
            "one or more",
        ),
        (
            r#"{"tool":"sh","decision":"deny","command":"rm","args_any":[""]}"#,
            "none empty",
        ),
        (
            r#"{"tool":"sh","decision":"deny","check":"no spaces"}"#,
            "check name",
        ),
        (
            r#"{"tool":"sh","decision":"deny","severity":"mild"}"#,
            "unknown variant",
        ),
        (
            r#"{"tool":"sh","decision":"deny","comand":"rm"}"#,
            "unknown field `comand`",
        ),
    ] {
        let error = serde_json::from_str::<Rule>(bad).unwrap_err().to_string();
        assert!(error.contains(says), "{bad}: {error}");
    }
}

// --- Matching a program and its arguments ---

#[tokio::test]
async fn a_program_is_matched_by_its_base_name_or_a_prefix() {
    assert_eq!(fate(ALLOW_GIT, "git status").await, Fate::Allowed);
    assert_eq!(fate(ALLOW_GIT, "/usr/bin/git status").await, Fate::Allowed);
    assert_eq!(fate(ALLOW_GIT, "gitk").await, Fate::Asked);
    let mkfs = r#"[{"tool": "shell_run", "decision": "deny", "command": "mkfs*"}]"#;
    assert_eq!(fate(mkfs, "mkfs.ext4 /dev/sda1").await, Fate::Denied);
    assert_eq!(fate(mkfs, "mk").await, Fate::Asked);
}

#[tokio::test]
async fn deny_and_ask_fold_case_and_allow_is_exact() {
    assert_eq!(fate(DENY_RM, "RM -rf /").await, Fate::Denied);
    assert_eq!(fate(DENY_RM, "/bin/Rm x").await, Fate::Denied);
    assert_eq!(fate(ALLOW_GIT, "GIT status").await, Fate::Asked);
    let push = r#"[{"tool": "shell_run", "decision": "deny", "command": "git", "args": ["push"]}]"#;
    assert_eq!(fate(push, "git PUSH").await, Fate::Denied);
    let status = r#"[{"tool": "shell_run", "decision": "allow", "command": "git", "args": ["status"]}]"#;
    assert_eq!(fate(status, "git STATUS").await, Fate::Asked);
}

#[tokio::test]
async fn args_is_a_prefix_and_args_any_a_token_anywhere() {
    let force = r#"[{"tool": "shell_run", "decision": "deny", "command": "git", "args": ["push"], "args_any": ["--force", "-f"]}]"#;
    assert_eq!(fate(force, "git push --force").await, Fate::Denied);
    assert_eq!(fate(force, "git push origin main -f").await, Fate::Denied);
    assert_eq!(fate(force, "git push origin main").await, Fate::Asked, "no force");
    assert_eq!(fate(force, "git commit -f").await, Fate::Asked, "not a push");
    assert_eq!(fate(force, "git").await, Fate::Asked, "shorter than the prefix");

    let log =
        r#"[{"tool": "shell_run", "decision": "allow", "command": "git", "args": ["log", "--oneline"]}]"#;
    assert_eq!(fate(log, "git log --oneline -5").await, Fate::Allowed);
    assert_eq!(fate(log, "git log").await, Fate::Asked);
    assert_eq!(fate(log, "git --oneline log").await, Fate::Asked);
}

#[tokio::test]
async fn every_simple_command_must_pass() {
    let rules_json = r#"[{"tool": "shell_run", "decision": "allow", "command": "git"},
        {"tool": "shell_run", "decision": "allow", "command": "ls"},
        {"tool": "shell_run", "decision": "deny", "command": "rm"}]"#;
    assert_eq!(fate(rules_json, "git status && ls -la").await, Fate::Allowed);
    assert_eq!(fate(rules_json, "git status | grep x").await, Fate::Asked);
    assert_eq!(fate(rules_json, "git status; rm -rf build").await, Fate::Denied);
    assert_eq!(fate(rules_json, "rm x || ls").await, Fate::Denied);
}

/// Each entry hides `rm -rf /` behind a git call (after the published
/// bypasses of command allow-lists).
const HIDES_RM: &[&str] = &[
    "git status && rm -rf /",
    "git status; rm -rf /",
    "git rev-parse || rm -rf /",
    "git status\nrm -rf /",
    "git status && rm${IFS}-rf${IFS}/",
    "git $(rm -rf /)",
    "echo $(git log $(rm -rf /))",
    "git `rm -rf /`",
    "(git status; rm -rf /)",
    "diff <(rm -rf /) a",
    "git status && sh -c \"rm -rf /\"",
    "git status > out; rm -rf /",
    "git status && rm{,x} -rf /",
    "git && exec rm -rf /",
    "git && eval \"rm -rf /\"",
    "git && command rm -rf /",
    "git && ! rm -rf /",
    "if rm -rf /; then git; fi",
    "busybox rm -rf /",
    "eval 'rm -rf /'",
    "git \"$(rm -rf /)\"",
    "bash -c 'git status; rm -rf /'",
    "BASH -c 'rm -rf /'",
    "env -S 'rm -rf /'",
    "$CMD -rf /",
    "/bin/r? -rf /",
    "echo cm0= | base64 -d | sh",
    "git status; echo 'a; rm -rf /",
    "timeout --bogus 1 rm -rf /",
    "sudo rm -rf /",
    "xargs rm -rf < list",
    "nice -n 5 env A=1 timeout 3 rm -rf /",
    "git log && find / -exec rm -rf {} +",
];

#[tokio::test]
async fn an_allowed_program_never_lets_a_hidden_command_through() {
    for command in HIDES_RM {
        assert_ne!(fate(ALLOW_GIT, command).await, Fate::Allowed, "{command:?}");
    }
}

#[tokio::test]
async fn a_denied_program_is_caught_however_it_is_hidden() {
    let hidden_in_input = "echo cm0= | base64 -d | sh"; // the rm is in data, not in the line
    for command in HIDES_RM.iter().filter(|command| **command != hidden_in_input) {
        assert_eq!(fate(DENY_RM, command).await, Fate::Denied, "{command:?}");
    }
    let deny_shells = r#"[{"tool": "shell_run", "decision": "deny", "command": "sh"}]"#;
    assert_eq!(fate(deny_shells, hidden_in_input).await, Fate::Denied);
}

#[tokio::test]
async fn legitimate_commands_are_not_over_refused() {
    for command in [
        "git commit -m \"a && b || c\"",
        "bash -lc 'git status'",
        "timeout 30 git push",
        "env GIT_PAGER=cat git log",
        "sh -c 'git grep \"foo|bar\"'",
        "git log --oneline",
        "git status # && rm -rf /",
        "FOO=1 git status",
        "git -c core.pager=cat log",
    ] {
        assert_eq!(fate(ALLOW_GIT, command).await, Fate::Allowed, "{command:?}");
    }
}

// --- What cannot be read fails closed ---

#[tokio::test]
async fn an_unreadable_command_keeps_an_allow_from_matching_and_makes_a_deny_match() {
    let any = r#"[{"tool": "shell_run", "decision": "allow", "command": "*"}]"#;
    let deny_any = r#"[{"tool": "shell_run", "decision": "deny", "command": "*"}]"#;
    for command in [
        "$TOOL x",
        "ls $(pwd)",
        "ls `pwd`",
        "ls *.rs",
        "ls {a,b}",
        "ls ~root",
        "echo 'open",
        "cat <<EOF\nx\nEOF",
        "echo x > $OUT",
        "for f in a; do ls; done",
        "env -S 'ls'",
        "xargs ls",
    ] {
        assert_eq!(fate(any, command).await, Fate::Asked, "allow took {command:?}");
        assert_eq!(
            fate(deny_any, command).await,
            Fate::Denied,
            "deny let {command:?} through"
        );
    }
    assert_eq!(fate(any, "ls -la ~/notes").await, Fate::Allowed);
}

#[tokio::test]
async fn arguments_past_what_could_be_read_are_unknown() {
    let force = r#"[{"tool": "shell_run", "decision": "deny", "command": "git", "args_any": ["--force"]}]"#;
    assert_eq!(
        fate(force, "git push $FLAGS").await,
        Fate::Denied,
        "the flag may be in $FLAGS"
    );
    assert_eq!(fate(force, "git push origin").await, Fate::Asked);
    let push =
        r#"[{"tool": "shell_run", "decision": "deny", "command": "git", "args": ["push", "--force"]}]"#;
    assert_eq!(fate(push, "git push $FLAGS").await, Fate::Denied);
    assert_eq!(
        fate(push, "git pull $FLAGS").await,
        Fate::Asked,
        "a definite miss stays a miss"
    );
    let rm = r#"[{"tool": "shell_run", "decision": "deny", "command": "rm"}]"#;
    assert_eq!(
        fate(rm, "echo $HOME").await,
        Fate::Asked,
        "another readable program"
    );
}

// --- Where the command comes from ---

#[tokio::test]
async fn the_command_may_be_an_argv_or_a_program_with_arguments() {
    let harness = Harness::new(PolicyLayer::new(rules(
        r#"[{"tool": "shell_run", "decision": "allow", "command": "git"},
            {"tool": "shell_run", "decision": "deny", "command": "rm"}]"#,
    )));
    let cases = [
        (json!({"command": ["git", "status"]}), Fate::Allowed),
        (
            json!({"command": ["bash", "-c", "git status; rm -rf /"]}),
            Fate::Denied,
        ),
        (json!({"command": ["rm", "-rf", "/*"]}), Fate::Denied),
        (json!({"command": "git", "args": ["status"]}), Fate::Allowed),
        (
            json!({"command": "/usr/bin/git", "args": ["status", "a b"]}),
            Fate::Allowed,
        ),
        (json!({"command": "sh", "args": ["-c", "rm -rf /"]}), Fate::Denied),
        (json!({"command": ["git", 5]}), Fate::Asked),
        (json!({"command": "git", "args": "status"}), Fate::Asked),
        // A line with arguments beside it, or a command that is no string:
        // the program is unknown, so the deny matches.
        (
            json!({"command": "git status", "args": ["--short"]}),
            Fate::Denied,
        ),
        (json!({"command": 7}), Fate::Denied),
        (json!({"command": "git status", "args": null}), Fate::Allowed),
    ];
    for (arguments, expected) in cases {
        assert_eq!(
            harness.fate("shell_run", arguments.clone()).await,
            expected,
            "{arguments}"
        );
    }
    let (_, told) = harness
        .run("shell_run", json!({"command": "git status", "args": ["--short"]}))
        .await;
    assert!(told.ends_with("a command string with separate arguments. A command written out plainly, without it, may be allowed."), "{told}");
}

#[tokio::test]
async fn the_command_arguments_are_configurable_per_tool_pattern() {
    let deny_rm = r#"[{"tool": "shell_*", "decision": "deny", "command": "rm"}]"#;
    let layer = PolicyLayer::new(rules(deny_rm))
        .command_arguments(
            ToolPattern::new("shell_*").unwrap(),
            CommandArguments {
                command: "cmd".into(),
                args: Some("argv".into()),
            },
        )
        .command_arguments(
            ToolPattern::new("shell_run").unwrap(),
            CommandArguments {
                command: "script".into(),
                args: None,
            },
        );
    let harness = Harness::new(layer);
    assert_eq!(
        harness.fate("shell_run", json!({"script": "rm x"})).await,
        Fate::Denied
    );
    assert_eq!(
        harness
            .fate("shell_run", json!({"command": "rm x", "script": "ls"}))
            .await,
        Fate::Asked,
        "the exact name wins over the prefix"
    );
    assert_eq!(
        harness
            .fate("shell_exec", json!({"cmd": "rm", "argv": ["x"]}))
            .await,
        Fate::Denied
    );
    assert_eq!(
        harness.fate("shell_exec", json!({"command": "rm x"})).await,
        Fate::Asked
    );

    let config = PolicyConfig::from_json(r#"{"command_arguments": {"ci_*": {"command": "run"}}}"#).unwrap();
    let again = PolicyConfig::from_json(&serde_json::to_string(&config).unwrap()).unwrap();
    assert_eq!(again, config);
    assert!(PolicyConfig::from_json(r#"{"command_arguments": {"ci_*": {"comand": "run"}}}"#).is_err());
    assert!(PolicyConfig::from_json(r#"{"command_arguments": {"*ci": {"command": "run"}}}"#).is_err());
}

#[tokio::test]
async fn a_call_that_names_no_command_is_not_about_one() {
    let harness = Harness::new(PolicyLayer::new(rules(
        r#"[{"tool": "*", "decision": "deny", "command": "*"},
            {"tool": "fs_read", "decision": "allow"}]"#,
    )));
    assert_eq!(harness.fate("fs_read", json!({"path": "a"})).await, Fate::Allowed);
    assert_eq!(
        harness.fate("fs_read", json!({"command": null})).await,
        Fate::Allowed
    );
    assert_eq!(
        harness.fate("fs_read", json!({"command": ""})).await,
        Fate::Allowed,
        "runs nothing"
    );
    let unreadable = harness.run("fs_read", json!("{\"path\": \"a")).await;
    assert_eq!(
        unreadable.0,
        Fate::Denied,
        "arguments that are not an object may hold a command"
    );
}

// --- Checks ---

fn odd_target(command: &Command) -> Tristate {
    match command.is_complete() {
        false => Tristate::Unknown,
        true if command.args.iter().any(|arg| arg == "deploy") => Tristate::Yes,
        true => Tristate::No,
    }
}

#[tokio::test]
async fn a_check_answers_for_each_simple_command() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "shell_run", "decision": "allow", "command": "make"},
            {"tool": "shell_run", "decision": "deny", "command": "make", "check": "deploys"}]"#,
    ))
    .check("deploys", odd_target);
    let harness = Harness::new(layer);
    assert_eq!(
        harness.fate("shell_run", shell("make build")).await,
        Fate::Allowed
    );
    assert_eq!(
        harness
            .fate("shell_run", shell("make build && make deploy"))
            .await,
        Fate::Denied
    );
    assert_eq!(
        harness.fate("shell_run", shell("make $TARGET")).await,
        Fate::Denied,
        "unknown fails closed"
    );
}

#[tokio::test]
async fn an_allow_with_a_check_needs_a_yes() {
    let layer = PolicyLayer::new(rules(
        r#"[{"tool": "shell_run", "decision": "allow", "check": "deploys"}]"#,
    ))
    .check("deploys", odd_target);
    let harness = Harness::new(layer);
    assert_eq!(
        harness.fate("shell_run", shell("make deploy")).await,
        Fate::Allowed
    );
    assert_eq!(harness.fate("shell_run", shell("make build")).await, Fate::Asked);
    assert_eq!(harness.fate("shell_run", shell("make $T")).await, Fate::Asked);
}

#[tokio::test]
async fn a_missing_or_panicking_check_cannot_tell() {
    let deny = r#"[{"tool": "shell_run", "decision": "deny", "check": "missing"},
                   {"tool": "shell_run", "decision": "allow", "check": "broken"}]"#;
    let layer = PolicyLayer::new(rules(deny)).check("broken", |_: &Command| -> Tristate { panic!("a bug") });
    let harness = Harness::new(layer);
    assert_eq!(harness.fate("shell_run", shell("ls")).await, Fate::Denied);

    let allow_broken = r#"[{"tool": "shell_run", "decision": "allow", "check": "broken"}]"#;
    let layer =
        PolicyLayer::new(rules(allow_broken)).check("broken", |_: &Command| -> Tristate { panic!("a bug") });
    assert_eq!(
        Harness::new(layer).fate("shell_run", shell("ls")).await,
        Fate::Asked
    );
}

// --- What the model and the human are told ---

#[tokio::test]
async fn a_refusal_names_the_rule_and_what_could_not_be_read() {
    let harness = Harness::new(PolicyLayer::new(rules(DENY_RM)));
    let (_, plain) = harness.run("shell_run", shell("rm -rf build")).await;
    assert_eq!(
        plain,
        "shell_run was not run: the permission policy denies it (deny shell_run command rm)."
    );
    let (_, unread) = harness.run("shell_run", shell("$CMD build")).await;
    assert_eq!(
        unread,
        "shell_run was not run: the permission policy denies it (deny shell_run command rm). Its command could not be read in full: a `$` or `~` expansion in `$CMD`. A command written out plainly, without it, may be allowed."
    );
}

#[tokio::test]
async fn the_question_shows_the_commands_and_suggests_their_program() {
    let harness = Harness::new(PolicyLayer::new(Vec::new()));
    harness
        .run("shell_run", shell("git add -A && git commit -m 'wip'"))
        .await;
    let question = harness.last_question();
    let commands: Vec<String> = question.commands.iter().map(ToString::to_string).collect();
    assert_eq!(commands, ["git add -A", "git commit -m wip"]);
    assert_eq!(
        question.to_string(),
        "shell_run (c) $ git add -A ; git commit -m wip"
    );
    assert_eq!(
        question.suggested_grant,
        Some(Rule::allow("shell_run").unwrap().command("git").unwrap())
    );

    for mixed in ["git status && ls", "git $(pwd)"] {
        harness.run("shell_run", shell(mixed)).await;
        assert_eq!(
            harness.last_question().suggested_grant,
            Some(Rule::allow("shell_run").unwrap()),
            "{mixed:?}: the tool alone"
        );
    }
}

#[tokio::test]
async fn always_allow_remembers_the_program_and_covers_it_only() {
    let harness = Harness::answering(PolicyLayer::new(Vec::new()), Answer::AlwaysAllow(None));
    assert_eq!(harness.fate("shell_run", shell("cargo test")).await, Fate::Asked);
    assert_eq!(
        harness.fate("shell_run", shell("cargo build --release")).await,
        Fate::Allowed
    );
    assert_eq!(
        harness
            .fate("shell_run", shell("cargo build && rm -rf target"))
            .await,
        Fate::Asked
    );
}

#[tokio::test]
async fn a_rule_about_commands_does_not_hide_the_tool() {
    let (toolkit, _) = Toolkit::new(vec![declaration("shell_run", json!({"command": {}}), &[])]);
    let policy = PolicyLayer::new(rules(DENY_RM)).layer(toolkit);
    let listed = policy.tools_for_llm().await.unwrap();
    assert_eq!(
        listed.iter().map(|tool| tool.name().unwrap()).collect::<Vec<_>>(),
        ["shell_run"]
    );
}
