//! The two pure paths from MCP messages to what the alarm says agree on
//! any session: the core's `Session`, fed each message with its side (as
//! the tap and the Python `Session` feed it), and the log reader's replay
//! of the same messages kept as a recording (as `audit` reads one), with
//! no side. Random sessions: listings in pages, errors answering them,
//! list changes, calls with nested keys and every kind of answer,
//! cancellations, batches, ids equal by value or not, `--allow` and
//! `--top-level-only`. Warnings, verdicts, coverage and findings must be
//! equal.
//!
//! A session opens with a `tools/list` request, as a client's does: a
//! recording with no request at all is read more leniently by the replay
//! (docs/audit.md), by design.

use mcp_unknown_keys::audit::{Auditor, Coverage, Judged, Warning};
use mcp_unknown_keys::session::Side;
use mcp_unknown_keys_logs::{Audit, Input, Observer, Options};
use proptest::prelude::*;
use serde_json::Value;

use crate::support::library::{Fed, feed};

/// What a path said of a session.
#[derive(Debug, PartialEq)]
struct Said {
    warnings: Vec<Warning>,
    verdicts: Vec<Judged>,
    coverage: Coverage,
    findings: Value,
}

/// A message and whether the host sent it.
type Message = (bool, String);

fn through_the_session(messages: &[Message], allow: &[&str], top_level_only: bool) -> Said {
    let auditor = Auditor::new()
        .with_sink(())
        .allow_all(allow.iter().copied())
        .top_level_only(top_level_only);
    let messages = messages.iter().map(|(from_host, text)| {
        let from = if *from_host { Side::Host } else { Side::Server };
        (from, text.as_str())
    });
    let Fed {
        session,
        warnings,
        verdicts,
    } = feed(&auditor, messages);
    Said {
        warnings,
        verdicts,
        coverage: session.coverage().clone(),
        findings: serde_json::to_value(session.findings()).unwrap(),
    }
}

#[derive(Default)]
struct Verdicts(Vec<Judged>);

impl Observer for Verdicts {
    fn verdict(&mut self, judged: &Judged) {
        self.0.push(judged.clone());
    }
}

fn through_the_replay(messages: &[Message], allow: &[&str], top_level_only: bool) -> Said {
    let recording: String = messages.iter().map(|(_, text)| format!("{text}\n")).collect();
    let mut options = Options::default().top_level_only(top_level_only);
    for key in allow {
        options = options.allow(*key);
    }
    let mut audit = Audit::with_observer(&options, Verdicts::default()).unwrap();
    audit
        .read(Input::from_reader("recording.jsonl", std::io::Cursor::new(recording.into_bytes())).unwrap())
        .unwrap();
    // The calls still awaiting their answer at the input's end are judged
    // as it ends: every verdict has been told by now.
    let verdicts = audit.observer().0.clone();
    let report = audit.finish();
    Said {
        warnings: report.warnings.clone(),
        verdicts,
        coverage: report.coverage.clone(),
        findings: serde_json::to_value(&report.findings).unwrap(),
    }
}

/// An id: its value and how it is written (`1`, `1.0`, `"1"`); the first
/// two are one id.
fn id() -> impl Strategy<Value = String> {
    (1u8..=4, 0..3).prop_map(|(n, form)| match form {
        0 => n.to_string(),
        1 => format!("{n}.0"),
        _ => format!("\"{n}\""),
    })
}

/// A tool as a listing declares it: flat, nested, declaring nothing,
/// closed and empty, or too deep to read.
fn tool() -> impl Strategy<Value = String> {
    let too_deep = {
        let mut schema = r#"{"type":"object"}"#.to_owned();
        for _ in 0..300 {
            schema = format!(r#"{{"type":"object","properties":{{"a":{schema}}}}}"#);
        }
        format!(r#"{{"name":"deep","inputSchema":{schema}}}"#)
    };
    prop::sample::select(vec![
        r#"{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{},"offset":{}}}}"#.to_owned(),
        r#"{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{}}}}"#.to_owned(),
        r#"{"name":"create","inputSchema":{"type":"object","properties":{"name":{},"options":{"type":"object","properties":{"mode":{},"deep":{"type":"object","properties":{"x":{}}}}},"items":{"type":"array","items":{"type":"object","properties":{"id":{}}}}}}}"#.to_owned(),
        r#"{"name":"now","inputSchema":{"type":"object"}}"#.to_owned(),
        r#"{"name":"closed","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}"#.to_owned(),
        too_deep,
    ])
}

/// A key: declared somewhere, undeclared, tolerated, or allowed.
fn key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "path", "offset", "ffset", "name", "options", "items", "mode", "deep", "x", "id", "reason",
        "trace_id", "the rest",
    ])
}

/// Arguments: an object of random keys, some holding objects (or arrays
/// of them) of random keys in turn, or arguments of another form.
fn arguments() -> impl Strategy<Value = Option<String>> {
    let leaf = prop_oneof![Just("1".to_owned()), Just("\"v\"".to_owned())];
    let value = leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::btree_map(key(), inner.clone(), 0..3).prop_map(|members| object(&members)),
            prop::collection::vec(
                prop::collection::btree_map(key(), inner, 0..3).prop_map(|members| object(&members)),
                1..3
            )
            .prop_map(|items| format!("[{}]", items.join(","))),
        ]
    });
    let members = prop::collection::btree_map(key(), value, 0..4)
        .prop_map(|members| object(&members))
        .boxed();
    prop_oneof![
        8 => members.clone().prop_map(Some),
        1 => members.prop_map(|text| Some(serde_json::to_string(&text).unwrap())),
        1 => Just(None),
        1 => Just(Some("[1]".to_owned())),
    ]
}

fn object(members: &std::collections::BTreeMap<&str, String>) -> String {
    let members: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", members.join(","))
}

fn call() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["fs_read", "create", "now", "closed", "deep", "ghost"]);
    (prop::option::weighted(0.9, id()), name, arguments()).prop_map(|(id, name, arguments)| {
        let id = id.map(|id| format!(r#""id":{id},"#)).unwrap_or_default();
        let arguments = arguments
            .map(|a| format!(r#","arguments":{a}"#))
            .unwrap_or_default();
        format!(r#"{{"jsonrpc":"2.0",{id}"method":"tools/call","params":{{"name":"{name}"{arguments}}}}}"#)
    })
}

fn list_request() -> impl Strategy<Value = String> {
    (id(), any::<bool>()).prop_map(|(id, cursor)| {
        let params = if cursor { r#","params":{"cursor":"p"}"# } else { "" };
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#)
    })
}

fn listing_page() -> impl Strategy<Value = String> {
    (id(), prop::collection::vec(tool(), 0..4), any::<bool>()).prop_map(|(id, tools, more)| {
        let next = if more { r#","nextCursor":"p""# } else { "" };
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{next}}}}}"#,
            tools.join(",")
        )
    })
}

fn answer() -> impl Strategy<Value = String> {
    (id(), 0..3).prop_map(|(id, kind)| match kind {
        0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#),
        1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"isError":true}}}}"#),
        _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"unknown key"}}}}"#),
    })
}

/// A listing request and the page answering it, the answer's id written
/// as the request's or in another form of the same value.
fn exchange() -> impl Strategy<Value = Vec<Message>> {
    (
        1u8..=4,
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(tool(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(n, cursor, same_form, tools, more)| {
            let params = if cursor { r#","params":{"cursor":"p"}"# } else { "" };
            let answered = if same_form {
                n.to_string()
            } else {
                format!("{n}.0")
            };
            let next = if more { r#","nextCursor":"p""# } else { "" };
            vec![
                (
                    true,
                    format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/list"{params}}}"#),
                ),
                (
                    false,
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{answered},"result":{{"tools":[{}]{next}}}}}"#,
                        tools.join(",")
                    ),
                ),
            ]
        })
}

fn event() -> impl Strategy<Value = Vec<Message>> {
    let one = |strategy: BoxedStrategy<Message>| strategy.prop_map(|m| vec![m]);
    prop_oneof![
        4 => exchange(),
        1 => one(list_request().prop_map(|m| (true, m)).boxed()),
        1 => one(listing_page().prop_map(|m| (false, m)).boxed()),
        10 => one(call().prop_map(|m| (true, m)).boxed()),
        1 => one((call(), call()).prop_map(|(a, b)| (true, format!("[{a},{b}]"))).boxed()),
        5 => one(answer().prop_map(|m| (false, m)).boxed()),
        1 => one((answer(), answer()).prop_map(|(a, b)| (false, format!("[{a},{b}]"))).boxed()),
        1 => one(Just((false, r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned())).boxed()),
        1 => one(id().prop_map(|id| (true, format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#))).boxed()),
    ]
}

fn session() -> impl Strategy<Value = Vec<Message>> {
    (list_request(), prop::collection::vec(event(), 1..20)).prop_map(|(first, rest)| {
        let mut session = vec![(true, first)];
        session.extend(rest.into_iter().flatten());
        session
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_session_and_the_replay_agree_on_any_session(
        messages in session(),
        allow in any::<bool>(),
        top_level_only in any::<bool>(),
    ) {
        let allow: &[&str] = if allow { &["trace_id"] } else { &[] };
        let live = through_the_session(&messages, allow, top_level_only);
        let replayed = through_the_replay(&messages, allow, top_level_only);
        let shown: Vec<String> = messages
            .iter()
            .map(|(host, text)| format!("{} {text}", if *host { "host  " } else { "server" }))
            .collect();
        prop_assert_eq!(replayed, live, "{}", shown.join("\n"));
    }
}
