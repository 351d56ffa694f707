//! `Auditor`: the core's auditor, its catalogue and its coverage, for Node.

use std::cell::RefCell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mcp_unknown_keys::audit::{self, Arguments, Call, Catalog, Listing, Outcome, Skip};
use napi::bindgen_prelude::{JsValue, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use serde_json::Value;

use crate::arguments::ObjectArguments;
use crate::js::{Js, Kind};
use crate::listing::listed_tools;
use crate::options::{AuditorOptions, Built, build};
use crate::report::{Coverage, Warning};
use crate::sink::{Callbacks, Queue, unreadable_tool};

/// Audits tool calls against the latest catalogue and says each undeclared
/// (tool, key) pair once.
#[napi]
pub struct Auditor {
    auditor: audit::Auditor,
    queue: Arc<Queue>,
    callbacks: Callbacks,
    said_unreadable: RefCell<HashSet<String>>,
    coverage: RefCell<audit::Coverage>,
    listing: RefCell<Listing>,
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
        let options = options.unwrap_or(AuditorOptions {
            on_warn: None,
            allow: None,
            top_level_only: None,
            on_note: None,
        });
        let Built {
            auditor,
            queue,
            callbacks,
        } = build(
            options.on_warn,
            options.on_note,
            options.allow,
            options.top_level_only,
        );
        Auditor {
            auditor,
            queue,
            callbacks,
            said_unreadable: RefCell::default(),
            coverage: RefCell::default(),
            listing: RefCell::default(),
        }
    }

    /// Replaces the catalogue with `tools`: MCP tools (`name`,
    /// `inputSchema`), function-shaped declarations (OpenAI, Anthropic,
    /// Gemini, Bedrock), a `tools/list` result or response, or the JSON
    /// text of any of these. Pairs already said stay said. A listing that
    /// cannot be read throws and leaves the catalogue as it was.
    #[napi]
    pub fn replace_catalog(&self, env: &Env, tools: Unknown<'_>) -> Result<()> {
        let listed = listed_tools(js(env, tools))?;
        let mut catalog = Catalog::new();
        catalog.extend_tools(&listed.tools);
        self.listing.borrow_mut().abandon();
        self.install(catalog);
        self.say_unreadable(listed.unreadable);
        self.callbacks.deliver(env, &self.queue);
        Ok(())
    }

    /// Takes one page of a paginated MCP listing: `first` for a page
    /// answering a request without a cursor (it opens a new listing),
    /// `more` when it carries a `nextCursor`. Calls are audited against the
    /// pages so far.
    #[napi]
    pub fn list_page(&self, env: &Env, tools: Unknown<'_>, page: Option<Page>) -> Result<()> {
        let listed = listed_tools(js(env, tools))?;
        let (first, more) = match page {
            Some(page) => (page.first.unwrap_or(true), page.more.unwrap_or(false)),
            None => (true, false),
        };
        let decided = self.listing.borrow_mut().page(&listed.tools, first, more);
        if let Some(catalog) = decided {
            self.install(catalog);
        }
        self.say_unreadable(listed.unreadable);
        self.callbacks.deliver(env, &self.queue);
        Ok(())
    }

    /// Forgets the catalogue until the next listing (as after
    /// `notifications/tools/list_changed`): calls meanwhile are counted as
    /// unaudited for `no_catalogue`.
    #[napi]
    pub fn clear_catalog(&self) {
        self.listing.borrow_mut().abandon();
        self.auditor.install_catalog(Catalog::none());
    }

    /// Every tool of the current catalogue, sorted.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.auditor.listed_tools()
    }

    /// The tools whose calls are audited now, sorted (a tool that declares
    /// nothing is not among them).
    #[napi(getter)]
    pub fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// What could not be read in the current catalogue's schemas.
    #[napi(getter)]
    pub fn notes(&self) -> Vec<CatalogNote> {
        let catalog = self.auditor.catalog();
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
        let tool = tool_name(js(env, tool));
        let id = id.and_then(|id| id_value(js(env, id)));
        let args = js(env, args);
        let catalog = self.auditor.catalog();
        let audit = |arguments: Option<Arguments<'_>>| {
            let call = Call {
                tool: &tool,
                arguments,
                id: id.as_ref(),
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| self.auditor.audit(&catalog, call)))
                .unwrap_or(Outcome::Skipped(Skip::UnreadableArguments));
            self.coverage.borrow_mut().record(&call, &outcome);
            outcome.warning()
        };
        let warning = match args.kind() {
            Kind::Object if !args.is_array() => audit(Some(Arguments::Host(&ObjectArguments(args)))),
            Kind::String => match args.text() {
                Ok(text) => audit(Some(Arguments::Json(&text))),
                Err(_) => audit(None),
            },
            _ => audit(None),
        }?;
        self.auditor.warn(&warning);
        self.callbacks.deliver(env, &self.queue);
        Some(Warning::from(&warning))
    }

    /// Every call audited so far: how many, and why the rest were not.
    #[napi]
    pub fn coverage(&self) -> Coverage {
        Coverage::from(&*self.coverage.borrow())
    }
}

impl Auditor {
    /// Installs a catalogue; its notes are said (delivered by the caller).
    fn install(&self, catalog: Catalog) {
        let installed = self.auditor.install_catalog(catalog);
        self.auditor.say_notes(&installed);
    }

    /// Says once each listed tool that was too deep to read.
    fn say_unreadable(&self, tools: Vec<String>) {
        let mut said = self.said_unreadable.borrow_mut();
        for tool in tools {
            if said.insert(tool.clone()) {
                unreadable_tool(&self.queue, &tool);
            }
        }
    }
}

/// A value handed to this call.
pub(crate) fn js(env: &Env, value: Unknown<'_>) -> Js {
    // SAFETY: both come from the N-API call being served.
    unsafe { Js::new(env.raw(), value.raw()) }
}

/// The tool's name as text, whatever the model wrote: a string as it is,
/// anything else as `String()` makes it.
fn tool_name(tool: Js) -> String {
    match tool.kind() {
        Kind::String => tool.text().unwrap_or_default(),
        _ => tool.coerced_text().unwrap_or_default(),
    }
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
