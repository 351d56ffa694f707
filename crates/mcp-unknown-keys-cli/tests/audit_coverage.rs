//! `audit` accounts for every call it finds: audited, or unaudited for a
//! named reason; the jsonl output ends with the figures, the text report
//! opens with them, and a gate can fail on them.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

/// Calls that meet every reason: before any catalogue, then against one.
fn every_reason() -> String {
    let call = |tool: &str, arguments: Value| openai_call("c", tool, arguments);
    lines(&[
        // Before any catalogue: no_catalogue.
        call("fs_read", json!(r#"{"ffset":1}"#)),
        mcp_catalogue(),
        // Audited: `reason` is tolerated.
        call("fs_read", json!(r#"{"path":"a","reason":"why"}"#)),
        // A tool that declares nothing: declares_nothing.
        call("now", json!(r#"{"tz":"UTC"}"#)),
        // Unlisted tools: unlisted_tool.
        call("fs_write", json!(r#"{"x":1}"#)),
        call("fs_write", json!(r#"{"x":2}"#)),
        call("mcp__fs__fs_reed", json!(r#"{"x":2}"#)),
        // Arguments that are not an object: unreadable_arguments.
        call("fs_read", json!("not json")),
        call("fs_read", json!("")),
        call("fs_read", json!([1, 2])),
        call("fs_read", Value::Null),
    ])
}

#[test]
fn the_jsonl_output_ends_with_the_coverage_of_every_call() {
    let run = audit(&[], &every_reason());
    assert_eq!(
        output(&run),
        (
            vec![],
            covered(
                10,
                1,
                json!({"no_catalogue": 1, "unlisted_tool": 3, "declares_nothing": 1, "unreadable_arguments": 4}),
                json!({"fs_read": 1, "fs_write": 2, "mcp__fs__fs_reed": 1})
            )
        )
    );
    // The exact line, as the core writes it.
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        r#"{"coverage":{"calls":10,"audited":1,"unaudited":{"no_catalogue":1,"unlisted_tool":3,"declares_nothing":1,"unreadable_arguments":4},"unlisted_tools":{"fs_read":1,"fs_write":2,"mcp__fs__fs_reed":1}}}"#
    );
}

#[test]
fn an_empty_input_still_ends_with_a_coverage_line() {
    assert_eq!(coverage(&audit(&[], "")), all_audited(0));
}

#[test]
fn the_text_report_opens_with_the_same_figures_and_never_claims_what_it_did_not_see() {
    let run = audit(&["--format", "text"], &every_reason());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = &run.stdout;
    assert!(
        report.starts_with(
            "Coverage: 10 call(s): 1 audited, 9 unaudited (1 no_catalogue, 3 unlisted_tool, 1 declares_nothing, 4 unreadable_arguments)\n"
        ),
        "{report}"
    );
    assert!(!report.contains("No undeclared keys"), "{report}");
    assert!(
        report.contains("but 9 of 10 call(s) could not be audited"),
        "{report}"
    );
    // Each reason with its count and what it means.
    for (reason, calls) in [
        ("no_catalogue", 1),
        ("unlisted_tool", 3),
        ("declares_nothing", 1),
        ("unreadable_arguments", 4),
    ] {
        let row = report
            .lines()
            .take_while(|line| !line.is_empty())
            .find(|line| line.trim_start().starts_with(reason))
            .unwrap_or_else(|| panic!("no {reason} row in\n{report}"));
        assert_eq!(
            row.split_whitespace().nth(1),
            Some(calls.to_string().as_str()),
            "{row}"
        );
        assert!(row.split_whitespace().count() > 3, "{row} says what it means");
        assert_eq!(total(report, reason), calls, "{reason}");
    }
    assert_eq!(total(report, "calls read"), 10);
    assert_eq!(total(report, "calls audited"), 1);
    assert_eq!(total(report, "calls unaudited"), 9);
}

#[test]
fn the_report_names_unmatched_tools_with_their_calls_and_near_matches() {
    let run = audit(&["--format", "text"], &every_reason());
    let unlisted: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|line| *line != "Tools in no catalogue")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .collect();
    // Most calls first; a host's name with a misspelt tool is matched to the
    // catalogue name it nearly is; a tool called before its catalogue came
    // is said to be listed by another.
    assert_eq!(unlisted.len(), 3, "{}", run.stdout);
    assert_eq!(
        unlisted[0].split_whitespace().collect::<Vec<_>>(),
        ["fs_write", "2", "calls"]
    );
    let row = |name: &str| {
        *unlisted
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap()
    };
    assert!(
        row("mcp__fs__fs_reed").ends_with(" 1 call   nearly matches fs_read"),
        "{unlisted:?}"
    );
    assert!(
        row("fs_read").ends_with("listed by another catalogue than the one its calls met"),
        "{unlisted:?}"
    );
}

#[test]
fn a_tool_that_declares_nothing_is_named_with_its_unaudited_calls() {
    let run = audit(&["--format", "text"], &every_reason());
    let never = run
        .stdout
        .split("declare nothing\n")
        .nth(1)
        .expect("a list of tools");
    let row = never.lines().next().unwrap();
    assert!(
        row.trim_start().starts_with("now") && row.trim_end().ends_with("1 call"),
        "{row}"
    );
}

#[test]
fn a_clean_run_says_so_only_when_every_call_was_audited() {
    let clean = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"path":"a"}"#)),
    ]);
    let run = audit(&["--format", "text"], &clean);
    assert!(
        run.stdout.starts_with("Coverage: 1 call(s): all audited\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("No undeclared keys in 1 audited call(s)."),
        "{}",
        run.stdout
    );

    let nothing = audit(
        &["--format", "text"],
        &lines(&[json!({"role": "user", "content": "hi"})]),
    );
    assert!(
        nothing.stdout.contains("Coverage: 0 tool calls found")
            && nothing.stdout.contains("0 tool calls found: nothing was audited"),
        "{}",
        nothing.stdout
    );
    for said in ["No undeclared keys", "all audited"] {
        assert!(!nothing.stdout.contains(said), "{}", nothing.stdout);
    }

    // A session with no catalogue: every call unaudited, said as such.
    let transcript = lines(&[
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "mcp__fs__read_file", "input": {"path": "a"}},
        ]}}),
    ]);
    let run = audit(&["--format", "text"], &transcript);
    assert!(
        run.stdout
            .starts_with("Coverage: 2 call(s): 0 audited, 2 unaudited (2 no_catalogue)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("No undeclared keys"), "{}", run.stdout);
}

#[test]
fn the_text_report_counts_every_call_that_carried_a_key() {
    let call = |id: &str, arguments: &str| openai_call(id, "fs_read", json!(arguments));
    let run = audit(
        &["--format", "text"],
        &lines(&[
            mcp_catalogue(),
            call("call_1", r#"{"path":"a","ffset":1}"#),
            call("call_2", r#"{"path":"a","ffset":2,"the rest":"x"}"#),
            call("call_3", r#"{"path":"a"}"#),
            // A key twice in one call is one call that carried it.
            call("call_4", r#"{"ffset":1,"ffset":2}"#),
        ]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = &run.stdout;
    assert!(report.contains("fs_read  (declares offset, path)"), "{report}");
    assert_eq!(finding(report, "ffset"), (3, "call_1".to_owned()));
    assert_eq!(finding(report, "the rest"), (1, "call_2".to_owned()));
    assert_eq!(total(report, "calls read"), 4);
    assert_eq!(total(report, "calls audited"), 4);
    assert_eq!(total(report, "calls unaudited"), 0);
    assert_eq!(total(report, "warnings raised"), 2);
}

// ---------------------------------------------------------- the rules

#[test]
fn a_catalogue_refresh_that_declares_a_key_quiets_it_and_keeps_said_pairs_said() {
    let declaring = |keys: &[&str]| {
        let properties: serde_json::Map<String, Value> =
            keys.iter().map(|k| (k.to_string(), json!({}))).collect();
        json!({"tools": [{"name": "fs_read", "inputSchema": {"type": "object", "properties": properties}}]})
    };
    let call = |id: &str, arguments: &str| openai_call(id, "fs_read", json!(arguments));
    let run = audit(
        &[],
        &lines(&[
            declaring(&["path"]),
            call("1", r#"{"path":"a","offset":1}"#),
            // The refresh declares `offset`; `limit` is new and said.
            declaring(&["path", "offset"]),
            call("2", r#"{"path":"a","offset":1,"limit":2}"#),
            // A later refresh drops `offset` again: said once, it stays said.
            declaring(&["path"]),
            call("3", r#"{"path":"a","offset":1,"depth":4}"#),
        ]),
    );
    assert_eq!(
        warnings(&run),
        [
            said("fs_read", &["offset"], &["path"], "1"),
            said("fs_read", &["limit"], &["offset", "path"], "2"),
            said("fs_read", &["depth"], &["path"], "3"),
        ]
    );
}

#[test]
fn allowed_keys_are_tolerated() {
    let run = audit(
        &["--allow", "toolCallId"],
        &lines(&[
            mcp_catalogue(),
            openai_call("c", "fs_read", json!(r#"{"path":"a","toolCallId":"x"}"#)),
        ]),
    );
    assert_eq!(output(&run), (vec![], all_audited(1)));
}

// ---------------------------------------------------------- exit codes

#[test]
fn fail_on_warning_exits_1_only_when_a_warning_was_raised() {
    let warned = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
    ]);
    let clean = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"path":"a"}"#)),
    ]);
    assert_eq!(audit(&[], &warned).code, 0);
    assert_eq!(audit(&["--fail-on-warning"], &warned).code, 1);
    assert_eq!(audit(&["--fail-on-warning", "--format", "text"], &warned).code, 1);
    assert_eq!(audit(&["--fail-on-warning"], &clean).code, 0);
    assert_eq!(audit(&["--fail-on-warning"], "").code, 0);
}

#[test]
fn fail_on_unaudited_exits_1_when_any_call_went_unaudited() {
    let unaudited = lines(&[openai_call("c", "fs_read", json!(r#"{"ffset":1}"#))]);
    let clean = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"path":"a"}"#)),
    ]);
    let warned = lines(&[
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
    ]);
    assert_eq!(audit(&[], &unaudited).code, 0);
    // The silent case that used to pass a gate.
    assert_eq!(audit(&["--fail-on-warning"], &unaudited).code, 0);
    assert_eq!(audit(&["--fail-on-unaudited"], &unaudited).code, 1);
    assert_eq!(
        audit(&["--fail-on-unaudited", "--format", "text"], &unaudited).code,
        1
    );
    assert_eq!(audit(&["--fail-on-unaudited"], &clean).code, 0);
    assert_eq!(audit(&["--fail-on-unaudited"], &warned).code, 0);
    assert_eq!(audit(&["--fail-on-unaudited"], "").code, 0);
    // Both gates together: either fails the run.
    let both = ["--fail-on-unaudited", "--fail-on-warning"];
    assert_eq!(audit(&both, &unaudited).code, 1);
    assert_eq!(audit(&both, &warned).code, 1);
    assert_eq!(audit(&both, &clean).code, 0);
    for reason in ["declares_nothing", "unreadable_arguments"] {
        let call = match reason {
            "declares_nothing" => openai_call("c", "now", json!("{}")),
            _ => openai_call("c", "fs_read", json!("nope")),
        };
        assert_eq!(
            audit(&["--fail-on-unaudited"], &lines(&[mcp_catalogue(), call])).code,
            1,
            "{reason}"
        );
    }
}
