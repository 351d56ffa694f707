//! Calls that arrive in pieces across records: a streamed Chat Completion's
//! `tool_calls` deltas, assembled by index until the choice finishes, and a
//! streamed Anthropic message's `tool_use` block, assembled from its
//! `input_json_delta` fragments until the block stops.
//!
//! What is still open when the input ends (a stream cut short) is handed out
//! then, as it stands. Memory is bounded whatever the input: at most
//! [`MAX_OPEN`] completions are assembled at once (the oldest is handed out
//! to make room), each with at most [`MAX_PIECES`] choices of at most
//! [`MAX_PIECES`] calls, and a message with at most [`MAX_PIECES`] blocks (a
//! further one hands out what is open first); a call's arguments are kept
//! up to [`MAX_ARGUMENTS`] bytes (past that the call is handed out with
//! arguments that cannot be read), and all open calls together hold at most
//! [`MAX_HELD`] bytes (past that each is handed out as it stands).

use std::borrow::Cow;

use super::capture::{Node, Object};
use super::plan::{Path, Plan};
use super::table::event;

/// The most completions assembled at once.
pub const MAX_OPEN: usize = 64;
/// The most choices of one completion, calls of one choice, or blocks of
/// one message assembled at once.
pub const MAX_PIECES: usize = 64;
/// The most bytes of arguments kept for one call.
pub const MAX_ARGUMENTS: usize = 16 << 20;
/// The most bytes of arguments all open calls hold together.
pub const MAX_HELD: usize = 64 << 20;

/// One call, assembled.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Assembled {
    pub id: String,
    pub name: String,
    pub server: Option<String>,
    /// `None` when they grew past [`MAX_ARGUMENTS`].
    pub arguments: Option<String>,
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

    /// Hands out every call, in index order: one whose name never came is
    /// a call to the tool named "", counted as the core counts it.
    fn finish(mut self, out: &mut Vec<Assembled>) {
        self.partials.sort_by_key(|p| p.index);
        out.extend(self.partials.into_iter().map(Partial::finish));
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

/// Every stream open in one input.
#[derive(Debug, Default)]
pub struct Streams {
    completions: Vec<Completion>,
    /// The blocks of the Anthropic message being streamed.
    blocks: Pieces,
}

impl Streams {
    /// Takes one `chat.completion.chunk`; hands out the calls of each choice
    /// it finishes.
    pub fn chat_chunk(&mut self, plan: &Plan, chunk: &Object<'_>, out: &mut Vec<Assembled>) {
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
                pieces.finish(out);
            }
        });
        if completion.choices.is_empty() {
            self.completions.remove(at);
        }
        self.bound(out);
    }

    /// Takes one event of a streamed Anthropic message; hands out the call
    /// of each `tool_use` block it stops.
    pub fn message_event(&mut self, plan: &Plan, event: &Object<'_>, out: &mut Vec<Assembled>) {
        let paths = &plan.events;
        let index = number(plan, event, &paths.index).unwrap_or(0);
        match plan.text(event, &paths.kind).as_deref() {
            Some(event::MESSAGE_START | event::MESSAGE_STOP) => std::mem::take(&mut self.blocks).finish(out),
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
                self.blocks.finish_one(index, &mut dropped);
                let partial = self.blocks.at(index, out);
                set_once(&mut partial.call.id, plan.text(block, &paths.id));
                set_once(&mut partial.call.name, plan.text(block, &paths.name));
                partial.call.server = plan.text(block, &paths.server).map(Cow::into_owned);
                let input = plan
                    .raw(block, &paths.input)
                    .filter(|i| i.get().len() <= MAX_ARGUMENTS);
                if let Some(input) = input {
                    partial.started_with = input.get().to_owned();
                    self.blocks.held += input.get().len();
                }
            }
            Some(event::CONTENT_BLOCK_DELTA) => {
                if let Some(fragment) = plan.text(event, &paths.fragment) {
                    self.blocks.add(index, &fragment);
                }
            }
            Some(event::CONTENT_BLOCK_STOP) => self.blocks.finish_one(index, out),
            _ => {}
        }
        self.bound(out);
    }

    /// Past [`MAX_HELD`], every open call is handed out as it stands.
    fn bound(&mut self, out: &mut Vec<Assembled>) {
        let held = self.blocks.held + self.completions.iter().map(Completion::held).sum::<usize>();
        if held > MAX_HELD {
            self.end(out);
        }
    }

    /// The chat streams end (`data: [DONE]`): hands out what they hold.
    pub fn end_chats(&mut self, out: &mut Vec<Assembled>) {
        for completion in self.completions.drain(..) {
            completion.finish(out);
        }
    }

    /// The input ends: hands out every call still open.
    pub fn end(&mut self, out: &mut Vec<Assembled>) {
        self.end_chats(out);
        std::mem::take(&mut self.blocks).finish(out);
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
        }
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
