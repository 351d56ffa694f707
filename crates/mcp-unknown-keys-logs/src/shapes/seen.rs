//! The calls already read in one input, as fingerprints: a request log
//! repeats the whole conversation in every request, and a stream's events
//! repeat a call its final message holds, yet each call counts once.
//!
//! A call with an id is the same call when its id, name and arguments are;
//! arguments are compared by what they hold, not how they are written, for
//! a client that writes a call back into its next request may lay them out,
//! escape them (`\u00e9` for `é`, `\/` for `/`) or order their members
//! anew. (Ids alone would do, were they unique: some servers reuse
//! `call_0` in every response.) A call without one (Gemini's often have
//! none) is told apart by how many times the same name and arguments came
//! before: in a request's history the third such call is the same as the
//! third read before; anywhere else it is one more.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

use serde_json::Value;

use crate::strings::Strings;

/// Fingerprints kept per generation; two generations are kept, so memory
/// stays bounded whatever the input's length, and a repeat is recognised
/// within at least the last 114,688 distinct calls (a request log repeats
/// a conversation in its next requests: a conversation whose calls are
/// further apart than that is counted again). Seven eighths of 2^17, the
/// most a table of 2^17 slots holds before it doubles: each generation is
/// one such table, 17 bytes a slot (an 8-byte fingerprint, a 4-byte count,
/// padding and a control byte), 2.2 MB, so the two hold at most 4.5 MB.
const GENERATION: usize = (1 << 17) / 8 * 7;

/// What one input has read.
#[derive(Debug, Default)]
pub(super) struct Seen {
    current: HashMap<u64, u32>,
    previous: HashMap<u64, u32>,
    /// For the record being read: how many calls of each fingerprint it held
    /// so far.
    in_record: HashMap<u64, u32>,
}

/// One call, as fingerprinted.
pub(super) struct Print<'a> {
    pub id: Option<&'a str>,
    pub name: &'a str,
    pub server: Option<&'a str>,
    pub arguments: Option<&'a str>,
}

impl Seen {
    /// A new record begins: counts within the last one are dropped.
    pub(super) fn new_record(&mut self) {
        self.in_record.clear();
    }

    /// Whether `call` is read for the first time in this input; `history`:
    /// it is part of a request's conversation. Notes it either way.
    pub(super) fn first_time(&mut self, call: &Print<'_>, history: bool) -> bool {
        let print = fingerprint(call);
        let known = self.get(print);
        if call.id.is_some_and(|id| !id.is_empty()) {
            if known > 0 {
                return false;
            }
            self.set(print, 1);
            return true;
        }
        let nth = if history {
            let nth = self.in_record.entry(print).or_default();
            *nth += 1;
            *nth
        } else {
            known + 1
        };
        if nth <= known {
            return false;
        }
        self.set(print, nth);
        true
    }

    fn get(&self, print: u64) -> u32 {
        self.current
            .get(&print)
            .or_else(|| self.previous.get(&print))
            .copied()
            .unwrap_or(0)
    }

    fn set(&mut self, print: u64, count: u32) {
        if self.current.len() >= GENERATION && !self.current.contains_key(&print) {
            // The generation to come is made as large as it will grow at
            // once, with the slots of the one dropped: it never doubles,
            // so never holds two tables while it rehashes.
            let mut next = std::mem::take(&mut self.previous);
            next.clear();
            next.reserve(GENERATION);
            self.previous = std::mem::replace(&mut self.current, next);
        }
        self.current.insert(print, count);
    }
}

fn fingerprint(call: &Print<'_>) -> u64 {
    let mut hasher = DefaultHasher::new();
    for part in [call.id, Some(call.name), call.server] {
        hasher.write(part.unwrap_or_default().as_bytes());
        hasher.write_u8(0xff);
    }
    match call.arguments.map(serde_json::from_str::<Value>) {
        Some(Ok(arguments)) => write_value(&mut hasher, &arguments),
        // Past serde_json's depth, or not JSON: as written, layout aside.
        Some(Err(_)) => write_without_layout(&mut hasher, call.arguments.unwrap_or_default()),
        None => hasher.write_u8(0xfe),
    }
    hasher.finish()
}

/// Hashes a JSON value by what it holds: strings decoded, members in
/// order of their names. (Its depth is serde_json's, at most 128.)
fn write_value(hasher: &mut DefaultHasher, value: &Value) {
    match value {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            hasher.write_u8(3);
            hasher.write(n.to_string().as_bytes());
        }
        Value::String(s) => {
            hasher.write_u8(4);
            hasher.write(s.as_bytes());
            hasher.write_u8(0xff);
        }
        Value::Array(items) => {
            hasher.write_u8(5);
            items.iter().for_each(|item| write_value(hasher, item));
            hasher.write_u8(6);
        }
        Value::Object(members) => {
            hasher.write_u8(7);
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by_key(|(name, _)| *name);
            for (name, value) in sorted {
                hasher.write(name.as_bytes());
                hasher.write_u8(0xff);
                write_value(hasher, value);
            }
            hasher.write_u8(8);
        }
    }
}

/// Hashes JSON text without the whitespace between its tokens: a client
/// that writes a call back into its next request may lay it out anew.
fn write_without_layout(hasher: &mut DefaultHasher, json: &str) {
    let mut strings = Strings::default();
    let mut start = 0;
    let bytes = json.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        if strings.outside(byte) && byte.is_ascii_whitespace() {
            hasher.write(&bytes[start..at]);
            start = at + 1;
        }
    }
    hasher.write(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print<'a>(id: Option<&'a str>, arguments: &'a str) -> Print<'a> {
        Print {
            id,
            name: "get_weather",
            server: None,
            arguments: Some(arguments),
        }
    }

    #[test]
    fn a_call_with_an_id_counts_once_however_its_arguments_are_written() {
        let mut seen = Seen::default();
        assert!(seen.first_time(&print(Some("call_1"), r#"{"city":"Paris","n":1}"#), false));
        assert!(!seen.first_time(&print(Some("call_1"), r#"{ "city" : "Paris", "n": 1 }"#), true));
        assert!(!seen.first_time(&print(Some("call_1"), r#"{"n":1,"city":"P\u0061ris"}"#), true));
        // An id reused for another call.
        assert!(seen.first_time(&print(Some("call_1"), r#"{"city":"Rome","n":1}"#), false));
        assert!(seen.first_time(&print(Some("call_2"), r#"{"city":"Paris","n":1}"#), false));
        let other_tool = Print {
            name: "get_time",
            ..print(Some("call_1"), "{}")
        };
        assert!(seen.first_time(&other_tool, false));
    }

    /// A repeat is recognised across a generation's end, every generation
    /// stays within its one table, and a call older than two generations
    /// is forgotten: memory is bounded, not the input.
    #[test]
    fn repeats_are_recognised_across_a_generation_in_bounded_memory() {
        let mut seen = Seen::default();
        let call = |n: usize| format!("call_{n}");
        for n in 0..GENERATION + 10 {
            assert!(seen.first_time(&print(Some(&call(n)), "{}"), false));
        }
        // Call 0 is in the previous generation now: still a repeat.
        assert!(!seen.previous.is_empty());
        assert!(!seen.first_time(&print(Some(&call(0)), "{}"), false));
        assert!(!seen.first_time(&print(Some(&call(GENERATION + 5)), "{}"), false));
        for n in GENERATION + 10..3 * GENERATION + 20 {
            assert!(seen.first_time(&print(Some(&call(n)), "{}"), false));
        }
        for table in [&seen.current, &seen.previous] {
            assert!(table.len() <= GENERATION);
            assert!(table.capacity() <= GENERATION, "{}", table.capacity());
        }
        // Two generations later, call 0 is forgotten: counted again.
        assert!(seen.first_time(&print(Some(&call(0)), "{}"), false));
    }

    #[test]
    fn without_an_id_spaces_inside_strings_are_part_of_the_value() {
        let mut seen = Seen::default();
        assert!(seen.first_time(&print(None, r#"{"city":"Paris"}"#), false));
        seen.new_record();
        assert!(!seen.first_time(&print(None, r#"{ "city" : "Paris" }"#), true));
        assert!(seen.first_time(&print(None, r#"{"city":"Paris "}"#), true));
    }

    #[test]
    fn calls_without_ids_are_counted_by_their_place_in_the_history() {
        let mut seen = Seen::default();
        let paris = print(None, r#"{"city":"Paris"}"#);
        // Two responses, each calling for Paris: two calls.
        assert!(seen.first_time(&paris, false));
        assert!(seen.first_time(&paris, false));
        // The next request repeats both in its history, and adds a third.
        seen.new_record();
        assert!(!seen.first_time(&paris, true));
        assert!(!seen.first_time(&paris, true));
        assert!(seen.first_time(&paris, true));
        // The request after repeats all three.
        seen.new_record();
        for _ in 0..3 {
            assert!(!seen.first_time(&paris, true));
        }
    }
}
