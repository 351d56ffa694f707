//! The answers the tap awaits: the ids of the calls that carried
//! undeclared keys, and the relay's cheap check of whether a server line
//! may answer one of them.
//!
//! A server line is queued for the worker only when it may matter, and
//! tool results are most of what a server sends, some of them large. So
//! while calls await their verdict, the relay looks in each server line for
//! its `"id"` member — the first and the last `"id"` in the line, one of
//! which is the message's own in every layout JSON-RPC peers write (`id`
//! before `result`, or after it) — reads the value after it, and queues the
//! line only when that id is awaited. Nothing is parsed unless an `"id"`
//! is found; a line matched by mistake costs the worker one read, and the
//! worker decides.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use memchr::memmem;
use serde_json::value::RawValue;

use mcp_unknown_keys::jsonrpc::Id;

/// The ids of the calls awaiting their verdict, as the relays check them.
#[derive(Default)]
pub(super) struct AwaitedIds {
    ids: Mutex<HashSet<Id>>,
    /// How many ids are held: read without the lock, so a relay pays
    /// nothing while none is awaited.
    count: AtomicUsize,
}

impl AwaitedIds {
    /// Whether any answer is awaited.
    pub(super) fn any(&self) -> bool {
        self.count.load(Ordering::SeqCst) > 0
    }

    /// Whether `line` may answer an awaited call.
    pub(super) fn may_answer(&self, line: &[u8]) -> bool {
        if !self.any() {
            return false;
        }
        let ids = self.ids();
        candidate_ids(line).any(|id| ids.contains(&id))
    }

    /// Changes the ids held; `f` gets the set.
    pub(super) fn update(&self, f: impl FnOnce(&mut HashSet<Id>)) {
        let mut ids = self.ids();
        f(&mut ids);
        self.count.store(ids.len(), Ordering::SeqCst);
    }

    fn ids(&self) -> MutexGuard<'_, HashSet<Id>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

static ID_MEMBER: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new("\"id\""));
static ID_MEMBER_REVERSE: LazyLock<memmem::FinderRev<'static>> =
    LazyLock::new(|| memmem::FinderRev::new("\"id\""));

/// The ids after the first and the last `"id"` member name in `line`.
fn candidate_ids(line: &[u8]) -> impl Iterator<Item = Id> + '_ {
    let first = ID_MEMBER.find(line);
    let last = ID_MEMBER_REVERSE.rfind(line).filter(|last| Some(*last) != first);
    [first, last]
        .into_iter()
        .flatten()
        .filter_map(move |at| id_after(&line[at + b"\"id\"".len()..]))
}

/// The id whose value follows a member name: `: 7` or `:"a"`.
fn id_after(rest: &[u8]) -> Option<Id> {
    let rest = rest.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start();
    let length = match rest.first()? {
        b'"' => string_length(rest)?,
        b'-' | b'0'..=b'9' => rest
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len()),
        _ => return None,
    };
    let text = std::str::from_utf8(&rest[..length]).ok()?;
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    Id::read(raw)
}

/// The length of the JSON string `text` opens with, quotes included.
fn string_length(text: &[u8]) -> Option<usize> {
    let mut escaped = false;
    for (at, byte) in text.iter().enumerate().skip(1) {
        match (escaped, byte) {
            (true, _) => escaped = false,
            (false, b'\\') => escaped = true,
            (false, b'"') => return Some(at + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Id {
        Id::read(&RawValue::from_string(text.to_owned()).unwrap()).unwrap()
    }

    fn awaited(ids: &[&str]) -> AwaitedIds {
        let awaited = AwaitedIds::default();
        awaited.update(|set| set.extend(ids.iter().map(|text| id(text))));
        awaited
    }

    #[test]
    fn an_answer_is_found_by_its_id_before_or_after_its_result() {
        let awaited = awaited(&["7", r#""a\"b""#]);
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"id":1}]}}"#,
            r#"{"result":{"content":[{"id":1}]},"jsonrpc":"2.0","id" : 7.0}"#,
            r#"{"result":{"id":"x"},"id":"a\"b"}"#,
            r#"{"jsonrpc":"2.0","id":7e0,"error":{"code":-32602,"message":"\"id\": 1"}}"#,
        ] {
            assert!(awaited.may_answer(line.as_bytes()), "{line}");
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":8,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7}}"#,
            r#"{"id":"7","result":{}}"#,
            r#"{"x":"id","id":null}"#,
            "\"id\":",
            "",
        ] {
            assert!(!awaited.may_answer(line.as_bytes()), "{line}");
        }
        assert!(!AwaitedIds::default().may_answer(br#"{"id":7,"result":{}}"#));
    }
}
