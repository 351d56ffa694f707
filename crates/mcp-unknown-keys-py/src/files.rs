//! `audit_file`: the `audit` command's reader of recorded logs, for Python.

use std::path::PathBuf;

use mcp_unknown_keys_logs::{Audit, Dimension, Error, Options, Report, Tools};
use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::listing::listed_tools;
use crate::log_report::PyReport;
use crate::options::{allowed_keys, dimensions};

/// Audits recorded logs as `mcp-unknown-keys audit` does and returns a
/// `Report`: the warnings (each undeclared pair said once), the coverage
/// of every call found, and the lines read, those that could not be read
/// counted and named in its notices.
///
/// `path`: a file, or a list of files read in order; JSON Lines or JSON
/// documents, plain, gzip or Zstandard, in every shape the command reads
/// (transcripts, model API bodies and streams, spans, MCP traffic, a
/// proxy's `--log`). `tools`: the catalogue when the logs hold none: a path
/// to a file of tools (`str` or `os.PathLike`; a `str` is always a path),
/// or the declarations themselves as a list of tools, a dict listing them
/// or a pydantic model (`ListToolsResult`); anything else is a `TypeError`.
/// The calls are grouped by each dimension (`report.by("model")`); `by`
/// names dimensions to group by together (`by=["model", "tool"]`, as
/// `audit --by model --by tool`).
#[pyfunction]
#[pyo3(signature = (path, tools=None, *, allow=None, top_level_only=false, no_missing=false, by=None))]
pub fn audit_file(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    tools: Option<&Bound<'_, PyAny>>,
    allow: Option<Bound<'_, PyAny>>,
    top_level_only: bool,
    no_missing: bool,
    by: Option<Vec<String>>,
) -> PyResult<PyReport> {
    let paths = paths_of(path)?;
    let options = audit_options(tools, allow, top_level_only, no_missing, by)?;
    // The files are read with the GIL released: other threads run meanwhile.
    let report = py
        .detach(|| read_in_full_or_in_part(&paths, &options))
        .map_err(python_error)?;
    Ok(PyReport::of(report, &options))
}

/// The options of an audit from Python's arguments: `allow`,
/// `top_level_only`, `no_missing`, every dimension grouped alone (for `report.by(..)`)
/// and the combination `by` names, and the catalogue `tools`.
pub(crate) fn audit_options(
    tools: Option<&Bound<'_, PyAny>>,
    allow: Option<Bound<'_, PyAny>>,
    top_level_only: bool,
    no_missing: bool,
    by: Option<Vec<String>>,
) -> PyResult<Options> {
    let mut options = allowed_keys(allow)?
        .into_iter()
        .fold(Options::default(), Options::allow)
        .top_level_only(top_level_only)
        .no_missing(no_missing);
    // Each dimension alone, for `report.by(dimension)`; and the combination
    // `by` names, as `audit --by` groups by it.
    for dimension in Dimension::ALL {
        options = options.group_by([dimension]);
    }
    if let Some(by) = by {
        options = options.group_by(dimensions(&by)?);
    }
    if let Some(tools) = tools {
        options = options.tools(catalogue_of(tools)?);
    }
    Ok(options)
}

/// Reads every file in turn. Unlike [`mcp_unknown_keys_logs::audit_files`],
/// an input read only in part (cut short, or a read failing partway) is not
/// an error: what was read before the cut is in the report, the cut in its
/// notices, and `is_complete` is false — a Python caller keeps what was
/// found. A file that cannot be opened at all is still an error.
fn read_in_full_or_in_part(paths: &[PathBuf], options: &Options) -> Result<Report, Error> {
    let mut audit = Audit::new(options)?;
    for path in paths {
        audit.read_file(path)?;
    }
    Ok(audit.finish())
}

/// One path or a list of them: `str`, `bytes` or `os.PathLike` each.
fn paths_of(path: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if path.is_instance_of::<PyList>() || path.is_instance_of::<PyTuple>() {
        return path.try_iter()?.map(|path| path?.extract::<PathBuf>()).collect();
    }
    Ok(vec![path.extract::<PathBuf>()?])
}

/// A path to a catalogue file (`str`, `os.PathLike`), or the declarations
/// themselves (a list or tuple of tools, a dict listing them or declaring
/// one, a pydantic model such as `ListToolsResult`). Anything else is a
/// `TypeError`: JSON text in `bytes` would read as a listing while the same
/// text in a `str` reads as a path, and a set or a generator of tools has
/// no order to say notes in.
fn catalogue_of(tools: &Bound<'_, PyAny>) -> PyResult<Tools> {
    if let Ok(text) = tools.cast::<PyString>() {
        let path = PathBuf::from(text.to_str()?);
        let looks_like_json = text.to_str()?.trim_start().starts_with(['[', '{']);
        if looks_like_json && !path.exists() {
            return Err(PyTypeError::new_err(
                "tools: a str is a path to a catalogue file, and this one is no file but looks \
                 like JSON text: pass the declarations themselves (json.loads(text))",
            ));
        }
        return Ok(Tools::file(path));
    }
    if tools.hasattr("__fspath__")? {
        return Ok(Tools::file(tools.extract::<PathBuf>()?));
    }
    let declarations = tools.is_instance_of::<PyList>()
        || tools.is_instance_of::<PyTuple>()
        || tools.is_instance_of::<PyDict>()
        || tools.hasattr("model_dump")?;
    if !declarations {
        return Err(PyTypeError::new_err(format!(
            "tools must be a path to a catalogue file (str or os.PathLike) or the declarations \
             (a list of tools, a dict listing them, a pydantic model such as ListToolsResult), \
             not {}",
            tools.get_type().name()?
        )));
    }
    Ok(Tools::declarations("tools", listed_tools(tools)?.tools))
}

/// The logs crate's error, as the Python exception of its kind, its message
/// naming the file.
pub(crate) fn python_error(error: Error) -> PyErr {
    let message = error.to_string();
    match &error {
        Error::Open { source, .. } | Error::Read { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => PyOSError::new_err(message),
        },
        Error::Directory { .. } => PyIsADirectoryError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}
