//! The one walker: reads a record against every shape of the table, in
//! order, and hands what it finds to a [`Handler`].

use std::borrow::Cow;
use std::collections::BTreeMap;

use mcp_unknown_keys::audit::arguments_text;
use mcp_unknown_keys::jsonrpc::{Id, Message};
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use super::capture::{Node, Object};
use super::plan::{CallPaths, Compiled, Path, Plan};
use super::seen::{Print, Seen};
use super::streams::{Assembled, Streams};
use super::table::Reads;
use super::{Found, Handler, Read, json_string, proxy_lines, rpc};

/// How many levels down a record of no known shape is searched for records
/// (`{"loglines":[…]}`, a results file whose entries hold trajectories).
const MAX_SEARCH_DEPTH: u8 = 3;

/// How many records deep records are read (an OTLP span is three down, a
/// batch line's choice message five), arrays of arrays counted as levels
/// too. A line nesting records past it, as only a hostile one would, is
/// read no deeper, and said to be too deep: each level opened on demand
/// reads its text again, and each is a frame of the walker's stack.
const MAX_RECORD_DEPTH: u8 = 16;

/// Reads the records of one input, keeping what spans records: the calls
/// already read and the streams being assembled.
#[derive(Debug, Default)]
pub struct Reader {
    seen: Seen,
    streams: Streams,
}

impl Reader {
    /// Reads one line of JSON Lines. A line of server-sent events is read
    /// by its `data:`, and `data: [DONE]` ends the chat streams; the other
    /// lines of that framing are blank.
    pub fn read_line(&mut self, line: &str, to: &mut impl Handler) -> Read {
        let mut line = line.trim_ascii();
        if let Some(data) = line.strip_prefix("data:") {
            line = data.trim_ascii();
            if line == "[DONE]" {
                let mut ended = Vec::new();
                self.streams.end_chats(&mut ended);
                self.walk(to).assembled(ended);
                return Read::Used;
            }
        } else if ["event:", "id:", "retry:", ":"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            return Read::Blank;
        }
        if line.is_empty() {
            return Read::Blank;
        }
        self.read_value(line, false, to)
    }

    /// Reads one JSON value of a file that is not JSON Lines: each element
    /// of an array, or an object as a record; an object of no known shape is
    /// searched for records in its members, arrays and objects alike.
    pub fn read_document(&mut self, text: &str, to: &mut impl Handler) -> Read {
        self.read_value(text.trim_ascii(), true, to)
    }

    /// The input ends: the calls of streams cut short are handed over as
    /// they stand.
    pub fn finish(&mut self, to: &mut impl Handler) {
        let mut ended = Vec::new();
        self.streams.end(&mut ended);
        self.walk(to).assembled(ended);
    }

    fn read_value(&mut self, text: &str, document: bool, to: &mut impl Handler) -> Read {
        self.seen.new_record();
        let mut walk = self.walk(to);
        let read = walk.text(text, 0, document);
        if walk.too_deep {
            // Whatever was found above the cut was handed over; what lies
            // below it may hold calls, so the record is not passed as read.
            return Read::TooDeep;
        }
        match read {
            Some(true) => Read::Used,
            Some(false) => Read::Nothing,
            // Valid JSON the walker could not open: nested past serde_json's
            // depth limit.
            None if serde_json::from_str::<IgnoredAny>(text).is_ok() => Read::TooDeep,
            None => Read::Unreadable,
        }
    }

    fn walk<'r, H: Handler>(&'r mut self, to: &'r mut H) -> Walk<'r, H> {
        Walk {
            plan: Plan::get(),
            seen: &mut self.seen,
            streams: &mut self.streams,
            to,
            depth: 0,
            too_deep: false,
            model: None,
        }
    }
}

struct Walk<'r, H> {
    plan: &'static Plan,
    seen: &'r mut Seen,
    streams: &'r mut Streams,
    to: &'r mut H,
    /// How many records deep the walk is.
    depth: u8,
    /// Whether the walk met records nested past [`MAX_RECORD_DEPTH`].
    too_deep: bool,
    /// The model the records being read name ([`Plan::model`]): a record
    /// naming none inherits the one of the record holding it.
    model: Option<String>,
}

impl<H: Handler> Walk<'_, H> {
    /// Reads a JSON text: `None` when it does not read; else whether it
    /// held anything used.
    fn text(&mut self, text: &str, depth: u8, document: bool) -> Option<bool> {
        if text.starts_with('[') {
            // Each element on its own, so a handler can be given its text.
            let elements: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            if !self.deeper() {
                return Some(false);
            }
            let mut any = false;
            for element in elements {
                // Each element is a record of its own: a request body's
                // history is counted against the calls read before it,
                // not against its neighbours' in the same array.
                self.seen.new_record();
                any |= self.text(element.get(), depth, document).unwrap_or(false);
            }
            self.depth -= 1;
            return Some(any);
        }
        let Node::Object(record) = self.plan.vocabulary.read(text, true).ok()? else {
            return Some(false);
        };
        let mut found = self.record(&record, Some(text), false) || self.to.unrecognised(text);
        if !found && depth < MAX_SEARCH_DEPTH {
            for array in &record.other_arrays {
                found |= self.text(array.get(), depth + 1, false).unwrap_or(false);
            }
            if !found && document {
                found = self.members(text, depth);
            }
        }
        Some(found)
    }

    /// Goes one level deeper, unless that is past [`MAX_RECORD_DEPTH`]
    /// (then notes that the record nests too deep). The caller comes back
    /// up (`self.depth -= 1`) when it went down.
    fn deeper(&mut self) -> bool {
        if self.depth >= MAX_RECORD_DEPTH {
            self.too_deep = true;
            return false;
        }
        self.depth += 1;
        true
    }

    /// Searches every member of an object that is itself an array or an
    /// object, for a document that holds its records one level down.
    fn members(&mut self, text: &str, depth: u8) -> bool {
        let Ok(members) = serde_json::from_str::<BTreeMap<Cow<'_, str>, &RawValue>>(text) else {
            return false;
        };
        let mut found = false;
        for value in members.values() {
            if value.get().starts_with(['[', '{']) {
                found |= self.text(value.get(), depth + 1, true).unwrap_or(false);
            }
        }
        found
    }

    /// Reads one record (whose `text` may be at hand) as a JSON-RPC message
    /// and against every shape; whether anything was used.
    ///
    /// A proxy's own log line is only that, and holds nothing else: it is
    /// looked for only in a record in which no other shape was found, so a
    /// message or a call that happens to have a `summary` or a `verdict`
    /// member is read for what it holds.
    fn record(&mut self, record: &Object<'_>, text: Option<&str>, history: bool) -> bool {
        let plan = self.plan;
        // The model this record names holds for the records it holds, and
        // the one around it again once it is read.
        let named = plan.model.iter().find_map(|path| plan.text(record, path));
        let outer = match named {
            Some(model) if self.model.as_deref() != Some(model.as_ref()) => {
                Some(self.model.replace(model.into_owned()))
            }
            _ => None,
        };
        let mut found = rpc::is_message(plan, record) && self.message(record, text);
        for shape in plan.candidates(record) {
            if !shape.shape.reads.is_whole_record() {
                found |= self.shape(shape, record, history);
            }
        }
        found = found
            || plan
                .candidates(record)
                .filter(|shape| shape.shape.reads.is_whole_record())
                .any(|shape| self.shape(shape, record, history));
        if let Some(outer) = outer {
            self.model = outer;
        }
        found
    }

    /// Reads `record` for one shape; whether it was there.
    fn shape(&mut self, shape: &Compiled, record: &Object<'_>, history: bool) -> bool {
        if let Reads::Catalogue = shape.reading {
            return self.catalogue(record, &shape.at);
        }
        let plan = self.plan;
        let mut matched = false;
        each_object(plan, record, &shape.at, &mut |object| {
            if shape.settled || plan.holds(&shape.when, object) {
                matched |= self.read(shape, object, history);
            }
        });
        matched
    }

    fn read(&mut self, shape: &Compiled, object: &Object<'_>, history: bool) -> bool {
        let plan = self.plan;
        match &shape.reading {
            Reads::Records {
                history: holds_history,
            } => {
                if !self.deeper() {
                    return false;
                }
                let found = self.record(object, None, history || *holds_history);
                self.depth -= 1;
                found
            }
            Reads::Call(paths) => self.call(paths, object, history),
            Reads::Catalogue => false,
            Reads::LoggedWarning => match proxy_lines::warning(self.plan, object) {
                Some(warning) => {
                    self.to.logged_warning(warning);
                    true
                }
                None => false,
            },
            // A Claude Code line's `summary` is a string: no proxy's summary.
            Reads::Summary => match plan
                .raw(object, &plan.logged.summary)
                .filter(|raw| crate::logged::is_summary(raw.get()))
            {
                Some(summary) => {
                    self.to.summary(summary.get());
                    true
                }
                None => false,
            },
            Reads::Verdict => match proxy_lines::verdict(self.plan, object) {
                Some(judged) => {
                    self.to.logged_verdict(judged);
                    true
                }
                None => false,
            },
            Reads::LoggedNote => match proxy_lines::note(self.plan, object) {
                Some(proxy_lines::LoggedNote { tool, note }) => {
                    self.to.logged_note(tool, note);
                    true
                }
                None => false,
            },
            Reads::ChatChunk => {
                let mut done = Vec::new();
                self.streams.chat_chunk(plan, object, &mut done);
                self.assembled(done);
                true
            }
            Reads::MessageEvent => {
                let mut done = Vec::new();
                self.streams.message_event(plan, object, &mut done);
                self.assembled(done);
                true
            }
        }
    }

    /// A catalogue: the list of tools at `at`, as an array or as JSON text
    /// in a string (an OpenTelemetry attribute).
    fn catalogue(&mut self, record: &Object<'_>, at: &Path) -> bool {
        let Some(raw) = self.plan.raw(record, at) else {
            return false;
        };
        let text = match json_string(raw) {
            Some(text) => text,
            None => Cow::Borrowed(raw.get()),
        };
        if !text.trim_start().starts_with('[') {
            return false;
        }
        self.to.tools(&text);
        true
    }

    /// A JSON-RPC message, read as the proxy reads it: a call is handed
    /// over as any call is (but never taken for a repeat), anything else as
    /// the message it is.
    fn message(&mut self, record: &Object<'_>, text: Option<&str>) -> bool {
        let mut kept = String::new();
        match rpc::read(self.plan, record, text, &mut kept) {
            Some(Message::Call { id, name, arguments }) => {
                let value = id.as_ref().map(Id::to_value);
                let model = self.model.take();
                let found = Found {
                    tool: &name,
                    server: None,
                    arguments: arguments.as_deref(),
                    id: value.as_ref(),
                    rpc_id: id.as_ref(),
                    as_listed: true,
                    model: model.as_deref(),
                };
                self.emit(found, false, false);
                self.model = model;
                true
            }
            Some(Message::Other) | None => false,
            Some(message) => self.to.message(message),
        }
    }

    fn call(&mut self, paths: &CallPaths, object: &Object<'_>, history: bool) -> bool {
        let plan = self.plan;
        // A placeholder that a complete copy of the call follows.
        if plan.holds(&plan.placeholder, object) {
            return true;
        }
        // A name that is there but empty is still a call (to the tool
        // named "", counted as the core counts it); no name at all is no call.
        let Some(tool) = first(&paths.name, |p| plan.text(object, p)) else {
            return false;
        };
        let server = first(&paths.server, |p| plan.text(object, p));
        let arguments = first(&paths.arguments, |p| plan.raw(object, p)).map(|raw| arguments_text(raw.get()));
        let id_raw = first(&paths.id, |p| plan.raw(object, p));
        let id: Option<Value> = id_raw.and_then(|raw| serde_json::from_str(raw.get()).ok());
        let model = self.model.take();
        let found = Found {
            tool: &tool,
            server: server.as_deref(),
            arguments: arguments.as_deref(),
            id: id.as_ref(),
            rpc_id: None,
            as_listed: false,
            model: model.as_deref(),
        };
        self.emit(found, true, history);
        self.model = model;
        true
    }

    /// Hands over the calls streams finished, as made by the model the
    /// record finishing them names (a chat chunk names it; the end of an
    /// input names none).
    fn assembled(&mut self, calls: Vec<Assembled>) {
        let model = self.model.take();
        for call in calls {
            let id = Value::String(call.id);
            let found = Found {
                tool: &call.name,
                server: call.server.as_deref(),
                arguments: call.arguments.as_deref(),
                id: Some(&id).filter(|id| id.as_str() != Some("")),
                rpc_id: None,
                as_listed: false,
                model: model.as_deref(),
            };
            self.emit(found, true, false);
        }
        self.model = model;
    }

    /// Hands over one call, unless it was read before in this input.
    fn emit(&mut self, found: Found<'_>, once: bool, history: bool) {
        if once {
            let id = found.id.map(|id| match id {
                Value::String(text) => Cow::Borrowed(text.as_str()),
                other => Cow::Owned(other.to_string()),
            });
            let print = Print {
                id: id.as_deref(),
                name: found.tool,
                server: found.server,
                arguments: found.arguments,
            };
            if !self.seen.first_time(&print, history) {
                return;
            }
        }
        self.to.call(found);
    }
}

/// The first of `paths` at which `read` finds something.
fn first<'p, T>(paths: &'p [Path], read: impl FnMut(&'p Path) -> Option<T>) -> Option<T> {
    paths.iter().find_map(read)
}

/// Calls `f` with each object at `path` from `object`: an array met on the
/// way is read element by element, and a member kept both ways is opened
/// when it is an array.
fn each_object<'a>(plan: &Plan, object: &Object<'a>, path: &Path, f: &mut impl FnMut(&Object<'a>)) {
    let Path::Members(words) = path else {
        return;
    };
    match words.split_first() {
        None => f(object),
        Some((word, rest)) => {
            if let Some(node) = object.get(*word) {
                each_in(plan, node, rest, f);
            }
        }
    }
}

fn each_in<'a>(plan: &Plan, node: &Node<'a>, rest: &[u16], f: &mut impl FnMut(&Object<'a>)) {
    match node {
        Node::Object(object) => match rest.split_first() {
            None => f(object),
            Some((word, rest)) => {
                if let Some(node) = object.get(*word) {
                    each_in(plan, node, rest, f);
                }
            }
        },
        Node::Array(items) => {
            for item in items {
                each_in(plan, item, rest, f);
            }
        }
        Node::Raw(raw) if raw.get().starts_with('[') => {
            if let Ok(opened) = plan.vocabulary.read(raw.get(), false) {
                each_in(plan, &opened, rest, f);
            }
        }
        Node::Raw(_) | Node::Scalar => {}
    }
}

#[cfg(test)]
mod tests {
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
}
