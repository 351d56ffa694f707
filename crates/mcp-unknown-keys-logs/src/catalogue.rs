//! The catalogues given with the options: files in any form a catalogue is
//! kept in, or declarations at hand, merged, each optionally bound to a
//! server.
//!
//! A catalogue file is read as an input is (JSON Lines or one document,
//! plain or compressed) and every list of tools in it is taken, whatever
//! the shape around it (`{"tools":[…]}`, a `tools/list` response, a request
//! body, a Bedrock `toolConfig`), as is every record that is itself one
//! declaration (a JSON array of tools, or one tool per line). Files given
//! together merge in order; a later file wins a name clash, said in a
//! [`Notice::ToolReplaced`].

use std::collections::BTreeMap;

use mcp_unknown_keys::audit::{Catalog, ListedTools, Note, declarations};
use mcp_unknown_keys::jsonrpc::{ListingPage, Message};
use serde_json::Value;

use crate::error::{Error, Role};
use crate::input::{Event, Input};
use crate::names::Bound;
use crate::observe::Notice;
use crate::options::{Source, Tools};
use crate::shapes::table::LISTING;
use crate::shapes::walk::Reader;
// The reader's events, apart from the input's.
use crate::shapes::Event as Yielded;

/// The catalogues given in [`Options::tools`](crate::Options::tools).
#[derive(Default)]
pub(crate) struct Catalogues {
    /// For any server: matched to any call.
    pub unbound: Option<Catalog>,
    /// Bound to one server: matched to that server's calls.
    pub bound: Vec<Bound<Catalog>>,
}

/// The tools given for one server (or for none), in order, and which
/// catalogue gave each name.
#[derive(Default)]
struct Merged {
    tools: Vec<Value>,
    given_by: BTreeMap<String, String>,
}

/// Reads every catalogue, in order, saying what a later one replaces; the
/// error says which catalogue and why.
pub(crate) fn read_all(given: &[Tools], say: &mut impl FnMut(Notice)) -> Result<Catalogues, Error> {
    let mut merged: BTreeMap<Option<&str>, Merged> = BTreeMap::new();
    for tools in given {
        let name = tools.name();
        let read = match &tools.source {
            Source::File(path) => read_file(Input::open_as(path, Role::Catalogue)?, say)?,
            Source::Declarations { tools, .. } => readable(&name, tools.clone(), || {
                describe_value(&Value::Array(tools.clone()), 0)
            })?,
        };
        let server = tools.server.as_deref();
        let merged = merged.entry(server).or_default();
        for tool in &read {
            for (tool, _) in declarations(tool) {
                let previous = merged.given_by.insert(tool.to_owned(), name.clone());
                if let Some(previous) = previous.filter(|previous| *previous != name) {
                    say(Notice::ToolReplaced {
                        tool: tool.to_owned(),
                        server: server.map(str::to_owned),
                        by: name.clone(),
                        previous,
                    });
                }
            }
        }
        merged.tools.extend(read);
    }
    let mut catalogues = Catalogues::default();
    for (server, merged) in merged {
        let mut catalog = Catalog::new();
        catalog.extend_tools(&merged.tools);
        match server {
            None => catalogues.unbound = Some(catalog),
            Some(server) => catalogues.bound.push(Bound {
                server: server.to_owned(),
                with: catalog,
            }),
        }
    }
    Ok(catalogues)
}

/// The tools of one catalogue file; an error when it holds none that can
/// be kept, naming the shape it saw.
fn read_file(input: Input, say: &mut impl FnMut(Notice)) -> Result<Vec<Value>, Error> {
    let name = input.name().to_owned();
    let mut found = Gathered::default();
    let mut reader = Reader::default();
    // A catalogue is read whole, or not at all: a tool missing from it
    // would leave its calls unlisted without a word.
    let mut incomplete = None;
    let read = input.read(|event| {
        let (text, document) = match event {
            Event::Line { bytes, .. } => (std::str::from_utf8(bytes).unwrap_or_default(), false),
            Event::Document { text } => (text, true),
            Event::Part { bytes, .. } => (std::str::from_utf8(bytes).unwrap_or_default(), true),
            Event::CutShort { at } => {
                incomplete = Some(format!(
                    "it is cut short at byte {at}, partway through a JSON document"
                ));
                return;
            }
            Event::TooLong { number } => {
                incomplete = Some(format!(
                    "its line {number} is, or holds a value, longer than the longest line read ({} MiB)",
                    crate::input::max_line_bytes() >> 20
                ));
                return;
            }
            Event::Documents { .. } | Event::Progress { .. } => return,
        };
        if found.first.is_none() && !text.trim().is_empty() {
            found.first = Some(describe(text));
        }
        if document {
            reader.read_document(text, |event| found.take_yielded(event));
        } else {
            reader.read_line(text, |event| found.take_yielded(event));
        }
    });
    if let Err(source) = read {
        return Err(Error::Read {
            role: Role::Catalogue,
            name,
            source,
        });
    }
    if let Some(why) = incomplete {
        return Err(Error::Incomplete {
            role: Role::Catalogue,
            name,
            why,
        });
    }
    for tool in found.unreadable {
        say(Notice::Schema {
            tool,
            note: Note::too_deep(),
        });
    }
    let first = found.first;
    readable(&name, found.tools, || {
        first.unwrap_or_else(|| "nothing".to_owned())
    })
}

/// `tools`, unless none of them has a schema that can be read.
fn readable(name: &str, tools: Vec<Value>, holds: impl FnOnce() -> String) -> Result<Vec<Value>, Error> {
    let mut catalog = Catalog::new();
    catalog.extend_tools(&tools);
    if !catalog.iter().any(|(_, declared)| declared.has_schema()) {
        return Err(Error::NoTools {
            name: name.to_owned(),
            holds: holds(),
        });
    }
    Ok(tools)
}

/// What a catalogue file gave.
#[derive(Default)]
struct Gathered {
    tools: Vec<Value>,
    /// The tools that could not be read, by name.
    unreadable: Vec<String>,
    /// What its first record is, for an error.
    first: Option<String>,
}

impl Gathered {
    /// Takes the tools of a `tools/list` result, read as the core reads a
    /// listing page; whether it was one.
    fn page(&mut self, result: &str) -> bool {
        match ListingPage::read(result) {
            Some(page) => {
                self.take(page.tools);
                true
            }
            None => false,
        }
    }

    fn take(&mut self, listed: ListedTools) {
        self.tools.extend(listed.tools);
        for name in listed.unreadable {
            if !self.unreadable.contains(&name) {
                self.unreadable.push(name);
            }
        }
    }
}

impl Gathered {
    /// Takes what the reader found: every list of tools, every listing
    /// page, and a record of no other shape that is a declaration;
    /// whether it was a page or such a record.
    fn take_yielded(&mut self, yielded: Yielded<'_>) -> bool {
        match yielded {
            Yielded::Tools(tools) | Yielded::ListedTools(tools) => {
                if let Some(listed) = ListedTools::read(tools) {
                    self.take(listed);
                }
                true
            }
            Yielded::Message(message) => self.message(message),
            Yielded::Unrecognised(record) => self.unrecognised(record),
            // Calls, records' bounds and a proxy's log lines are nothing
            // to a catalogue. Named, so that a new event is decided here.
            Yielded::BeginRecord
            | Yielded::EndRecord
            | Yielded::Call(_)
            | Yielded::LoggedWarning(_)
            | Yielded::Summary(_)
            | Yielded::LoggedVerdict(_)
            | Yielded::LoggedNote { .. }
            | Yielded::Relayed(_) => true,
        }
    }

    /// Every listing page is taken: a catalogue file is a listing, whatever
    /// request it answered.
    fn message(&mut self, message: Message<'_>) -> bool {
        let Message::Response {
            result: Some(result), ..
        } = message
        else {
            return false;
        };
        self.page(result.get())
    }

    /// A lone declaration, or the `result` of a `tools/list` response kept
    /// without the response around it.
    fn unrecognised(&mut self, record: &str) -> bool {
        let Ok(record) = serde_json::from_str::<Value>(record) else {
            return false;
        };
        if let Some(result) = record.get(LISTING.0) {
            return self.page(&result.to_string());
        }
        if declarations(&record).next().is_some() {
            self.tools.push(record);
            return true;
        }
        false
    }
}

/// What a JSON text is, in a few words: its type, and the members of an
/// object (or of an array's first object).
fn describe(text: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(text.trim()) else {
        return "text that is not JSON".to_owned();
    };
    describe_value(&value, 0)
}

fn describe_value(value: &Value, depth: u8) -> String {
    match value {
        Value::Object(object) => {
            let names: Vec<String> = object.keys().take(8).map(|k| format!("`{k}`")).collect();
            let more = if object.len() > 8 { ", …" } else { "" };
            let mut said = format!("an object with members {}{more}", names.join(", "));
            if object.is_empty() {
                said = "an empty object".to_owned();
            }
            if let (Some(tools), 0) = (object.get("tools"), depth) {
                said.push_str(&format!(
                    ", whose `tools` is {}",
                    describe_value(tools, depth + 1)
                ));
            }
            said
        }
        Value::Array(items) => match items.first() {
            None => "an empty array".to_owned(),
            Some(first) if depth < 2 => {
                format!(
                    "an array of {} element(s), the first {}",
                    items.len(),
                    describe_value(first, depth + 1)
                )
            }
            Some(_) => format!("an array of {} element(s)", items.len()),
        },
        Value::String(_) => "a string".to_owned(),
        Value::Number(_) => "a number".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Null => "null".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_is_described_in_a_few_words() {
        assert_eq!(describe(r#"{"tool": []}"#), "an object with members `tool`");
        assert_eq!(
            describe(r#"{"tools": [{"type": "web_search"}]}"#),
            "an object with members `tools`, whose `tools` is an array of 1 element(s), the first an object with members `type`"
        );
        assert_eq!(describe("[1, 2]"), "an array of 2 element(s), the first a number");
    }
}
