//! The tap: reads the JSON-RPC messages the relay shows it, learns the
//! catalogue from `tools/list` responses and audits `tools/call` requests.
//!
//! The tap never changes what flows: it reads copies of complete lines, and
//! a line it cannot read (not UTF-8, not JSON, a batch array, a method it
//! does not know) is simply passed over. The audit rules are the core's
//! [`Auditor`]'s; this module only finds the calls and the listings.
//!
//! Most server lines are tool results that cannot be a listing. They are
//! recognised without parsing: a server line is parsed only when it
//! mentions the id of a pending `tools/list` request, or when it is short
//! and mentions `list_changed`.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Findings, Listing};
use memchr::memmem;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::relay::LineTap;

/// The longest line the tap reads at all. A longer line is forwarded but
/// neither audited nor learned from; this bounds the memory a line that
/// spans many reads can take.
pub const MAX_TAPPED_LINE: usize = 64 * 1024 * 1024;

/// The longest server line read as a possible `list_changed` notification
/// (the real one is under a hundred bytes): longer lines, tool results
/// among them, need no look.
const MAX_NOTIFICATION_LINE: usize = 1024;

/// The most `tools/list` requests awaited at once; the oldest is forgotten
/// beyond it (a server may never answer a request).
const MAX_PENDING_LISTINGS: usize = 64;

/// Shared by both directions of one proxy.
pub struct Tap {
    auditor: Auditor,
    listings: Mutex<Listings>,
    /// How many `tools/list` requests await a response, readable without
    /// the lock on every server line.
    pending: AtomicUsize,
    /// Every undeclared pair the calls carried, counted: the summary on exit.
    findings: Mutex<Findings>,
}

#[derive(Default)]
struct Listings {
    /// `tools/list` requests awaiting their response, oldest first.
    pending: VecDeque<(Id, Page)>,
    /// The listing being assembled, until its last page arrives.
    listing: Listing,
}

/// Which page of a listing a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Page {
    /// No cursor: a new listing starts.
    First,
    /// A cursor: a further page of the listing being assembled.
    Next,
}

/// A JSON-RPC id, compared as JSON values compare: a string by its decoded
/// text, a number by its value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Id {
    Text(String),
    Number(String),
}

impl Tap {
    /// A tap that audits through `auditor`.
    pub fn new(auditor: Auditor) -> Tap {
        Tap {
            auditor,
            listings: Mutex::new(Listings::default()),
            pending: AtomicUsize::new(0),
            findings: Mutex::default(),
        }
    }

    /// The client-to-server direction's view of the tap.
    pub fn client(&self) -> ClientLines<'_> {
        ClientLines(self)
    }

    /// The server-to-client direction's view of the tap.
    pub fn server(&self) -> ServerLines<'_> {
        ServerLines(self)
    }

    /// Per (tool, key), how many audited calls carried that undeclared key
    /// (every call, not only the first one said), and its diagnosed cause.
    pub fn findings(&self) -> Findings {
        self.findings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The tools of the catalogue currently audited against.
    #[cfg(test)]
    fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }

    fn listings(&self) -> std::sync::MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client asks for a listing: remember its id until the response.
    fn expect_listing(&self, id: Id, page: Page) {
        let mut listings = self.listings();
        listings.pending.retain(|(pending, _)| *pending != id);
        if listings.pending.len() == MAX_PENDING_LISTINGS {
            listings.pending.pop_front();
        }
        listings.pending.push_back((id, page));
        self.pending.store(listings.pending.len(), Ordering::Release);
    }

    /// A client cancelled a request: a listing it was may never be answered.
    fn forget_request(&self, id: &Id) {
        let mut listings = self.listings();
        listings.pending.retain(|(pending, _)| pending != id);
        self.pending.store(listings.pending.len(), Ordering::Release);
    }

    /// Whether `line` has an `"id"` member whose value is a pending
    /// listing's id: a cheap look before any parse.
    fn mentions_pending_id(&self, line: &[u8]) -> bool {
        let listings = self.listings();
        ID_KEY.find_iter(line).any(|at| {
            id_after_key(&line[at + 4..]).is_some_and(|id| listings.pending.iter().any(|(p, _)| *p == id))
        })
    }

    /// A server answered: if it answers a pending listing, learn from it.
    fn on_response(&self, id: Id, message: &Envelope<'_>) {
        let mut listings = self.listings();
        let Some(index) = listings.pending.iter().position(|(pending, _)| *pending == id) else {
            return;
        };
        let (_, page) = listings.pending.remove(index).expect("found above");
        self.pending.store(listings.pending.len(), Ordering::Release);
        let page_result = message
            .result
            .and_then(|result| serde_json::from_str::<ListResult>(result.get()).ok());
        let Some(result) = page_result else {
            // An error, or a result that is not a listing: the previous
            // catalogue stays, and a listing being assembled is abandoned.
            listings.listing.abandon();
            return;
        };
        let more = result.next_cursor.is_some();
        if let Some(catalog) = listings.listing.page(&result.tools, page == Page::First, more) {
            drop(listings);
            self.auditor.replace_catalog(catalog);
        }
    }

    /// The server's tools changed: nothing is audited until the next listing.
    /// The server's tools changed: nothing is audited until the next
    /// listing, the first to be answered from now on (a client may have
    /// asked for it before the notification reached it).
    fn on_list_changed(&self) {
        self.listings().listing.abandon();
        self.auditor.clear_catalog();
    }

    /// Audits one `tools/call` request and delivers its warning, if any.
    fn on_call(&self, id: Option<&RawValue>, params: &Params<'_>) {
        let Some(tool) = params.name.as_deref() else {
            return;
        };
        let id: Option<Value> = id.and_then(|id| serde_json::from_str(id.get()).ok());
        let call = Call {
            tool,
            arguments: params.arguments.map(|raw| Arguments::Json(raw.get())),
            id: id.as_ref(),
        };
        let catalog = self.auditor.catalog();
        let outcome = self.auditor.audit(&catalog, call);
        self.findings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(&call, &outcome);
        if let Some(warning) = outcome.warning() {
            self.auditor.warn(&warning);
        }
    }
}

impl fmt::Debug for Tap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tap")
            .field("auditor", &self.auditor)
            .field("pending_listings", &self.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Lines from the client: `tools/list` requests are noted before they reach
/// the server (so their responses are recognised), `tools/call` requests
/// are audited once forwarded (so the audit never delays them).
#[derive(Clone, Copy, Debug)]
pub struct ClientLines<'a>(&'a Tap);

impl LineTap for ClientLines<'_> {
    fn keep_limit(&self) -> usize {
        MAX_TAPPED_LINE
    }

    fn before_forward(&self, line: &[u8]) -> bool {
        // `tools/…` may be written `tools\/…`: look for the words.
        if !has(&TOOLS, line) {
            return has(&CANCELLED, line);
        }
        if !has(&LIST, line) {
            return true;
        }
        let Some(message) = Envelope::parse(line) else {
            return false;
        };
        match message.method.as_deref() {
            Some("tools/list") => {
                if let Some(id) = message.id.and_then(Id::from_raw) {
                    let page = match message.params {
                        Some(Params { cursor: Some(_), .. }) => Page::Next,
                        _ => Page::First,
                    };
                    self.0.expect_listing(id, page);
                }
                false
            }
            Some("tools/call" | "notifications/cancelled") => true,
            _ => false,
        }
    }

    fn after_forward(&self, line: &[u8]) {
        let Some(message) = Envelope::parse(line) else {
            return;
        };
        match message.method.as_deref() {
            Some("tools/call") => {
                if let Some(params) = &message.params {
                    self.0.on_call(message.id, params);
                }
            }
            Some("notifications/cancelled") => {
                let request = message.params.as_ref().and_then(|p| p.request_id);
                if let Some(id) = request.and_then(Id::from_raw) {
                    self.0.forget_request(&id);
                }
            }
            _ => {}
        }
    }
}

/// Lines from the server: responses to pending `tools/list` requests and
/// `notifications/tools/list_changed`, both read before they reach the
/// client, so a call the client sends next is audited against them.
#[derive(Clone, Copy, Debug)]
pub struct ServerLines<'a>(&'a Tap);

impl LineTap for ServerLines<'_> {
    fn keep_limit(&self) -> usize {
        if self.0.pending.load(Ordering::Acquire) > 0 {
            MAX_TAPPED_LINE
        } else {
            MAX_NOTIFICATION_LINE
        }
    }

    fn before_forward(&self, line: &[u8]) -> bool {
        if line.len() <= MAX_NOTIFICATION_LINE
            && has(&LIST_CHANGED, line)
            && Envelope::parse(line)
                .is_some_and(|message| message.method.as_deref() == Some("notifications/tools/list_changed"))
        {
            self.0.on_list_changed();
            return false;
        }
        if self.0.pending.load(Ordering::Acquire) == 0 || !self.0.mentions_pending_id(line) {
            return false;
        }
        if let Some(message) = Envelope::parse(line) {
            // A message with a method is a request or notification of the
            // server's own, whose ids are the server's, not the client's.
            if message.method.is_none()
                && let Some(id) = message.id.and_then(Id::from_raw)
            {
                self.0.on_response(id, &message);
            }
        }
        false
    }

    fn after_forward(&self, _line: &[u8]) {}
}

/// A word the tap looks for before parsing anything. Its searcher is built
/// once: building one per line would cost more than the search.
type Word = LazyLock<memmem::Finder<'static>>;

static TOOLS: Word = LazyLock::new(|| memmem::Finder::new("tools"));
static LIST: Word = LazyLock::new(|| memmem::Finder::new("list"));
static CANCELLED: Word = LazyLock::new(|| memmem::Finder::new("cancelled"));
static LIST_CHANGED: Word = LazyLock::new(|| memmem::Finder::new("list_changed"));
static ID_KEY: Word = LazyLock::new(|| memmem::Finder::new("\"id\""));

fn has(word: &Word, line: &[u8]) -> bool {
    word.find(line).is_some()
}

/// The members of a JSON-RPC message the tap reads, borrowed from the line.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// Reads one JSON-RPC message; `None` for anything else, a batch array
    /// included.
    fn parse(line: &'a [u8]) -> Option<Envelope<'a>> {
        let text = std::str::from_utf8(line).ok()?;
        if !text.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(text).ok()
    }
}

/// The members of `params` the tap reads, of any method: one pass over a
/// line reads all it needs.
#[derive(Deserialize)]
struct Params<'a> {
    /// `tools/call`: the tool called.
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// `tools/call`: its arguments, as raw JSON text.
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    /// `tools/list`: present on any page but the first.
    #[serde(default)]
    cursor: Option<IgnoredAny>,
    /// `notifications/cancelled`: the request given up.
    #[serde(borrow, default, rename = "requestId")]
    request_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ListResult {
    tools: Vec<Value>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<IgnoredAny>,
}

impl Id {
    fn from_raw(raw: &RawValue) -> Option<Id> {
        serde_json::from_str(raw.get()).ok()
    }
}

/// Reads `: <id>` after an `"id"` key: a string or a number; `None` for
/// anything else, without reading further than its first byte.
fn id_after_key(rest: &[u8]) -> Option<Id> {
    let rest = rest.trim_ascii_start().strip_prefix(b":")?;
    Id::deserialize(&mut serde_json::Deserializer::from_slice(rest)).ok()
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC id: a string or a number")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Id, E> {
        Ok(Id::Text(text.to_owned()))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Id, E> {
        Ok(Id::Number(n.to_string()))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Id, E> {
        Ok(Id::Number(n.to_string()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Id, E> {
        Ok(Id::Number(
            serde_json::Number::from_f64(n).map_or_else(String::new, |n| n.to_string()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use mcp_unknown_keys::audit::Warning;

    fn tap() -> (Tap, Arc<Mutex<Vec<Warning>>>) {
        let said = Arc::new(Mutex::new(Vec::new()));
        let record = said.clone();
        let auditor = Auditor::new().with_sink(move |w: &Warning| record.lock().unwrap().push(w.clone()));
        (Tap::new(auditor), said)
    }

    /// Shows a client line as the relay would.
    fn from_client(tap: &Tap, line: &str) {
        if tap.client().before_forward(line.as_bytes()) {
            tap.client().after_forward(line.as_bytes());
        }
    }

    fn from_server(tap: &Tap, line: &str) {
        assert!(!tap.server().before_forward(line.as_bytes()));
    }

    fn listed(tap: &Tap) {
        from_client(tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        from_server(
            tap,
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "fs_read", "inputSchema": {"properties": {"path": {}}}}]}}"#,
        );
        assert_eq!(tap.audited_tools(), ["fs_read"]);
    }

    #[test]
    fn every_call_carrying_an_undeclared_key_is_counted_though_said_once() {
        let (tap, said) = tap();
        listed(&tap);
        for id in 2..5 {
            from_client(
                &tap,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"a","ffset":1,"x":{id}}}}}}}"#
                ),
            );
        }
        from_client(
            &tap,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a","x":1}}}"#,
        );
        assert_eq!(said.lock().unwrap().len(), 1);
        let findings = tap.findings();
        let counts: Vec<(&str, &str, u64)> = findings.iter().map(|f| (f.tool, f.key, f.calls)).collect();
        assert_eq!(counts, [("fs_read", "ffset", 3), ("fs_read", "x", 4)]);
    }

    #[test]
    fn a_numeric_id_becomes_its_decimal_digits_and_a_string_id_stays_as_is() {
        let (tap, said) = tap();
        listed(&tap);
        from_client(
            &tap,
            r#"{"jsonrpc":"2.0","id":12345678901,"method":"tools/call","params":{"name":"fs_read","arguments":{"a":1}}}"#,
        );
        from_client(
            &tap,
            r#"{"jsonrpc":"2.0","id":"call \"7\"","method":"tools/call","params":{"name":"fs_read","arguments":{"b":1}}}"#,
        );
        let ids: Vec<String> = said.lock().unwrap().iter().map(|w| w.id.clone()).collect();
        assert_eq!(ids, ["12345678901", "call \"7\""]);
    }

    #[test]
    fn escaped_method_names_and_ids_are_read_as_json_reads_them() {
        let (tap, said) = tap();
        from_client(&tap, r#"{"jsonrpc":"2.0","id":"l\u0031","method":"tools\/list"}"#);
        from_server(
            &tap,
            r#"{"result":{"tools":[{"name":"t","inputSchema":{"properties":{"a":{}}}}]},"jsonrpc":"2.0","id":"l1"}"#,
        );
        from_client(
            &tap,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools\/call","params":{"name":"t","arguments":{"b":1}}}"#,
        );
        assert_eq!(said.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_short_listing_that_mentions_list_changed_is_still_a_listing() {
        let (tap, _) = tap();
        from_client(&tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        from_server(
            &tap,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"watch","description":"sends list_changed","inputSchema":{"properties":{"a":{}}}}]}}"#,
        );
        assert_eq!(tap.audited_tools(), ["watch"]);
    }

    #[test]
    fn a_cancelled_listing_is_no_longer_awaited() {
        let (tap, _) = tap();
        from_client(&tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(tap.server().keep_limit(), MAX_TAPPED_LINE);
        from_client(
            &tap,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
    }

    #[test]
    fn unanswered_listings_are_forgotten_beyond_a_bound() {
        let (tap, _) = tap();
        for id in 0..1000 {
            from_client(
                &tap,
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
            );
        }
        assert_eq!(tap.pending.load(Ordering::Relaxed), MAX_PENDING_LISTINGS);
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        #[test]
        fn no_jumble_of_json_rpc_fragments_panics(
            lines in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![
                    "{", "}", "[", "]", ",", ":", "\"id\"", "1", "\"1\"", "-2.5e3", "null", "\"method\"",
                    "\"tools/list\"", "\"tools/call\"", "\"notifications/tools/list_changed\"",
                    "\"notifications/cancelled\"", "\"params\"", "\"name\"", "\"fs_read\"", "\"arguments\"",
                    "\"result\"", "\"tools\"", "\"inputSchema\"", "\"properties\"", "\"nextCursor\"",
                    "\"cursor\"", "\"requestId\"", "\"error\"", " ", "\\", "\"\\u00e9\"", "\u{e9}",
                ]), 0..40).prop_map(|parts| parts.concat()),
                0..30,
            )
        ) {
            let (tap, _) = tap();
            for line in &lines {
                from_client(&tap, line);
                tap.server().before_forward(line.as_bytes());
            }
        }
    }

    #[test]
    fn nothing_read_from_a_line_panics() {
        let (tap, _) = tap();
        listed(&tap);
        for line in [
            "",
            "{",
            "[]",
            "null",
            r#"{"id":{"nested":1},"method":"tools/call","params":[]}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":5}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"fs_read","arguments":null}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"fs_read","arguments":"{\"k\":1}"}}"#,
            r#"{"id":1,"id":2,"method":"tools/list"}"#,
            r#"{"id":1,"result":{"tools":"no"}}"#,
            r#"{"id":1e400,"result":{}}"#,
            "\"id\":",
            "\"id\"",
        ] {
            from_client(&tap, line);
            from_server(&tap, line);
        }
    }
}
