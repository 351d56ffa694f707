//! The shapes of the logs `audit` reads, as data: where a record holds
//! calls, which members give a call's name, arguments, id and server, where
//! a catalogue is, and which records hold further records. One walker
//! ([`walk`](super::walk)) reads them all; docs/audit.md has the same table
//! for people.
//!
//! A *record* is a line of JSON Lines, an element of a JSON array, or an
//! object a record holds under one of the members [`Reads::Records`] names
//! (a transcript line's `message`, a request's `messages`, a message's
//! `content`…). Paths are member names joined by `.`; an array met on the
//! way is read element by element; `""` is the record itself; `@name` is an
//! OpenTelemetry attribute (in `attributes`, as an object or an OTLP
//! key/value list, or a member of that dotted name); `path#member` is a
//! member of the JSON object a string at `path` holds as text (Claude
//! Code's `tool_parameters`).

use super::capture::Keep;

/// Where a `tools/list` response keeps its tools: `tools` in its `result`.
/// A `result` holding them is a listing page (read as JSON-RPC), never an
/// Anthropic batch result.
pub(crate) const LISTING: (&str, &str) = ("result", "tools");

/// The member an OpenTelemetry span keeps its attributes in.
pub(crate) const ATTRIBUTES: &str = "attributes";

/// Where a record names the model that made its calls, the first present
/// winning: a request or response body's `model` (a Claude Code line's
/// `message` is a record of its own, with its `model`), an OpenTelemetry
/// span's requested model, then its response's. The records a record holds
/// inherit it, unless they name their own (`audit --by model`).
pub(crate) const MODEL: &[&str] = &["model", "@gen_ai.request.model", "@gen_ai.response.model"];

/// Where a record says the model's response was cut at its length limit,
/// and the value that says so: a Chat Completions choice's
/// `finish_reason`, an Anthropic message's `stop_reason`, a Gemini
/// candidate's `finishReason`, a Responses response's
/// `incomplete_details.reason`. The records a record holds inherit it: each
/// call they hold is in a truncated response
/// ([`Cause::TruncatedResponse`](mcp_unknown_keys::audit::Cause::TruncatedResponse)).
pub(crate) const TRUNCATED: &[(&str, &str)] = &[
    ("finish_reason", "length"),
    ("stop_reason", "max_tokens"),
    ("finishReason", "MAX_TOKENS"),
    ("incomplete_details.reason", "max_output_tokens"),
];

/// One shape: what a record holds at `at`, when `when` holds for it.
#[derive(Debug)]
pub(crate) struct Shape {
    /// What the shape is, as docs/audit.md names it (a test holds them to
    /// each other).
    #[cfg_attr(not(test), allow(dead_code))]
    pub what: &'static str,
    /// Where the objects are, from the record.
    pub at: &'static str,
    /// What each object found must be.
    pub when: When,
    /// What the object is.
    pub reads: Reads,
}

/// A condition on an object.
#[derive(Clone, Copy, Debug)]
pub(crate) enum When {
    /// Any object.
    Always,
    /// The member at the path is present.
    Has(&'static str),
    /// The member at the path is absent.
    Lacks(&'static str),
    /// The member at the path is one of these strings.
    Is(&'static str, &'static [&'static str]),
    /// Every one of these holds.
    All(&'static [When]),
}

/// What an object found is: as written here, with call roles as [`Roles`]
/// (`C`); made ready by the plan.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reads<C = &'static Roles> {
    /// Further records (each element, for an array). `history`: a request
    /// body's conversation, which the next request repeats, so a call read
    /// there before is not counted again.
    Records { history: bool },
    /// Further records, each a record of its own (a HAR file's entries):
    /// the tools one declares meet its calls only.
    Exchanges,
    /// JSON text in a string (a HAR entry's request or response body): read
    /// as the record it holds, or as the server-sent events it holds, a
    /// part of the record holding the string.
    Embedded,
    /// The member named, an object kept as text (as a call's arguments
    /// are), read as a record of the request history: a logged exchange's
    /// `input` beside its `output`.
    Opened(&'static str),
    /// One tool call.
    Call(C),
    /// A whole catalogue: a list of tools in any declaration form.
    Catalogue,
    /// A warning a proxy logged: the record is only that.
    LoggedWarning,
    /// The summary a proxy's log ends with: the record is only that.
    Summary,
    /// A proxy's verdict on a call: the record is only that, and nothing to
    /// audit; said again and counted.
    Verdict,
    /// A note a proxy logged on a schema it could not read whole: the
    /// record is only that; said again.
    LoggedNote,
    /// One chunk of a streamed Chat Completion ([`CHAT_CHUNK`]).
    ChatChunk,
    /// One event of a streamed Anthropic message ([`MESSAGE_EVENTS`]).
    MessageEvent,
    /// One JSON-RPC message an MCP gateway relayed to or from one of its
    /// servers ([`RELAYED`]): the record is only that.
    Relayed,
}

impl<C> Reads<C> {
    /// Whether a record this reads is only that: no other shape is looked
    /// for in it.
    pub(crate) fn is_whole_record(&self) -> bool {
        matches!(
            self,
            Reads::LoggedWarning | Reads::Summary | Reads::Verdict | Reads::LoggedNote | Reads::Relayed
        )
    }

    /// The same reading with its call roles made ready.
    pub(crate) fn map<D>(&self, call: impl FnOnce(&C) -> D) -> Reads<D> {
        match self {
            Reads::Records { history } => Reads::Records { history: *history },
            Reads::Exchanges => Reads::Exchanges,
            Reads::Embedded => Reads::Embedded,
            Reads::Opened(member) => Reads::Opened(member),
            Reads::Call(roles) => Reads::Call(call(roles)),
            Reads::Catalogue => Reads::Catalogue,
            Reads::LoggedWarning => Reads::LoggedWarning,
            Reads::Summary => Reads::Summary,
            Reads::Verdict => Reads::Verdict,
            Reads::LoggedNote => Reads::LoggedNote,
            Reads::ChatChunk => Reads::ChatChunk,
            Reads::MessageEvent => Reads::MessageEvent,
            Reads::Relayed => Reads::Relayed,
        }
    }
}

/// Which members of a call object hold what; of each list, the first
/// present wins.
#[derive(Debug)]
pub(crate) struct Roles {
    /// The tool's name.
    pub name: &'static [&'static str],
    /// The arguments: an object, or JSON text in a string.
    pub arguments: &'static [&'static str],
    /// The call's id.
    pub id: &'static [&'static str],
    /// The server the tool belongs to, where the call names it apart.
    pub server: &'static [&'static str],
}

/// A call object whose `status` is one of these is a placeholder that a
/// complete copy follows (`item.started`, `response.output_item.added`).
pub(crate) const PLACEHOLDER: When = When::Is("status", &["in_progress"]);

const OPENAI_CALL: Roles = Roles {
    name: &["function.name"],
    arguments: &["function.arguments"],
    id: &["id"],
    server: &[],
};

/// A list of calls: OpenAI's and Ollama's `{function: {name, arguments}}`,
/// LangChain's `{name, args}`, and the `{name, arguments}` (tau-bench,
/// tau2) and `{name, input}` many frameworks write.
const CHAT_OR_LANGCHAIN_CALL: Roles = Roles {
    name: &["function.name", "name"],
    arguments: &["function.arguments", "args", "arguments", "input"],
    ..OPENAI_CALL
};

const FUNCTION_CALL_MEMBER: Roles = Roles {
    name: &["name"],
    arguments: &["arguments", "args"],
    ..OPENAI_CALL
};

const RESPONSES_ITEM: Roles = Roles {
    name: &["name"],
    arguments: &["arguments", "input"],
    id: &["call_id", "id"],
    ..OPENAI_CALL
};

const RESPONSES_MCP_CALL: Roles = Roles {
    name: &["name"],
    arguments: &["arguments"],
    server: &["server_label"],
    ..OPENAI_CALL
};

const CODEX_MCP_TOOL_CALL: Roles = Roles {
    name: &["tool"],
    arguments: &["arguments"],
    server: &["server"],
    ..OPENAI_CALL
};

const TOOL_USE: Roles = Roles {
    name: &["name"],
    arguments: &["input"],
    ..OPENAI_CALL
};

const MCP_TOOL_USE: Roles = Roles {
    server: &["server_name"],
    ..TOOL_USE
};

const VERCEL_TOOL_CALL: Roles = Roles {
    name: &["toolName"],
    arguments: &["input", "args"],
    id: &["toolCallId"],
    ..OPENAI_CALL
};

const GEMINI_FUNCTION_CALL: Roles = Roles {
    name: &["name"],
    arguments: &["args"],
    ..OPENAI_CALL
};

const BEDROCK_TOOL_USE: Roles = Roles {
    name: &["name"],
    arguments: &["input"],
    id: &["toolUseId"],
    ..OPENAI_CALL
};

const TOOL_CALLS_LIST: Roles = Roles {
    name: &["name", "toolName"],
    arguments: &["args", "input", "arguments"],
    id: &["id", "toolCallId"],
    ..OPENAI_CALL
};

const TOOL_NAME_INPUT: Roles = Roles {
    name: &["tool_name"],
    arguments: &["tool_input"],
    id: &["tool_use_id", "id"],
    ..OPENAI_CALL
};

const OTEL_EXECUTE_TOOL: Roles = Roles {
    name: &["@gen_ai.tool.name"],
    arguments: &["@gen_ai.tool.call.arguments"],
    id: &["@gen_ai.tool.call.id"],
    ..OPENAI_CALL
};

/// Claude Code's `tool_result` event, as its OpenTelemetry logs export
/// it: every MCP tool is named `mcp_tool`, its server and tool are in the
/// JSON text of `tool_parameters` (with `OTEL_LOG_TOOL_DETAILS=1`; without
/// it, the call counts under the name `mcp_tool`), its arguments in the
/// JSON text of `tool_input`.
const CLAUDE_CODE_TOOL_RESULT: Roles = Roles {
    name: &["@tool_parameters#mcp_tool_name", "@tool_name"],
    arguments: &["@tool_input"],
    id: &["@tool_use_id"],
    server: &["@tool_parameters#mcp_server_name"],
};

const fn shape(what: &'static str, at: &'static str, when: When, reads: Reads) -> Shape {
    Shape {
        what,
        at,
        when,
        reads,
    }
}

const fn records(what: &'static str, at: &'static str) -> Shape {
    shape(what, at, When::Always, Reads::Records { history: false })
}

const fn history(what: &'static str, at: &'static str) -> Shape {
    shape(what, at, When::Always, Reads::Records { history: true })
}

const fn exchanges(what: &'static str, at: &'static str) -> Shape {
    shape(what, at, When::Always, Reads::Exchanges)
}

const fn embedded(what: &'static str, at: &'static str) -> Shape {
    shape(what, at, When::Always, Reads::Embedded)
}

const fn typed(what: &'static str, types: &'static [&'static str], roles: &'static Roles) -> Shape {
    shape(what, "", When::Is("type", types), Reads::Call(roles))
}

/// Every shape, in the order they are looked for in a record: catalogues,
/// streams, calls, and last the records a record holds (a record's calls
/// are handed over once it is read whole, after its catalogues, whatever
/// the order of its members); the lines of a proxy's log (each only that) are
/// looked for in a record holding none of the others. A record that is a
/// JSON-RPC message is read before any of them, by the core's reader
/// ([`rpc`](super::rpc)).
pub(crate) const SHAPES: &[Shape] = &[
    // An MCP gateway's log of what it relayed (read before JSON-RPC: its
    // record has a `method` of its own).
    shape(
        "MCP gateway rpc-messages.jsonl (GitHub Agentic Workflows)",
        "",
        When::All(&[When::Has(RELAYED.server), When::Has(RELAYED.message)]),
        Reads::Relayed,
    ),
    shape("proxy log: verdict", "", When::Has("verdict"), Reads::Verdict),
    shape("proxy log: note", "", When::Has("note"), Reads::LoggedNote),
    shape("proxy log: summary", "", When::Has("summary"), Reads::Summary),
    shape(
        "proxy log: warning",
        "",
        When::Has("unknown_keys"),
        Reads::LoggedWarning,
    ),
    // Catalogues.
    shape(
        "catalogue, request body's tools",
        "tools",
        When::Always,
        Reads::Catalogue,
    ),
    shape(
        "Bedrock Converse request",
        "toolConfig.tools",
        When::Always,
        Reads::Catalogue,
    ),
    shape(
        "OpenAI legacy functions",
        "functions",
        When::Always,
        Reads::Catalogue,
    ),
    shape(
        "OpenTelemetry tool definitions",
        "@gen_ai.tool.definitions",
        When::Always,
        Reads::Catalogue,
    ),
    // Streams, assembled across records.
    shape(
        "OpenAI chat.completion.chunk",
        "",
        When::Is("object", &["chat.completion.chunk"]),
        Reads::ChatChunk,
    ),
    shape(
        "Anthropic stream event",
        "",
        When::Is("type", event::ALL),
        Reads::MessageEvent,
    ),
    // Calls.
    shape(
        "OpenAI tool call",
        "",
        When::Lacks("function.parameters"),
        Reads::Call(&OPENAI_CALL),
    ),
    shape(
        "OpenAI chat message, LangChain AI message",
        "tool_calls",
        When::Always,
        Reads::Call(&CHAT_OR_LANGCHAIN_CALL),
    ),
    // A request's `function_call` directive (`"auto"`, or `{"name": …}`
    // forcing a function) has no arguments: it is no call.
    shape(
        "OpenAI legacy function_call",
        "function_call",
        When::Has("arguments"),
        Reads::Call(&FUNCTION_CALL_MEMBER),
    ),
    typed(
        "OpenAI Responses item, Codex rollout item",
        &["function_call", "custom_tool_call"],
        &RESPONSES_ITEM,
    ),
    typed("OpenAI Responses mcp_call", &["mcp_call"], &RESPONSES_MCP_CALL),
    typed(
        "Codex exec mcp_tool_call",
        &["mcp_tool_call"],
        &CODEX_MCP_TOOL_CALL,
    ),
    typed("Anthropic tool_use block", &["tool_use"], &TOOL_USE),
    typed("Anthropic mcp_tool_use block", &["mcp_tool_use"], &MCP_TOOL_USE),
    typed("Vercel AI SDK tool-call part", &["tool-call"], &VERCEL_TOOL_CALL),
    shape(
        "Gemini functionCall part",
        "functionCall",
        When::Always,
        Reads::Call(&GEMINI_FUNCTION_CALL),
    ),
    shape(
        "Bedrock Converse toolUse block",
        "toolUse",
        When::Always,
        Reads::Call(&BEDROCK_TOOL_USE),
    ),
    shape(
        "Gemini CLI toolCalls, Vercel AI SDK toolCalls",
        "toolCalls",
        When::Always,
        Reads::Call(&TOOL_CALLS_LIST),
    ),
    shape(
        "OpenTelemetry execute_tool span",
        "",
        When::Has("@gen_ai.tool.name"),
        Reads::Call(&OTEL_EXECUTE_TOOL),
    ),
    // Before the hook input's shape: an OTLP log record's attributes may
    // be members of the record, `tool_input` among them.
    shape(
        "Claude Code OpenTelemetry tool_result event (MCP tool)",
        "",
        When::All(&[
            When::Is("@event.name", &["tool_result"]),
            When::Is("@tool_name", &["mcp_tool"]),
        ]),
        Reads::Call(&CLAUDE_CODE_TOOL_RESULT),
    ),
    shape(
        "tool_name and tool_input (Claude Code hook input)",
        "",
        When::Has("tool_input"),
        Reads::Call(&TOOL_NAME_INPUT),
    ),
    // A HAR capture: each entry an exchange of its own, its bodies kept as
    // text (JSON, or server-sent events).
    exchanges("HAR entries", "log.entries"),
    embedded("HAR request body", "request.postData.text"),
    embedded("HAR response body", "response.content.text"),
    // Records that hold records.
    records("Claude Code line, chat choice, Bedrock output", "message"),
    history(
        "chat, Anthropic and Bedrock request bodies, Gemini CLI session",
        "messages",
    ),
    records("message content blocks", "content"),
    records("Chat Completions response", "choices"),
    records("Gemini response", "candidates"),
    history("Gemini request", "contents"),
    records("Gemini content parts", "parts"),
    records("Responses response output, Bedrock output", "output"),
    // A call's `input` is its arguments: an `input` object is a request
    // only beside an `output` (listed after `output`, whose records
    // it must not make kept raw).
    shape(
        "logged exchange: input and output",
        "",
        When::Has("output"),
        Reads::Opened("input"),
    ),
    history("Responses request input", "input"),
    records("Codex exec event, Responses stream event", "item"),
    records("Codex rollout line", "payload"),
    records("Responses stream event, batch output line", "response"),
    records("batch request and output lines", "body"),
    records("logged request", "request"),
    records("logged exchange", "req"),
    records("logged exchange", "res"),
    // A JSON-RPC `result` with `tools` is a listing page, read as JSON-RPC.
    shape(
        "Anthropic batch result",
        LISTING.0,
        When::Lacks(LISTING.1),
        Reads::Records { history: false },
    ),
    records("LangChain message dict", "data"),
    records("LangChain serialized message", "kwargs"),
    records("Vercel AI SDK steps", "steps"),
    records("Assistants run step", "step_details"),
    records("OTLP export", "resourceSpans"),
    records("OTLP export", "scopeSpans"),
    records("OTLP export", "spans"),
    records("OTLP logs export", "resourceLogs"),
    records("OTLP logs export", "scopeLogs"),
    records("OTLP logs export", "logRecords"),
];

/// Where an MCP gateway's log (GitHub Agentic Workflows' MCP Gateway,
/// `mcp-logs/rpc-messages.jsonl`) keeps a relayed message: as written here
/// (`P` is text), and made ready by the plan. Each record is one JSON-RPC
/// message the gateway sent to one of its servers (a request) or received
/// from it (a response), under `payload`, with the server's name beside it;
/// the legacy records say which by `type`, the current ones
/// (`_schema: rpc-message/v2`) by `event`.
#[derive(Debug)]
pub(crate) struct RelayedPaths<P = &'static str> {
    /// The server's name in the gateway's configuration.
    pub server: P,
    /// The JSON-RPC message.
    pub message: P,
    /// `REQUEST`, `RESPONSE` (legacy records).
    pub kind: P,
    /// `rpc_request`, `rpc_response` (current records).
    pub event: P,
    /// The gateway's own failure to get an answer (a transport error).
    pub failed: P,
    /// In the message: its method.
    pub method: P,
    /// In the message: its id.
    pub id: P,
    /// In the message: a request's cursor (a further page of a listing).
    pub cursor: P,
    /// In the message: a call's tool.
    pub name: P,
    /// In the message: a call's arguments.
    pub arguments: P,
    /// In the message: a response's result.
    pub result: P,
    /// In the message: a listing's tools.
    pub tools: P,
    /// In the message: a tool's failure, in its result.
    pub is_error: P,
    /// In the message: a JSON-RPC error.
    pub error: P,
    /// In the message: why the gateway wrote the message as text (its
    /// sanitiser left it no JSON).
    pub unreadable: P,
    /// In the message: the text it wrote instead.
    pub text: P,
}

impl<P> RelayedPaths<P> {
    /// The same paths made ready, each told whether it is looked inside.
    pub(crate) fn map<Q>(&self, mut f: impl FnMut(&P, Keep) -> Q) -> RelayedPaths<Q> {
        RelayedPaths {
            server: f(&self.server, Keep::Raw),
            message: f(&self.message, Keep::Open),
            kind: f(&self.kind, Keep::Raw),
            event: f(&self.event, Keep::Raw),
            failed: f(&self.failed, Keep::Raw),
            method: f(&self.method, Keep::Raw),
            id: f(&self.id, Keep::Raw),
            cursor: f(&self.cursor, Keep::Raw),
            name: f(&self.name, Keep::Raw),
            arguments: f(&self.arguments, Keep::Raw),
            result: f(&self.result, Keep::Open),
            tools: f(&self.tools, Keep::Raw),
            is_error: f(&self.is_error, Keep::Raw),
            error: f(&self.error, Keep::Raw),
            unreadable: f(&self.unreadable, Keep::Raw),
            text: f(&self.text, Keep::Raw),
        }
    }
}

/// The values of [`RelayedPaths::kind`] and [`RelayedPaths::event`] that
/// make a record a request, and a response.
pub(crate) const RELAYED_REQUEST: &[&str] = &["REQUEST", "rpc_request"];
/// See [`RELAYED_REQUEST`].
pub(crate) const RELAYED_RESPONSE: &[&str] = &["RESPONSE", "rpc_response"];

/// An MCP gateway's log of relayed messages.
pub(crate) const RELAYED: RelayedPaths = RelayedPaths {
    server: "server_id",
    message: "payload",
    kind: "type",
    event: "event",
    failed: "error",
    method: "method",
    id: "id",
    cursor: "params.cursor",
    name: "params.name",
    arguments: "params.arguments",
    result: "result",
    tools: "result.tools",
    is_error: "result.isError",
    error: "error",
    unreadable: "_error",
    text: "_raw",
};

/// Where a streamed Chat Completion chunk keeps its pieces of tool calls:
/// as written here (`P` is text), and made ready by the plan.
#[derive(Debug)]
pub(crate) struct ChatChunkPaths<P = &'static str> {
    /// The completion the chunk belongs to.
    pub stream: P,
    /// Its choices.
    pub choices: P,
    /// A choice's index.
    pub choice: P,
    /// A choice's pieces of tool calls.
    pub parts: P,
    /// A piece's call index.
    pub part: P,
    /// A piece's call id (in the first piece of a call).
    pub id: P,
    /// A piece's tool name (in the first piece of a call).
    pub name: P,
    /// A piece's fragment of the arguments.
    pub fragment: P,
    /// Present on a choice's last chunk.
    pub end: P,
}

impl<P> ChatChunkPaths<P> {
    /// The same paths made ready, each told whether it is looked inside.
    pub(crate) fn map<Q>(&self, mut f: impl FnMut(&P, Keep) -> Q) -> ChatChunkPaths<Q> {
        ChatChunkPaths {
            stream: f(&self.stream, Keep::Raw),
            choices: f(&self.choices, Keep::Open),
            choice: f(&self.choice, Keep::Raw),
            parts: f(&self.parts, Keep::Open),
            part: f(&self.part, Keep::Raw),
            id: f(&self.id, Keep::Raw),
            name: f(&self.name, Keep::Raw),
            fragment: f(&self.fragment, Keep::Raw),
            end: f(&self.end, Keep::Raw),
        }
    }
}

/// The streamed Chat Completion chunk.
pub(crate) const CHAT_CHUNK: ChatChunkPaths = ChatChunkPaths {
    stream: "id",
    choices: "choices",
    choice: "index",
    parts: "delta.tool_calls",
    part: "index",
    id: "id",
    name: "function.name",
    fragment: "function.arguments",
    end: "finish_reason",
};

/// Where a streamed Anthropic message's events keep a tool call: as written
/// here (`P` is text), and made ready by the plan.
#[derive(Debug)]
pub(crate) struct MessageEventPaths<P = &'static str> {
    /// The event's type.
    pub kind: P,
    /// The content block an event is about.
    pub index: P,
    /// `content_block_start`'s block.
    pub block: P,
    /// The block's type.
    pub block_kind: P,
    /// The block's call id.
    pub id: P,
    /// The block's tool name.
    pub name: P,
    /// The block's MCP server, for `mcp_tool_use`.
    pub server: P,
    /// The block's input as it starts (usually `{}`).
    pub input: P,
    /// `content_block_delta`'s fragment of the input.
    pub fragment: P,
    /// `message_delta`'s delta, which holds the message's stop reason: it
    /// is read against [`TRUNCATED`], as a whole message is.
    pub outcome: P,
    /// In that delta, the stop reason: a `message_delta` without one ends
    /// nothing.
    pub stop_reason: P,
}

impl<P> MessageEventPaths<P> {
    /// The same paths made ready, each told whether it is looked inside.
    pub(crate) fn map<Q>(&self, mut f: impl FnMut(&P, Keep) -> Q) -> MessageEventPaths<Q> {
        MessageEventPaths {
            kind: f(&self.kind, Keep::Raw),
            index: f(&self.index, Keep::Raw),
            block: f(&self.block, Keep::Open),
            block_kind: f(&self.block_kind, Keep::Raw),
            id: f(&self.id, Keep::Raw),
            name: f(&self.name, Keep::Raw),
            server: f(&self.server, Keep::Raw),
            input: f(&self.input, Keep::Raw),
            fragment: f(&self.fragment, Keep::Raw),
            outcome: f(&self.outcome, Keep::Open),
            stop_reason: f(&self.stop_reason, Keep::Raw),
        }
    }
}

/// The types of a streamed Anthropic message's events, as the stream that
/// assembles its calls reads them and as the table recognises them.
pub(crate) mod event {
    /// A message starts: blocks left open end.
    pub(crate) const MESSAGE_START: &str = "message_start";
    /// A content block starts (a `tool_use` block holds a call).
    pub(crate) const CONTENT_BLOCK_START: &str = "content_block_start";
    /// A fragment of a block's input.
    pub(crate) const CONTENT_BLOCK_DELTA: &str = "content_block_delta";
    /// A block ends: its call is whole (held, in a message that started,
    /// until the message says why it stopped).
    pub(crate) const CONTENT_BLOCK_STOP: &str = "content_block_stop";
    /// The message says why it stopped (`delta.stop_reason`): its calls
    /// are handed out, in a truncated response when that was `max_tokens`.
    pub(crate) const MESSAGE_DELTA: &str = "message_delta";
    /// The message ends: blocks left open end.
    pub(crate) const MESSAGE_STOP: &str = "message_stop";
    /// Every event type the stream reads.
    pub(crate) const ALL: &[&str] = &[
        MESSAGE_START,
        CONTENT_BLOCK_START,
        CONTENT_BLOCK_DELTA,
        CONTENT_BLOCK_STOP,
        MESSAGE_DELTA,
        MESSAGE_STOP,
    ];
}

/// The streamed Anthropic message.
pub(crate) const MESSAGE_EVENTS: MessageEventPaths = MessageEventPaths {
    kind: "type",
    index: "index",
    block: "content_block",
    block_kind: "type",
    id: "id",
    name: "name",
    server: "server_name",
    input: "input",
    fragment: "delta.partial_json",
    outcome: "delta",
    stop_reason: "stop_reason",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/audit.md's table of shapes names every shape of this one.
    #[test]
    fn the_docs_table_names_every_shape() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/audit.md"))
            .expect("read docs/audit.md");
        for shape in SHAPES {
            let (row, member) = match shape.reads {
                // Records that hold records are listed by member.
                Reads::Records { .. } => (format!("`{}`", shape.at), shape.at),
                _ => (format!("| {} |", shape.what), shape.what),
            };
            assert!(docs.contains(&row), "docs/audit.md does not list {member}");
        }
    }
}
