//! What the HTTP doors read of a JSON-RPC message: enough to route it
//! (method, id, name, protocol version) and to frame it for stdio. A
//! message is read from its bytes, never re-serialised: what is sent is
//! always the bytes that came.

use std::borrow::Cow;

use mcp_unknown_keys::jsonrpc::{self, Id, Line, Message, members, read_line};
use serde_json::value::RawValue;

/// A message from the host, as far as routing it needs, read with the
/// core's member reader: as the server's parser and the tap read it (the
/// last of a repeated member, names and strings decoded, any depth), so
/// the bridge never routes a message as other than the tap audits it.
#[derive(Debug, Default)]
pub(super) struct Outgoing<'a> {
    id: Option<&'a RawValue>,
    method: Option<Cow<'a, str>>,
    params: Option<OutgoingParams<'a>>,
    /// It has a `result` or an `error`.
    answers: bool,
}

#[derive(Debug, Default)]
struct OutgoingParams<'a> {
    name: Option<Cow<'a, str>>,
    uri: Option<Cow<'a, str>>,
    arguments: Option<&'a RawValue>,
    request_id: Option<&'a RawValue>,
    cursor: bool,
    protocol_version: Option<Cow<'a, str>>,
}

/// A member present with a value other than `null`.
fn present(member: Option<&RawValue>) -> Option<&RawValue> {
    member.filter(|member| !jsonrpc::absent(Some(member)))
}

impl<'a> OutgoingParams<'a> {
    /// `params`, when it is an object.
    fn read(params: &'a RawValue) -> Option<OutgoingParams<'a>> {
        let [name, uri, arguments, request_id, cursor, meta] = members(
            params.get(),
            ["name", "uri", "arguments", "requestId", "cursor", "_meta"],
        )?;
        let protocol_version = meta
            .and_then(|meta| members(meta.get(), ["io.modelcontextprotocol/protocolVersion"]))
            .and_then(|[version]| version)
            .and_then(jsonrpc::string);
        Some(OutgoingParams {
            name: name.and_then(jsonrpc::string),
            uri: uri.and_then(jsonrpc::string),
            arguments: present(arguments),
            request_id: present(request_id),
            cursor: present(cursor).is_some(),
            protocol_version,
        })
    }
}

/// What kind of message a host line is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A request: it has a method and an id, and wants an answer.
    Request,
    /// A notification: a method, no id.
    Notification,
    /// An answer to a request of the server's (legacy era only).
    Response,
    /// Not one JSON-RPC message: not JSON, a batch array, or neither a
    /// method nor a result. Sent as it is; nothing can be answered for it.
    Unreadable,
}

impl<'a> Outgoing<'a> {
    /// Reads a host line; an unreadable line reads as [`Kind::Unreadable`].
    pub(super) fn read(line: &'a [u8]) -> Outgoing<'a> {
        let members = std::str::from_utf8(line)
            .ok()
            .filter(|text| text.trim_start().starts_with('{'))
            .and_then(|text| members(text, ["id", "method", "params", "result", "error"]));
        let Some([id, method, params, result, error]) = members else {
            return Outgoing::default();
        };
        Outgoing {
            id: present(id),
            method: method.and_then(jsonrpc::string),
            params: params.and_then(OutgoingParams::read),
            answers: present(result).is_some() || present(error).is_some(),
        }
    }

    /// The kind of message.
    pub(super) fn kind(&self) -> Kind {
        match (&self.method, self.id) {
            (Some(_), Some(_)) => Kind::Request,
            (Some(_), None) => Kind::Notification,
            (None, Some(_)) if self.answers => Kind::Response,
            _ => Kind::Unreadable,
        }
    }

    /// The id, as it was written.
    pub(super) fn id(&self) -> Option<&'a RawValue> {
        self.id
    }

    /// The method, if any.
    pub(super) fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// What `Mcp-Name` carries: `params.name` of `tools/call` and
    /// `prompts/get`, `params.uri` of `resources/read`.
    pub(super) fn routed_name(&self) -> Option<&str> {
        let params = self.params.as_ref()?;
        match self.method()? {
            "tools/call" | "prompts/get" => params.name.as_deref(),
            "resources/read" => params.uri.as_deref(),
            _ => None,
        }
    }

    /// The tool a `tools/call` calls.
    pub(super) fn tool(&self) -> Option<&str> {
        match self.method()? {
            "tools/call" => self.params.as_ref()?.name.as_deref(),
            _ => None,
        }
    }

    /// A `tools/call`'s arguments, as raw JSON.
    pub(super) fn arguments(&self) -> Option<&'a RawValue> {
        self.params.as_ref()?.arguments
    }

    /// The request a `notifications/cancelled` gives up.
    pub(super) fn cancelled_request(&self) -> Option<&'a RawValue> {
        match self.method()? {
            "notifications/cancelled" => self.params.as_ref()?.request_id,
            _ => None,
        }
    }

    /// Whether a listing request asks for a further page.
    pub(super) fn has_cursor(&self) -> bool {
        self.params.as_ref().is_some_and(|params| params.cursor)
    }

    /// The protocol version a modern request declares in its `_meta`.
    pub(super) fn protocol_version(&self) -> Option<&str> {
        self.params.as_ref()?.protocol_version.as_deref()
    }
}

/// What a server message is to the request awaiting `id`, read with the
/// core's JSON-RPC reader (as the stdio tap reads it): `Some` when it
/// answers the request — with the result, when it succeeded — and `None`
/// for any other message, or for bytes that are no message. A batch answers
/// when one of its elements does. What is not read here is still passed on.
pub(super) fn answer_to<'a>(message: &'a [u8], id: &Id) -> Option<Option<&'a RawValue>> {
    let answers = |message: &Message<'a>| match message {
        Message::Response { id: answered, result } if answered == id => Some(result.map(|raw| raw.0)),
        _ => None,
    };
    match read_line(message) {
        Line::Message(message) => answers(&message),
        Line::Batch(messages) => messages.iter().find_map(|message| answers(message).map(|_| None)),
        Line::Unreadable => None,
    }
}

/// A message as one stdio line: the JSON whitespace around it dropped, and
/// each raw line break in it — only ever insignificant whitespace in JSON,
/// whose strings escape them — made a space, so that the line stays one
/// line. Every other byte is kept as received.
pub(super) fn as_line(message: &[u8]) -> Cow<'_, [u8]> {
    let trimmed = message.trim_ascii();
    if memchr::memchr2(b'\n', b'\r', trimmed).is_none() {
        return Cow::Borrowed(trimmed);
    }
    let spaced = trimmed
        .iter()
        .map(|&byte| {
            if byte == b'\n' || byte == b'\r' {
                b' '
            } else {
                byte
            }
        })
        .collect();
    Cow::Owned(spaced)
}

/// How far into a line too long to read the bridge looks for its `id` and
/// `method`: members written before `params` or `result`, as clients write
/// them.
pub(super) const LEADING_BYTES: usize = 4096;

/// The `id` and `method` members that open a message whose whole cannot be
/// read (it is too long to hold): read from its first [`LEADING_BYTES`],
/// one top-level member after another, up to the first that does not end
/// within them.
#[derive(Default)]
pub(super) struct Leading {
    pub id: Option<Box<RawValue>>,
    pub method: Option<String>,
}

impl Leading {
    pub(super) fn read(line: &[u8]) -> Leading {
        let head = &line[..line.len().min(LEADING_BYTES)];
        let mut leading = Leading::default();
        let mut at = skip_space(head, 0);
        if head.get(at) != Some(&b'{') {
            return leading;
        }
        at += 1;
        while let Some((name, value, next)) = member(head, at) {
            match name.as_str() {
                "id" => leading.id = Some(value),
                "method" => leading.method = serde_json::from_str(value.get()).ok(),
                _ => {}
            }
            at = skip_space(head, next);
            if head.get(at) != Some(&b',') {
                break;
            }
            at += 1;
        }
        leading
    }
}

/// The member `"name": value` at `at`, and where it ends.
fn member(head: &[u8], at: usize) -> Option<(String, Box<RawValue>, usize)> {
    let at = skip_space(head, at);
    let mut names = serde_json::Deserializer::from_slice(&head[at..]).into_iter::<String>();
    let name = names.next()?.ok()?;
    let colon = skip_space(head, at + names.byte_offset());
    if head.get(colon) != Some(&b':') {
        return None;
    }
    let start = colon + 1;
    let mut values = serde_json::Deserializer::from_slice(&head[start..]).into_iter::<Box<RawValue>>();
    let value = values.next()?.ok()?;
    let end = start + values.byte_offset();
    // A number cut off by the end of the head would read as a shorter one.
    (end < head.len()).then_some((name, value, end))
}

fn skip_space(head: &[u8], mut at: usize) -> usize {
    while head.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_id_and_method_are_read_from_a_line_cut_short() {
        let line = br#" { "jsonrpc" : "2.0", "id": 7 ,"method":"tools/call","params":{"name":"t","arguments":{"a":"yyyy"#;
        let leading = Leading::read(line);
        assert_eq!(leading.id.map(|id| id.get().to_owned()).as_deref(), Some("7"));
        assert_eq!(leading.method.as_deref(), Some("tools/call"));
        // A number cut off by the end of what is read is not taken.
        assert!(Leading::read(br#"{"id":12"#).id.is_none());
        let late = format!(
            r#"{{"params":"{}","id":1,"method":"m"}}"#,
            "x".repeat(LEADING_BYTES)
        );
        assert!(Leading::read(late.as_bytes()).id.is_none());
        assert!(Leading::read(b"[1,2]").id.is_none());
    }

    #[test]
    fn a_request_is_read_for_routing() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let message = Outgoing::read(line);
        assert_eq!(message.kind(), Kind::Request);
        assert_eq!(message.routed_name(), Some("get_weather"));
        assert_eq!(message.tool(), Some("get_weather"));
        assert_eq!(message.arguments().unwrap().get(), r#"{"city":"Oslo"}"#);
        assert_eq!(message.protocol_version(), Some("2026-07-28"));
        let read = Outgoing::read(
            br#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///a"}}"#,
        );
        assert_eq!(read.routed_name(), Some("file:///a"));
        assert_eq!(read.protocol_version(), None);
    }

    #[test]
    fn kinds_are_told_apart() {
        let kind = |line: &str| Outgoing::read(line.as_bytes()).kind();
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Kind::Notification
        );
        assert_eq!(kind(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Kind::Response);
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":""}}"#),
            Kind::Response
        );
        for line in [
            "",
            "[]",
            "{",
            "null",
            r#"{"id":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
        ] {
            assert_eq!(kind(line), Kind::Unreadable, "{line}");
        }
    }

    #[test]
    fn a_message_is_read_as_the_tap_reads_it_the_last_of_repeated_members() {
        // A serde-derived reader refused a repeated member, so the bridge
        // sent as unreadable a request the tap audited as a call.
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping","id":2,"method":"tools\/call","params":{"name":"a","name":"b","arguments":{"x":1}}}"#;
        let message = Outgoing::read(line);
        assert_eq!(message.kind(), Kind::Request);
        assert_eq!(message.id().map(RawValue::get), Some("2"));
        assert_eq!(message.tool(), Some("b"));
        let Line::Message(Message::Call { id, name, .. }) = read_line(line) else {
            panic!("the tap reads a call")
        };
        assert_eq!((id.map(|id| id.to_value()), &*name), (Some(2.into()), "b"));
        // A null id is none: a notification, as before.
        let null = Outgoing::read(br#"{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}"#);
        assert_eq!(null.kind(), Kind::Notification);
    }

    #[test]
    fn a_cancellation_names_its_request() {
        let line = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc"}}"#;
        assert_eq!(
            Outgoing::read(line).cancelled_request().unwrap().get(),
            r#""abc""#
        );
    }

    #[test]
    fn an_answer_is_matched_to_its_request_by_value() {
        let id = |text: &str| Id::read(&RawValue::from_string(text.into()).unwrap()).unwrap();
        let (one, text) = (id("1"), id(r#""1""#));
        let answers = |message: &[u8], id: &Id| answer_to(message, id).is_some();
        assert!(answers(br#"{"id":1,"result":{}}"#, &one));
        assert!(answers(br#"{"id":1.0,"result":{}}"#, &one));
        assert!(answers(br#"{"id":1,"result":{},"id":1,"extra":[]}"#, &one));
        assert!(answers(br#"{"error":{},"id":1}"#, &one));
        assert!(!answers(br#"{"id":1,"result":{}}"#, &text));
        assert!(answers(br#"{"id":"\u0031","result":{}}"#, &text));
        assert!(answers(br#"[{"method":"x"},{"id":1,"result":{}}]"#, &one));
        assert!(!answers(br#"{"id":1,"method":"ping"}"#, &one));
        assert!(!answers(br#"{"method":"notifications/progress"}"#, &one));
        assert!(!answers(b"not json", &one));
        let result = answer_to(br#"{"id":1,"result":{"a":1}}"#, &one).flatten();
        assert_eq!(result.map(RawValue::get), Some(r#"{"a":1}"#));
    }

    #[test]
    fn a_message_becomes_one_line() {
        assert_eq!(&*as_line(b"{\"a\":1}"), b"{\"a\":1}");
        assert!(matches!(
            as_line(b"\r\n {\"a\":1}\n"),
            Cow::Borrowed(b"{\"a\":1}")
        ));
        assert_eq!(
            &*as_line(b"{\n  \"a\": \"x\\ny\"\r\n}\n"),
            b"{   \"a\": \"x\\ny\"  }"
        );
    }
}
