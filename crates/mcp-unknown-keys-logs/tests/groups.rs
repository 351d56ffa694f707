//! Groups: where a call's model is read from, and that the groups add up to
//! the coverage, calls a proxy's log counted included.

use mcp_unknown_keys_logs::{Audit, Dimension, Group, Input, Options, PROXY_LOG, UNKNOWN};

fn grouped(by: &[Dimension], inputs: &[(&str, &str)]) -> (Vec<Group>, u64) {
    let mut audit = Audit::new(&Options::default().group_by(by.iter().copied())).unwrap();
    for (name, text) in inputs {
        let bytes = std::io::Cursor::new(text.as_bytes().to_vec());
        audit.read(Input::from_reader(*name, bytes).unwrap()).unwrap();
    }
    let report = audit.finish();
    (report.groups(by).expect("asked for"), report.coverage.calls)
}

fn calls_by_value(groups: &[Group]) -> Vec<(String, u64)> {
    let mut calls: Vec<(String, u64)> = groups.iter().map(|g| (g.values[0].1.clone(), g.calls)).collect();
    calls.sort();
    calls
}

const TOOLS: &str = r#"{"tools":[{"name":"f","inputSchema":{"properties":{"q":{}}}}]}"#;

#[test]
fn the_model_comes_from_the_record_or_a_record_around_it() {
    let log = [
        TOOLS,
        // A Chat Completions request body: its history's calls are its model's.
        r#"{"model":"gpt-4o","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"q\":1}"}}]}]}"#,
        // A Claude Code line: the model is its message's.
        r#"{"type":"assistant","message":{"model":"claude-opus-4","content":[{"type":"tool_use","id":"2","name":"f","input":{"q":1,"x":2}}]}}"#,
        // An OpenTelemetry span, its attributes as OTLP writes them: the
        // requested model first.
        r#"{"name":"execute_tool f","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"f"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"3"}},{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"q\":1}"}},{"key":"gen_ai.response.model","value":{"stringValue":"gemini-2.5-pro-001"}},{"key":"gen_ai.request.model","value":{"stringValue":"gemini-2.5-pro"}}]}"#,
        // A span naming only its response's model.
        r#"{"name":"execute_tool f","attributes":{"gen_ai.tool.name":"f","gen_ai.tool.call.id":"4","gen_ai.tool.call.arguments":"{}","gen_ai.response.model":"o3-2025"}}"#,
        // A streamed Chat Completion: each chunk names the model.
        r#"{"id":"s","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"5","function":{"name":"f","arguments":"{\"q\""}}]}}]}"#,
        r#"{"id":"s","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}"#,
        // A call naming no model, after records that did: none is carried over.
        r#"{"type":"tool_use","id":"6","name":"f","input":{"q":1}}"#,
        // A model that is no string is no model.
        r#"{"model":{"name":"m"},"choices":[{"message":{"tool_calls":[{"id":"7","function":{"name":"f","arguments":"{}"}}]}}]}"#,
    ]
    .join("\n");
    let (groups, calls) = grouped(&[Dimension::Model], &[("log", &log)]);
    assert_eq!(
        calls_by_value(&groups),
        [
            (UNKNOWN.to_owned(), 2),
            ("claude-opus-4".to_owned(), 1),
            ("gemini-2.5-pro".to_owned(), 1),
            ("gpt-4.1".to_owned(), 1),
            ("gpt-4o".to_owned(), 1),
            ("o3-2025".to_owned(), 1),
        ]
    );
    assert_eq!(groups.iter().map(|g| g.calls).sum::<u64>(), calls);
    let claude = groups.iter().find(|g| g.values[0].1 == "claude-opus-4").unwrap();
    assert_eq!(
        (claude.calls_with_unknown_keys, claude.per_1000_audited()),
        (1, Some(1000.0))
    );
    assert_eq!(claude.causes.keys().collect::<Vec<_>>(), ["invented"]);
}

#[test]
fn the_calls_a_proxy_log_counted_are_a_group_of_their_own_with_no_rate() {
    let proxy_log = r#"{"tool":"f","unknown_keys":["x"],"declared_keys":["q"],"id":"1"}
{"summary":{"coverage":{"calls":40,"audited":38,"unaudited":{"unlisted_tool":2},"unlisted_tools":{"g":2}},"findings":[{"tool":"f","key":"x","calls":3,"first_id":"1"}]}}
"#;
    let session = [
        TOOLS,
        r#"{"type":"tool_use","id":"2","name":"f","input":{"q":1}}"#,
    ]
    .join("\n");
    for by in [Dimension::Tool, Dimension::File, Dimension::Model] {
        let (groups, calls) = grouped(&[by], &[("proxy.log", proxy_log), ("session.jsonl", &session)]);
        assert_eq!(calls, 41);
        assert_eq!(groups.iter().map(|g| g.calls).sum::<u64>(), calls, "{by}");
        let logged = groups
            .iter()
            .find(|g| g.from_proxy_log)
            .expect("a proxy log group");
        let expected = if by == Dimension::File {
            "proxy.log"
        } else {
            PROXY_LOG
        };
        assert_eq!(
            (logged.values[0].1.as_str(), logged.calls, logged.audited),
            (expected, 40, 38)
        );
        assert_eq!(logged.per_1000_audited(), None);
    }
}

#[test]
fn no_grouping_asked_for_is_none() {
    let (groups, _) = grouped(&[Dimension::Key], &[("log", TOOLS)]);
    assert!(groups.is_empty());
    let audit = Audit::new(&Options::default()).unwrap();
    assert!(audit.finish().groups(&[Dimension::Model]).is_none());
}

#[test]
fn a_key_written_at_the_top_and_as_a_nested_path_alike_counts_its_call_once() {
    // The top-level key `x.y` and the nested key `y` of `x` (the path
    // `x.y`) are both undeclared: one call, under one group of its key.
    let log = r#"{"tools":[{"name":"f","parameters":{"properties":{"x":{"type":"object","properties":{"z":{}}}}}}],"messages":[{"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"x.y\":1,\"x\":{\"y\":2}}"}}]}]}"#;
    let (by_key, calls) = grouped(&[Dimension::Key], &[("log", log)]);
    assert_eq!(calls, 1);
    assert_eq!(calls_by_value(&by_key), [("x.y".to_owned(), 1)]);
    let (by_model, _) = grouped(&[Dimension::Model], &[("log", log)]);
    assert_eq!(by_model[0].calls_with_unknown_keys, 1);
    assert_eq!(by_model[0].unknown_keys["x.y"], 1);
}
