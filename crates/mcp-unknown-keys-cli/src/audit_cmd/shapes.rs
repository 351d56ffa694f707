//! Recognising what a recorded line is, without building a `Value`.
//!
//! Every line is read into [`Entry`], a struct of borrowed members: each one
//! the line has is kept as its raw JSON text ([`RawValue`]), every other
//! member is skipped. What the line is follows from which members it has;
//! only the few small members that decide it (`type`, `role`, `method`, a
//! tool name, an id) are read further, and a call's arguments reach the key
//! scan as text: the raw text of an object, or a JSON string unescaped into a
//! `Cow` that borrows from the line when it holds no escape.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use mcp_unknown_keys::audit::{Arguments, Call, Hint, MissingKey, Warning};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// What a line carries, handed to the replay as it is recognised.
pub trait Handler {
    /// A listing of tools: a fresh catalogue, or a page of a `tools/list`
    /// response (`page` is then `Some(has_next_cursor)`).
    fn tools(&mut self, tools: &RawValue, page: Option<bool>);
    /// One call to audit.
    fn call(&mut self, call: Call<'_>);
    /// A warning the proxy logged with `--log`.
    fn logged_warning(&mut self, warning: Warning);
    /// `notifications/tools/list_changed`: the catalogue is stale.
    fn list_changed(&mut self);
    /// A `tools/list` request without a cursor: the next page answering it
    /// opens a new listing, as in the proxy.
    fn listing_requested(&mut self);
}

/// What became of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Nothing but whitespace.
    Blank,
    /// Not JSON at all.
    Unreadable,
    /// JSON, but no shape the audit knows.
    Skipped,
    /// A catalogue, calls, a logged warning or a notification.
    Used,
}

/// Reads one line and hands what it carries to `to`.
pub fn read_line(line: &str, to: &mut impl Handler) -> Read {
    let line = line.trim_ascii();
    match line.as_bytes().first() {
        None => Read::Blank,
        Some(b'{') => match serde_json::from_str::<Entry>(line) {
            Ok(entry) => used(entry.dispatch(line, to, true)),
            Err(_) => skipped_if_json(line),
        },
        Some(b'[') => match serde_json::from_str::<Vec<&RawValue>>(line) {
            Ok(elements) => used(read_array(&elements, to)),
            Err(_) => skipped_if_json(line),
        },
        Some(_) => skipped_if_json(line),
    }
}

/// A JSON array: an OpenAI batch, or a JSON-RPC batch. Each element is read
/// as a line of its own would be.
fn read_array(elements: &[&RawValue], to: &mut impl Handler) -> bool {
    let mut any = false;
    for element in elements {
        if let Ok(entry) = serde_json::from_str::<Entry>(element.get()) {
            any |= entry.dispatch(element.get(), to, false);
        }
    }
    any
}

fn used(any: bool) -> Read {
    if any { Read::Used } else { Read::Skipped }
}

/// A line that did not fit [`Entry`] may still be JSON (a duplicate member,
/// a bare number): it is then skipped, not unreadable.
fn skipped_if_json(line: &str) -> Read {
    match serde_json::from_str::<IgnoredAny>(line) {
        Ok(_) => Read::Skipped,
        Err(_) => Read::Unreadable,
    }
}

/// The members of a line the audit looks at, each as raw JSON text.
#[derive(Deserialize, Default)]
struct Entry<'a> {
    // A catalogue, or a JSON-RPC response whose result may be one.
    #[serde(borrow)]
    tools: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    // A JSON-RPC request or notification.
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    // Ids: OpenAI and JSON-RPC `id`, Codex `call_id`.
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    call_id: Option<&'a RawValue>,
    // An OpenAI call, or a chat message with calls.
    #[serde(borrow)]
    function: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_calls: Option<&'a RawValue>,
    // Transcripts: Claude Code, Anthropic messages, Codex rollouts.
    #[serde(borrow, rename = "type")]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    role: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<Nested<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    payload: Option<Nested<'a>>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    // A warning logged by the proxy.
    #[serde(borrow)]
    tool: Option<&'a RawValue>,
    #[serde(borrow)]
    unknown_keys: Option<&'a RawValue>,
    // The summary the proxy logs last.
    #[serde(borrow)]
    summary: Option<&'a RawValue>,
}

impl Entry<'_> {
    /// Hands what this entry, whose text is `raw`, carries to `to`; `false`
    /// when it carries nothing the audit knows. `outer` is whether it is a
    /// whole line, whose `message` or `payload` may wrap the entry that
    /// matters.
    ///
    /// The first member that decides wins, in this order: a logged warning
    /// (`tool` and `unknown_keys`), a catalogue (`tools`), a JSON-RPC
    /// response (`result`) or request (`method`), a chat message
    /// (`tool_calls`), an OpenAI call (`function`), a Codex item
    /// (`type: function_call`), an assistant message's `content` blocks, and
    /// last the `message` or `payload` a transcript line wraps them in.
    fn dispatch(&self, raw: &str, to: &mut impl Handler, outer: bool) -> bool {
        if self.unknown_keys.is_some() && self.tool.is_some() {
            return Entry::logged_warning(raw, to);
        }
        // The proxy's log ends with its summary: nothing to audit again.
        if self.summary.is_some() && outer {
            return true;
        }
        if let Some(tools) = self.tools.filter(|t| is_array(t)) {
            to.tools(tools, None);
            return true;
        }
        if let Some(result) = self.result {
            return read_result(result, to);
        }
        if let Some(method) = self.method {
            return self.request(&text(method).unwrap_or_default(), to);
        }
        if let Some(calls) = self.tool_calls.filter(|c| is_array(c)) {
            return read_openai_calls(calls, to);
        }
        if let Some(function) = self.function {
            return read_openai_call(self.id, function, to);
        }
        let kind = self.kind.and_then(text);
        match kind.as_deref() {
            Some("function_call") => return self.codex_call(to),
            Some("user") if outer => return false,
            Some("response_item") if outer => {
                return self.payload.as_ref().is_some_and(|payload| payload.dispatch(to));
            }
            _ => {}
        }
        if let Some(content) = self.content.filter(|_| self.is_assistant()) {
            return read_tool_use_blocks(content, to);
        }
        if outer && let Some(message) = &self.message {
            return message.dispatch(to);
        }
        false
    }

    fn is_assistant(&self) -> bool {
        self.role.and_then(text).as_deref() == Some("assistant")
    }

    /// A JSON-RPC request or notification: `tools/call` is audited, the
    /// list-changed notification makes the catalogue stale, as in the proxy.
    fn request(&self, method: &str, to: &mut impl Handler) -> bool {
        match method {
            "tools/call" => {
                let Some(params) = self.params.and_then(parse::<Params>) else {
                    return false;
                };
                let Some(name) = params.name.and_then(text) else {
                    return false;
                };
                let id = self.id.and_then(json_value);
                audit_call(&name, params.arguments, id.as_ref(), to);
                true
            }
            "notifications/tools/list_changed" => {
                to.list_changed();
                true
            }
            "tools/list" => {
                #[derive(Deserialize)]
                struct ListParams<'a> {
                    #[serde(borrow)]
                    cursor: Option<&'a RawValue>,
                }
                let cursor = self.params.and_then(parse::<ListParams>).and_then(|p| p.cursor);
                if cursor.is_none() {
                    to.listing_requested();
                }
                true
            }
            _ => false,
        }
    }

    /// A Codex rollout item: `{"type":"function_call","name","arguments","call_id"}`.
    fn codex_call(&self, to: &mut impl Handler) -> bool {
        let Some(name) = self.name.and_then(text) else {
            return false;
        };
        let id = self.call_id.or(self.id).and_then(json_value);
        audit_call(&name, self.arguments, id.as_ref(), to);
        true
    }

    /// A line of the proxy's `--log`: the whole entry is a [`Warning`]. Its
    /// diagnosis is kept as logged (the log holds no values to work it out
    /// again from); a diagnosis that does not read is left out, and other
    /// fields are ignored.
    fn logged_warning(raw: &str, to: &mut impl Handler) -> bool {
        #[derive(Deserialize)]
        struct Logged {
            tool: String,
            unknown_keys: Vec<String>,
            declared_keys: Vec<String>,
            id: String,
            #[serde(default)]
            hints: Value,
            #[serde(default)]
            missing_keys: Value,
        }
        match serde_json::from_str::<Logged>(raw) {
            Ok(logged) => {
                let warning = Warning::new(logged.tool, logged.unknown_keys, logged.declared_keys, logged.id)
                    .with_diagnosis(
                        serde_json::from_value::<Vec<Hint>>(logged.hints).unwrap_or_default(),
                        serde_json::from_value::<Vec<MissingKey>>(logged.missing_keys).unwrap_or_default(),
                    );
                to.logged_warning(warning);
                true
            }
            Err(_) => false,
        }
    }
}

/// An entry one level down: a Claude Code line's `message`, a Codex
/// rollout line's `payload`. It is read in the same pass as the line, so a
/// transcript line is scanned once; a member that is not an object is
/// passed over, not an error.
struct Nested<'a>(Option<Box<Entry<'a>>>);

impl Nested<'_> {
    fn dispatch(&self, to: &mut impl Handler) -> bool {
        // Its own text is not kept: a nested entry is never a logged warning.
        self.0.as_ref().is_some_and(|entry| entry.dispatch("", to, false))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Nested<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NestedVisitor(PhantomData))
    }
}

struct NestedVisitor<'a>(PhantomData<Entry<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for NestedVisitor<'a> {
    type Value = Nested<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Nested<'a>, A::Error> {
        let entry = Entry::deserialize(MapAccessDeserializer::new(map))?;
        Ok(Nested(Some(Box::new(entry))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Nested<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Nested(None))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }

    fn visit_str<E>(self, _: &str) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }

    fn visit_unit<E>(self) -> Result<Nested<'a>, E> {
        Ok(Nested(None))
    }
}

/// A JSON-RPC response: a `tools/list` result (or a page of one) is a
/// catalogue; any other result carries nothing to audit.
fn read_result(result: &RawValue, to: &mut impl Handler) -> bool {
    #[derive(Deserialize)]
    struct ListResult<'a> {
        #[serde(borrow)]
        tools: Option<&'a RawValue>,
        #[serde(borrow, rename = "nextCursor")]
        next_cursor: Option<&'a RawValue>,
    }
    let Some(listing) = parse::<ListResult>(result) else {
        return false;
    };
    let Some(tools) = listing.tools.filter(|t| is_array(t)) else {
        return false;
    };
    let has_next = listing.next_cursor.and_then(text).is_some();
    to.tools(tools, Some(has_next));
    true
}

/// `params` of a `tools/call` request.
#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// An OpenAI call: `{"id","function":{"name","arguments"}}`.
#[derive(Deserialize)]
struct OpenAiCall<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    function: Option<&'a RawValue>,
}

/// The `function` of an OpenAI call, or of a declaration (`parameters`).
#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    parameters: Option<&'a RawValue>,
}

/// A chat message's `tool_calls`: one batch, audited in order.
fn read_openai_calls(calls: &RawValue, to: &mut impl Handler) -> bool {
    let Some(calls) = parse::<Vec<OpenAiCall>>(calls) else {
        return false;
    };
    let mut any = false;
    for call in calls {
        if let Some(function) = call.function {
            any |= read_openai_call(call.id, function, to);
        }
    }
    any
}

/// One OpenAI call. A `function` with `parameters` and no `arguments` is a
/// declaration, not a call.
fn read_openai_call(id: Option<&RawValue>, function: &RawValue, to: &mut impl Handler) -> bool {
    let Some(function) = parse::<Function>(function) else {
        return false;
    };
    if function.arguments.is_none() && function.parameters.is_some() {
        return false;
    }
    let Some(name) = function.name.and_then(text) else {
        return false;
    };
    let id = id.and_then(json_value);
    audit_call(&name, function.arguments, id.as_ref(), to);
    true
}

/// The `tool_use` blocks of an assistant message's `content`, in order.
fn read_tool_use_blocks(content: &RawValue, to: &mut impl Handler) -> bool {
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<&'a RawValue>,
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        name: Option<&'a RawValue>,
        #[serde(borrow)]
        input: Option<&'a RawValue>,
    }
    // A plain-text content (a string) holds no calls.
    let Some(blocks) = parse::<Vec<Block>>(content) else {
        return false;
    };
    let mut any = false;
    for block in blocks {
        if block.kind.and_then(text).as_deref() != Some("tool_use") {
            continue;
        }
        if let Some(name) = block.name.and_then(text) {
            let id = block.id.and_then(json_value);
            audit_call(&name, block.input, id.as_ref(), to);
            any = true;
        }
    }
    any
}

/// Hands one call to the handler, its arguments read as the key scan wants
/// them: a JSON string unescaped, anything else as its raw text (an object
/// scans as one; any other type is refused by the scan, as the layer refuses
/// it).
fn audit_call(tool: &str, arguments: Option<&RawValue>, id: Option<&Value>, to: &mut impl Handler) {
    let unescaped;
    let arguments = match arguments {
        None => None,
        Some(raw) if raw.get().starts_with('"') => {
            unescaped = text(raw);
            unescaped.as_deref().map(Arguments::Json)
        }
        Some(raw) => Some(Arguments::Json(raw.get())),
    };
    to.call(Call { tool, arguments, id });
}

/// A JSON string's text, borrowed from the line when it holds no escape;
/// `None` for any other JSON type.
fn text(raw: &RawValue) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Text<'a>(#[serde(borrow)] Cow<'a, str>);
    parse::<Text>(raw).map(|Text(text)| text)
}

fn json_value(raw: &RawValue) -> Option<Value> {
    serde_json::from_str(raw.get()).ok()
}

fn is_array(raw: &RawValue) -> bool {
    raw.get().starts_with('[')
}

fn parse<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> &RawValue {
        serde_json::from_str(json).expect("JSON")
    }

    #[test]
    fn a_string_without_escapes_is_borrowed_from_the_line() {
        assert!(matches!(
            text(raw(r#""fs_read""#)),
            Some(Cow::Borrowed("fs_read"))
        ));
        let escaped = text(raw(r#""{\"path\":\"a\"}""#));
        assert!(matches!(&escaped, Some(Cow::Owned(_))));
        assert_eq!(escaped.as_deref(), Some(r#"{"path":"a"}"#));
        assert_eq!(text(raw("12")), None);
    }

    #[test]
    fn a_wrapper_member_that_is_not_an_object_is_passed_over() {
        for line in [
            r#"{"type":"system","message":"compacted"}"#,
            r#"{"type":"response_item","payload":[1,{"a":2}]}"#,
            r#"{"message":null,"payload":true}"#,
        ] {
            let entry: Entry = serde_json::from_str(line).expect(line);
            assert!(entry.message.as_ref().is_none_or(|m| m.0.is_none()), "{line}");
            assert!(entry.payload.as_ref().is_none_or(|p| p.0.is_none()), "{line}");
        }
    }
}
