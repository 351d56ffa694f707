//! The Claude Code `PostToolUse` hook: its input read, the call audited,
//! the context for the model written.
//!
//! Input (Claude Code's documented shape; fields not read are ignored):
//! `{"session_id":…,"hook_event_name":"PostToolUse","tool_name":"mcp__SERVER__TOOL",
//! "tool_input":{…},"tool_use_id":…,…}`. Output, when there is something
//! new to say: `{"hookSpecificOutput":{"hookEventName":"PostToolUse",
//! "additionalContext":"…"}}`, which Claude Code puts beside the tool's
//! result for the model.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Cause, Hint, Outcome, Printable, Warning};
use mcp_unknown_keys_proxy::state::{CatalogFile, file_stem};
use serde::Deserialize;
use serde_json::{Value, json};

use super::said::SessionMemory;

/// The largest hook input read (it carries the tool's whole response).
pub(super) const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The most characters of the context given to the model (Claude Code
/// keeps 10,000 inline).
pub(super) const MAX_CONTEXT_CHARS: usize = 4000;

/// The most ways a tool name is split into server and tool
/// (`mcp__a__b__c` is server `a`, tool `b__c`, or server `a__b`, tool `c`).
const MAX_SPLITS: usize = 8;

/// What the hook reads of its input.
#[derive(Deserialize)]
struct Input {
    session_id: String,
    hook_event_name: String,
    tool_name: String,
    tool_input: Value,
    #[serde(default)]
    tool_use_id: Option<String>,
}

/// Reads the hook's input on stdin and prints the context to give the
/// model, if any; never fails, never panics out.
pub(super) fn run(dir: &Path) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let mut input = Vec::new();
        if std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut input)
            .is_err()
            || input.len() as u64 > MAX_INPUT_BYTES
        {
            return;
        }
        if let Some(output) = respond(dir, &input) {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(output.to_string().as_bytes());
            let _ = stdout.flush();
        }
    }));
}

/// The hook's output for `input`, or `None` when there is nothing to say.
pub(super) fn respond(dir: &Path, input: &[u8]) -> Option<Value> {
    let input: Input = serde_json::from_slice(input).ok()?;
    if input.hook_event_name != "PostToolUse" {
        return None;
    }
    let (file, tool) = find_tool(dir, &input.tool_name)?;
    let warning = audit(&file, &tool, &input.tool_input, input.tool_use_id.as_deref())?;
    let mut memory = SessionMemory::open(dir, &input.session_id)?;
    let warning = new_in_session(warning, &mut memory)?;
    memory.save();
    let context = context(&input.tool_name, &warning);
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": context,
        }
    }))
}

/// The catalogue file and the tool's name in it, for a Claude Code MCP
/// tool name `mcp__SERVER__TOOL` (SERVER and TOOL as Claude Code writes
/// them: each character but ASCII letters, digits, `_` and `-` made `_`).
fn find_tool(dir: &Path, tool_name: &str) -> Option<(CatalogFile, String)> {
    let rest = tool_name.strip_prefix("mcp__")?;
    rest.match_indices("__").take(MAX_SPLITS).find_map(|(at, _)| {
        let (server, tool) = (&rest[..at], &rest[at + 2..]);
        let file = CatalogFile::read(dir, server)?;
        let name = file
            .tools
            .iter()
            .filter_map(listed_name)
            .find(|name| *name == tool)
            .or_else(|| {
                let written = file_stem(tool)?;
                file.tools
                    .iter()
                    .filter_map(listed_name)
                    .find(|name| file_stem(name).as_deref() == Some(written.as_str()))
            })?
            .to_owned();
        Some((file, name))
    })
}

/// A listed tool's name: an MCP tool's `name`, or an OpenAI declaration's
/// `function.name`.
fn listed_name(tool: &Value) -> Option<&str> {
    tool.get("name")
        .or_else(|| tool.get("function")?.get("name"))
        .and_then(Value::as_str)
}

/// Audits the call as the proxy would have: the same catalogue, `--allow`
/// keys and `--top-level-only`.
fn audit(file: &CatalogFile, tool: &str, arguments: &Value, id: Option<&str>) -> Option<Warning> {
    let mut catalog = Catalog::new();
    catalog.extend_tools(&file.tools);
    let auditor = Auditor::new()
        .with_sink(())
        .allow_all(file.allow.iter().cloned())
        .top_level_only(file.top_level_only);
    let catalog = auditor.install_catalog(catalog);
    let id = id.map(|id| Value::String(id.to_owned()));
    let mut call = Call::new(tool, Arguments::from_value(arguments)?);
    if let Some(id) = &id {
        call = call.with_id(id);
    }
    match auditor.audit(&catalog, call) {
        Outcome::Audited { warning, .. } => warning,
        Outcome::Skipped(_) => None,
    }
}

/// The warning kept to the keys and paths not said before in this session,
/// or `None` when all were.
fn new_in_session(mut warning: Warning, memory: &mut SessionMemory) -> Option<Warning> {
    let tool = warning.tool.clone();
    warning.unknown_keys.retain(|key| memory.claim(&tool, key));
    warning.unknown_paths.retain(|path| memory.claim(&tool, path));
    if warning.unknown_keys.is_empty() && warning.unknown_paths.is_empty() {
        return None;
    }
    let keys = &warning.unknown_keys;
    warning.hints.retain(|hint| keys.contains(&hint.key));
    let suggested: Vec<&str> = warning
        .hints
        .iter()
        .filter_map(|hint| hint.suggestion.as_deref())
        .collect();
    let missing = warning
        .missing_keys
        .iter()
        .filter(|missing| suggested.contains(&missing.key.as_str()))
        .cloned()
        .collect();
    let hints = std::mem::take(&mut warning.hints);
    Some(warning.with_diagnosis(hints, missing))
}

/// The context for the model: facts, not instructions (Claude Code's
/// advice, so that it does not read as a prompt injection).
fn context(tool_name: &str, warning: &Warning) -> String {
    let mut text = String::new();
    let _ = write!(
        text,
        "mcp-unknown-keys: the call to {} passed ",
        Printable(tool_name)
    );
    let mut undeclared: Vec<&String> = warning.unknown_keys.iter().collect();
    undeclared.extend(&warning.unknown_paths);
    let _ = write!(
        text,
        "{} {}, which the tool's input schema does not declare",
        if undeclared.len() == 1 {
            "the key"
        } else {
            "the keys"
        },
        listed(&undeclared)
    );
    let declared: Vec<&String> = warning.declared_keys.iter().collect();
    if declared.is_empty() {
        text.push_str(" (it declares no argument).");
    } else {
        let _ = write!(text, " (it declares {}).", listed(&declared));
    }
    text.push_str(" The call succeeded, so the server most likely ignored what it does not declare.");
    for hint in &warning.hints {
        if let Some(said) = intent(hint) {
            let _ = write!(text, " {said}");
        }
    }
    for missing in &warning.missing_keys {
        let _ = write!(text, " {missing}.");
    }
    if text.chars().count() > MAX_CONTEXT_CHARS {
        text = text.chars().take(MAX_CONTEXT_CHARS - 1).collect();
        text.push('…');
    }
    text
}

/// What a key's hint says of the model's intent, when it says something.
fn intent(hint: &Hint) -> Option<String> {
    let key = Printable(&hint.key);
    if let Some(suggestion) = &hint.suggestion {
        return Some(format!(
            "{key} is probably the declared key {} ({}).",
            Printable(suggestion),
            hint.cause
        ));
    }
    match hint.cause {
        Cause::OtherTool => Some(format!(
            "{key} is declared by another tool of this server, {}.",
            Printable(hint.declared_by.as_deref().unwrap_or(""))
        )),
        Cause::Fragment => Some(format!("{key} reads as a piece of text rather than a key.")),
        _ => None,
    }
}

/// The first few items, escaped, then how many more.
fn listed(items: &[&String]) -> String {
    const SHOWN: usize = 20;
    let mut text: Vec<String> = items
        .iter()
        .take(SHOWN)
        .map(|item| Printable(item).to_string())
        .collect();
    if items.len() > SHOWN {
        text.push(format!("and {} more", items.len() - SHOWN));
    }
    text.join(", ")
}
