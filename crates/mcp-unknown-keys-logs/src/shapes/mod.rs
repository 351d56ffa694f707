//! Recognising what a recorded record holds: tool calls, catalogues, a
//! proxy's log lines, stream pieces, MCP JSON-RPC messages.
//!
//! The shapes are data ([`table`]); one walker reads them all ([`walk`]).
//! Each record is read once ([`capture`]): only the members some shape
//! names are kept, as raw JSON text or opened, and everything else is
//! skipped without being decoded. A call's arguments reach the key scan as
//! text: the raw text of an object, or a JSON string unescaped (borrowed
//! from the line when it holds no escape). A record that is a JSON-RPC
//! message is read by the core's [`jsonrpc`] reader, the proxy's own
//! ([`rpc`]).

mod attributes;
mod capture;
mod plan;
mod proxy_lines;
mod relayed;
mod rpc;
mod scope;
mod seen;
mod streams;
pub(crate) mod table;
pub(crate) mod walk;

use std::borrow::Cow;

use mcp_unknown_keys::audit::{Answer, Judged, Note, Warning};
use mcp_unknown_keys::jsonrpc::{self, Id, Message};
use serde_json::Value;
use serde_json::value::RawValue;

/// One tool call as found in a record.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found<'a> {
    /// The tool's name, as the call gives it.
    pub tool: &'a str,
    /// The server, where the call names it apart from the tool.
    pub server: Option<&'a str>,
    /// The arguments as JSON text (`None` when absent).
    pub arguments: Option<&'a str>,
    /// The call's id.
    pub id: Option<&'a Value>,
    /// The JSON-RPC id of a call sent to its server, read exactly (a
    /// number of any size keeps every digit): what its answer is paired by.
    pub rpc_id: Option<&'a Id>,
    /// The name is the one its server listed (a JSON-RPC `tools/call`,
    /// sent to the server itself): a host's forms of names are not read in
    /// it.
    pub as_listed: bool,
    /// The model the record holding the call names ([`table::MODEL`]), if
    /// it or a record around it names one.
    pub model: Option<&'a str>,
    /// The record holding the call, or one around it, says the model's
    /// response was cut at its length limit ([`table::TRUNCATED`]).
    pub truncated: bool,
}

/// One JSON-RPC message an MCP gateway relayed between itself and one of
/// its servers, as its log keeps it ([`table::RELAYED`]).
#[derive(Debug)]
pub(crate) struct Relayed<'a> {
    /// The server, as the gateway names it.
    pub server: &'a str,
    /// The message's JSON-RPC id, if it has one: the gateway's log often
    /// keeps none on requests, and the same one on every response.
    pub id: Option<Id>,
    /// What the message is.
    pub message: RelayedMessage<'a>,
}

/// What a relayed message is.
#[derive(Debug)]
pub(crate) enum RelayedMessage<'a> {
    /// A `tools/list` request; `first` when it has no cursor (it opens a
    /// new listing).
    ListTools {
        /// It has no cursor.
        first: bool,
    },
    /// A `tools/call` request.
    Call {
        /// The tool, `""` when the request names none.
        name: Cow<'a, str>,
        /// The arguments as JSON text.
        arguments: Option<Cow<'a, str>>,
    },
    /// Any other request: answered, and of no use.
    OtherRequest,
    /// The server's response: the tools of a listing, if it holds one,
    /// and how it answered.
    Response {
        /// The JSON text of `result.tools`.
        tools: Option<Cow<'a, str>>,
        /// A result (perhaps `isError`), or an error.
        answer: Answer,
    },
    /// The gateway logged no response it could read (its own failure to
    /// reach the server): the request it answers got no answer.
    Failed,
}

/// What a record carries, yielded by the walker as it is recognised and
/// taken by its caller (the audit's session and report, the recogniser, a
/// catalogue file's reader), which `match`es on it.
///
/// The walker hands each event to one function of its caller's, `take`:
/// `FnMut(Event<'_>) -> bool`. A call, a catalogue, a message borrows
/// what the walker read it from (the record's text, or a string the record
/// holds as text, decoded while the record is read), so none is copied to
/// yield it; a proxy's logged warning, verdict and note are read into the
/// core's owned types, as its sinks take them. `take`
/// answers whether it made use of the event: the walker reads that answer
/// for a [`Event::Message`] (a message of no use leaves the record to the
/// shapes of a proxy's log lines, and the record unused) and for a
/// [`Event::Unrecognised`] record (one used is not searched further);
/// for every other event it is ignored. That answer is why the events are
/// yielded to a function rather than gathered for the caller to drain: what
/// the walker does next depends on it.
///
/// A record (a line, an element of a document, an exchange a record holds
/// apart) is opened with [`Event::BeginRecord`] and closed with
/// [`Event::EndRecord`]; its calls are yielded when it has been read whole,
/// after every catalogue it holds, so the tools a record declares meet its
/// calls whichever member comes first.
#[derive(Debug)]
pub(crate) enum Event<'a> {
    /// A record opens (inside the one open, if any).
    BeginRecord,
    /// The record opened last ends: the catalogues it held no longer apply.
    EndRecord,
    /// A whole catalogue held by the record being read: the JSON text of
    /// an array of tools in any declaration form.
    Tools(&'a str),
    /// A whole catalogue kept on its own, as a `tools/list` result is
    /// (`{"tools": […]}`, nothing else): a listing, which lasts. A taker
    /// that tells no listing from a record's tools takes it as
    /// [`Event::Tools`].
    ListedTools(&'a str),
    /// One call to audit.
    Call(Found<'a>),
    /// A warning a proxy logged with `--log`.
    LoggedWarning(Warning),
    /// The summary a proxy's log ends with, as JSON text.
    Summary(&'a str),
    /// A verdict a proxy logged.
    LoggedVerdict(Judged),
    /// A note a proxy logged on `tool`'s schema.
    LoggedNote {
        /// The tool whose schema it is about.
        tool: String,
        /// The note.
        note: Note,
    },
    /// A JSON-RPC message other than a call ([`Message::ListTools`],
    /// [`Message::Response`], [`Message::Cancelled`],
    /// [`Message::ListChanged`]); the taker answers whether it was of any
    /// use.
    Message(Message<'a>),
    /// A message an MCP gateway relayed to or from one of its servers.
    Relayed(Relayed<'a>),
    /// A record in which no shape was found, as JSON text; the taker
    /// answers `true` when it makes something of it itself (a catalogue
    /// file's lone declaration), and the record is searched no further.
    Unrecognised(&'a str),
}

/// What became of a line or a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// Nothing but whitespace, or the framing of server-sent events.
    Blank,
    /// Not JSON.
    Unreadable,
    /// JSON holding nothing the audit uses: no call, catalogue, log line,
    /// stream event or JSON-RPC message that matters.
    Nothing,
    /// It held something the audit used.
    Used,
    /// JSON nesting records (or arrays) deeper than they are read, as only
    /// a hostile record does: read no deeper, never past the stack; what
    /// lay above the cut was handed over.
    TooDeep,
}

/// A JSON string's text, borrowed when it holds no escape; `None` for any
/// other JSON type.
pub(crate) fn json_string(raw: &RawValue) -> Option<Cow<'_, str>> {
    jsonrpc::string(raw)
}
