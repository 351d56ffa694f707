//! The walker, on records of each kind.

use super::*;

/// What a walk handed over, as text.
#[derive(Default)]
struct Seen(Vec<String>);

impl Seen {
    fn take(&mut self, event: Event<'_>) -> bool {
        match event {
            Event::Tools(tools) | Event::ListedTools(tools) => self.0.push(format!("tools {tools}")),
            Event::Call(call) => {
                let id = call.id.map(Value::to_string).unwrap_or_default();
                self.0.push(format!(
                    "call {} {} {id}",
                    call.tool,
                    call.arguments.unwrap_or("-")
                ));
            }
            Event::LoggedWarning(warning) => self.0.push(format!("logged {}", warning.tool)),
            Event::Summary(summary) => self.0.push(format!("summary {summary}")),
            Event::Message(message) => self.0.push(format!("message {message:?}")),
            Event::Relayed(relayed) => self.0.push(format!(
                "relayed {} {:?} {:?}",
                relayed.server, relayed.id, relayed.message
            )),
            Event::BeginRecord | Event::EndRecord | Event::LoggedVerdict(_) | Event::LoggedNote { .. } => {}
            Event::Unrecognised(_) => return false,
        }
        true
    }
}

fn read(lines: &[&str]) -> (Vec<Read>, Vec<String>) {
    let mut reader = Reader::default();
    let mut seen = Seen::default();
    let reads = lines
        .iter()
        .map(|line| reader.read_line(line, |event| seen.take(event)))
        .collect();
    reader.finish(|event| seen.take(event));
    (reads, seen.0)
}

#[test]
fn a_claude_code_summary_line_is_no_proxy_summary() {
    let (reads, seen) = read(&[r#"{"type":"summary","summary":"Fixing the parser","leafUuid":"u"}"#]);
    assert_eq!((reads, seen), (vec![Read::Nothing], vec![]));
}

#[test]
fn arguments_are_never_read_as_records() {
    // A tool_use whose input looks like a request body holds one call.
    let line = r#"{"type":"tool_use","id":"t","name":"run","input":{"messages":[{"tool_calls":[{"id":"x","function":{"name":"evil","arguments":"{}"}}]}]}}"#;
    let (_, seen) = read(&[line]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].starts_with("call run "), "{seen:?}");
}

#[test]
fn a_placeholder_is_recognised_but_not_counted() {
    let (reads, seen) = read(&[
        r#"{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"status":"in_progress"}}"#,
    ]);
    assert_eq!((reads, seen), (vec![Read::Used], vec![]));
}

#[test]
fn sse_framing_is_blank_and_done_ends_the_chat_streams() {
    let chunk = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}"#;
    let mut reader = Reader::default();
    let mut seen = Seen::default();
    assert_eq!(
        reader.read_line("event: message", |event| seen.take(event)),
        Read::Blank
    );
    assert_eq!(
        reader.read_line(": keep-alive", |event| seen.take(event)),
        Read::Blank
    );
    assert_eq!(reader.read_line(chunk, |event| seen.take(event)), Read::Used);
    assert!(seen.0.is_empty());
    assert_eq!(
        reader.read_line("data: [DONE]", |event| seen.take(event)),
        Read::Used
    );
    assert_eq!(seen.0, [r#"call f {} "call_1""#]);
}

#[test]
fn a_record_of_no_known_shape_is_searched_a_few_levels_down() {
    let call = r#"{"id":"c1","function":{"name":"f","arguments":"{}"}}"#;
    let nested = format!(r#"{{"a":[{{"b":[{{"c":[{{"tool_calls":[{call}]}}]}}]}}]}}"#);
    let (_, seen) = read(&[&nested]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let too_deep = format!(r#"{{"a":[{{"b":[{{"c":[{{"d":[{call}]}}]}}]}}]}}"#);
    let (reads, seen) = read(&[&too_deep]);
    assert_eq!((reads, seen), (vec![Read::Nothing], vec![]));
}

#[test]
fn records_nested_past_a_few_levels_are_read_no_deeper() {
    // Kept raw at each level, and opened on demand: without a limit,
    // each level would read the rest again, and deeper than the stack.
    let call = r#"{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}"#;
    let line = |levels: usize| format!("{}{call}{}", r#"{"input":["#.repeat(levels), "]}".repeat(levels));
    let (_, seen) = read(&[&line(3)]);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (reads, seen) = read(&[&line(20_000)]);
    assert_eq!((reads, seen), (vec![Read::TooDeep], vec![]));
}

#[test]
fn json_nested_past_the_parser_s_depth_is_valid_but_too_deep() {
    // Members a shape opens, each in the other's value (a member in its
    // own value is skipped unopened).
    let deep = format!(
        "{}{}",
        r#"{"message":{"content":"#.repeat(100),
        "1".to_owned() + &"}".repeat(200)
    );
    let (reads, _) = read(&[&deep]);
    assert_eq!(reads, [Read::TooDeep]);
    let (reads, _) = read(&["{\"message\":"]);
    assert_eq!(reads, [Read::Unreadable]);
}

/// A gateway's records, in both layouts, each read as the one message it
/// relayed, with its server: a secret's member the gateway's sanitiser
/// wrote as no JSON is read again, its key kept.
#[test]
fn a_gateway_record_is_the_message_it_relayed() {
    let (reads, seen) = read(&[
        r#"{"timestamp":"t","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/list","payload":{"jsonrpc":"2.0","method":"tools/list","params":null}}"#,
        r#"{"timestamp":"t","event":"rpc_response","_schema":"rpc-message/v2","direction":"IN","server_id":"github","payload":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{}}]}}}"#,
        r#"{"timestamp":"t","event":"rpc_request","_schema":"rpc-message/v2","direction":"OUT","server_id":"gh","method":"tools/call","payload":{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"b":1},"name":"a"}}}"#,
        r#"{"timestamp":"t","direction":"OUT","type":"REQUEST","server_id":"gh","method":"tools/call","payload":{"_error":"invalid JSON","_raw":"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"arguments\":{\"key\"=[REDACTED],\"owner\":\"o\"},\"name\":\"get_x\"}}"}}"#,
        r#"{"timestamp":"t","event":"rpc_response","_schema":"rpc-message/v2","direction":"IN","server_id":"gh","payload":{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}}"#,
        r#"{"timestamp":"t","event":"rpc_response","_schema":"rpc-message/v2","direction":"IN","server_id":"gh","error":"context deadline exceeded","payload":{"_error":"invalid JSON","_raw":""}}"#,
        r#"{"timestamp":"t","event":"difc_filtered","_schema":"difc-filtered/v2","server_id":"github","tool_name":"a","reason":"r"}"#,
    ]);
    assert_eq!(reads[..6], [Read::Used; 6]);
    assert_eq!(reads[6], Read::Nothing);
    let number = |n: &str| format!("{:?}", Id::of(&serde_json::json!(n.parse::<u64>().unwrap())));
    assert_eq!(
        seen,
        [
            "relayed github None ListTools { first: true }".to_owned(),
            format!(r#"relayed github {} Response {{ tools: Some("[{{\"name\":\"a\",\"inputSchema\":{{}}}}]"), answer: Result {{ is_error: false }} }}"#, number("1")),
            r#"relayed gh None Call { name: "a", arguments: Some("{\"b\":1}") }"#.to_owned(),
            r#"relayed gh None Call { name: "get_x", arguments: Some("{\"key\":\"[REDACTED]\",\"owner\":\"o\"}") }"#.to_owned(),
            format!("relayed gh {} Response {{ tools: None, answer: Result {{ is_error: true }} }}", number("1")),
            "relayed gh None Failed".to_owned(),
        ]
    );
}
