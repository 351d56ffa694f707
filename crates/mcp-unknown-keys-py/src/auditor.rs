//! `Auditor`: the core's auditor, its catalogue and its coverage, for Python.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_unknown_keys::audit::{
    self, Arguments, Call, Catalog, Coverage, ListedTools, Listing, Outcome, Skip,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};
use serde_json::Value;

use crate::arguments::DictArguments;
use crate::convert::{DETACH_FROM_BYTES, json_text};
use crate::listing::listed_tools;
use crate::options::core_auditor;
use crate::report::{PyCoverage, PyWarning};

/// Audits tool calls against the latest catalogue and says each undeclared
/// (tool, key) pair once.
#[pyclass(name = "Auditor", module = "mcp_unknown_keys", frozen)]
pub struct PyAuditor {
    auditor: audit::Auditor,
    coverage: Mutex<Coverage>,
    listings: Mutex<Listings>,
    /// The stamp of the catalogue installed last (0: none yet).
    installed: Mutex<u64>,
}

/// The listing being assembled, and a stamp for each catalogue decided
/// while it is locked: the order in which calls decided what the catalogue
/// is to be. Installing happens after this lock is released (installing
/// says notes, through Python), so two threads may install in either
/// order; the stamps keep the older from replacing the newer.
#[derive(Default)]
struct Listings {
    listing: Listing,
    stamped: u64,
}

impl Listings {
    /// Takes one page; the catalogue it hands out, if any, with its stamp.
    fn page(&mut self, tools: &ListedTools, first: bool, more: bool) -> Option<(u64, Catalog)> {
        let catalog = self.listing.page_listed(tools, first, more)?;
        Some((self.stamp(), catalog))
    }

    /// Gives up the listing being assembled, for a catalogue decided
    /// otherwise (replaced or cleared); returns that catalogue's stamp.
    fn abandon(&mut self) -> u64 {
        self.listing.abandon();
        self.stamp()
    }

    fn stamp(&mut self) -> u64 {
        self.stamped += 1;
        self.stamped
    }
}

#[pymethods]
impl PyAuditor {
    #[new]
    #[pyo3(signature = (on_warn=None, allow=None, top_level_only=false, on_note=None, no_missing=false))]
    fn new(
        on_warn: Option<Bound<'_, PyAny>>,
        allow: Option<Bound<'_, PyAny>>,
        top_level_only: bool,
        on_note: Option<Bound<'_, PyAny>>,
        no_missing: bool,
    ) -> PyResult<PyAuditor> {
        let auditor = core_auditor(on_warn, allow, top_level_only, on_note)?.check_required(!no_missing);
        Ok(PyAuditor {
            auditor,
            coverage: Mutex::default(),
            listings: Mutex::default(),
            installed: Mutex::default(),
        })
    }

    /// Replaces the catalogue with `tools`: a list of tools in any form
    /// (MCP, OpenAI, Anthropic, Gemini, Bedrock; dicts or pydantic models
    /// such as the MCP SDK's `Tool`), a listing holding one under `tools`
    /// (`ListToolsResult`, a JSON-RPC response's `result`), or the JSON
    /// text of any of these. Pairs already said stay said.
    ///
    /// The catalogue is built with the GIL released: other threads run
    /// meanwhile.
    fn replace_catalog(&self, py: Python<'_>, tools: &Bound<'_, PyAny>) -> PyResult<()> {
        let listed = listed_tools(tools)?;
        py.detach(|| {
            let mut catalog = Catalog::new();
            catalog.extend_listed(&listed);
            let stamp = self.listings().abandon();
            self.install(stamp, catalog);
        });
        Ok(())
    }

    /// Takes one page of a paginated MCP listing, as the core's `Listing`
    /// assembles one: `first` for a page answering a request without a
    /// cursor (it opens a new listing), `more` when it carries a
    /// `nextCursor`. Calls are audited against the pages so far. The
    /// catalogue is built with the GIL released.
    #[pyo3(signature = (tools, *, first, more))]
    fn list_page(&self, py: Python<'_>, tools: &Bound<'_, PyAny>, first: bool, more: bool) -> PyResult<()> {
        // The page is read (Python code may run: `model_dump`) before the
        // listing is locked, and the catalogue installed (`on_note` may run)
        // after it is unlocked: a lock held across Python would deadlock
        // with a thread waiting for it with the GIL, or with a callback
        // calling this auditor back.
        let listed = listed_tools(tools)?;
        py.detach(|| {
            let decided = self.listings().page(&listed, first, more);
            if let Some((stamp, catalog)) = decided {
                self.install(stamp, catalog);
            }
        });
        Ok(())
    }

    /// Forgets the catalogue until the next listing (as after
    /// `notifications/tools/list_changed`): calls meanwhile are counted as
    /// unaudited for `no_catalogue`.
    fn clear_catalog(&self) {
        let stamp = self.listings().abandon();
        self.install(stamp, Catalog::none());
    }

    /// Every tool of the current catalogue, sorted: those audited and
    /// those listed declaring nothing.
    #[getter]
    fn tools(&self) -> Vec<String> {
        self.auditor.listed_tools()
    }

    /// The tools whose calls are audited now, sorted: the answer to "why
    /// did this not warn?" (a tool that declares nothing is not among them).
    #[getter]
    fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    /// What could not be read in the current catalogue's schemas: pairs of
    /// a tool's name and the note's text.
    #[getter]
    fn notes(&self) -> Vec<(String, String)> {
        let catalog = self.auditor.catalog();
        let notes = catalog.notes();
        notes
            .into_iter()
            .map(|(tool, note)| (tool.to_owned(), note.to_string()))
            .collect()
    }

    /// Audits one call: `arguments` a dict (its keys read in place) or JSON
    /// text. Delivers a warning for the pairs said now for the first time
    /// and returns it; returns `None` otherwise. Never raises on what a
    /// model wrote, never changes the arguments; every call is counted in
    /// `coverage`.
    #[pyo3(signature = (tool, arguments, id=None))]
    fn audit(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyAny>,
        arguments: &Bound<'_, PyAny>,
        id: Option<&Bound<'_, PyAny>>,
    ) -> Option<PyWarning> {
        let tool = tool_name(tool);
        let id = id.and_then(id_value);
        let catalog = self.auditor.catalog();
        let audit = |arguments: Option<Arguments<'_>>| {
            let call = Call {
                tool: &tool,
                arguments,
                id: id.as_ref(),
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| self.auditor.audit(&catalog, call)))
                .unwrap_or(Outcome::Skipped(Skip::UnreadableArguments));
            self.counted().record(&call, &outcome);
            outcome.warning()
        };
        let warning = if let Ok(dict) = arguments.cast::<PyDict>() {
            audit(Some(Arguments::Host(&DictArguments(dict))))
        } else if arguments.is_none() {
            // No arguments at all: audited as emptied when the tool
            // requires keys, as the core reads empty text.
            audit(Some(Arguments::Json("")))
        } else {
            // Text that is not UTF-8, and any other type, leave the call
            // unreadable.
            match json_text(arguments).and_then(Result::ok) {
                Some(text) if text.len() >= DETACH_FROM_BYTES => {
                    py.detach(|| audit(Some(Arguments::Json(&text))))
                }
                Some(text) => audit(Some(Arguments::Json(&text))),
                None => audit(None),
            }
        };
        let warning = warning?;
        self.auditor.warn(&warning);
        Some(PyWarning::from(warning))
    }

    /// Every call audited so far: how many, and why the rest were not.
    #[getter(coverage)]
    fn coverage_so_far(&self) -> PyCoverage {
        PyCoverage::from(self.counted().clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "Auditor(tools={}, coverage={})",
            self.auditor.catalog().len(),
            self.counted()
        )
    }
}

/// Every lock guards pure Rust only: none is ever held across a call into
/// Python, which may let another thread take the GIL and wait for the lock
/// with it, or call this auditor back on the same thread.
impl PyAuditor {
    fn counted(&self) -> MutexGuard<'_, Coverage> {
        self.coverage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn listings(&self) -> MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Installs the catalogue stamped `stamp` unless a newer one was
    /// installed first, then says its notes through `on_note` (taking the
    /// GIL back for it) with no lock held.
    fn install(&self, stamp: u64, catalog: Catalog) {
        let installed = {
            let mut newest = self.installed.lock().unwrap_or_else(PoisonError::into_inner);
            if stamp < *newest {
                return;
            }
            *newest = stamp;
            // Calls no sink: safe under the lock.
            self.auditor.install_catalog(catalog)
        };
        self.auditor.say_notes(&installed);
    }
}

/// The tool's name as text, whatever the model wrote: a string as it is,
/// anything else as `str()` makes it.
fn tool_name<'a>(tool: &'a Bound<'_, PyAny>) -> Cow<'a, str> {
    match tool.cast::<PyString>() {
        Ok(name) => name.to_string_lossy(),
        Err(_) => tool
            .str()
            .map(|name| Cow::Owned(name.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    }
}

/// The call's id as the core keeps it: a string or an integer as it is,
/// `None` as none, anything else as `str()` makes it.
fn id_value(id: &Bound<'_, PyAny>) -> Option<Value> {
    if id.is_none() {
        return None;
    }
    if let Ok(text) = id.cast::<PyString>() {
        return Some(Value::String(text.to_string_lossy().into_owned()));
    }
    if id.is_instance_of::<PyInt>()
        && !id.is_instance_of::<PyBool>()
        && let Ok(number) = id.extract::<i64>()
    {
        return Some(Value::from(number));
    }
    id.str()
        .ok()
        .map(|text| Value::String(text.to_string_lossy().into_owned()))
}
