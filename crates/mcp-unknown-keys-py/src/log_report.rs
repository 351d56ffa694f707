//! `Report`: what `audit_file`, `audit_records` and `audit_arrow` found, and
//! how two reports add up (`merge`) and travel as JSON text.

use std::collections::{BTreeMap, BTreeSet};

use mcp_unknown_keys_logs::report_data::{Fingerprint, ReportData, merge, same};
use mcp_unknown_keys_logs::{Lines, Options, Report};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::options::dimensions;
use crate::report::{PyCoverage, PyWarning, python_of};

/// What an audit found: the warnings, the coverage of every call, the
/// findings counted per call, the groups, and every line (record) read,
/// those that could not be read counted (`lines`, `unreadable_lines`) and
/// named (`notices`). Reports of partitions of records add up (`merge`).
#[pyclass(name = "Report", module = "mcp_unknown_keys", frozen)]
pub struct PyReport {
    data: ReportData,
}

impl PyReport {
    /// The report of an audit given `options`, which it records (as a
    /// fingerprint) so that it merges only with reports of audits given the
    /// same.
    pub(crate) fn of(report: Report, options: &Options) -> PyReport {
        PyReport {
            data: ReportData::from(report).made_with(Fingerprint::of(options)),
        }
    }
}

#[pymethods]
impl PyReport {
    /// Every warning raised, in order: each undeclared pair said once.
    #[getter]
    fn warnings(&self) -> Vec<PyWarning> {
        self.data.warnings.iter().cloned().map(PyWarning::from).collect()
    }

    /// Every call found: audited, or unaudited for a named reason.
    #[getter]
    fn coverage(&self) -> PyCoverage {
        PyCoverage::from(self.data.coverage.clone())
    }

    /// Every undeclared pair, counted per call: dicts with `tool`, `key`,
    /// `nested` (the key is a nested key's path), `calls` (how many calls
    /// carried it), `first_id`, `cause` (where one was diagnosed) and
    /// `declared_keys`; sorted by tool, then keys before paths.
    #[getter]
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        python_of(py, &self.data.findings)
    }

    /// The lines read (blank ones aside; the JSON values of an input that is
    /// not JSON Lines; the records of `audit_records`) and what became of
    /// them: a dict of `read`, `not_json`, `not_utf8`, `too_deep` (nested
    /// past what is read), `too_long` (a line past 64 MiB, read past) and
    /// `idle` (JSON holding nothing an audit uses).
    #[getter]
    fn lines(&self) -> BTreeMap<&'static str, u64> {
        self.data.line_counts()
    }

    /// The lines that could not be read: not JSON, not UTF-8, nested too
    /// deep, or too long.
    #[getter]
    fn unreadable_lines(&self) -> u64 {
        let Lines {
            not_json,
            not_utf8,
            too_deep,
            too_long,
            ..
        } = self.data.lines;
        not_json + not_utf8 + too_deep + too_long
    }

    /// How many inputs were read only in part: cut short (a JSON document
    /// that ends mid-value, a compressed stream that ends early) or a read
    /// that failed partway. What came before the cut is in the report; the
    /// cut is named in `notices`.
    #[getter]
    fn incomplete_inputs(&self) -> u64 {
        self.data.incomplete_inputs
    }

    /// Everything said beside the warnings, as the `audit` command says it
    /// on stderr: each unreadable line (`session.jsonl:4: not JSON, counted
    /// as unreadable`, the first few of each file named), a tool that could
    /// not be read, a catalogue's notes, a file read as one JSON document.
    #[getter]
    fn notices(&self) -> Vec<String> {
        self.data.notices.clone()
    }

    /// The calls grouped by `dimensions` (`"model"`, `"tool"`, `"key"`,
    /// `"cause"`, `"file"`), highest rate first: a dict per group, the
    /// object of `audit --by`'s JSON lines (`group`, `calls`, `audited`,
    /// `calls_with_unknown_keys`, `per_1000_audited`, `unknown_keys`,
    /// `causes`). Any one dimension can be asked for; several together
    /// only as the audit's `by=[...]` named them. Model, tool and file
    /// groups add up to the coverage; a call is in the group of each key
    /// and cause it carried, or of `(none)`.
    #[pyo3(signature = (*dimensions))]
    fn by<'py>(&self, py: Python<'py>, dimensions: Vec<String>) -> PyResult<Bound<'py, PyAny>> {
        let asked = self::dimensions(&dimensions)?;
        if asked.is_empty() {
            return Err(PyValueError::new_err(
                "by() needs a dimension: model, tool, key, cause or file",
            ));
        }
        let mut distinct = asked.clone();
        let mut seen = BTreeSet::new();
        distinct.retain(|dimension| seen.insert(*dimension));
        match self.data.groups.iter().find(|(by, _)| *by == distinct) {
            Some((_, groups)) => python_of(py, groups),
            None => Err(PyValueError::new_err(format!(
                "the calls were not grouped by {}: pass by={:?} to the audit",
                dimensions.join(", "),
                dimensions
            ))),
        }
    }

    /// Whether nothing was passed over: every call audited, every line
    /// read, and every input read to its end.
    #[getter]
    fn is_complete(&self) -> bool {
        self.data.coverage.is_complete() && self.unreadable_lines() == 0 && self.data.incomplete_inputs == 0
    }

    /// This report and `other` added up, as one report of both audits'
    /// records: coverage, findings, groups and lines summed, and each
    /// undeclared pair said once (the warnings of `other` lose the pairs
    /// this one said). The report of partitions of records, merged in any
    /// order, equals (`==`) the report of one `audit_records` run over all
    /// of them. A `ValueError`, naming what differs, when the audits were
    /// given different options (`tools`, `allow`, `top_level_only`,
    /// `no_missing`, `by`),
    /// when one report was read from the JSON form written before reports
    /// recorded their options and the other was not, or when a count would
    /// pass 2**64 - 1 (refused, not saturated).
    fn merge(&self, other: &PyReport) -> PyResult<PyReport> {
        let data = merge(&self.data, &other.data)
            .map_err(|why| PyValueError::new_err(format!("Report.merge: {why}")))?;
        Ok(PyReport { data })
    }

    /// The report as one JSON object (`report`, `options`, `warnings`,
    /// `coverage`, `findings`, `lines`, `incomplete_inputs`, `notices` (the
    /// first 100), `groups`), which `Report.from_json` reads back: how a
    /// worker hands its report over. `options` fingerprints what the audit
    /// was given, never the catalogue or keys themselves.
    fn to_json(&self) -> String {
        self.data.to_json()
    }

    /// A report read back from `Report.to_json`'s text (this version's, or
    /// the one before, which recorded no options). Nothing in the text is
    /// trusted: it is read without building more than the report itself,
    /// within a report's bounds (1,000 groups per grouping and `(other)`,
    /// 200 keys per group and `(other)`, 1,000 unlisted tools and
    /// `(other)`; notices past the first 100 are skipped), and its counts
    /// must agree (audited within calls, the unaudited reasons adding up,
    /// each group within its totals). A `ValueError` says what is wrong.
    #[classmethod]
    fn from_json(_class: &Bound<'_, PyType>, text: &str) -> PyResult<PyReport> {
        let data = ReportData::from_json(text)
            .map_err(|why| PyValueError::new_err(format!("Report.from_json: {why}")))?;
        Ok(PyReport { data })
    }

    /// Two reports are equal when they say the same: audits given the same
    /// options, the same coverage, lines, pairs said, findings (calls and
    /// cause per pair) and groups.
    /// The order of the warnings, the call ids they name and the notices,
    /// which depend on which partition was read first, are not compared.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyReport>()
            .is_ok_and(|other| same(&self.data, &other.get().data))
    }

    fn __repr__(&self) -> String {
        format!(
            "Report(warnings={}, coverage={}, unreadable_lines={})",
            self.data.warnings.len(),
            self.data.coverage,
            self.unreadable_lines()
        )
    }
}
