//! The `--tools` catalogues: files in any form a catalogue is kept in,
//! merged, each optionally bound to a server.
//!
//! A catalogue file is read as an input is (JSON Lines or one document,
//! plain or compressed) and every list of tools in it is taken, whatever
//! the shape around it (`{"tools":[…]}`, a `tools/list` response, a request
//! body, a Bedrock `toolConfig`), as is every record that is itself one
//! declaration (a JSON array of tools, or one tool per line). Files given
//! together merge in order; a later file wins a name clash, said on stderr.

use std::collections::BTreeMap;
use std::path::Path;

use mcp_unknown_keys::audit::{Catalog, Warning, declarations};
use serde_json::Value;

use super::input::{Input, Record};
use super::names::Bound;
use super::shapes::{Found, Handler, Reader};

/// The catalogues given with `--tools`.
#[derive(Default)]
pub struct Catalogues {
    /// From `--tools FILE`: matched to any call.
    pub unbound: Option<Catalog>,
    /// From `--tools SERVER=FILE`: matched to that server's calls.
    pub bound: Vec<Bound<Catalog>>,
}

/// One `--tools` value: `FILE`, or `SERVER=FILE` when the part before `=`
/// is a server name and the whole is no existing file.
fn split(spec: &str) -> (Option<&str>, &str) {
    if Path::new(spec).exists() {
        return (None, spec);
    }
    match spec.split_once('=') {
        Some((server, file))
            if !server.is_empty()
                && server
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            (Some(server), file)
        }
        _ => (None, spec),
    }
}

/// The tools given for one server (or for none), in order, and which file
/// gave each name.
#[derive(Default)]
struct Merged {
    tools: Vec<Value>,
    given_by: BTreeMap<String, String>,
}

/// Reads every `--tools` value, in order; the error says which file and why.
pub fn read_all(specs: &[String]) -> Result<Catalogues, String> {
    let mut merged: BTreeMap<Option<&str>, Merged> = BTreeMap::new();
    for spec in specs {
        let (server, file) = split(spec);
        let tools = read_file(Path::new(file))?;
        let merged = merged.entry(server).or_default();
        for tool in &tools {
            for (name, _) in declarations(tool) {
                let previous = merged.given_by.insert(name.to_owned(), file.to_owned());
                if let Some(previous) = previous.filter(|previous| previous != file) {
                    let whose = server.map(|s| format!(" of server {s}")).unwrap_or_default();
                    eprintln!(
                        "mcp-unknown-keys audit: tool {name}{whose} in {file} replaces the one in {previous}"
                    );
                }
            }
        }
        merged.tools.extend(tools);
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

/// Reads the tools of one catalogue file; an error when it holds none that
/// can be kept, naming the shape it saw.
pub fn read_file(path: &Path) -> Result<Vec<Value>, String> {
    let shown = path.display().to_string();
    let input = Input::open(path)
        .map_err(|e| e.replace("the input", "the catalogue"))?
        .documents_expected();
    let mut found = Gathered::default();
    let mut reader = Reader::default();
    input
        .read(|record, _| {
            let (text, document) = match record {
                Record::Line { bytes, .. } => (std::str::from_utf8(bytes).unwrap_or_default(), false),
                Record::Document { text } => (text, true),
            };
            if found.first.is_none() && !text.trim().is_empty() {
                found.first = Some(describe(text));
            }
            if document {
                reader.read_document(text, &mut found);
            } else {
                reader.read_line(text, &mut found);
            }
        })
        .map_err(|e| format!("cannot read the catalogue {shown}: {e}"))?;
    let mut catalog = Catalog::new();
    catalog.extend_tools(&found.tools);
    if catalog.is_empty() {
        let saw = found.first.unwrap_or_else(|| "nothing".to_owned());
        return Err(format!(
            "the catalogue {shown} holds no readable tool (a name with a schema of its arguments): it holds {saw}"
        ));
    }
    Ok(found.tools)
}

/// What a catalogue file gave.
#[derive(Default)]
struct Gathered {
    tools: Vec<Value>,
    /// What its first record is, for an error.
    first: Option<String>,
}

impl Handler for Gathered {
    fn tools(&mut self, tools: &str, _page: Option<bool>) {
        if let Ok(tools) = serde_json::from_str::<Vec<Value>>(tools) {
            self.tools.extend(tools);
        }
    }

    fn call(&mut self, _: Found<'_>) {}

    fn logged_warning(&mut self, _: Warning) {}

    fn summary(&mut self, _: &str) {}

    fn list_changed(&mut self) {}

    fn listing_requested(&mut self) {}

    fn unrecognised(&mut self, record: &str) -> bool {
        match serde_json::from_str::<Value>(record) {
            Ok(tool) if declarations(&tool).next().is_some() => {
                self.tools.push(tool);
                true
            }
            _ => false,
        }
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
    fn a_tools_value_binds_a_server_only_when_it_names_one() {
        assert_eq!(split("fs=tools.json"), (Some("fs"), "tools.json"));
        assert_eq!(split("tools.json"), (None, "tools.json"));
        assert_eq!(split("dir/a=b.json"), (None, "dir/a=b.json"));
        assert_eq!(split("=b.json"), (None, "=b.json"));
    }

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
