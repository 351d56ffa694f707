//! `Auditor`: the core's auditor, its catalogue and its coverage, for Node.

pub(crate) mod slots;

use std::rc::Rc;
use std::sync::Arc;

use mcp_unknown_keys::audit::{self, Arguments, Call, CountingAuditor};
use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::Value;

use crate::arguments::ReadArguments;
use crate::js::{Js, Kind};
use crate::listing::listed_tools;
use crate::options::{AuditorOptions, Built, Given, build};
use crate::report::{Coverage, Warning};
use crate::sink::{Callbacks, Queue};

/// Audits tool calls against the latest catalogue and says each undeclared
/// (tool, key) pair once.
#[napi]
pub struct Auditor {
    state: Rc<State>,
    slot: u32,
}

/// What an auditor keeps. JavaScript runs on one thread, and no borrow is
/// held while a host's callback runs (they run in `deliver`, last), so a
/// callback may call the auditor back.
pub struct State {
    /// The core's auditor, with the listing being assembled and the
    /// count of every call.
    auditor: CountingAuditor,
    queue: Arc<Queue>,
    callbacks: Rc<Callbacks>,
}

/// Where a page stands in a paginated MCP listing.
#[napi(object)]
pub struct Page {
    /// The page answers a request without a cursor: it opens a new listing
    /// (default true).
    pub first: Option<bool>,
    /// The page carries a `nextCursor`: more pages follow (default false).
    pub more: Option<bool>,
}

/// A note on the current catalogue: what a tool's schema could not be read
/// for.
#[napi(object)]
pub struct CatalogNote {
    /// The tool's name.
    pub tool: String,
    /// What could not be read.
    pub text: String,
}

#[napi]
impl Auditor {
    /// An auditor with no catalogue yet; warnings go to stderr, one line
    /// each, unless `onWarn` takes them.
    #[napi(constructor)]
    pub fn new(options: Option<AuditorOptions>) -> Auditor {
        let options = options.unwrap_or_default();
        let Built {
            auditor,
            queue,
            callbacks,
        } = build(Given {
            on_warn: options.on_warn,
            on_note: options.on_note,
            on_verdict: None,
            allow: options.allow,
            top_level_only: options.top_level_only,
            no_missing: options.no_missing,
        });
        let state = Rc::new(State {
            auditor: CountingAuditor::new(auditor),
            queue,
            callbacks,
        });
        let slot = slots::insert(&state);
        Auditor { state, slot }
    }

    /// Replaces the catalogue with `tools`: MCP tools (`name`,
    /// `inputSchema`), function-shaped declarations (OpenAI, Anthropic,
    /// Gemini, Bedrock), a `tools/list` result or response, or the JSON
    /// text of any of these. Pairs already said stay said. A listing that
    /// cannot be read throws and leaves the catalogue as it was.
    #[napi(ts_args_type = "tools: unknown")]
    pub fn replace_catalog(&self, env: &Env, tools: Unknown<'_>) -> Result<()> {
        let state = &self.state;
        let listed = listed_tools(js(env, tools))?;
        state.auditor.replace(&listed);
        state.callbacks.deliver(env, &state.queue);
        Ok(())
    }

    /// Takes one page of a paginated MCP listing: `first` for a page
    /// answering a request without a cursor (it opens a new listing),
    /// `more` when it carries a `nextCursor`. Calls are audited against the
    /// pages so far. Without `page`, the listing is one whole page.
    #[napi(ts_args_type = "tools: unknown, page?: Page | undefined | null")]
    pub fn list_page(&self, env: &Env, tools: Unknown<'_>, page: Option<Page>) -> Result<()> {
        let state = &self.state;
        let listed = listed_tools(js(env, tools))?;
        let (first, more) = match page {
            Some(page) => (page.first.unwrap_or(true), page.more.unwrap_or(false)),
            None => (true, false),
        };
        state.auditor.page(&listed, first, more);
        state.callbacks.deliver(env, &state.queue);
        Ok(())
    }

    /// Forgets the catalogue until the next listing (as after
    /// `notifications/tools/list_changed`): calls meanwhile are counted as
    /// unaudited for `no_catalogue`.
    #[napi]
    pub fn clear_catalog(&self) {
        self.state.auditor.clear();
    }

    /// Every tool of the current catalogue, sorted.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.state.auditor.auditor().listed_tools()
    }

    /// The tools whose calls are audited now, sorted (a tool that declares
    /// nothing is not among them).
    #[napi(getter)]
    pub fn audited_tools(&self) -> Vec<String> {
        self.state.auditor.auditor().audited_tools()
    }

    /// What could not be read in the current catalogue's schemas.
    #[napi(getter)]
    pub fn notes(&self) -> Vec<CatalogNote> {
        let catalog = self.state.auditor.auditor().catalog();
        catalog
            .notes()
            .into_iter()
            .map(|(tool, note)| CatalogNote {
                tool: tool.to_owned(),
                text: note.to_string(),
            })
            .collect()
    }

    /// Audits one call: `args` a plain object (its keys read in place) or
    /// JSON text. Delivers a warning for the pairs said now for the first
    /// time and returns it; returns `null` otherwise. Never throws on what a
    /// model wrote and never changes the arguments; every call is counted
    /// in `coverage()`.
    #[napi(ts_args_type = "tool: string, args: unknown, id?: string | number | null")]
    pub fn audit(
        &self,
        env: &Env,
        tool: Unknown<'_>,
        args: Unknown<'_>,
        id: Option<Unknown<'_>>,
    ) -> Option<Warning> {
        let handed = Handed {
            tool: js(env, tool),
            args: js(env, args),
            id: id.map(|id| js(env, id)),
            read: None,
        };
        Rc::clone(&self.state).audit(env, handed)
    }

    /// Every call audited so far: how many, and why the rest were not.
    #[napi]
    pub fn coverage(&self) -> Coverage {
        Coverage::from(&self.state.auditor.coverage())
    }

    /// The auditor's slot, for `index.js`'s `audit` (not part of the API).
    #[napi(getter, js_name = "__slot")]
    pub fn slot(&self) -> u32 {
        self.slot
    }
}

impl Drop for Auditor {
    fn drop(&mut self) {
        slots::remove(self.slot);
    }
}

impl State {
    /// Audits one call, delivers its warning and returns it.
    pub(crate) fn audit(&self, env: &Env, handed: Handed) -> Option<Warning> {
        let Handed { tool, args, id, read } = handed;
        let id = id.and_then(id_value);
        let warning = match read {
            Some(read) => self.audit_read(tool, id.as_ref(), read),
            None => self.audit_given(tool, id.as_ref(), args),
        }?;
        self.auditor.auditor().warn(&warning);
        self.callbacks.deliver(env, &self.queue);
        Some(Warning::from(&warning))
    }

    /// Audits a call whose arguments `index.js` read.
    fn audit_read(&self, tool: Js, id: Option<&Value>, read: Read) -> Option<audit::Warning> {
        let shape = read.shape.and_then(|shape| shape.text().ok());
        // The joined keys are read from the stack when short, with no
        // allocation.
        read.joined
            .with_text(|joined| {
                let arguments = ReadArguments {
                    joined,
                    count: read.count,
                    keys: read.keys,
                    shape: shape.as_deref(),
                    scalars: read.scalars,
                };
                self.audit_named(tool, id, Some(Arguments::Host(&arguments)))
            })
            .unwrap_or_else(|_| self.audit_named(tool, id, None))
    }

    /// Audits a call whose arguments are as the host gave them: JSON text,
    /// or a value read as the text `JSON.stringify` writes of it.
    fn audit_given(&self, tool: Js, id: Option<&Value>, args: Js) -> Option<audit::Warning> {
        let text = match args.kind() {
            Kind::String => args.text().ok(),
            Kind::Object => args.json_text().ok().flatten(),
            // No arguments at all: audited as emptied when the tool
            // requires keys, as the core reads empty text.
            Kind::Absent | Kind::Null => Some(String::new()),
            _ => None,
        };
        self.audit_named(tool, id, text.as_deref().map(Arguments::Json))
    }

    /// Audits a call to the tool `tool` names (a string, read from the stack
    /// when short, or what `String()` makes of another value).
    fn audit_named(
        &self,
        tool: Js,
        id: Option<&Value>,
        arguments: Option<Arguments<'_>>,
    ) -> Option<audit::Warning> {
        match tool.kind() {
            Kind::String => tool
                .with_text(|tool| self.audit_call(tool, id, arguments))
                .unwrap_or_else(|_| self.audit_call("", id, arguments)),
            _ => self.audit_call(&tool.coerced_text().unwrap_or_default(), id, arguments),
        }
    }

    /// Audits one call and counts it; its warning if any pair is new.
    fn audit_call(
        &self,
        tool: &str,
        id: Option<&Value>,
        arguments: Option<Arguments<'_>>,
    ) -> Option<audit::Warning> {
        self.auditor.audit(Call { tool, arguments, id }).warning()
    }
}

/// A call as handed to `audit`: its tool's name, its arguments, its id,
/// and what `index.js` read of the arguments, if it did.
pub(crate) struct Handed {
    pub tool: Js,
    pub args: Js,
    pub id: Option<Js>,
    pub read: Option<Read>,
}

/// What `index.js` read of a call's arguments (see [`ReadArguments`]).
pub(crate) struct Read {
    pub joined: Js,
    pub count: u32,
    pub keys: Js,
    pub shape: Option<Js>,
    pub scalars: Js,
}

/// How deep the core reads nested keys, for `index.js`'s reading of an
/// object (not part of the API). napi-rs exports a constant under its Rust
/// name, whatever `js_name` says.
#[napi]
pub const MAX_NESTED_DEPTH: u32 = mcp_unknown_keys::limits::MAX_NESTED_DEPTH as u32;

/// A value handed to this call.
pub(crate) fn js(env: &Env, value: Unknown<'_>) -> Js {
    // SAFETY: both come from the N-API call being served.
    unsafe { Js::new(env.raw(), value.raw()) }
}

/// The call's id as the core keeps it: a string or an integer as it is,
/// `null`/`undefined` as none, anything else as `String()` makes it.
fn id_value(id: Js) -> Option<Value> {
    match id.kind() {
        Kind::Null | Kind::Absent => None,
        Kind::String => id.text().ok().map(Value::String),
        Kind::Number => match id.number().ok()? {
            n if n.fract() == 0.0 && n.abs() < 9e15 => Some(Value::from(n as i64)),
            _ => id.coerced_text().map(Value::String),
        },
        _ => id.coerced_text().map(Value::String),
    }
}
