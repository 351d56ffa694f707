//! Where a Python auditor's warnings and notes go: the host's callables,
//! or `sys.stderr`.

use mcp_unknown_keys::audit::{Note, Notice, Sink, StderrSink, Warning};
use pyo3::prelude::*;

use crate::report::PyWarning;

/// Hands each warning to `on_warn` (a `Warning`) and each catalogue note to
/// `on_note` (the tool's name and the note's text); without `on_warn`,
/// writes each as the core's stderr sink words it, to `sys.stderr` (which
/// is where Python users and their notebooks read stderr). Notes follow
/// warnings when there is no `on_note`: to `sys.stderr` beside them, or
/// nowhere beside a callable, as the core's closure sinks do.
///
/// A callable that raises is reported through `sys.unraisablehook` and
/// otherwise ignored: the host's bookkeeping never changes a call.
pub struct PythonSink {
    pub on_warn: Option<Py<PyAny>>,
    pub on_note: Option<Py<PyAny>>,
}

impl Sink for PythonSink {
    fn warn(&self, warning: &Warning) {
        Python::attach(|py| match &self.on_warn {
            Some(on_warn) => {
                let warning = PyWarning::from(warning.clone());
                call(py, on_warn, (warning,));
            }
            None => write_stderr(py, &StderrSink::warning_line(warning)),
        })
    }

    fn note(&self, tool: &str, note: &Note) {
        self.say(tool, &note.to_string());
    }

    /// Notices go where notes go, under no tool's name: to `on_note` with
    /// `""`, else to `sys.stderr` (unless `on_warn` takes the warnings).
    fn notice(&self, notice: &Notice) {
        Python::attach(|py| match (&self.on_note, &self.on_warn) {
            (Some(on_note), _) => call(py, on_note, ("", notice.to_string())),
            (None, None) => write_stderr(py, &StderrSink::notice_line(notice)),
            (None, Some(_)) => {}
        })
    }
}

impl PythonSink {
    /// Says one note about `tool` (`text` without the tool's name), as
    /// [`Sink::note`] says a catalogue's.
    pub fn say(&self, tool: &str, text: &str) {
        Python::attach(|py| match (&self.on_note, &self.on_warn) {
            (Some(on_note), _) => call(py, on_note, (tool, text)),
            (None, None) => write_stderr(py, &StderrSink::text_line(tool, text)),
            (None, Some(_)) => {}
        })
    }
}

/// Calls a host's callback; what it raises goes to `sys.unraisablehook`,
/// never back into the call being audited.
pub(crate) fn call<'py>(py: Python<'py>, callable: &Py<PyAny>, args: impl pyo3::call::PyCallArgs<'py>) {
    if let Err(error) = callable.bind(py).call1(args) {
        error.write_unraisable(py, Some(callable.bind(py)));
    }
}

/// One write of the whole line to `sys.stderr`; nothing when there is none
/// (`pythonw`, a closed stream).
fn write_stderr(py: Python<'_>, line: &str) {
    let written = py
        .import("sys")
        .and_then(|sys| sys.getattr("stderr"))
        .and_then(|stderr| match stderr.is_none() {
            true => Ok(()),
            false => stderr.call_method1("write", (line,)).map(drop),
        });
    // A stderr that cannot be written to is no reason to fail a call.
    drop(written);
}
