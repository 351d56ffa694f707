//! The tools of a listing in any form a host gives it, read tool by tool.
//!
//! A schema may nest deeper than a catalogue is read. Read as a whole, such
//! a listing would be refused with every tool in it; read tool by tool, as
//! every other door reads a listing (the core's [`ListedTools`]), only that
//! tool's schema is lost: it stays listed, declaring nothing, so its calls
//! count as `declares_nothing` and the rest are audited.

use mcp_unknown_keys::audit::ListedTools;
use mcp_unknown_keys::jsonrpc::read_listing;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{
    NotUtf8, host_value, host_value_within_depth, json_text, model_dump, not_utf8, sequence,
};

/// The tools of a listing: a list of tools, a listing holding one under
/// `tools` or `result.tools`, a lone declaration, or the JSON text of any
/// of these. A tool too deep to read is listed by its name alone, and named
/// in [`ListedTools::unreadable`].
pub(crate) fn listed_tools(tools: &Bound<'_, PyAny>) -> PyResult<ListedTools> {
    let listed = match json_text(tools) {
        Some(Ok(text)) => from_text(tools.py(), &text)?,
        Some(Err(NotUtf8)) => return Err(not_utf8()),
        None => from_host(tools)?,
    };
    listed.ok_or_else(|| {
        PyTypeError::new_err(
            "expected a list of tools, a listing with a `tools` list (ListToolsResult, \
             a tools/list response), or the JSON text of one",
        )
    })
}

/// A listing given as JSON text, read as the core reads one
/// ([`read_listing`]: its array found without building what surrounds it).
fn from_text(py: Python<'_>, text: &str) -> PyResult<Option<ListedTools>> {
    py.detach(|| read_listing(text))
        .map_err(|error| PyValueError::new_err(format!("not JSON: {error}")))
}

/// A listing given as Python values: each tool converted on its own.
fn from_host(value: &Bound<'_, PyAny>) -> PyResult<Option<ListedTools>> {
    if let Some(dumped) = model_dump(value)? {
        return from_host(&dumped);
    }
    if let Some(items) = sequence(value) {
        return each_tool(items).map(Some);
    }
    let Ok(dict) = value.cast::<PyDict>() else {
        return Ok(None);
    };
    let result = match dict.get_item("result")? {
        Some(result) => model_dump(&result)?.unwrap_or(result),
        None => PyDict::new(value.py()).into_any(),
    };
    let tools = match dict.get_item("tools")?.filter(|tools| !tools.is_none()) {
        Some(tools) => Some(tools),
        None => match result.cast::<PyDict>() {
            Ok(result) => result.get_item("tools")?,
            Err(_) => None,
        },
    };
    match tools {
        Some(tools) => match sequence(&tools) {
            Some(items) => each_tool(items).map(Some),
            None => Ok(None),
        },
        None => Ok(ListedTools::declaration(host_value(value)?)),
    }
}

fn each_tool<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<ListedTools> {
    let mut listed = ListedTools::default();
    for (index, item) in items.enumerate() {
        match host_value_within_depth(&item)? {
            Some(tool) => listed.tools.push(tool),
            None => match name_of(&item)? {
                Some(name) => {
                    listed.tools.push(serde_json::json!({ "name": name }));
                    listed.unreadable.push(name);
                }
                None => listed.unreadable.push(format!("#{index}")),
            },
        }
    }
    Ok(listed)
}

/// The `name` of a tool too deep to read whole, if it has a string one.
fn name_of(tool: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let tool = model_dump(tool)?.unwrap_or_else(|| tool.clone());
    let Ok(tool) = tool.cast::<PyDict>() else {
        return Ok(None);
    };
    Ok(match tool.get_item("name")? {
        Some(name) => name
            .cast::<PyString>()
            .ok()
            .map(|name| name.to_string_lossy().into_owned()),
        None => None,
    })
}
