//! Calls that arrive in pieces across records: a streamed Chat Completion's
//! `tool_calls` deltas, assembled by index until the choice finishes, and a
//! streamed Anthropic message's `tool_use` block, assembled from its
//! `input_json_delta` fragments until the block stops.
//!
//! Each call is handed out with whether its response was cut at the
//! model's length limit ([`TRUNCATED`]), as the stream says when it ends
//! the response: a choice's last chunk has its `finish_reason`, but a
//! message's `stop_reason` comes in its `message_delta`, after its blocks
//! stopped; so the calls of a message that started (`message_start`) are
//! held until then (or its `message_stop`, the next `message_start`, the
//! input's end). Blocks of no message started (a log that kept only
//! blocks) are handed out as each stops.
//!
//! What is still open when the input ends (a stream cut short) is handed out
//! then, as it stands: not truncated, for nothing said the length limit cut
//! it. Memory is bounded whatever the input: at most [`MAX_OPEN`]
//! completions are assembled at once (the oldest is handed out to make
//! room), each with at most [`MAX_PIECES`] choices of at most
//! [`MAX_PIECES`] calls, and a message with at most [`MAX_PIECES`] open
//! blocks (a further one hands out what is open first) and [`MAX_PIECES`]
//! stopped ones held (then they are handed out as they stand); a call's
//! arguments are kept up to [`MAX_ARGUMENTS`] bytes (past that the call is
//! handed out with arguments that cannot be read), and all open or held
//! calls together hold at most [`MAX_HELD`] bytes (past that each is handed
//! out as it stands).

use std::borrow::Cow;

use super::capture::{Node, Object};
use super::plan::{Path, Plan};
#[cfg(doc)]
use super::table::TRUNCATED;
use super::table::event;

/// The most completions assembled at once.
pub(super) const MAX_OPEN: usize = 64;
/// The most choices of one completion, calls of one choice, or blocks of
/// one message assembled at once; and the most stopped blocks of one
/// message held for its stop reason.
pub(super) const MAX_PIECES: usize = 64;
/// The most bytes of arguments kept for one call.
pub(super) const MAX_ARGUMENTS: usize = 16 << 20;
/// The most bytes of arguments all open calls hold together.
pub(super) const MAX_HELD: usize = 64 << 20;

/// One call, assembled.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Assembled {
    pub id: String,
    pub name: String,
    pub server: Option<String>,
    /// `None` when they grew past [`MAX_ARGUMENTS`].
    pub arguments: Option<String>,
    /// The stream said, as it ended the call's response, that the model's
    /// length limit cut it ([`TRUNCATED`]).
    pub truncated: bool,
}

impl Assembled {
    /// The bytes of arguments it holds.
    fn held(&self) -> usize {
        self.arguments.as_ref().map_or(0, String::len)
    }
}

/// A call being assembled.
#[derive(Debug, Default)]
struct Partial {
    index: u64,
    call: Assembled,
    /// The fragments met so far, joined; the `input` a block started with
    /// stands when no fragment comes.
    fragments: String,
    started_with: String,
    overflowed: bool,
}

impl Partial {
    /// Adds a fragment of the arguments.
    fn add(&mut self, fragment: &str) {
        if self.fragments.len() + fragment.len() > MAX_ARGUMENTS {
            self.overflowed = true;
            self.fragments = String::new();
        }
        if !self.overflowed {
            self.fragments.push_str(fragment);
        }
    }

    /// The bytes it holds.
    fn held(&self) -> usize {
        self.fragments.len() + self.started_with.len()
    }

    fn finish(mut self) -> Assembled {
        self.call.arguments = if self.overflowed {
            None
        } else if self.fragments.trim().is_empty() && !self.started_with.is_empty() {
            Some(self.started_with)
        } else {
            Some(self.fragments)
        };
        self.call
    }
}

/// The calls of one choice, or of one message, being assembled, and the
/// bytes they hold.
#[derive(Debug, Default)]
struct Pieces {
    partials: Vec<Partial>,
    held: usize,
}

impl Pieces {
    /// The call at `index`, opened if need be: when [`MAX_PIECES`] are open
    /// already, they are handed out first.
    fn at(&mut self, index: u64, out: &mut Vec<Assembled>) -> &mut Partial {
        let at = match self.partials.iter().position(|p| p.index == index) {
            Some(at) => at,
            None => {
                if self.partials.len() >= MAX_PIECES {
                    std::mem::take(self).finish(out);
                }
                self.partials.push(Partial {
                    index,
                    ..Partial::default()
                });
                self.partials.len() - 1
            }
        };
        &mut self.partials[at]
    }

    /// Adds `fragment` to the call at `index`, if it is open.
    fn add(&mut self, index: u64, fragment: &str) {
        if let Some(partial) = self.partials.iter_mut().find(|p| p.index == index) {
            let before = partial.held();
            partial.add(fragment);
            self.held = self.held - before + partial.held();
        }
    }

    /// Hands out the call at `index`, if it is open.
    fn finish_one(&mut self, index: u64, out: &mut Vec<Assembled>) {
        if let Some(at) = self.partials.iter().position(|p| p.index == index) {
            let partial = self.partials.remove(at);
            self.held -= partial.held();
            out.push(partial.finish());
        }
    }

    /// Hands out every call as it stands: nothing said its response was
    /// cut.
    fn finish(self, out: &mut Vec<Assembled>) {
        self.finish_marked(false, out);
    }

    /// Hands out every call, in index order, marked `truncated` when its
    /// response was cut at the length limit: one whose name never came is
    /// a call to the tool named "", counted as the core counts it.
    fn finish_marked(mut self, truncated: bool, out: &mut Vec<Assembled>) {
        self.partials.sort_by_key(|p| p.index);
        out.extend(self.partials.into_iter().map(|partial| Assembled {
            truncated,
            ..partial.finish()
        }));
    }
}

/// One streamed completion's open choices.
#[derive(Debug)]
struct Completion {
    id: String,
    choices: Vec<(u64, Pieces)>,
}

impl Completion {
    fn held(&self) -> usize {
        self.choices.iter().map(|(_, pieces)| pieces.held).sum()
    }

    fn finish(self, out: &mut Vec<Assembled>) {
        for (_, pieces) in self.choices {
            pieces.finish(out);
        }
    }
}

/// The Anthropic message being streamed: its open `tool_use` blocks, and
/// the calls of those stopped, held until it says why it stopped.
#[derive(Debug, Default)]
struct Message {
    blocks: Pieces,
    stopped: Vec<Assembled>,
    /// The bytes of arguments `stopped` holds.
    stopped_held: usize,
    /// A `message_start` came and no stop reason since: a block that stops
    /// is held for it.
    awaiting_stop: bool,
}

impl Message {
    fn held(&self) -> usize {
        self.blocks.held + self.stopped_held
    }

    /// The block at `index` stops: its call is held while the message
    /// awaits its stop reason (at [`MAX_PIECES`] held, they are handed out
    /// as they stand), handed out at once otherwise.
    fn stop_block(&mut self, index: u64, out: &mut Vec<Assembled>) {
        if !self.awaiting_stop {
            self.blocks.finish_one(index, out);
            return;
        }
        let before = self.stopped.len();
        self.blocks.finish_one(index, &mut self.stopped);
        self.stopped_held += self.stopped[before..].iter().map(Assembled::held).sum::<usize>();
        if self.stopped.len() >= MAX_PIECES {
            self.hand_out_stopped(false, out);
        }
    }

    /// Hands out the calls of the stopped blocks, in the order they
    /// stopped, marked `truncated` as the message's stop reason says.
    fn hand_out_stopped(&mut self, truncated: bool, out: &mut Vec<Assembled>) {
        out.extend(self.stopped.drain(..).map(|call| Assembled { truncated, ..call }));
        self.stopped_held = 0;
    }

    /// Hands out every call it holds, marked `truncated` as its stop reason
    /// says: the stopped ones, then the open ones (the message's content
    /// ended with them open).
    fn hand_out(&mut self, truncated: bool, out: &mut Vec<Assembled>) {
        self.hand_out_stopped(truncated, out);
        std::mem::take(&mut self.blocks).finish_marked(truncated, out);
    }

    /// The message ends, with the stop reason it gave (`truncated`), or
    /// none: a block stopped after it is handed out at once.
    fn end(&mut self, truncated: bool, out: &mut Vec<Assembled>) {
        self.hand_out(truncated, out);
        self.awaiting_stop = false;
    }
}

/// Every stream open in one input.
#[derive(Debug, Default)]
pub(super) struct Streams {
    completions: Vec<Completion>,
    /// The Anthropic message being streamed.
    message: Message,
}

impl Streams {
    /// Takes one `chat.completion.chunk`; hands out the calls of each choice
    /// it finishes.
    pub(super) fn chat_chunk(&mut self, plan: &Plan, chunk: &Object<'_>, out: &mut Vec<Assembled>) {
        let paths = &plan.chunk;
        let stream = plan.text(chunk, &paths.stream).unwrap_or_default();
        let at = match self.completions.iter().position(|c| c.id == stream) {
            Some(at) => at,
            None => {
                if self.completions.len() >= MAX_OPEN {
                    self.completions.remove(0).finish(out);
                }
                self.completions.push(Completion {
                    id: stream.into_owned(),
                    choices: Vec::new(),
                });
                self.completions.len() - 1
            }
        };
        let completion = &mut self.completions[at];
        for_each_object(plan.node(chunk, &paths.choices), &mut |choice| {
            let index = number(plan, choice, &paths.choice).unwrap_or(0);
            let slot = match completion.choices.iter().position(|(i, _)| *i == index) {
                Some(slot) => slot,
                None => {
                    if completion.choices.len() >= MAX_PIECES {
                        for (_, pieces) in completion.choices.drain(..) {
                            pieces.finish(out);
                        }
                    }
                    completion.choices.push((index, Pieces::default()));
                    completion.choices.len() - 1
                }
            };
            let pieces = &mut completion.choices[slot].1;
            let mut position = 0;
            for_each_object(plan.node(choice, &paths.parts), &mut |part| {
                let index = number(plan, part, &paths.part).unwrap_or(position);
                position += 1;
                let partial = pieces.at(index, out);
                set_once(&mut partial.call.id, plan.text(part, &paths.id));
                set_once(&mut partial.call.name, plan.text(part, &paths.name));
                if let Some(fragment) = plan.text(part, &paths.fragment) {
                    pieces.add(index, &fragment);
                }
            });
            if plan.present(choice, &paths.end) {
                let (_, pieces) = completion.choices.swap_remove(slot);
                // `finish_reason: "length"`: the model's limit cut it.
                pieces.finish_marked(plan.is_truncated(choice), out);
            }
        });
        if completion.choices.is_empty() {
            self.completions.remove(at);
        }
        self.bound(out);
    }

    /// Takes one event of a streamed Anthropic message; hands out the
    /// calls of the `tool_use` blocks it ends: a block's as it stops, in a
    /// message that started only once the message says why it stopped.
    pub(super) fn message_event(&mut self, plan: &Plan, event: &Object<'_>, out: &mut Vec<Assembled>) {
        let paths = &plan.events;
        let index = number(plan, event, &paths.index).unwrap_or(0);
        let blocks = &mut self.message.blocks;
        match plan.text(event, &paths.kind).as_deref() {
            // What the previous message held never heard its stop reason.
            Some(event::MESSAGE_START) => {
                self.message.end(false, out);
                self.message.awaiting_stop = true;
            }
            Some(event::MESSAGE_DELTA) => {
                if let Some(Node::Object(delta)) = plan.node(event, &paths.outcome)
                    && plan.present(delta, &paths.stop_reason)
                {
                    // `stop_reason: "max_tokens"`: the model's limit cut it.
                    self.message.end(plan.is_truncated(delta), out);
                }
            }
            Some(event::MESSAGE_STOP) => self.message.end(false, out),
            Some(event::CONTENT_BLOCK_START) => {
                let Some(Node::Object(block)) = plan.node(event, &paths.block) else {
                    return;
                };
                let kind = plan.text(block, &paths.block_kind);
                if !matches!(kind.as_deref(), Some("tool_use" | "mcp_tool_use")) {
                    return;
                }
                // A block started again starts afresh.
                let mut dropped = Vec::new();
                blocks.finish_one(index, &mut dropped);
                let partial = blocks.at(index, out);
                set_once(&mut partial.call.id, plan.text(block, &paths.id));
                set_once(&mut partial.call.name, plan.text(block, &paths.name));
                partial.call.server = plan.text(block, &paths.server).map(Cow::into_owned);
                let input = plan
                    .raw(block, &paths.input)
                    .filter(|i| i.get().len() <= MAX_ARGUMENTS);
                if let Some(input) = input {
                    partial.started_with = input.get().to_owned();
                    blocks.held += input.get().len();
                }
            }
            Some(event::CONTENT_BLOCK_DELTA) => {
                if let Some(fragment) = plan.text(event, &paths.fragment) {
                    blocks.add(index, &fragment);
                }
            }
            Some(event::CONTENT_BLOCK_STOP) => self.message.stop_block(index, out),
            _ => {}
        }
        self.bound(out);
    }

    /// Past [`MAX_HELD`], every open or held call is handed out as it
    /// stands; a message still awaiting its stop reason holds its next
    /// blocks for it again.
    fn bound(&mut self, out: &mut Vec<Assembled>) {
        let held = self.message.held() + self.completions.iter().map(Completion::held).sum::<usize>();
        if held > MAX_HELD {
            self.end_chats(out);
            self.message.hand_out(false, out);
        }
    }

    /// The chat streams end (`data: [DONE]`): hands out what they hold.
    pub(super) fn end_chats(&mut self, out: &mut Vec<Assembled>) {
        for completion in self.completions.drain(..) {
            completion.finish(out);
        }
    }

    /// The input ends: hands out every call still open or held, as it
    /// stands.
    pub(super) fn end(&mut self, out: &mut Vec<Assembled>) {
        self.end_chats(out);
        self.message.end(false, out);
    }
}

/// A call's id and name come whole in its first piece; later pieces that
/// repeat them change nothing.
fn set_once(field: &mut String, value: Option<Cow<'_, str>>) {
    if let Some(value) = value.filter(|_| field.is_empty()) {
        *field = value.into_owned();
    }
}

fn number(plan: &Plan, object: &Object<'_>, path: &Path) -> Option<u64> {
    plan.raw(object, path)?.get().parse().ok()
}

/// Each object of `node`: itself, or each element of an array.
fn for_each_object<'a>(node: Option<&Node<'a>>, f: &mut impl FnMut(&Object<'a>)) {
    match node {
        Some(Node::Object(object)) => f(object),
        Some(Node::Array(items)) => {
            for item in items {
                if let Node::Object(object) = item {
                    f(object);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(text: &str) -> Object<'_> {
        match Plan::get().vocabulary.read(text, false).expect("JSON") {
            Node::Object(object) => object,
            other => panic!("not an object: {other:?}"),
        }
    }

    fn chunk(streams: &mut Streams, text: &str) -> Vec<Assembled> {
        let mut out = Vec::new();
        streams.chat_chunk(Plan::get(), &object(text), &mut out);
        out
    }

    fn assembled(id: &str, name: &str, arguments: &str) -> Assembled {
        Assembled {
            id: id.to_owned(),
            name: name.to_owned(),
            server: None,
            arguments: Some(arguments.to_owned()),
            truncated: false,
        }
    }

    fn event(streams: &mut Streams, text: &str) -> Vec<Assembled> {
        let mut out = Vec::new();
        streams.message_event(Plan::get(), &object(text), &mut out);
        out
    }

    fn truncated(mut call: Assembled) -> Assembled {
        call.truncated = true;
        call
    }

    /// A chunk finishing choice 0 of stream `s` with `finish_reason`, its
    /// one call whole.
    fn last_chunk(finish_reason: &str) -> String {
        format!(
            r#"{{"id":"s","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"call_1","function":{{"name":"f","arguments":"{{\"a\":"}}}}]}},"finish_reason":"{finish_reason}"}}]}}"#
        )
    }

    #[test]
    fn a_choice_finished_at_the_length_limit_hands_out_truncated_calls() {
        let mut streams = Streams::default();
        assert_eq!(
            chunk(&mut streams, &last_chunk("length")),
            [truncated(assembled("call_1", "f", r#"{"a":"#))]
        );
        assert_eq!(
            chunk(&mut streams, &last_chunk("tool_calls")),
            [assembled("call_1", "f", r#"{"a":"#)]
        );
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null}}"#;

    /// The events of a `tool_use` block at `index`, started and stopped.
    fn block(index: u64) -> [String; 3] {
        [
            format!(
                r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"toolu_{index}","name":"f","input":{{}}}}}}"#
            ),
            format!(
                r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":"{{\"a\": 1}}"}}}}"#
            ),
            format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        ]
    }

    fn message_delta(stop_reason: &str) -> String {
        format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop_reason}","stop_sequence":null}},"usage":{{"output_tokens":9}}}}"#
        )
    }

    /// Feeds a message's start and one block: what they handed out.
    fn started_message_with_a_block(streams: &mut Streams) -> Vec<Assembled> {
        let mut out = event(streams, START);
        for text in block(1) {
            out.extend(event(streams, &text));
        }
        out
    }

    #[test]
    fn a_message_stopped_at_max_tokens_hands_out_its_held_calls_truncated() {
        let mut streams = Streams::default();
        assert!(started_message_with_a_block(&mut streams).is_empty());
        assert_eq!(
            event(&mut streams, &message_delta("max_tokens")),
            [truncated(assembled("toolu_1", "f", r#"{"a": 1}"#))]
        );
        assert!(event(&mut streams, r#"{"type":"message_stop"}"#).is_empty());
    }

    #[test]
    fn a_message_that_ended_its_turn_hands_out_its_calls_whole() {
        let mut streams = Streams::default();
        assert!(started_message_with_a_block(&mut streams).is_empty());
        assert_eq!(
            event(&mut streams, &message_delta("end_turn")),
            [assembled("toolu_1", "f", r#"{"a": 1}"#)]
        );
    }

    #[test]
    fn a_message_delta_without_a_stop_reason_keeps_the_calls_held() {
        let mut streams = Streams::default();
        assert!(started_message_with_a_block(&mut streams).is_empty());
        assert!(
            event(
                &mut streams,
                r#"{"type":"message_delta","delta":{},"usage":{"output_tokens":9}}"#
            )
            .is_empty()
        );
        assert_eq!(
            event(&mut streams, &message_delta("max_tokens")),
            [truncated(assembled("toolu_1", "f", r#"{"a": 1}"#))]
        );
    }

    /// Without a stop reason, a message's calls are not in a truncated
    /// response, however the message ends: its stop, the next message, or
    /// the input's end (a stream cut short).
    #[test]
    fn a_message_that_never_gave_its_stop_reason_hands_out_its_calls_as_they_stand() {
        let whole = || vec![assembled("toolu_1", "f", r#"{"a": 1}"#)];
        let mut streams = Streams::default();
        started_message_with_a_block(&mut streams);
        assert_eq!(event(&mut streams, r#"{"type":"message_stop"}"#), whole());
        started_message_with_a_block(&mut streams);
        assert_eq!(event(&mut streams, START), whole());
        for text in block(1) {
            assert!(event(&mut streams, &text).is_empty());
        }
        let mut rest = Vec::new();
        streams.end(&mut rest);
        assert_eq!(rest, whole());
    }

    #[test]
    fn a_message_holding_too_many_stopped_blocks_hands_them_out_as_they_stand() {
        let mut streams = Streams::default();
        let mut handed = event(&mut streams, START);
        // A block still open when the others are handed out stays open.
        let [start, fragment, _] = block(1000);
        handed.extend(event(&mut streams, &start));
        handed.extend(event(&mut streams, &fragment));
        for index in 0..=MAX_PIECES as u64 {
            for text in block(index) {
                handed.extend(event(&mut streams, &text));
            }
        }
        assert_eq!(handed.len(), MAX_PIECES);
        assert!(handed.iter().all(|call| !call.truncated));
        // The one stopped since, and the open one, wait for the stop reason.
        let last = event(&mut streams, &message_delta("max_tokens"));
        let ids: Vec<&str> = last.iter().map(|call| call.id.as_str()).collect();
        assert_eq!(ids, [format!("toolu_{MAX_PIECES}").as_str(), "toolu_1000"]);
        assert!(last.iter().all(|call| call.truncated));
    }

    #[test]
    fn interleaved_completions_and_choices_are_assembled_apart() {
        let mut streams = Streams::default();
        let piece = |stream: &str, choice: u64, first: bool, fragment: &str, end: bool| {
            let head = if first {
                format!(
                    r#""id":"call_{stream}{choice}","function":{{"name":"f_{stream}","arguments":"{fragment}"}}"#
                )
            } else {
                format!(r#""function":{{"arguments":"{fragment}"}}"#)
            };
            let finish = if end { r#""stop""# } else { "null" };
            format!(
                r#"{{"id":"{stream}","object":"chat.completion.chunk","choices":[{{"index":{choice},"delta":{{"tool_calls":[{{"index":0,{head}}}]}},"finish_reason":{finish}}}]}}"#
            )
        };
        assert!(chunk(&mut streams, &piece("a", 0, true, "{", false)).is_empty());
        assert!(chunk(&mut streams, &piece("b", 0, true, "{", false)).is_empty());
        assert!(chunk(&mut streams, &piece("a", 1, true, "{", false)).is_empty());
        assert_eq!(
            chunk(&mut streams, &piece("b", 0, false, "}", true)),
            [assembled("call_b0", "f_b", "{}")]
        );
        assert_eq!(
            chunk(&mut streams, &piece("a", 0, false, "}", true)),
            [assembled("call_a0", "f_a", "{}")]
        );
        let mut rest = Vec::new();
        streams.end(&mut rest);
        assert_eq!(rest, [assembled("call_a1", "f_a", "{")]);
    }

    #[test]
    fn a_streamed_call_whose_name_never_came_is_still_handed_out_at_the_end() {
        let mut streams = Streams::default();
        let nameless = r#"{"id":"s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{\"a\":1}"}}]},"finish_reason":null}]}"#;
        assert!(chunk(&mut streams, nameless).is_empty());
        let mut rest = Vec::new();
        streams.end(&mut rest);
        assert_eq!(rest, [assembled("call_1", "", r#"{"a":1}"#)]);
    }

    #[test]
    fn a_tool_use_block_without_fragments_keeps_the_input_it_started_with() {
        let mut streams = Streams::default();
        let mut out = Vec::new();
        for event in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"mcp_tool_use","id":"mcptoolu_1","name":"read","server_name":"fs","input":{"path":"a"}}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
        ] {
            streams.message_event(Plan::get(), &object(event), &mut out);
        }
        let mut expected = assembled("mcptoolu_1", "read", r#"{"path":"a"}"#);
        expected.server = Some("fs".to_owned());
        assert_eq!(out, [expected]);
    }

    #[test]
    fn too_many_calls_at_once_are_handed_out_as_they_stand() {
        let mut streams = Streams::default();
        let mut handed = Vec::new();
        for n in 0..=MAX_PIECES {
            handed.extend(chunk(
                &mut streams,
                &format!(
                    r#"{{"id":"s","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{n},"id":"c{n}","function":{{"name":"f","arguments":"{{"}}}}]}}}}]}}"#
                ),
            ));
        }
        assert_eq!(handed.len(), MAX_PIECES);
        assert!(handed.iter().all(|call| call.arguments.as_deref() == Some("{")));
        streams.end(&mut handed);
        assert_eq!(handed.len(), MAX_PIECES + 1);
    }

    #[test]
    fn the_oldest_completion_is_handed_out_to_make_room() {
        let mut streams = Streams::default();
        let mut handed = Vec::new();
        for n in 0..=MAX_OPEN {
            handed.extend(chunk(
                &mut streams,
                &format!(
                    r#"{{"id":"s{n}","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"c{n}","function":{{"name":"f","arguments":"{{}}"}}}}]}}}}]}}"#
                ),
            ));
        }
        assert_eq!(handed, [assembled("c0", "f", "{}")]);
    }
}
