//! What an auditor said: a sink that writes down every warning and every
//! catalogue note, for the tests of what the core reads in schemas.

use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Note, Notice, Outcome, Sink, Warning};
use serde_json::Value;

/// Every warning, note and notice delivered, in order; notes as
/// `tool: note`.
#[derive(Default)]
pub struct Said {
    pub warnings: Mutex<Vec<Warning>>,
    pub notes: Mutex<Vec<String>>,
    pub notices: Mutex<Vec<Notice>>,
}

impl Sink for Said {
    fn warn(&self, warning: &Warning) {
        self.warnings.lock().unwrap().push(warning.clone());
    }

    fn note(&self, tool: &str, note: &Note) {
        self.notes.lock().unwrap().push(format!("{tool}: {note}"));
    }

    fn notice(&self, notice: &Notice) {
        self.notices.lock().unwrap().push(notice.clone());
    }
}

/// An auditor over the MCP tools `tools` (name, inputSchema), listed once,
/// and what it said.
pub fn listed(tools: &[Value]) -> (Auditor, Arc<Said>) {
    let said = Arc::new(Said::default());
    let auditor = Auditor::new().with_shared_sink(said.clone());
    auditor.replace_catalog(Catalog::from_mcp_tools(tools));
    (auditor, said)
}

/// Audits one call with JSON text arguments against the auditor's
/// catalogue, and delivers its warning.
pub fn audit(auditor: &Auditor, tool: &str, arguments: &str) -> Outcome {
    let outcome = auditor.audit(&auditor.catalog(), Call::new(tool, Arguments::Json(arguments)));
    if let Outcome::Audited {
        warning: Some(warning),
        ..
    } = &outcome
    {
        auditor.warn(warning);
    }
    outcome
}

/// The undeclared top-level keys and paths a call carried (said before or
/// not); panics when the call was not audited.
pub fn undeclared(auditor: &Auditor, tool: &str, arguments: &str) -> (Vec<String>, Vec<String>) {
    match audit(auditor, tool, arguments) {
        Outcome::Audited {
            undeclared,
            undeclared_paths,
            ..
        } => (undeclared, undeclared_paths),
        Outcome::Skipped(skip) => panic!("{tool} {arguments} was not audited: {skip}"),
    }
}
