//! What the core reports, as Python objects: `Warning` and `Coverage`.

use mcp_unknown_keys::audit::{Coverage, Warning};
use pyo3::prelude::*;
use serde::Serialize;

/// A tool was called with keys it never declared: the fields of the JSON
/// line the proxy logs and `audit` prints.
#[pyclass(name = "Warning", module = "mcp_unknown_keys", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyWarning {
    warning: Warning,
}

impl From<Warning> for PyWarning {
    fn from(warning: Warning) -> PyWarning {
        PyWarning { warning }
    }
}

#[pymethods]
impl PyWarning {
    /// The tool name as the catalogue published it.
    #[getter]
    fn tool(&self) -> &str {
        &self.warning.tool
    }

    /// The undeclared top-level keys reported now for the first time, sorted.
    #[getter]
    fn unknown_keys(&self) -> Vec<String> {
        self.warning.unknown_keys.clone()
    }

    /// Every property the tool's declaration published, sorted.
    #[getter]
    fn declared_keys(&self) -> Vec<String> {
        self.warning.declared_keys.clone()
    }

    /// The call's id as text, `""` when it had none.
    #[getter]
    fn id(&self) -> &str {
        &self.warning.id
    }

    /// Per unknown key, its likely cause: dicts with `key`, `cause` and,
    /// where there is one, `suggestion`, `declared_by`, `seen_on_tools`.
    #[getter]
    fn hints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.warning.hints)
    }

    /// Declared keys a hint points to that the call did not carry: dicts
    /// with `key` and, when the schema gives one, `default`.
    #[getter]
    fn missing_keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.warning.missing_keys)
    }

    /// The undeclared nested keys reported now for the first time, as paths
    /// (`options.recursve`, `entities[].age`), sorted.
    #[getter]
    fn unknown_paths(&self) -> Vec<String> {
        self.warning.unknown_paths.clone()
    }

    /// The required keys the call lacked, reported now for the first time,
    /// as paths (`path`, `options.mode`), sorted. Not `missing_keys`, which
    /// the diagnosis of an unknown key names.
    #[getter]
    fn missing_required(&self) -> Vec<String> {
        self.warning.missing_required.clone()
    }

    /// Why the keys of `missing_required` were lost (`missing_required`,
    /// `emptied`, `truncated_response`); `None` when none is missing.
    #[getter]
    fn missing_cause(&self) -> Option<&'static str> {
        self.warning.missing_cause.map(|cause| cause.as_str())
    }

    /// The warning as a dict: the JSON line's object.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.warning)
    }

    /// The warning as one JSON line, as the proxy logs it.
    fn to_json(&self) -> String {
        self.warning.to_json_line()
    }

    fn __str__(&self) -> String {
        self.warning.to_string()
    }

    fn __repr__(&self) -> String {
        let w = &self.warning;
        format!(
            "Warning(tool={}, unknown_keys={}, unknown_paths={}, missing_required={}, declared_keys={}, id={})",
            repr_str(&w.tool),
            repr_list(&w.unknown_keys),
            repr_list(&w.unknown_paths),
            repr_list(&w.missing_required),
            repr_list(&w.declared_keys),
            repr_str(&w.id),
        )
    }
}

/// Every call an auditor found: audited, or unaudited for a named reason.
#[pyclass(name = "Coverage", module = "mcp_unknown_keys", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyCoverage {
    coverage: Coverage,
}

impl From<Coverage> for PyCoverage {
    fn from(coverage: Coverage) -> PyCoverage {
        PyCoverage { coverage }
    }
}

#[pymethods]
impl PyCoverage {
    /// Every call found.
    #[getter]
    fn calls(&self) -> u64 {
        self.coverage.calls
    }

    /// The calls whose keys were compared with a declaration.
    #[getter]
    fn audited(&self) -> u64 {
        self.coverage.audited
    }

    /// The calls not audited, by reason (`no_catalogue`, `unlisted_tool`,
    /// `declares_nothing`, `unreadable_arguments`); reasons with no call
    /// are absent.
    #[getter]
    fn unaudited<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.coverage.unaudited)
    }

    /// The tools called but not listed, each with its number of calls.
    #[getter]
    fn unlisted_tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.coverage.unlisted_tools)
    }

    /// Whether every call found was audited (true when none was found).
    #[getter]
    fn is_complete(&self) -> bool {
        self.coverage.is_complete()
    }

    /// The coverage as a dict: `calls`, `audited`, `unaudited`, `unlisted_tools`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.coverage)
    }

    /// The line a door ends its JSON output with: `{"coverage":{…}}`.
    fn to_json(&self) -> String {
        self.coverage.to_json_line()
    }

    fn __str__(&self) -> String {
        self.coverage.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Coverage({})", self.coverage)
    }
}

/// What the core serialises, as the Python objects `json.loads` makes of
/// its JSON text: dicts keep the JSON line's order of fields.
pub(crate) fn python_of<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).expect("a report serialises");
    py.import("json")?.call_method1("loads", (text,))
}

/// A string as Python's `repr` writes it (near enough: JSON's escapes).
fn repr_str(text: &str) -> String {
    let json = serde_json::to_string(text).expect("a string serialises");
    format!(
        "'{}'",
        json[1..json.len() - 1].replace('\'', "\\'").replace("\\\"", "\"")
    )
}

fn repr_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| repr_str(item)).collect();
    format!("[{}]", items.join(", "))
}
