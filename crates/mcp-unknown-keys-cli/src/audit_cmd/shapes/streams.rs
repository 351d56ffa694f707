//! Calls that arrive in pieces across records: a streamed Chat Completion's
//! `tool_calls` deltas, assembled by index until the choice finishes, and a
//! streamed Anthropic message's `tool_use` block, assembled from its
//! `input_json_delta` fragments until the block stops.
//!
//! What is still open when the input ends (a stream cut short) is handed out
//! then, as it stands. Memory is bounded: at most [`MAX_OPEN`] completions
//! are assembled at once (the oldest is handed out to make room), and a
//! call's arguments are kept up to [`MAX_ARGUMENTS`] bytes (past that the
//! call is handed out with arguments that cannot be read).

use std::borrow::Cow;

use super::capture::{Node, Object};
use super::plan::{Path, Plan};

/// The most completions assembled at once.
pub const MAX_OPEN: usize = 64;
/// The most bytes of arguments kept for one call.
pub const MAX_ARGUMENTS: usize = 16 << 20;

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
    fn add(&mut self, fragment: &str) {
        if self.fragments.len() + fragment.len() > MAX_ARGUMENTS {
            self.overflowed = true;
            self.fragments = String::new();
        }
        if !self.overflowed {
            self.fragments.push_str(fragment);
        }
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

/// One streamed completion's open choices.
#[derive(Debug)]
struct Completion {
    id: String,
    choices: Vec<(u64, Vec<Partial>)>,
}

/// Every stream open in one input.
#[derive(Debug, Default)]
pub struct Streams {
    completions: Vec<Completion>,
    /// The blocks of the Anthropic message being streamed.
    blocks: Vec<Partial>,
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
                    let oldest = self.completions.remove(0);
                    finish_completion(oldest, out);
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
                    completion.choices.push((index, Vec::new()));
                    completion.choices.len() - 1
                }
            };
            let partials = &mut completion.choices[slot].1;
            let mut position = 0;
            for_each_object(plan.node(choice, &paths.parts), &mut |part| {
                let index = number(plan, part, &paths.part).unwrap_or(position);
                position += 1;
                let partial = partial_at(partials, index);
                set_once(&mut partial.call.id, plan.text(part, &paths.id));
                set_once(&mut partial.call.name, plan.text(part, &paths.name));
                if let Some(fragment) = plan.text(part, &paths.fragment) {
                    partial.add(&fragment);
                }
            });
            if plan.present(choice, &paths.end) {
                let (_, partials) = completion.choices.swap_remove(slot);
                finish(partials, out);
            }
        });
        if completion.choices.is_empty() {
            self.completions.remove(at);
        }
    }

    /// Takes one event of a streamed Anthropic message; hands out the call
    /// of each `tool_use` block it stops.
    pub fn message_event(&mut self, plan: &Plan, event: &Object<'_>, out: &mut Vec<Assembled>) {
        let paths = &plan.events;
        let index = number(plan, event, &paths.index).unwrap_or(0);
        match plan.text(event, &paths.kind).as_deref() {
            Some("message_start" | "message_stop") => finish(std::mem::take(&mut self.blocks), out),
            Some("content_block_start") => {
                let Some(Node::Object(block)) = plan.node(event, &paths.block) else {
                    return;
                };
                let kind = plan.text(block, &paths.block_kind);
                if !matches!(kind.as_deref(), Some("tool_use" | "mcp_tool_use")) {
                    return;
                }
                self.blocks.retain(|b| b.index != index);
                let partial = partial_at(&mut self.blocks, index);
                set_once(&mut partial.call.id, plan.text(block, &paths.id));
                set_once(&mut partial.call.name, plan.text(block, &paths.name));
                partial.call.server = plan.text(block, &paths.server).map(Cow::into_owned);
                if let Some(input) = plan.raw(block, &paths.input) {
                    partial.started_with = input.get().to_owned();
                }
            }
            Some("content_block_delta") => {
                let fragment = plan.text(event, &paths.fragment);
                if let (Some(partial), Some(fragment)) =
                    (self.blocks.iter_mut().find(|b| b.index == index), fragment)
                {
                    partial.add(&fragment);
                }
            }
            Some("content_block_stop") => {
                if let Some(at) = self.blocks.iter().position(|b| b.index == index) {
                    out.push(self.blocks.remove(at).finish());
                }
            }
            _ => {}
        }
    }

    /// The chat streams end (`data: [DONE]`): hands out what they hold.
    pub fn end_chats(&mut self, out: &mut Vec<Assembled>) {
        for completion in self.completions.drain(..) {
            finish_completion(completion, out);
        }
    }

    /// The input ends: hands out every call still open.
    pub fn end(&mut self, out: &mut Vec<Assembled>) {
        self.end_chats(out);
        finish(std::mem::take(&mut self.blocks), out);
    }
}

fn finish_completion(completion: Completion, out: &mut Vec<Assembled>) {
    for (_, partials) in completion.choices {
        finish(partials, out);
    }
}

/// Hands out the calls in index order.
fn finish(mut partials: Vec<Partial>, out: &mut Vec<Assembled>) {
    partials.sort_by_key(|p| p.index);
    out.extend(
        partials
            .into_iter()
            .filter(|p| !p.call.name.is_empty())
            .map(Partial::finish),
    );
}

fn partial_at(partials: &mut Vec<Partial>, index: u64) -> &mut Partial {
    match partials.iter().position(|p| p.index == index) {
        Some(at) => &mut partials[at],
        None => {
            partials.push(Partial {
                index,
                ..Partial::default()
            });
            partials.last_mut().expect("just pushed")
        }
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
