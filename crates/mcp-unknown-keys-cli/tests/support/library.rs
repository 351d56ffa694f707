//! The library's `Session` fed recorded messages, each read by the core's
//! reader as every door reads it: what the pure path says, for the tests
//! that hold the doors to it.

use mcp_unknown_keys::audit::{Auditor, Judged, Warning};
use mcp_unknown_keys::jsonrpc::{Line, read_line};
use mcp_unknown_keys::session::{Session, Side};

/// A session fed to its end: its state (coverage, findings, verdicts
/// counted), the warnings its steps said, and every verdict, those of the
/// calls still awaiting an answer at the end included.
pub struct Fed {
    pub session: Session,
    pub warnings: Vec<Warning>,
    pub verdicts: Vec<Judged>,
}

/// Feeds each message (its side, its text as it travelled; a batch
/// message by message) to a new session auditing through `auditor`, then
/// ends the session.
pub fn feed<'a>(auditor: &Auditor, messages: impl IntoIterator<Item = (Side, &'a str)>) -> Fed {
    let mut session = Session::new();
    let mut warnings = Vec::new();
    let mut verdicts = Vec::new();
    for (from, text) in messages {
        let read = match read_line(text.as_bytes()) {
            Line::Message(message) => vec![message],
            Line::Batch(messages) => messages,
            Line::Unreadable => Vec::new(),
        };
        for message in read {
            let step = session.read(auditor, from, message);
            warnings.extend(step.warning().cloned());
            verdicts.extend(step.verdicts);
        }
    }
    verdicts.extend(session.finish());
    Fed {
        session,
        warnings,
        verdicts,
    }
}
