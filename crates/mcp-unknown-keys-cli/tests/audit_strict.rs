//! `audit --strict-preview`: what a strict server would have refused, as a
//! JSON line, text or a page, and `--adopt`'s file.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

/// Claude Code transcript lines: `fs_read` declares `path`, `offset` and
/// `perPage`; one call per line.
fn log(dir: &std::path::Path) -> (String, String) {
    let tools = dir.join("tools.json");
    let catalogue = json!({"tools": [
        {"name": "fs_read", "inputSchema": {"properties": {"path": {}, "offset": {}, "perPage": {}}}},
        {"name": "search", "inputSchema": {"properties": {"q": {}}}},
    ]});
    std::fs::write(&tools, catalogue.to_string()).unwrap();
    let calls = dir.join("calls.jsonl");
    let call = |id: &str, name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "input": input});
    let text = lines(&[
        call("1", "fs_read", json!({"path": "a", "ffset": 1})),
        call("2", "fs_read", json!({"path": "a", "per_page": 3})),
        call("3", "fs_read", json!({"path": "a", "task_progress": "x"})),
        call("4", "search", json!({"q": "a"})),
        // A key a model wrote with a right-to-left override in it.
        call("5", "search", json!({"q": "a", "q\u{202e}x": 1})),
    ]);
    std::fs::write(&calls, text).unwrap();
    (
        tools.to_string_lossy().into_owned(),
        calls.to_string_lossy().into_owned(),
    )
}

#[test]
fn the_json_line_counts_each_tool_and_what_to_adopt() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, calls) = log(dir.path());
    let adopt = dir.path().join("adopt.json");
    let adopt_arg = adopt.to_string_lossy().into_owned();
    let run = audit(
        &[
            "--strict-preview",
            "--adopt",
            &adopt_arg,
            "--tools",
            &tools,
            &calls,
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(out.len(), 1, "one line, no warning lines: {}", run.stdout);
    let preview: Value = serde_json::from_str(out[0]).unwrap();
    let preview = &preview["strict_preview"];
    assert_eq!(
        (preview["audited"].as_u64(), preview["refused"].as_u64()),
        (Some(5), Some(4))
    );
    assert_eq!(preview["refused_for_host_keys_only"], 1);
    assert_eq!(preview["tools"][0]["tool"], "fs_read");
    assert_eq!(preview["tools"][0]["refused"], 3);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&adopt).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"allow": ["task_progress"], "aliases": {"fs_read": {"ffset": "offset", "per_page": "perPage"}}})
    );
    assert_eq!(written, preview["adopt"]);
    // The file holds model-written text as escapes only.
    assert!(std::fs::read_to_string(&adopt).unwrap().is_ascii());
}

#[test]
fn the_text_and_the_page_say_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, calls) = log(dir.path());
    let run = audit(
        &["--strict-preview", "--format", "text", "--tools", &tools, &calls],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = &run.stdout;
    assert!(text.starts_with("Strict preview: a server that rejects undeclared keys would have refused 4 of 5 calls audited (800.00 per 1000)"), "{text}");
    assert!(
        text.contains("fs_read: 3 of 3 refused (1000.00 per 1000); model keys 2, host keys only 1"),
        "{text}"
    );
    assert!(
        text.contains("ffset: 1 call, model, truncated → offset"),
        "{text}"
    );
    assert!(text.contains("task_progress: 1 call, host, injected"), "{text}");
    assert!(
        !text.contains('\u{202e}'),
        "the override is shown escaped: {text}"
    );
    assert!(text.contains("\"ffset\": \"offset\""), "{text}");

    let run = audit(
        &["--strict-preview", "--format", "html", "--tools", &tools, &calls],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = &run.stdout;
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("default-src 'none'"));
    assert!(
        page.contains("<code>fs_read</code></td><td class=\"n\">3</td><td class=\"n\">3</td>"),
        "{page}"
    );
    assert!(
        page.contains("ffset: 1 call, model, truncated → offset"),
        "{page}"
    );
    assert!(!page.contains('\u{202e}'));
}

#[test]
fn formats_it_has_no_form_in_and_adopt_alone_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, calls) = log(dir.path());
    for format in ["sarif", "junit", "markdown"] {
        let run = audit(
            &["--strict-preview", "--format", format, "--tools", &tools, &calls],
            "",
        );
        assert_eq!(run.code, 2, "{format}: {}", run.stdout);
        assert!(
            run.stderr.contains("--strict-preview writes jsonl, text or html"),
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty());
    }
    let adopt = dir.path().join("adopt.json");
    let run = audit(
        &["--adopt", &adopt.to_string_lossy(), "--tools", &tools, &calls],
        "",
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--strict-preview"), "{}", run.stderr);
    assert!(!adopt.exists());
}
