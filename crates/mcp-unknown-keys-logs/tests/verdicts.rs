//! The verdict in a recording: each JSON-RPC call that carried an
//! undeclared key paired with the server's answer, as the proxy pairs it,
//! told to the observer, counted in the report per verdict and per pair;
//! and a proxy's `--log` read back, its verdict and note lines included.

use mcp_unknown_keys::audit::{Judged, Problem, Verdict};
use mcp_unknown_keys_logs::{Audit, Input, Notice, Observer, Options, RecordKind, Report, read_record};
use serde_json::{Value, json};

/// The verdicts an observer was told, as their JSON lines read back.
#[derive(Default)]
struct Judgements(Vec<Value>);

impl Observer for Judgements {
    fn verdict(&mut self, judged: &Judged) {
        self.0.push(serde_json::from_str(&judged.to_json_line()).unwrap());
    }
}

/// Audits each input in turn: the verdicts told, and the report.
fn audit(inputs: &[&[Value]]) -> (Vec<Value>, Report) {
    let mut audit = Audit::with_observer(&Options::default(), Judgements::default()).unwrap();
    for lines in inputs {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let input = Input::from_reader("recording", std::io::Cursor::new(text.into_bytes())).unwrap();
        audit.read(input).unwrap();
    }
    let told = audit.observer().0.clone();
    (told, audit.finish())
}

fn listed() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "fs_read", "inputSchema": {
            "type": "object",
            "properties": {"path": {}, "opts": {"type": "object", "properties": {"depth": {}}}},
        }}]}}),
    ]
}

fn call(id: Value, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "fs_read", "arguments": arguments}})
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn judged(verdict: &str, id: &str, keys: &[&str]) -> Value {
    json!({"verdict": verdict, "tool": "fs_read", "id": id, "unknown_keys": keys})
}

#[test]
fn each_answer_judges_the_call_it_answers_as_the_proxy_does() {
    let mut recording = listed().to_vec();
    recording.extend([
        call(json!(2), json!({"path": "a", "ffset": 1})),
        call(json!(3), json!({"path": "a", "ffset": 1})),
        call(json!(4), json!({"path": "a", "limit": 1})),
        call(json!("five"), json!({"ffset": 1})),
        call(json!(6), json!({"ffset": 1})),
        call(json!(7.0), json!({"opts": {"dept": 1}})),
        // Neither a call carrying only declared keys nor one without an id
        // awaits anything.
        call(json!(8), json!({"path": "a"})),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "fs_read", "arguments": {"ffset": 1}}}),
        // Answers in any order, in every form servers write them.
        result(json!(3), json!({"content": [], "isError": true})),
        result(json!(2), json!({"content": [{"type": "text", "text": "\"isError\":true"}]})),
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "unknown key limit"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "five"}}),
        result(json!(7), json!({"content": []})),
        result(json!(8), json!({"content": []})),
    ]);
    let (told, report) = audit(&[&recording]);
    assert_eq!(
        told,
        [
            judged("rejected", "3", &["ffset"]),
            judged("ignored", "2", &["ffset"]),
            judged("rejected", "4", &["limit"]),
            judged("unanswered", "five", &["ffset"]),
            json!({"verdict": "ignored", "tool": "fs_read", "id": "7.0", "unknown_keys": [], "unknown_paths": ["opts.dept"]}),
            // Still awaited when the input ended.
            judged("unanswered", "6", &["ffset"]),
        ]
    );
    let counts: Vec<(Verdict, u64)> = report.verdicts.iter().map(|(v, n)| (*v, *n)).collect();
    assert_eq!(
        counts,
        [
            (Verdict::Ignored, 2),
            (Verdict::Rejected, 2),
            (Verdict::Unanswered, 2)
        ]
    );
    assert_eq!(report.judged_calls(), 6);
    let pairs: Vec<(&str, Vec<(Verdict, u64)>)> = report
        .pairs()
        .iter()
        .map(|pair| (pair.key, pair.verdicts.iter().map(|(v, n)| (*v, *n)).collect()))
        .collect();
    assert_eq!(
        pairs,
        [
            // ffset: calls 2, 3, five, 6, and the one without an id.
            (
                "ffset",
                vec![
                    (Verdict::Ignored, 1),
                    (Verdict::Rejected, 1),
                    (Verdict::Unanswered, 2)
                ]
            ),
            ("limit", vec![(Verdict::Rejected, 1)]),
            ("opts.dept", vec![(Verdict::Ignored, 1)]),
        ]
    );
    assert_eq!(report.pairs()[0].calls, 5);
}

#[test]
fn a_recording_s_awaited_calls_end_with_it() {
    let mut first = listed().to_vec();
    first.push(call(json!(2), json!({"ffset": 1})));
    // The next input is another session: its id 2 answers nothing awaited.
    let second = [result(json!(2), json!({"content": []}))];
    let (told, _) = audit(&[&first, &second]);
    assert_eq!(told, [judged("unanswered", "2", &["ffset"])]);
}

/// A proxy's `--log`, as it writes it: a note, a warning and its verdicts,
/// each attributed.
fn proxy_log(summary: Option<Value>) -> Vec<Value> {
    let attribution = json!({"ts": "2026-11-30T07:00:00.123Z", "server": "fs", "session": "3f2a"});
    let mut lines = vec![
        json!({"note": {"tool": "fetch", "at": "", "problem": "remote_ref", "reference": "https://example.com/a.json",
                        "text": "the $ref \"https://example.com/a.json\" is not local and is not fetched: the tool's arguments are not audited"}}),
        json!({"tool": "fs_read", "unknown_keys": ["ffset"], "declared_keys": ["path"], "id": "2"}),
        json!({"verdict": "ignored", "tool": "fs_read", "id": "2", "unknown_keys": ["ffset"]}),
        json!({"verdict": "rejected", "tool": "fs_read", "id": "3", "unknown_keys": ["ffset"]}),
    ];
    lines.extend(summary);
    for line in &mut lines {
        let line = line.as_object_mut().unwrap();
        line.extend(attribution.as_object().unwrap().clone());
    }
    lines
}

#[test]
fn a_proxy_log_s_verdicts_are_said_again_and_counted() {
    let log = proxy_log(None);
    let (told, report) = audit(&[&log, &log]);
    // Said again as the proxy logged them, attribution aside.
    let once = [
        judged("ignored", "2", &["ffset"]),
        judged("rejected", "3", &["ffset"]),
    ];
    assert_eq!(told, [once.clone(), once].concat());
    assert_eq!(report.logged_verdicts, 4);
    assert_eq!(report.judged_calls(), 4);
    // No summary: the lines give the pair's verdicts.
    let pair = &report.pairs()[0];
    assert_eq!((pair.key, pair.calls), ("ffset", 2));
    assert_eq!(
        pair.verdicts.iter().map(|(v, n)| (*v, *n)).collect::<Vec<_>>(),
        [(Verdict::Ignored, 2), (Verdict::Rejected, 2)]
    );
    // The note is said again, once, as the catalogue's note it was.
    let notes: Vec<&Notice> = report
        .notices
        .iter()
        .filter(|notice| matches!(notice, Notice::Schema { .. }))
        .collect();
    assert_eq!(notes.len(), 1, "{:?}", report.notices);
    let Notice::Schema { tool, note } = notes[0] else {
        unreachable!()
    };
    assert_eq!(tool, "fetch");
    assert!(
        matches!(&note.problem, Problem::RemoteRef { reference } if reference == "https://example.com/a.json")
    );
    assert_eq!(report.lines.idle, 0, "every line has a known shape");
}

#[test]
fn a_proxy_log_s_summary_gives_each_pair_s_verdicts() {
    let summary = json!({"summary": {
        "coverage": {"calls": 9, "audited": 9, "unaudited": {}, "unlisted_tools": {}},
        "findings": [{"tool": "fs_read", "key": "ffset", "calls": 7, "first_id": "2", "verdicts": {"ignored": 5, "unanswered": 2}}],
        "declared_keys": {"fs_read": ["path"]},
    }});
    let (_, report) = audit(&[&proxy_log(Some(summary))]);
    let pair = &report.pairs()[0];
    assert_eq!(pair.calls, 7);
    assert_eq!(
        pair.verdicts.iter().map(|(v, n)| (*v, *n)).collect::<Vec<_>>(),
        [(Verdict::Ignored, 5), (Verdict::Unanswered, 2)]
    );
}

#[test]
fn read_record_knows_a_proxy_log_s_verdict_and_note_lines() {
    let log = proxy_log(None);
    let note = read_record(log[0].to_string().as_bytes());
    assert_eq!((note.kind, note.logged_notes), (RecordKind::Used, 1));
    let verdict = read_record(log[2].to_string().as_bytes());
    assert_eq!((verdict.kind, verdict.logged_verdicts), (RecordKind::Used, 1));
    // Not a verdict after all: no known verdict, or no tool.
    for line in [
        json!({"verdict": "maybe", "tool": "t", "id": "1", "unknown_keys": []}),
        json!({"verdict": "ignored", "id": "1", "unknown_keys": []}),
    ] {
        assert_eq!(
            read_record(line.to_string().as_bytes()).logged_verdicts,
            0,
            "{line}"
        );
    }
}

#[test]
fn a_summary_whose_figures_disagree_is_not_trusted_and_overflows_nothing() {
    // Written by hand, not by a proxy: more audited than found, and a
    // reason counting every call there could be.
    let forged = json!({"summary": {
        "coverage": {"calls": 1, "audited": 5, "unaudited": {"no_catalogue": u64::MAX}, "unlisted_tools": {}},
        "findings": [],
    }});
    let log = proxy_log(Some(forged));
    let (_, report) = audit(&[&log, &log]);
    assert!(report.coverage.is_consistent(), "{:?}", report.coverage);
    assert!(report.coverage.unaudited_calls() < 10, "{:?}", report.coverage);
}

#[test]
fn counts_at_their_limit_read_twice_and_added_to_saturate_rather_than_overflow() {
    // Figures that agree with one another, at the limit of a u64.
    let max = u64::MAX;
    let huge = json!({"summary": {
        "coverage": {"calls": max, "audited": max, "unaudited": {}, "unlisted_tools": {}},
        "findings": [{"tool": "fs_read", "key": "ffset", "calls": max, "first_id": "2",
                      "verdicts": {"ignored": max, "rejected": max}}],
    }});
    let log = proxy_log(Some(huge));
    let recording = [
        listed().to_vec(),
        vec![json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "fs_read", "arguments": {"path": "a", "ffset": 1}}})],
    ]
    .concat();
    let (_, report) = audit(&[&log, &log, &recording]);
    assert_eq!(report.coverage.calls, max);
    let pair = &report.pairs()[0];
    assert_eq!((pair.key, pair.calls), ("ffset", max));
    assert_eq!(pair.verdicts.values().copied().max(), Some(max));
}
