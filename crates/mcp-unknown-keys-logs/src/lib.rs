//! Read the tool calls your logs already hold, and find the arguments their
//! tools never declared.
//!
//! A model's tool call reaches a tool as JSON nobody checked: a truncated
//! generation closed into valid JSON, a lossy re-serialisation, an invented
//! parameter each yield keys the tool never declared, and most tools
//! silently drop them. Logs keep those calls, in a dozen shapes. This crate
//! reads them all, through one recogniser, and audits every call through the
//! same [`Auditor`](mcp_unknown_keys::audit::Auditor) as the
//! [`mcp-unknown-keys`](mcp_unknown_keys) layer and the `mcp-unknown-keys
//! proxy`: it is the `mcp-unknown-keys audit` command without its command
//! line.
//!
//! # Auditing files
//!
//! [`audit_files`] reads files in order and returns the [`Report`]: the
//! warnings (each undeclared (tool, key) pair said once), the
//! [`Coverage`](mcp_unknown_keys::audit::Coverage) of every call found
//! (audited, or unaudited for a named reason), and the
//! [`Findings`](mcp_unknown_keys::audit::Findings) counted per call.
//!
//! ```
//! use mcp_unknown_keys_logs::{Options, Tools, audit_files};
//! use serde_json::json;
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("session.jsonl");
//! # std::fs::write(&path, concat!(
//! #     r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","#,
//! #     r#""name":"mcp__fs__read_file","input":{"path":"notes.txt","ffset":12}}]}}"#, "\n",
//! # ))?;
//!
//! // A Claude Code session records no schema: give the server's tools.
//! let tools = Tools::declarations("fs tools", vec![json!({
//!     "name": "read_file",
//!     "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}},
//! })]);
//! let report = audit_files([&path], &Options::default().tools(tools))?;
//!
//! let warning = &report.warnings[0];
//! assert_eq!(warning.tool, "mcp__fs__read_file"); // named as the host called it
//! assert_eq!(warning.unknown_keys, ["ffset"]);
//! assert_eq!(warning.hints[0].suggestion.as_deref(), Some("offset"));
//! assert_eq!((report.coverage.calls, report.coverage.audited), (1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it reads
//!
//! Every record of an input (a line of JSON Lines, an element of a JSON
//! document, an object a record holds) is looked at for the shapes real logs
//! use: Claude Code, Codex and Gemini CLI transcripts; OpenAI Chat
//! Completions and Responses, Anthropic Messages, Gemini and Bedrock request
//! and response bodies, and their streams (tool calls assembled across
//! chunks); LangChain and Vercel AI SDK records; OpenTelemetry GenAI spans;
//! MCP JSON-RPC traffic, read by the proxy's own reader
//! ([`mcp_unknown_keys::jsonrpc`]); and a proxy's `--log`, whose warnings
//! are said again and whose summary gives the calls it counted. Catalogues
//! come from the inputs (a request body's `tools`, for that record's calls
//! only; a `tools/list` response, for the calls after it) or from
//! [`Options::tools`], in any declaration form. A host's names for
//! MCP tools (`mcp__fs__read_file`, `fs__read_file`) match the server's
//! `read_file`. The shapes are listed in the project's `docs/audit.md`.
//!
//! Inputs are read as they are kept ([`Input`]): JSON Lines or JSON
//! documents, plain, gzip or Zstandard, with or without a byte order mark,
//! with any line ends. A file that is not text is refused whole.
//!
//! # Following an audit
//!
//! [`Audit`] is the same audit fed one [`Input`] at a time, with an
//! [`Observer`] told each warning as it is raised, each verdict, each
//! [`Notice`] (an unreadable line, a catalogue note, a tool a later
//! catalogue replaces), and how far each input has been read. The command
//! line prints warnings and verdicts as JSON lines as they come, and
//! notices on stderr, through one.
//!
//! ```
//! use mcp_unknown_keys::audit::Warning;
//! use mcp_unknown_keys_logs::{Audit, Input, Notice, Observer, Options};
//!
//! #[derive(Default)]
//! struct Said(Vec<String>);
//!
//! impl Observer for Said {
//!     fn warning(&mut self, warning: &Warning) {
//!         self.0.push(format!("{warning}"));
//!     }
//!     fn notice(&mut self, notice: &Notice) {
//!         self.0.push(format!("{notice}"));
//!     }
//! }
//!
//! let recording = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}
//! {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search","inputSchema":{"properties":{"q":{}}}}]}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","limit":5}}}
//! not JSON
//! "#;
//! let mut audit = Audit::with_observer(&Options::default(), Said::default())?;
//! audit.read(Input::from_reader("recording.jsonl", &recording[..])?)?;
//! assert_eq!(audit.observer().0, [
//!     "search was called with undeclared argument(s) limit; it declares q — limit (invented)",
//!     "recording.jsonl:4: not JSON, counted as unreadable",
//! ]);
//! # Ok::<(), mcp_unknown_keys_logs::Error>(())
//! ```
//!
//! # The verdict
//!
//! A recording of both directions of MCP JSON-RPC traffic holds the
//! server's answers: each `tools/call` that carried an undeclared key is
//! paired with the response that has its id, as the proxy pairs it live
//! (through the core's [`Verdicts`](mcp_unknown_keys::audit::Verdicts)):
//! `ignored` (a result without `isError`: the call "succeeded"),
//! `rejected`, or `unanswered` (cancelled, or the input ended first). Each
//! is told to [`Observer::verdict`] and counted in [`Report::verdicts`] and
//! per pair in [`Pair::verdicts`]; a proxy's `--log` gives its own back.
//!
//! ```
//! use mcp_unknown_keys::audit::Verdict;
//! use mcp_unknown_keys_logs::{Audit, Input, Options};
//!
//! let recording = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}
//! {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search","inputSchema":{"properties":{"q":{}}}}]}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","limit":5}}}
//! {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"12 results"}]}}
//! "#;
//! let mut audit = Audit::new(&Options::default())?;
//! audit.read(Input::from_reader("recording.jsonl", &recording[..])?)?;
//! let report = audit.finish();
//! assert_eq!(report.verdicts[&Verdict::Ignored], 1);
//! assert_eq!(report.pairs()[0].verdicts[&Verdict::Ignored], 1); // search `limit`
//! # Ok::<(), mcp_unknown_keys_logs::Error>(())
//! ```
//!
//! # Rates
//!
//! [`Options::group_by`] counts the calls per [`Dimension`] as they are
//! audited (model, tool, key, cause, file, or a combination), and
//! [`Report::groups`] gives each [`Group`] with its calls, audited calls,
//! calls that carried undeclared keys and their rate per 1000 audited:
//! what `mcp-unknown-keys audit --by` prints. The model is the one the
//! record holding the call names (a body's `model`, a span's
//! `gen_ai.request.model`), or [`UNKNOWN`]. Groups by model, tool or file
//! add up to the coverage; by key or cause, a call is in the group of each
//! key or cause it carried, or of [`NONE`].
//!
//! # Reports that travel
//!
//! [`report_data::ReportData`] is a [`Report`] as plain data: it goes to
//! JSON text and back, checked and bounded when read back, and the reports
//! of partitions of records add up ([`report_data::merge`]) to the report
//! of one audit of all of them. The Python package's `Report` is one.
//!
//! # Errors
//!
//! An input or a catalogue that cannot be opened, that is not text, a
//! catalogue that cannot be read whole, or one that holds no tool, is an
//! [`Error`] naming the file and saying what to do. An input read only in
//! part (a JSON document cut short, a read failing partway) is read up to
//! the cut, which is said in a [`Notice`] and counted
//! ([`Report::incomplete_inputs`]). A line that is not JSON, nests too deep
//! or is too long is no error: it is counted ([`Report::lines`]) and named
//! in a notice. A line too long to hold that holds a JSON document (a
//! minified trajectory file) is read element by element, in bounded memory.
//!
//! # Memory and speed
//!
//! It streams: memory holds one line, the catalogues, the distinct pairs
//! and warnings, bounded fingerprints of the calls read, and any streamed
//! call still being assembled, whatever an input's length (a file that is
//! one JSON document costs its size). Each record is read once: only the
//! members some shape names are kept, everything else is skipped without
//! being decoded. On one core it reads a Claude Code transcript at several
//! hundred MB/s (the project's BENCHMARKS.md).
//!
//! # For fuzzing
//!
//! [`read_record`] is the recogniser as a pure function of one record's
//! bytes, and [`Input::from_reader`] with [`Audit::read`] the whole reading
//! of an input with no file: what the fuzz targets call. Neither panics,
//! whatever the bytes.

#![forbid(unsafe_code)]
#![warn(unreachable_pub)]
#![warn(missing_docs)]

mod audit;
mod catalogue;
mod error;
mod gateway;
mod groups;
mod input;
mod logged;
mod names;
mod observe;
mod options;
mod record;
mod records;
mod relays;
pub mod render;
mod replay;
mod report;
pub mod report_data;
mod scoped;
mod shapes;
pub mod strict;
mod strings;

use std::path::Path;

pub use audit::{Audit, NAMED_UNREADABLE_LINES};
pub use error::{Error, Role};
pub use groups::{
    Dimension, Group, MAX_GROUPS, MAX_KEYS_PER_GROUP, NONE, OTHER, PROXY_LOG, UNKNOWN, sort_groups,
};
pub use input::{Input, MAX_LINE_BYTES};
pub use observe::{Notice, Observer, Progress, Unreadable};
pub use options::{Options, Source, Tools};
pub use record::{FoundCall, Recognised, RecordKind, read_record};
pub use report::{Lines, Pair, Report, Site};

/// Audits the files at `paths` in order (`-` is stdin) with `options`: the
/// one call a script or another language's binding needs.
///
/// Each file is opened when its turn comes; the first that cannot be opened
/// or read whole (a JSON document cut short, a read failing partway) ends
/// the audit with its [`Error`], so a script never takes part of a file for
/// all of it. For warnings as they are raised, for the report of what could
/// be read past such a file, or for inputs that are not files, use
/// [`Audit`].
pub fn audit_files<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
    options: &Options,
) -> Result<Report, Error> {
    let mut audit = Audit::new(options)?;
    for path in paths {
        let said = audit.report().notices.len();
        audit.read_file(&path)?;
        let cut = audit.report().notices[said..]
            .iter()
            .find(|notice| matches!(notice, Notice::CutShort { .. } | Notice::ReadFailed { .. }));
        if let Some(cut) = cut {
            return Err(Error::Incomplete {
                role: Role::Input,
                name: path.as_ref().display().to_string(),
                why: cut.to_string(),
            });
        }
    }
    Ok(audit.finish())
}
