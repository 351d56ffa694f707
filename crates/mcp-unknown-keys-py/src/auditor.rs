//! `Auditor`: the core's auditor, its catalogue and its coverage, for Python.

use std::borrow::Cow;

use mcp_unknown_keys::audit::{Arguments, Call, CountingAuditor};
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
    /// The core's auditor, with the listing being assembled and the count
    /// of every call. Its locks guard pure Rust only: none is held across a
    /// call into Python, which may let another thread take the GIL and
    /// wait for the lock with it, or call this auditor back.
    auditor: CountingAuditor,
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
            auditor: CountingAuditor::new(auditor),
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
        py.detach(|| self.auditor.replace(&listed));
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
        py.detach(|| self.auditor.page(&listed, first, more));
        Ok(())
    }

    /// Forgets the catalogue until the next listing (as after
    /// `notifications/tools/list_changed`): calls meanwhile are counted as
    /// unaudited for `no_catalogue`.
    fn clear_catalog(&self) {
        self.auditor.clear();
    }

    /// Every tool of the current catalogue, sorted: those audited and
    /// those listed declaring nothing.
    #[getter]
    fn tools(&self) -> Vec<String> {
        self.auditor.auditor().listed_tools()
    }

    /// The tools whose calls are audited now, sorted: the answer to "why
    /// did this not warn?" (a tool that declares nothing is not among them).
    #[getter]
    fn audited_tools(&self) -> Vec<String> {
        self.auditor.auditor().audited_tools()
    }

    /// What could not be read in the current catalogue's schemas: pairs of
    /// a tool's name and the note's text.
    #[getter]
    fn notes(&self) -> Vec<(String, String)> {
        let catalog = self.auditor.auditor().catalog();
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
        let audit = |arguments: Option<Arguments<'_>>| {
            let call = Call {
                tool: &tool,
                arguments,
                id: id.as_ref(),
            };
            self.auditor.audit(call).warning()
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
        self.auditor.auditor().warn(&warning);
        Some(PyWarning::from(warning))
    }

    /// Every call audited so far: how many, and why the rest were not.
    #[getter(coverage)]
    fn coverage_so_far(&self) -> PyCoverage {
        PyCoverage::from(self.auditor.coverage())
    }

    fn __repr__(&self) -> String {
        format!(
            "Auditor(tools={}, coverage={})",
            self.auditor.auditor().catalog().len(),
            self.auditor.coverage()
        )
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
