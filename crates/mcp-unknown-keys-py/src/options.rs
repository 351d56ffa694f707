//! What a host passes to build an alarm (`Auditor`, `Session`,
//! `audit_file`): its callables, its allowed keys, and the core auditor
//! made of them. Both classes build theirs here, so they read their
//! options alike.

use mcp_unknown_keys::audit;
use mcp_unknown_keys_logs::Dimension;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::sink::PythonSink;

/// The core auditor a Python class wraps, delivering through the host's
/// callables ([`PythonSink`]).
pub(crate) fn core_auditor(
    on_warn: Option<Bound<'_, PyAny>>,
    allow: Option<Bound<'_, PyAny>>,
    top_level_only: bool,
    on_note: Option<Bound<'_, PyAny>>,
) -> PyResult<audit::Auditor> {
    let sink = PythonSink {
        on_warn: callable("on_warn", on_warn)?,
        on_note: callable("on_note", on_note)?,
    };
    Ok(audit::Auditor::new()
        .with_sink(sink)
        .allow_all(allowed_keys(allow)?)
        .top_level_only(top_level_only))
}

/// A host's callback: `None`, or anything callable (a `TypeError` naming
/// the parameter otherwise, at construction rather than at the first
/// warning).
pub(crate) fn callable(name: &str, value: Option<Bound<'_, PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    match value {
        Some(value) if !value.is_callable() => Err(PyTypeError::new_err(format!("{name} must be callable"))),
        value => Ok(value.map(Bound::unbind)),
    }
}

/// The keys of `allow`: any iterable of strings but a string itself, whose
/// letters would each be allowed.
pub(crate) fn allowed_keys(allow: Option<Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(allow) = allow else {
        return Ok(Vec::new());
    };
    if allow.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "allow must be an iterable of keys, not a string",
        ));
    }
    allow
        .try_iter()?
        .map(|key| {
            key?.extract::<String>()
                .map_err(|_| PyValueError::new_err("allow holds a key that is not a string"))
        })
        .collect()
}

/// Dimension names read: a `ValueError` names the ones there are.
pub(crate) fn dimensions(names: &[String]) -> PyResult<Vec<Dimension>> {
    names
        .iter()
        .map(|name| name.parse().map_err(PyValueError::new_err))
        .collect()
}
