//! The recogniser as a pure function: one record in, what it holds out.

use serde_json::Value;

use crate::shapes::walk::Reader;
use crate::shapes::{Event, Read};

/// What [`read_record`] found in one record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recognised {
    /// What the record was.
    pub kind: RecordKind,
    /// The tool calls it held, in order (streamed calls assembled from it
    /// alone, as an input ending after it would hand them out).
    pub calls: Vec<FoundCall>,
    /// The catalogues it held, as the JSON text of each list of tools.
    pub catalogues: Vec<String>,
    /// The JSON-RPC messages other than calls it was or held (`tools/list`
    /// requests and responses, cancellations, list changes), as read by the
    /// core's [`jsonrpc`](mcp_unknown_keys::jsonrpc) reader.
    pub messages: usize,
    /// The warnings a proxy logged that it was.
    pub logged_warnings: usize,
    /// The verdicts a proxy logged that it was.
    pub logged_verdicts: usize,
    /// The notes a proxy logged that it was.
    pub logged_notes: usize,
    /// The proxy summaries it was.
    pub summaries: usize,
}

/// What a record was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecordKind {
    /// Nothing but whitespace, or the framing of server-sent events.
    #[default]
    Blank,
    /// Not UTF-8.
    NotUtf8,
    /// Not JSON.
    NotJson,
    /// JSON holding nothing an audit uses.
    Idle,
    /// It held something an audit uses.
    Used,
    /// JSON nesting records deeper than they are read (as only a hostile
    /// record does): counted as unreadable; what lay above the cut was
    /// read.
    TooDeep,
}

/// One tool call [`read_record`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundCall {
    /// The tool's name, as the call gives it.
    pub tool: String,
    /// The server, where the call names it apart from the tool.
    pub server: Option<String>,
    /// The arguments as JSON text (a JSON string's content, unescaped);
    /// `None` when absent.
    pub arguments: Option<String>,
    /// The call's id.
    pub id: Option<Value>,
}

/// Reads one record (a line of JSON Lines, without its line end) as
/// [`Audit`](crate::Audit) reads each: every shape of every log `audit`
/// knows, JSON-RPC through the core's reader. No I/O, no state beyond the
/// record, no panic whatever the bytes: this is what the fuzz target of the
/// audit's shape recogniser calls.
///
/// ```
/// use mcp_unknown_keys_logs::{RecordKind, read_record};
///
/// let line = br#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"fs_read","input":{"path":"a"}}]}}"#;
/// let found = read_record(line);
/// assert_eq!(found.kind, RecordKind::Used);
/// assert_eq!(found.calls[0].tool, "fs_read");
/// assert_eq!(found.calls[0].arguments.as_deref(), Some(r#"{"path":"a"}"#));
/// assert_eq!(read_record(b"{\"truncated\":").kind, RecordKind::NotJson);
/// ```
pub fn read_record(record: &[u8]) -> Recognised {
    let mut found = Recognised::default();
    let Ok(line) = std::str::from_utf8(record) else {
        found.kind = RecordKind::NotUtf8;
        return found;
    };
    let mut reader = Reader::default();
    found.kind = match reader.read_line(line, |event| found.take(event)) {
        Read::Blank => RecordKind::Blank,
        Read::Unreadable => RecordKind::NotJson,
        Read::Nothing => RecordKind::Idle,
        Read::Used => RecordKind::Used,
        Read::TooDeep => RecordKind::TooDeep,
    };
    reader.finish(|event| found.take(event));
    found
}

impl Recognised {
    /// Takes one event of the record: what it holds, counted or kept.
    fn take(&mut self, event: Event<'_>) -> bool {
        match event {
            Event::Tools(tools) | Event::ListedTools(tools) => self.catalogues.push(tools.to_owned()),
            Event::Call(call) => self.calls.push(FoundCall {
                tool: call.tool.to_owned(),
                server: call.server.map(str::to_owned),
                arguments: call.arguments.map(str::to_owned),
                id: call.id.cloned(),
            }),
            Event::LoggedWarning(_) => self.logged_warnings += 1,
            Event::Summary(_) => self.summaries += 1,
            Event::LoggedVerdict(_) => self.logged_verdicts += 1,
            Event::LoggedNote { .. } => self.logged_notes += 1,
            Event::Message(_) => self.messages += 1,
            // Of no count here.
            Event::BeginRecord | Event::EndRecord | Event::Relayed(_) => {}
            Event::Unrecognised(_) => return false,
        }
        true
    }
}
