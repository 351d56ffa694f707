//! `audit_records` and the native half of `audit_arrow`: records given one
//! by one (Python values, JSON text, or the values of an Arrow column),
//! each read as an input of its own by the log reader, so that the reports
//! of partitions of a corpus add up to the report of one run.

use std::borrow::Cow;

use mcp_unknown_keys_logs::Audit;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::arrow::StringColumn;
use crate::files::{audit_options, python_error};
use crate::log_report::PyReport;
use crate::message::wire_bytes;

/// An Arrow array as Python hands it over: its schema's and its array's
/// capsules, and the lengths of its buffers.
type ArrowArray<'py> = (Bound<'py, PyCapsule>, Bound<'py, PyCapsule>, Vec<usize>);

/// Bytes that are no UTF-8: what a `str` that is not valid UTF-8 (a lone
/// surrogate) is read as, so that it is counted as `not_utf8`.
const NOT_UTF8: &[u8] = b"\xff";

/// Audits records as the `audit` command audits the lines of a file, each
/// record an input of its own, and returns a `Report`.
///
/// `records`: any iterable of records, each a dict (or list, or pydantic
/// model) as `json.loads` gives it, or its JSON text (`str`, `bytes`), in
/// every shape `audit` reads: transcript lines, request and response
/// bodies, spans, a whole conversation as one JSON array. A record's own
/// catalogue (a request body's `tools`, a listing it holds) serves its own
/// calls only; `tools` is the catalogue of every record, as in
/// `audit_file`. `name` is the `file` the calls are grouped under.
#[pyfunction]
#[pyo3(signature = (records, tools=None, *, allow=None, top_level_only=false, no_missing=false, by=None, name="records"))]
pub fn audit_records(
    records: &Bound<'_, PyAny>,
    tools: Option<&Bound<'_, PyAny>>,
    allow: Option<Bound<'_, PyAny>>,
    top_level_only: bool,
    no_missing: bool,
    by: Option<Vec<String>>,
    name: &str,
) -> PyResult<PyReport> {
    let options = audit_options(tools, allow, top_level_only, no_missing, by)?;
    let mut audit = Audit::new(&options).map_err(python_error)?;
    for (number, record) in (1u64..).zip(records.try_iter()?) {
        let record = record?;
        let bytes = wire_bytes(&record)?;
        audit.read_record(name, number, bytes.as_deref().unwrap_or(NOT_UTF8));
    }
    Ok(PyReport::of(audit.finish(), &options))
}

/// The native half of `audit_arrow`: the arrays of a column, each as the
/// two capsules of `__arrow_c_array__()` (string, large_string, binary or
/// large_binary) and the lengths in bytes of its three buffers (validity
/// bitmap, offsets, data; 0 for one that is absent), each non-null value a
/// record. An array whose buffers do not hold what its length, offset and
/// offsets say is a `ValueError`, before anything is read. `names`, when given, are
/// arrays of the same lengths whose values name each record's input (the
/// `file` its calls are grouped under: a path column), `name` where null.
/// Read with the GIL released; nulls are no records.
#[pyfunction]
#[pyo3(signature = (arrays, tools=None, *, allow=None, top_level_only=false, no_missing=false, by=None, name="records", names=None))]
#[allow(clippy::too_many_arguments)]
pub fn audit_arrow_arrays(
    py: Python<'_>,
    arrays: Vec<ArrowArray<'_>>,
    tools: Option<&Bound<'_, PyAny>>,
    allow: Option<Bound<'_, PyAny>>,
    top_level_only: bool,
    no_missing: bool,
    by: Option<Vec<String>>,
    name: &str,
    names: Option<Vec<ArrowArray<'_>>>,
) -> PyResult<PyReport> {
    let options = audit_options(tools, allow, top_level_only, no_missing, by)?;
    let mut audit = Audit::new(&options).map_err(python_error)?;
    // The capsules in `arrays` and `names` own the buffers, and are held
    // until the end.
    let read = |arrays: &[ArrowArray<'_>]| {
        arrays
            .iter()
            .map(|(schema, array, sizes)| StringColumn::of(schema, array, sizes))
            .collect::<PyResult<Vec<_>>>()
    };
    let columns = read(&arrays)?;
    let names = names.as_deref().map(read).transpose()?;
    if let Some(names) = &names {
        let lengths = |columns: &[StringColumn]| columns.iter().map(StringColumn::len).collect::<Vec<_>>();
        if lengths(names) != lengths(&columns) {
            return Err(PyValueError::new_err(
                "the names' arrays must be as many and as long as the records'",
            ));
        }
    }
    let report = py.detach(move || {
        let mut number = 0u64;
        for (at, column) in columns.iter().enumerate() {
            let named = names.as_ref().map(|names| &names[at]);
            for row in 0..column.len() {
                number += 1;
                if let Some(record) = column.value(row) {
                    let input = named.and_then(|names| names.value(row));
                    let input = input.map_or(Cow::Borrowed(name), String::from_utf8_lossy);
                    audit.read_record(&input, number, record);
                }
            }
        }
        audit.finish()
    });
    Ok(PyReport::of(report, &options))
}
