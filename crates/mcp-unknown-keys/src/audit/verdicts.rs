//! What the server did with a call that carried undeclared keys: ignored
//! them (the call "succeeded"), rejected the call, or never answered.
//!
//! A pure type, fed by whoever sees both directions of a session — the
//! proxy as it relays, the `audit` command reading a recording — so that
//! both pair calls and answers by the same rules.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::{Call, Outcome};
use crate::wire::id_text;

/// What the server did with a call that carried undeclared keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A result without `isError: true`: the call "succeeded", the keys were
    /// dropped or misread in silence. The dangerous case.
    Ignored,
    /// A JSON-RPC error, or a result with `isError: true`.
    Rejected,
    /// No answer by the end of the session, or the request was cancelled.
    Unanswered,
}

impl Verdict {
    /// Every verdict, in the order a report lists them.
    pub const ALL: [Verdict; 3] = [Verdict::Ignored, Verdict::Rejected, Verdict::Unanswered];

    /// The stable snake_case name: `ignored`, `rejected`, `unanswered`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ignored => "ignored",
            Verdict::Rejected => "rejected",
            Verdict::Unanswered => "unanswered",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the server answered a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A `result`; `is_error` when it carries `isError: true`.
    Result {
        /// The result says `isError: true`.
        is_error: bool,
    },
    /// A JSON-RPC `error` (or a response with neither member).
    Error,
}

impl Answer {
    /// Reads a response's `result` member, given as its raw JSON text
    /// (`None` for a response without one: an error). `isError` is read as
    /// a client's JSON parser reads it: the last member of that name wins;
    /// only `true` is an error.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Answer;
    ///
    /// assert_eq!(Answer::read(Some(r#"{"content":[],"isError":true}"#)), Answer::Result { is_error: true });
    /// assert_eq!(Answer::read(Some(r#"{"content":[{"text":"isError"}]}"#)), Answer::Result { is_error: false });
    /// assert_eq!(Answer::read(None), Answer::Error);
    /// ```
    pub fn read(result: Option<&str>) -> Answer {
        match result {
            None => Answer::Error,
            Some(text) => Answer::Result {
                is_error: says_is_error(text),
            },
        }
    }

    /// The verdict on a call carrying undeclared keys that got this answer.
    pub fn verdict(self) -> Verdict {
        match self {
            Answer::Result { is_error: false } => Verdict::Ignored,
            Answer::Result { is_error: true } | Answer::Error => Verdict::Rejected,
        }
    }
}

/// Whether a result object's last `isError` member is `true`; other values
/// are skipped unbuilt.
fn says_is_error(result: &str) -> bool {
    struct LastIsError;
    impl<'de> Visitor<'de> for LastIsError {
        type Value = bool;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a result object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut is_error = false;
            while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if name == "isError" {
                    is_error = matches!(map.next_value::<Flag>()?, Flag(true));
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(is_error)
        }
    }
    /// `true` is true; any other value is not.
    struct Flag(bool);
    impl<'de> Deserialize<'de> for Flag {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Flag, D::Error> {
            struct Read;
            impl<'de> Visitor<'de> for Read {
                type Value = Flag;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_bool<E: de::Error>(self, value: bool) -> Result<Flag, E> {
                    Ok(Flag(value))
                }
                fn visit_i64<E: de::Error>(self, _: i64) -> Result<Flag, E> {
                    Ok(Flag(false))
                }
                fn visit_u64<E: de::Error>(self, _: u64) -> Result<Flag, E> {
                    Ok(Flag(false))
                }
                fn visit_f64<E: de::Error>(self, _: f64) -> Result<Flag, E> {
                    Ok(Flag(false))
                }
                fn visit_str<E: de::Error>(self, _: &str) -> Result<Flag, E> {
                    Ok(Flag(false))
                }
                fn visit_unit<E: de::Error>(self) -> Result<Flag, E> {
                    Ok(Flag(false))
                }
                fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Flag, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Flag(false))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Flag, A::Error> {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Flag(false))
                }
            }
            deserializer.deserialize_any(Read)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(result);
    deserializer.deserialize_map(LastIsError).unwrap_or(false)
}

/// One call judged: the JSON line a door logs,
/// `{"verdict":"ignored","tool":"fs_read","id":"4","unknown_keys":["ffset"]}`,
/// with `"unknown_paths":[…]` when the call carried undeclared nested keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Judged {
    /// What the server did.
    pub verdict: Verdict,
    /// The tool called.
    pub tool: String,
    /// The call's id as text (as [`Warning::id`](super::Warning::id)).
    pub id: String,
    /// Every undeclared top-level key the call carried, said before or not.
    pub unknown_keys: Vec<String>,
    /// Every undeclared nested key the call carried, as paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_paths: Vec<String>,
}

impl Judged {
    /// The verdict as one JSON line, without the newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a verdict is plain strings")
    }
}

/// How often each verdict fell on calls that carried one (tool, key) pair.
/// Serialised as `{"ignored":2,"rejected":1}`, verdicts with no call absent.
pub type VerdictCounts = BTreeMap<Verdict, u64>;

/// ` — ignored 2, rejected 1`: what the server did with the calls that
/// carried a pair (those without an id are not counted); nothing when no
/// call was judged. The proxy's summary and `audit`'s text report say it so.
pub fn verdicts_text(counts: &VerdictCounts) -> String {
    let said: Vec<String> = Verdict::ALL
        .iter()
        .filter_map(|verdict| counts.get(verdict).map(|n| format!("{verdict} {n}")))
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" — {}", said.join(", "))
    }
}

/// The most calls awaiting their answer at once; beyond it the oldest is
/// judged [`Verdict::Unanswered`].
pub const MAX_AWAITED: usize = 1024;

/// Pairs each call that carried undeclared keys with the server's answer,
/// and counts the verdicts per (tool, key) and per (tool, path).
///
/// Feed it each audited call with [`Verdicts::call`] (calls that carried
/// nothing undeclared, and calls without an id, are not awaited), each
/// response with [`Verdicts::answer`], each `notifications/cancelled` with
/// [`Verdicts::cancel`], and end the session with [`Verdicts::finish`].
/// `K` is how the caller compares JSON-RPC ids (by value: `1` and `1.0`
/// are one id).
///
/// ```
/// use mcp_unknown_keys::audit::{Answer, Arguments, Auditor, Call, Catalog, Verdict, Verdicts};
/// use serde_json::json;
///
/// let auditor = Auditor::new().with_sink(());
/// let catalog = Catalog::from_mcp_tools(&[json!({"name": "fs_read", "inputSchema": {"properties": {"path": {}}}})]);
/// let mut verdicts = Verdicts::<String>::default();
/// for id in ["1", "2"] {
///     let value = json!(id);
///     let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":1}"#)).with_id(&value);
///     verdicts.call(id.to_owned(), &call, &auditor.audit(&catalog, call));
/// }
/// let judged = verdicts.answer(&"1".to_owned(), Answer::read(Some(r#"{"content":[]}"#))).unwrap();
/// assert_eq!(judged.to_json_line(), r#"{"verdict":"ignored","tool":"fs_read","id":"1","unknown_keys":["ffset"]}"#);
/// let left = verdicts.finish();
/// assert_eq!((left.len(), left[0].verdict), (1, Verdict::Unanswered));
/// let (tool, key, nested, counts) = verdicts.counts().next().unwrap();
/// assert_eq!((tool, key, nested), ("fs_read", "ffset", false));
/// assert_eq!((counts[&Verdict::Ignored], counts[&Verdict::Unanswered]), (1, 1));
/// ```
#[derive(Clone, Debug)]
pub struct Verdicts<K> {
    /// The calls awaiting their answer under each id, oldest first: a
    /// server answers requests that share an id in the order they came.
    awaited: HashMap<K, VecDeque<Awaited>>,
    /// How many calls are awaited, under every id.
    count: usize,
    /// Every call awaited, by id and sequence number, in the order calls
    /// came, oldest first; a call answered already is skipped when met.
    order: VecDeque<(K, u64)>,
    /// The sequence number of the next call.
    next: u64,
    cap: usize,
    counted: BTreeMap<String, ToolVerdicts>,
}

#[derive(Clone, Debug)]
struct Awaited {
    /// Its place in the order calls came.
    sequence: u64,
    tool: String,
    id: String,
    unknown_keys: Vec<String>,
    unknown_paths: Vec<String>,
}

#[derive(Clone, Debug, Default)]
struct ToolVerdicts {
    keys: BTreeMap<String, VerdictCounts>,
    paths: BTreeMap<String, VerdictCounts>,
}

impl<K: Eq + Hash + Clone> Default for Verdicts<K> {
    fn default() -> Self {
        Verdicts::with_cap(MAX_AWAITED)
    }
}

impl<K: Eq + Hash + Clone> Verdicts<K> {
    /// Pairing that awaits at most `cap` calls at once (at least one).
    pub fn with_cap(cap: usize) -> Verdicts<K> {
        Verdicts {
            awaited: HashMap::new(),
            count: 0,
            order: VecDeque::new(),
            next: 0,
            cap: cap.max(1),
            counted: BTreeMap::new(),
        }
    }

    /// An audited call: awaited when it carried undeclared keys or paths.
    /// Calls that share an id are paired with their answers in the order
    /// they came (a response answers the oldest call awaited under its id).
    /// Returns the calls judged now: the oldest awaited, judged
    /// [`Verdict::Unanswered`], should the cap be exceeded.
    pub fn call(&mut self, id: K, call: &Call<'_>, outcome: &Outcome) -> Vec<Judged> {
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            ..
        } = outcome
        else {
            return Vec::new();
        };
        if undeclared.is_empty() && undeclared_paths.is_empty() {
            return Vec::new();
        }
        let mut judged = Vec::new();
        while self.count >= self.cap {
            let Some((oldest, sequence)) = self.order.pop_front() else {
                break;
            };
            judged.extend(self.judge_call(&oldest, sequence, Verdict::Unanswered));
        }
        let sequence = self.next;
        self.next += 1;
        let awaited = Awaited {
            sequence,
            tool: call.tool.to_owned(),
            id: id_text(call.id),
            unknown_keys: undeclared.clone(),
            unknown_paths: undeclared_paths.clone(),
        };
        self.awaited.entry(id.clone()).or_default().push_back(awaited);
        self.count += 1;
        self.order.push_back((id, sequence));
        self.compact();
        judged
    }

    /// Whether a call with this id awaits its answer.
    pub fn awaits(&self, id: &K) -> bool {
        self.awaited.contains_key(id)
    }

    /// How many calls await their answer.
    pub fn awaited(&self) -> usize {
        self.count
    }

    /// A response: the verdict on the call it answers (the oldest awaited
    /// under its id), if one was awaited.
    pub fn answer(&mut self, id: &K, answer: Answer) -> Option<Judged> {
        self.judge(id, answer.verdict())
    }

    /// The client cancelled a request: the oldest call awaited under its id
    /// is unanswered.
    pub fn cancel(&mut self, id: &K) -> Option<Judged> {
        self.judge(id, Verdict::Unanswered)
    }

    /// The session ended: every call still awaited is unanswered, oldest
    /// first.
    pub fn finish(&mut self) -> Vec<Judged> {
        let order = std::mem::take(&mut self.order);
        order
            .iter()
            .filter_map(|(id, sequence)| self.judge_call(id, *sequence, Verdict::Unanswered))
            .collect()
    }

    /// Every (tool, key) and (tool, path) pair judged, sorted by tool, then
    /// keys before paths: `(tool, key or path, nested, counts)`.
    pub fn counts(&self) -> impl Iterator<Item = (&str, &str, bool, &VerdictCounts)> {
        self.counted.iter().flat_map(|(tool, found)| {
            let keys = found.keys.iter().map(|(key, counts)| (key, false, counts));
            let paths = found.paths.iter().map(|(path, counts)| (path, true, counts));
            keys.chain(paths)
                .map(move |(key, nested, counts)| (tool.as_str(), key.as_str(), nested, counts))
        })
    }

    /// The counts of one pair, if any call carrying it was judged.
    pub fn counts_of(&self, tool: &str, key: &str, nested: bool) -> Option<&VerdictCounts> {
        let found = self.counted.get(tool)?;
        if nested {
            found.paths.get(key)
        } else {
            found.keys.get(key)
        }
    }

    /// Judges the oldest call awaited under `id`.
    fn judge(&mut self, id: &K, verdict: Verdict) -> Option<Judged> {
        let sequence = self.awaited.get(id)?.front()?.sequence;
        self.judge_call(id, sequence, verdict)
    }

    /// Judges the call `sequence` under `id`, if it is still awaited: only
    /// the oldest under an id can be (calls are judged oldest first).
    fn judge_call(&mut self, id: &K, sequence: u64, verdict: Verdict) -> Option<Judged> {
        let calls = self.awaited.get_mut(id)?;
        if calls.front()?.sequence != sequence {
            return None;
        }
        let awaited = calls.pop_front()?;
        if calls.is_empty() {
            self.awaited.remove(id);
        }
        self.count -= 1;
        let counted = self.counted.entry(awaited.tool.clone()).or_default();
        for key in &awaited.unknown_keys {
            *counted
                .keys
                .entry(key.clone())
                .or_default()
                .entry(verdict)
                .or_default() += 1;
        }
        for path in &awaited.unknown_paths {
            *counted
                .paths
                .entry(path.clone())
                .or_default()
                .entry(verdict)
                .or_default() += 1;
        }
        Some(Judged {
            verdict,
            tool: awaited.tool,
            id: awaited.id,
            unknown_keys: awaited.unknown_keys,
            unknown_paths: awaited.unknown_paths,
        })
    }

    /// Drops ids already judged from the order, once they outnumber those
    /// awaited: the order stays proportional to what is awaited.
    fn compact(&mut self) {
        if self.order.len() > 2 * self.count + 16 {
            let awaited = &self.awaited;
            // Calls under an id are judged oldest first: one is awaited
            // while it is not older than the oldest awaited under its id.
            self.order.retain(|(id, sequence)| {
                awaited
                    .get(id)
                    .and_then(VecDeque::front)
                    .is_some_and(|oldest| oldest.sequence <= *sequence)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{Arguments, Auditor, Catalog};
    use serde_json::json;

    fn flagged(verdicts: &mut Verdicts<u64>, id: u64, arguments: &str) -> Vec<Judged> {
        let auditor = Auditor::new().with_sink(());
        let catalog = Catalog::from_mcp_tools(&[json!({"name": "t", "inputSchema": {
            "properties": {"a": {}, "o": {"properties": {"x": {}}}}
        }})]);
        let value = json!(id);
        let call = Call::new("t", Arguments::Json(arguments)).with_id(&value);
        verdicts.call(id, &call, &auditor.audit(&catalog, call))
    }

    #[test]
    fn each_answer_gives_its_verdict_and_only_flagged_calls_are_awaited() {
        let mut verdicts = Verdicts::default();
        flagged(&mut verdicts, 1, r#"{"a":1,"b":2}"#);
        flagged(&mut verdicts, 2, r#"{"a":1}"#);
        flagged(&mut verdicts, 3, r#"{"o":{"y":1}}"#);
        flagged(&mut verdicts, 4, r#"{"b":1}"#);
        assert_eq!((verdicts.awaited(), verdicts.awaits(&2)), (3, false));
        let ignored = verdicts.answer(&1, Answer::read(Some("{}"))).unwrap();
        assert_eq!(ignored.verdict, Verdict::Ignored);
        let rejected = verdicts
            .answer(&3, Answer::read(Some(r#"{"isError":false,"isError":true}"#)))
            .unwrap();
        assert_eq!(
            rejected.to_json_line(),
            r#"{"verdict":"rejected","tool":"t","id":"3","unknown_keys":[],"unknown_paths":["o.y"]}"#
        );
        assert_eq!(verdicts.answer(&2, Answer::Error), None);
        assert_eq!(verdicts.cancel(&4).unwrap().verdict, Verdict::Unanswered);
        assert!(verdicts.finish().is_empty());
        let ignored = |key: &str, nested: bool| {
            verdicts
                .counts_of("t", key, nested)
                .map(|counts| counts.iter().map(|(v, n)| (*v, *n)).collect::<Vec<_>>())
        };
        assert_eq!(
            ignored("b", false),
            Some(vec![(Verdict::Ignored, 1), (Verdict::Unanswered, 1)])
        );
        assert_eq!(ignored("o.y", true), Some(vec![(Verdict::Rejected, 1)]));
        assert_eq!(ignored("o.y", false), None);
        assert_eq!(verdicts.counts().count(), 2);
    }

    #[test]
    fn only_a_true_is_error_rejects() {
        for (result, is_error) in [
            (r#"{"isError":true}"#, true),
            (r#"{"isError":"true"}"#, false),
            (r#"{"isError":1}"#, false),
            (r#"{"isError":true,"isError":null}"#, false),
            (r#"{"content":[{"isError":true}]}"#, false),
            ("[]", false),
            ("not json", false),
        ] {
            assert_eq!(
                Answer::read(Some(result)),
                Answer::Result { is_error },
                "{result}"
            );
        }
    }

    fn keys(judged: &[Judged]) -> Vec<(String, Vec<String>, Verdict)> {
        judged
            .iter()
            .map(|j| (j.id.clone(), j.unknown_keys.clone(), j.verdict))
            .collect()
    }

    fn one(id: &str, key: &str, verdict: Verdict) -> (String, Vec<String>, Verdict) {
        (id.to_owned(), vec![key.to_owned()], verdict)
    }

    #[test]
    fn beyond_the_cap_the_oldest_is_unanswered() {
        let mut verdicts = Verdicts::with_cap(2);
        assert!(flagged(&mut verdicts, 1, r#"{"b":1}"#).is_empty());
        assert!(flagged(&mut verdicts, 2, r#"{"b":1}"#).is_empty());
        let judged = flagged(&mut verdicts, 3, r#"{"b":1}"#);
        assert_eq!(keys(&judged), [one("1", "b", Verdict::Unanswered)]);
        assert_eq!(verdicts.awaited(), 2);
        for id in 10..1000 {
            flagged(&mut verdicts, id, r#"{"b":1}"#);
            verdicts.answer(&id, Answer::Error);
        }
        // The order holds ids already judged only a bounded while.
        assert!(verdicts.order.len() <= 2 * 2 + 16, "{}", verdicts.order.len());
    }

    #[test]
    fn calls_that_share_an_id_are_answered_first_in_first_out() {
        let mut verdicts = Verdicts::with_cap(3);
        assert!(
            flagged(&mut verdicts, 1, r#"{"b":1}"#).is_empty(),
            "nothing judged yet"
        );
        assert!(flagged(&mut verdicts, 1, r#"{"c":1}"#).is_empty());
        assert_eq!(verdicts.awaited(), 2);
        let first = verdicts.answer(&1, Answer::Error).unwrap();
        assert_eq!(keys(&[first]), [one("1", "b", Verdict::Rejected)]);
        let second = verdicts.answer(&1, Answer::read(Some("{}"))).unwrap();
        assert_eq!(keys(&[second]), [one("1", "c", Verdict::Ignored)]);
        assert!(!verdicts.awaits(&1));

        // Past the cap, the oldest call goes, not the newest under its id.
        flagged(&mut verdicts, 5, r#"{"b":1}"#);
        flagged(&mut verdicts, 6, r#"{"c":1}"#);
        flagged(&mut verdicts, 5, r#"{"d":1}"#);
        let judged = flagged(&mut verdicts, 7, r#"{"e":1}"#);
        assert_eq!(keys(&judged), [one("5", "b", Verdict::Unanswered)]);
        let answered = verdicts.answer(&5, Answer::Error).unwrap();
        assert_eq!(keys(&[answered]), [one("5", "d", Verdict::Rejected)]);
        assert_eq!(
            keys(&verdicts.finish()),
            [
                one("6", "c", Verdict::Unanswered),
                one("7", "e", Verdict::Unanswered)
            ]
        );
        assert_eq!(verdicts.awaited(), 0);
    }
}
