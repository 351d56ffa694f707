//! The walker, on records of each kind.

use super::*;
use mcp_unknown_keys::audit::Warning;

/// What a walk handed over, as text.
#[derive(Default)]
struct Seen(Vec<String>);

impl Handler for Seen {
    fn tools(&mut self, tools: &str) {
        self.0.push(format!("tools {tools}"));
    }

    fn call(&mut self, call: Found<'_>) {
        let id = call.id.map(Value::to_string).unwrap_or_default();
        self.0.push(format!(
            "call {} {} {id}",
            call.tool,
            call.arguments.unwrap_or("-")
        ));
    }

    fn logged_warning(&mut self, warning: Warning) {
        self.0.push(format!("logged {}", warning.tool));
    }

    fn summary(&mut self, summary: &str) {
        self.0.push(format!("summary {summary}"));
    }

    fn message(&mut self, message: Message<'_>) -> bool {
        self.0.push(format!("message {message:?}"));
        true
    }
}

fn read(lines: &[&str]) -> (Vec<Read>, Vec<String>) {
    let mut reader = Reader::default();
    let mut seen = Seen::default();
    let reads = lines
        .iter()
        .map(|line| reader.read_line(line, &mut seen))
        .collect();
    reader.finish(&mut seen);
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
    assert_eq!(reader.read_line("event: message", &mut seen), Read::Blank);
    assert_eq!(reader.read_line(": keep-alive", &mut seen), Read::Blank);
    assert_eq!(reader.read_line(chunk, &mut seen), Read::Used);
    assert!(seen.0.is_empty());
    assert_eq!(reader.read_line("data: [DONE]", &mut seen), Read::Used);
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
