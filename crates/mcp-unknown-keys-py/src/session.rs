//! `Session`: the core's session state machine ([`Session`]) for Python
//! hosts that see both sides of an MCP session, the messages they send and
//! the server's answers, so they get verdicts as the proxy does.
//!
//! Each message is made JSON text and read with the one JSON-RPC reader
//! ([`read_line`]), exactly as the proxy reads a line off the wire, then
//! handed to the session; what the session says (a catalogue's notes, a
//! tool too deep to read, a warning, verdicts) is delivered as the proxy's
//! worker delivers it, with no lock held.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_unknown_keys::audit::{self, Judged};
use mcp_unknown_keys::jsonrpc::{Line, read_line};
use mcp_unknown_keys::session::{Session, Side, Step};
use pyo3::prelude::*;

use crate::convert::DETACH_FROM_BYTES;
use crate::message::wire_bytes;
use crate::options::{callable, core_auditor};
use crate::report::{PyCoverage, PyWarning, python_of};
use crate::sink::call;

/// How many settled verdicts `verdicts` keeps, the latest: a long session
/// must not grow without bound. `on_verdict` is handed every one.
pub const MAX_KEPT_VERDICTS: usize = 10_000;

/// One MCP session as the alarm sees it: hand it each message the host
/// sends (`from_host`) and each the server sends back (`from_server`).
#[pyclass(name = "Session", module = "mcp_unknown_keys", frozen)]
pub struct PySession {
    /// The catalogue and the said-once memory.
    auditor: audit::Auditor,
    on_verdict: Option<Py<PyAny>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session: Session,
    /// The latest verdicts settled, oldest first.
    settled: VecDeque<Judged>,
}

impl State {
    fn keep(&mut self, judged: &[Judged]) {
        for judged in judged {
            if self.settled.len() == MAX_KEPT_VERDICTS {
                self.settled.pop_front();
            }
            self.settled.push_back(judged.clone());
        }
    }
}

#[pymethods]
impl PySession {
    #[new]
    #[pyo3(signature = (on_warn=None, allow=None, top_level_only=false, on_note=None, on_verdict=None, no_missing=false))]
    fn new(
        on_warn: Option<Bound<'_, PyAny>>,
        allow: Option<Bound<'_, PyAny>>,
        top_level_only: bool,
        on_note: Option<Bound<'_, PyAny>>,
        on_verdict: Option<Bound<'_, PyAny>>,
        no_missing: bool,
    ) -> PyResult<PySession> {
        let auditor = core_auditor(on_warn, allow, top_level_only, on_note)?.check_required(!no_missing);
        Ok(PySession {
            auditor,
            on_verdict: callable("on_verdict", on_verdict)?,
            state: Mutex::default(),
        })
    }

    /// Reads one message (or batch) the host sent: a dict or list as
    /// `json.loads` gives it, a pydantic model (`JSONRPCMessage`), or its
    /// JSON text (`str`, `bytes`). Returns the warnings it raised. Never
    /// raises on what the message holds; a value with no JSON form is a
    /// `TypeError`.
    #[pyo3(name = "from_host")]
    fn read_from_host(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Vec<PyWarning>> {
        self.read(py, Side::Host, message)
    }

    /// Reads one message (or batch) the server sent, in the same forms as
    /// `from_host`: listings, answers, `list_changed`. Returns the warnings
    /// it raised (none: a server sends no call).
    #[pyo3(name = "from_server")]
    fn read_from_server(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Vec<PyWarning>> {
        self.read(py, Side::Server, message)
    }

    /// Ends the session: every call still awaiting its answer is judged
    /// `unanswered`. Returns those verdicts (after handing each to
    /// `on_verdict`); called again, it judges only the calls read since.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let judged = {
            let mut state = self.state();
            let judged = state.session.finish();
            state.keep(&judged);
            judged
        };
        judged
            .iter()
            .map(|judged| {
                self.say_verdict(py, judged)?;
                python_of(py, judged)
            })
            .collect()
    }

    /// Every call read so far: how many, and why the rest were not audited.
    #[getter]
    fn coverage(&self) -> PyCoverage {
        PyCoverage::from(self.state().session.coverage().clone())
    }

    /// The verdicts settled so far (the latest 10,000), oldest first: dicts
    /// `{"verdict", "tool", "id", "unknown_keys"}`, `unknown_paths` when
    /// the call carried undeclared nested keys and `missing_required` when
    /// it lacked required keys: the JSON line a door logs.
    #[getter]
    fn verdicts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        // Copied out first: no lock is held while Python runs (`json.loads`).
        let settled: Vec<Judged> = self.state().settled.iter().cloned().collect();
        settled.iter().map(|judged| python_of(py, judged)).collect()
    }

    /// Every tool of the current catalogue, sorted.
    #[getter]
    fn tools(&self) -> Vec<String> {
        self.auditor.listed_tools()
    }

    /// The tools whose calls are audited now, sorted.
    #[getter]
    fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    fn __repr__(&self) -> String {
        let coverage = self.state().session.coverage().clone();
        format!(
            "Session(tools={}, coverage={coverage})",
            self.auditor.catalog().len()
        )
    }
}

/// The session's lock guards pure Rust only: it is never held across a
/// call into Python, which may let another thread take the GIL and wait
/// for the lock with it, or call this session back on the same thread.
impl PySession {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads a message from `from`, then delivers what the session said.
    fn read(&self, py: Python<'_>, from: Side, message: &Bound<'_, PyAny>) -> PyResult<Vec<PyWarning>> {
        let steps = match wire_bytes(message)? {
            Some(line) if line.len() >= DETACH_FROM_BYTES => py.detach(|| self.steps(from, &line)),
            Some(line) => self.steps(from, &line),
            None => Vec::new(),
        };
        let mut warnings = Vec::new();
        for step in steps {
            warnings.extend(self.deliver(py, step)?);
        }
        Ok(warnings)
    }

    /// Hands each message of a line to the session, under its lock. A bug
    /// met reading one message loses that message only.
    fn steps(&self, from: Side, line: &[u8]) -> Vec<Step> {
        let messages = match catch_unwind(|| read_line(line)) {
            Ok(Line::Message(message)) => vec![message],
            Ok(Line::Batch(messages)) => messages,
            Ok(Line::Unreadable) | Err(_) => Vec::new(),
        };
        let mut state = self.state();
        let state = &mut *state;
        let mut steps = Vec::with_capacity(messages.len());
        for message in messages {
            let read = catch_unwind(AssertUnwindSafe(|| {
                state.session.read(&self.auditor, from, message)
            }));
            if let Ok(step) = read {
                state.keep(&step.verdicts);
                steps.push(step);
            }
        }
        steps
    }

    /// Delivers what one message made the session say, as every door
    /// does ([`Step::deliver`]), then hands the verdicts to `on_verdict`.
    /// Returns the warning.
    fn deliver(&self, py: Python<'_>, step: Step) -> PyResult<Option<PyWarning>> {
        step.deliver(&self.auditor);
        let warning = step.warning().cloned();
        for judged in &step.verdicts {
            self.say_verdict(py, judged)?;
        }
        Ok(warning.map(PyWarning::from))
    }

    /// Hands one verdict to `on_verdict`, as a dict of its own: a callback
    /// that changes it changes nothing else.
    fn say_verdict(&self, py: Python<'_>, judged: &Judged) -> PyResult<()> {
        if let Some(on_verdict) = &self.on_verdict {
            call(py, on_verdict, (python_of(py, judged)?,));
        }
        Ok(())
    }
}
