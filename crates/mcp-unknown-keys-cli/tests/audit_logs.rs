//! `audit` of what the proxy keeps: a recording of the JSON-RPC traffic
//! audits as the proxy did, and its `--log` audits again into the same
//! warnings, counted in calls (from the log's summary), not warning lines.

use crate::audit_support;

use audit_support::*;
use serde_json::json;

/// A recorded proxy session: both directions of the JSON-RPC traffic, with
/// a paginated listing, a list-changed notification, a fresh listing, and
/// error responses.
#[test]
fn a_recorded_proxy_session_audits_as_the_proxy_did() {
    let run = audit(&[&fixture_arg("proxy-session.jsonl")], "");
    assert_eq!(
        output(&run),
        (
            vec![
                // Before the listing, id 1 was quiet. The second page extended
                // the first: fs_read (page 1) is still audited.
                said("fs_read", &["ffset", "the rest"], &["offset", "path"], "4"),
                // `reason` is tolerated; `now` declares nothing; id 7 repeats a
                // pair already said.
                said("fs_list", &["recursive"], &["dir"], "five"),
                // After list_changed id 8 was quiet; the fresh listing replaced
                // the catalogue, so fs_read (id 11) is no longer audited; the
                // failed listing (id 12) kept the catalogue.
                said("fs_list", &["glob"], &["depth", "dir"], "10"),
                said("fs_list", &["follow"], &["depth", "dir"], "13"),
            ],
            covered(
                9,
                5,
                json!({"no_catalogue": 2, "unlisted_tool": 1, "declares_nothing": 1}),
                json!({"fs_list": 1, "fs_read": 2})
            )
        )
    );
}

#[test]
fn the_proxy_log_audits_again_into_the_same_warnings() {
    let log = fixture_arg("proxy-session.log.jsonl");
    let from_log = warnings(&audit(&[&log], ""));
    let from_traffic = warnings(&audit(&[&fixture_arg("proxy-session.jsonl")], ""));
    assert_eq!(from_log, from_traffic);

    // Two runs' logs: each pair is said once, but the report counts both.
    let twice = audit(&[&log, &log], "");
    assert_eq!(warnings(&twice), from_traffic);
    let report = audit(&["--format", "text", &log, &log], "");
    assert_eq!(finding(&report.stdout, "ffset"), (2, "4".to_owned()));
    assert_eq!(total(&report.stdout, "warnings re-read from a log"), 8);

    // Fields a later proxy adds are ignored, whatever their type.
    let later = r#"{"tool":"fs_read","unknown_keys":["ffset"],"declared_keys":["path"],"id":"1","message":"x","hints":[{"cause":"typo"}]}"#;
    assert_eq!(
        warnings(&audit(&[], &format!("{later}\n"))),
        [said("fs_read", &["ffset"], &["path"], "1")]
    );

    // A closed schema that declares nothing: the proxy logged
    // `"declared_keys":[]`, and the audit of its log says it again.
    let closed = r#"{"ts":"2026-12-01T00:00:00.000Z","server":"s","session":"1","tool":"ping","unknown_keys":["x"],"declared_keys":[],"id":"7","message":"m"}"#;
    let report = audit(&[], &format!("{closed}\n"));
    assert_eq!(warnings(&report), [said("ping", &["x"], &[], "7")]);
    let report = audit(&["--format", "text"], &format!("{closed}\n"));
    assert_eq!(total(&report.stdout, "warnings raised"), 1);

    // An allowed key is tolerated in a logged warning too.
    let allowed = audit(&["--allow", "recursive", &log], "");
    assert!(!warnings(&allowed).iter().any(|w| w.id == "five"));
}

/// A log as the proxy now writes it: attribution fields on every line,
/// verdict lines, and a summary that counts the session's calls.
fn log_with_summary() -> String {
    let attribution = json!({"ts": "2026-11-30T07:00:00.123Z", "server": "fs", "session": "3f2a"});
    let mut warning = json!({"tool": "fs_read", "unknown_keys": ["ffset"], "declared_keys": ["offset", "path"], "id": "4",
                             "hints": [{"key": "ffset", "cause": "truncated", "suggestion": "offset"}], "missing_keys": [{"key": "offset"}]});
    let mut verdict = json!({"verdict": "ignored", "tool": "fs_read", "id": "4", "unknown_keys": ["ffset"]});
    let mut second =
        json!({"tool": "fs_list", "unknown_keys": ["glob"], "declared_keys": ["dir"], "id": "10"});
    let mut summary = json!({"summary": {
        "coverage": {"calls": 40, "audited": 31, "unaudited": {"no_catalogue": 6, "unlisted_tool": 3}, "unlisted_tools": {"fs_write": 3}},
        "findings": [
            {"tool": "fs_read", "key": "ffset", "calls": 12, "first_id": "4", "cause": "truncated"},
            {"tool": "fs_list", "key": "glob", "calls": 2, "first_id": "10"},
        ],
        "declared_keys": {"fs_read": ["offset", "path"], "fs_list": ["dir"]},
    }});
    for line in [&mut warning, &mut verdict, &mut second, &mut summary] {
        line.as_object_mut()
            .unwrap()
            .extend(attribution.as_object().unwrap().clone());
    }
    lines(&[
        warning,
        verdict,
        second,
        summary,
        json!({"verdict": "rejected", "tool": "x", "id": "9", "unknown_keys": ["y"]}),
    ])
}

#[test]
fn a_log_s_summary_gives_the_calls_counted_and_its_coverage() {
    let log = log_with_summary();
    let run = audit(&[], &log);
    assert_eq!(
        output(&run),
        (
            vec![
                said("fs_read", &["ffset"], &["offset", "path"], "4"),
                said("fs_list", &["glob"], &["dir"], "10"),
            ],
            covered(
                40,
                31,
                json!({"no_catalogue": 6, "unlisted_tool": 3}),
                json!({"fs_write": 3})
            )
        )
    );
    // Verdict lines are neither warnings nor unreadable.
    assert_eq!(run.stderr, "");
    let report = audit(&["--format", "text"], &log).stdout;
    assert_eq!(finding(&report, "ffset"), (12, "4".to_owned()));
    assert_eq!(finding(&report, "glob"), (2, "10".to_owned()));
    assert!(report.contains("fs_read  (declares offset, path)"), "{report}");
    assert!(report.contains("truncated"), "{report}");
    assert_eq!(total(&report, "lines not JSON"), 0);
    assert_eq!(total(&report, "calls read"), 40);
    assert_eq!(total(&report, "warnings re-read from a log"), 2);
    // A gate on coverage sees the session's unaudited calls.
    assert_eq!(audit(&["--fail-on-unaudited"], &log).code, 1);
}

#[test]
fn logs_read_together_add_their_counts() {
    let log = log_with_summary();
    let run = audit(&["--format", "text"], &format!("{log}{log}"));
    assert_eq!(finding(&run.stdout, "ffset"), (24, "4".to_owned()));
    assert_eq!(total(&run.stdout, "calls read"), 80);
}

#[test]
fn an_older_summary_of_findings_still_reads() {
    let log = lines(&[
        json!({"tool": "fs_read", "unknown_keys": ["ffset"], "declared_keys": ["offset", "path"], "id": "4"}),
        json!({"summary": [{"tool": "fs_read", "key": "ffset", "calls": 5, "first_id": "4", "cause": null, "declared_keys": ["offset", "path"]}]}),
    ]);
    let report = audit(&["--format", "text"], &log).stdout;
    assert_eq!(finding(&report, "ffset"), (5, "4".to_owned()));
    // It recorded no coverage: its warning line counts as the call seen.
    assert_eq!(total(&report, "calls read"), 1);
}
