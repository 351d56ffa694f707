//! The Python package `mcp_unknown_keys`: the alarm for arguments a tool
//! never declared, built from the Rust core rather than written again.
//!
//! This crate is the extension module `mcp_unknown_keys._native`, built by
//! maturin (see `pyproject.toml`); the package's Python side (`python/`)
//! re-exports it and adds the adapters for the MCP SDK, pydantic-ai, the
//! OpenAI Agents SDK and LangChain.
//!
//! - `auditor`: `Auditor`, over the core's [`Auditor`](mcp_unknown_keys::audit::Auditor);
//! - `session`: `Session`, over the core's [`Session`](mcp_unknown_keys::session::Session),
//!   for hosts that see the server's answers too;
//! - `message`: a JSON-RPC message given as values, written as the JSON
//!   text its sender puts on the wire;
//! - `options`: what a host passes to build either: callables, allowed keys;
//! - `arguments`: a call's dict read in place (the core's `HostObject`);
//! - `convert`: dict keys, scalars and JSON text as JSON reads them, and
//!   catalogues as JSON;
//! - `listing`: the tools of a listing in any form a host gives it, read
//!   tool by tool;
//! - `files`: `audit_file`, the `audit` command's reader of recorded logs;
//! - `records`: `audit_records` and `audit_arrow`'s native half, records
//!   one by one, each an input of its own;
//! - `arrow`: a string column of an Arrow array read in place (the Arrow C
//!   Data Interface);
//! - `log_report`: `Report`, over the logs crate's `report_data` (what it
//!   holds, its JSON form, and how reports add up);
//! - `report`: `Warning` and `Coverage`;
//! - `sink`: warnings to the host's callable or to `sys.stderr`;
//! - `walk`: a serde `Deserializer` over a call's Python values, which the
//!   core's scan of nested keys walks in place.

mod arguments;
mod arrow;
mod auditor;
mod convert;
mod files;
mod listing;
mod log_report;
mod message;
mod options;
mod records;
mod report;
mod session;
mod sink;
mod walk;

use pyo3::prelude::*;

/// The module `mcp_unknown_keys._native`.
#[pymodule(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<auditor::PyAuditor>()?;
    module.add_class::<session::PySession>()?;
    module.add_class::<report::PyWarning>()?;
    module.add_class::<report::PyCoverage>()?;
    module.add_class::<log_report::PyReport>()?;
    module.add_function(wrap_pyfunction!(files::audit_file, module)?)?;
    module.add_function(wrap_pyfunction!(records::audit_records, module)?)?;
    module.add_function(wrap_pyfunction!(records::audit_arrow_arrays, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
