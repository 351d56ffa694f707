//! The one walker: reads a record against every shape of the table, in
//! order, and yields what it finds as [`Event`]s to its caller's `take`.
//!
//! A record goes down in one pass: its members are read once (the
//! capture), the shapes it may hold are found once ([`Plan::candidates`]),
//! and each shape's reading is one arm of the walk's `read`, which yields
//! what it found to the caller there and then: nothing found is handed back
//! up through the walker to be handed on.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;

use mcp_unknown_keys::audit::arguments_text;
use mcp_unknown_keys::jsonrpc::{Id, Message};
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use super::capture::{Node, Object};
use super::plan::{CallPaths, Compiled, Path, Plan};
use super::scope::Pending;
use super::seen::{Print, Seen};
use super::streams::{Assembled, Streams};
use super::table::Reads;
use super::{Event, Found, Read, json_string, proxy_lines, relayed, rpc};

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
pub(crate) struct Reader {
    seen: Seen,
    streams: Streams,
}

impl Reader {
    /// Reads one line of JSON Lines. A line of server-sent events is read
    /// by its `data:`, and `data: [DONE]` ends the chat streams; the other
    /// lines of that framing are blank.
    pub(crate) fn read_line(&mut self, line: &str, mut take: impl FnMut(Event<'_>) -> bool) -> Read {
        let mut line = line.trim_ascii();
        if let Some(data) = line.strip_prefix("data:") {
            line = data.trim_ascii();
            if line == "[DONE]" {
                let mut ended = Vec::new();
                self.streams.end_chats(&mut ended);
                self.walk("", &mut take).assembled(ended);
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
        self.read_value(line, false, &mut take)
    }

    /// Reads one JSON value of a file that is not JSON Lines: each element
    /// of an array, or an object as a record; an object of no known shape is
    /// searched for records in its members, arrays and objects alike.
    pub(crate) fn read_document(&mut self, text: &str, mut take: impl FnMut(Event<'_>) -> bool) -> Read {
        self.read_value(text.trim_ascii(), true, &mut take)
    }

    /// The input ends: the calls of streams cut short are handed over as
    /// they stand.
    pub(crate) fn finish(&mut self, mut take: impl FnMut(Event<'_>) -> bool) {
        let mut ended = Vec::new();
        self.streams.end(&mut ended);
        self.walk("", &mut take).assembled(ended);
    }

    fn read_value<T: FnMut(Event<'_>) -> bool>(&mut self, text: &str, document: bool, to: &mut T) -> Read {
        self.seen.new_record();
        let mut walk = self.walk(text, to);
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

    /// A walk of `text`.
    fn walk<'r, 't, T: FnMut(Event<'_>) -> bool>(
        &'r mut self,
        text: &'t str,
        to: &'r mut T,
    ) -> Walk<'r, 't, T> {
        Walk {
            plan: Plan::get(),
            seen: &mut self.seen,
            streams: &mut self.streams,
            text,
            pending: Vec::new(),
            to,
            scopes: 0,
            depth: 0,
            too_deep: false,
            model: None,
            truncated: false,
        }
    }
}

struct Walk<'r, 't, T> {
    plan: &'static Plan,
    seen: &'r mut Seen,
    streams: &'r mut Streams,
    /// The text being read (a line, or a document's value): what the calls
    /// held until their record ends borrow from.
    text: &'t str,
    /// The calls of the records being read, handed over as each ends.
    pending: Vec<Pending<'t>>,
    /// The caller's `take`, each event yielded to it.
    to: &'r mut T,
    /// How many records are open: a call found in one waits for its end.
    scopes: u8,
    /// How many records deep the walk is.
    depth: u8,
    /// Whether the walk met records nested past [`MAX_RECORD_DEPTH`].
    too_deep: bool,
    /// The model the records being read name ([`Plan::model`]): a record
    /// naming none inherits the one of the record holding it.
    model: Option<Rc<str>>,
    /// Whether a record being read says its response was cut at its
    /// length limit ([`Plan::is_truncated`]): the records it holds inherit
    /// it.
    truncated: bool,
}

impl<T: FnMut(Event<'_>) -> bool> Walk<'_, '_, T> {
    /// Yields one event; whether the caller made use of it.
    fn give(&mut self, event: Event<'_>) -> bool {
        (self.to)(event)
    }

    /// Reads a JSON text: `None` when it does not read; else whether it
    /// held anything used.
    fn text(&mut self, text: &str, depth: u8, document: bool) -> Option<bool> {
        if text.starts_with('[') {
            // Each element on its own, so the caller can be given its text.
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
        let found = self.scoped(|walk| {
            let mut found = walk.record(&record, Some(text), false) || walk.give(Event::Unrecognised(text));
            if !found && depth < MAX_SEARCH_DEPTH {
                for array in &record.other_arrays {
                    found |= walk.text(array.get(), depth + 1, false).unwrap_or(false);
                }
                if !found && document {
                    found = walk.members(text, depth);
                }
            }
            found
        });
        Some(found)
    }

    /// Reads one record with `read`: the calls found meanwhile are handed
    /// over when it has been read whole, after every catalogue it holds,
    /// then the record ends.
    fn scoped<R>(&mut self, read: impl FnOnce(&mut Self) -> R) -> R {
        let start = self.pending.len();
        self.give(Event::BeginRecord);
        self.scopes += 1;
        let out = read(self);
        self.scopes -= 1;
        let take = &mut *self.to;
        for call in self.pending.drain(start..) {
            take(Event::Call(call.found()));
        }
        self.give(Event::EndRecord);
        out
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
        // The shapes this record may hold, found once for the passes below.
        let candidates = plan.candidates(record);
        // A gateway's record of a message it relayed is only that, and has
        // a `method` of its own: it is not read as a message itself.
        if candidates
            .shapes(plan)
            .any(|shape| matches!(shape.reading, Reads::Relayed) && plan.holds(&shape.when, record))
        {
            let take = &mut *self.to;
            return relayed::read(plan, record, |relayed| {
                take(Event::Relayed(relayed));
            });
        }
        // The model this record names holds for the records it holds, and
        // the one around it again once it is read.
        let named = plan.model.iter().find_map(|path| plan.text(record, path));
        let outer = match named {
            Some(model) if self.model.as_deref() != Some(model.as_ref()) => {
                Some(self.model.replace(Rc::from(model.as_ref())))
            }
            _ => None,
        };
        let cut = !self.truncated && plan.is_truncated(record);
        self.truncated |= cut;
        let mut found = candidates.is_message() && self.message(record, text);
        for shape in candidates.shapes(plan) {
            if !shape.shape.reads.is_whole_record() {
                found |= self.shape(shape, record, text.is_some(), history);
            }
        }
        found = found
            || candidates
                .shapes(plan)
                .filter(|shape| shape.shape.reads.is_whole_record())
                .any(|shape| self.shape(shape, record, text.is_some(), history));
        if let Some(outer) = outer {
            self.model = outer;
        }
        if cut {
            self.truncated = false;
        }
        found
    }

    /// Reads `record` (`root`: a whole record, not one a record holds) for
    /// one shape; whether it was there.
    fn shape(&mut self, shape: &Compiled, record: &Object<'_>, root: bool, history: bool) -> bool {
        match shape.reading {
            Reads::Catalogue => return self.catalogue(record, &shape.at, root),
            Reads::Embedded => return self.embedded(record, &shape.at, history),
            _ => {}
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
            Reads::Exchanges => {
                if !self.deeper() {
                    return false;
                }
                let found = self.scoped(|walk| walk.record(object, None, history));
                self.depth -= 1;
                found
            }
            Reads::Opened(_) => {
                let Some(raw) = shape.opened.as_ref().and_then(|at| plan.raw(object, at)) else {
                    return false;
                };
                if !raw.get().starts_with('{') || !self.deeper() {
                    return false;
                }
                let found = match plan.vocabulary.read(raw.get(), false) {
                    Ok(Node::Object(inner)) => self.record(&inner, None, true),
                    _ => false,
                };
                self.depth -= 1;
                found
            }
            Reads::Call(paths) => self.call(paths, object, history),
            Reads::Catalogue | Reads::Embedded | Reads::Relayed => false,
            Reads::LoggedWarning => match proxy_lines::warning(self.plan, object) {
                Some(warning) => {
                    self.give(Event::LoggedWarning(warning));
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
                    self.give(Event::Summary(summary.get()));
                    true
                }
                None => false,
            },
            Reads::Verdict => match proxy_lines::verdict(self.plan, object) {
                Some(judged) => {
                    self.give(Event::LoggedVerdict(judged));
                    true
                }
                None => false,
            },
            Reads::LoggedNote => match proxy_lines::note(self.plan, object) {
                Some(proxy_lines::LoggedNote { tool, note }) => {
                    self.give(Event::LoggedNote { tool, note });
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
    /// in a string (an OpenTelemetry attribute). A whole record that is
    /// only a `tools` list is a listing kept on its own.
    fn catalogue(&mut self, record: &Object<'_>, at: &Path, root: bool) -> bool {
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
        let listing = &self.plan.bare_listing;
        let bare = root && !record.unnamed && record.members().all(|(word, _)| listing.contains(&word));
        if bare && matches!(at, Path::Members(words) if words[..] == listing[..1]) {
            self.give(Event::ListedTools(&text));
        } else {
            self.give(Event::Tools(&text));
        }
        true
    }

    /// A body kept as text in a string (a HAR entry's): the JSON record it
    /// holds, or its server-sent events, each `data:` line a record; the
    /// streams they carry end with the text. Read as part of the record
    /// holding it, so a request body's tools meet the response body's calls.
    fn embedded(&mut self, record: &Object<'_>, at: &Path, history: bool) -> bool {
        let Some(text) = self.plan.raw(record, at).and_then(json_string) else {
            return false;
        };
        if !self.deeper() {
            return false;
        }
        let text = text.trim_ascii();
        let found = if text.starts_with('{') {
            self.embedded_record(text, history)
        } else {
            let mut found = false;
            for line in text.lines() {
                let Some(data) = line.strip_prefix("data:").map(str::trim_ascii) else {
                    continue;
                };
                found |= self.embedded_record(data, history);
            }
            let mut ended = Vec::new();
            self.streams.end(&mut ended);
            found |= !ended.is_empty();
            self.assembled(ended);
            found
        };
        self.depth -= 1;
        found
    }

    fn embedded_record(&mut self, text: &str, history: bool) -> bool {
        match self.plan.vocabulary.read(text, true) {
            // Not a whole record: a body that is only a `tools` list is no
            // listing of its own.
            Ok(Node::Object(record)) => self.record(&record, None, history),
            _ => false,
        }
    }

    /// A JSON-RPC message, read as the proxy reads it: a call is handed
    /// over as any call is (but never taken for a repeat), anything else as
    /// the message it is.
    fn message(&mut self, record: &Object<'_>, text: Option<&str>) -> bool {
        let mut kept = String::new();
        match rpc::read(self.plan, record, text, &mut kept) {
            Some(Message::Call {
                id, name, arguments, ..
            }) => {
                let value = id.as_ref().map(Id::to_value);
                let model = self.model.clone();
                let found = Found {
                    tool: &name,
                    server: None,
                    arguments: arguments.as_deref(),
                    id: value.as_ref(),
                    rpc_id: id.as_ref(),
                    as_listed: true,
                    model: model.as_deref(),
                    truncated: self.truncated,
                };
                self.emit(found, false, false);
                true
            }
            Some(Message::Other) | None => false,
            Some(message) => self.give(Event::Message(message)),
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
        let model = self.model.clone();
        let found = Found {
            tool: &tool,
            server: server.as_deref(),
            arguments: arguments.as_deref(),
            id: id.as_ref(),
            rpc_id: None,
            as_listed: false,
            model: model.as_deref(),
            truncated: self.truncated,
        };
        self.emit(found, true, history);
        true
    }

    /// Hands over the calls streams finished, as made by the model the
    /// record finishing them names (a chat chunk names it; the end of an
    /// input names none), in a truncated response when the stream said so
    /// or a record around it does.
    fn assembled(&mut self, calls: Vec<Assembled>) {
        let model = self.model.clone();
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
                truncated: self.truncated || call.truncated,
            };
            self.emit(found, true, false);
        }
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
        if self.scopes > 0 {
            // The call's model is the walk's, shared rather than copied.
            debug_assert_eq!(found.model, self.model.as_deref());
            let held = Pending::keep(&found, self.text, self.model.as_ref());
            self.pending.push(held);
        } else {
            self.give(Event::Call(found));
        }
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
mod tests;
