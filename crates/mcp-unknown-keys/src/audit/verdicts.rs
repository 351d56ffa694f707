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

use super::call::{Call, Outcome};
use super::findings::Finding;
use crate::limits::MAX_AWAITED;
use crate::trace::TraceContext;
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
    /// Another request in flight shared the call's id (compared by value),
    /// so which answer was the call's cannot be told: said once as
    /// [`Notice::AmbiguousId`](super::Notice::AmbiguousId).
    Ambiguous,
}

impl Verdict {
    /// Every verdict, in the order a report lists them.
    pub const ALL: [Verdict; 4] = [
        Verdict::Ignored,
        Verdict::Rejected,
        Verdict::Unanswered,
        Verdict::Ambiguous,
    ];

    /// The stable snake_case name: `ignored`, `rejected`, `unanswered`,
    /// `ambiguous`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ignored => "ignored",
            Verdict::Rejected => "rejected",
            Verdict::Unanswered => "unanswered",
            Verdict::Ambiguous => "ambiguous",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the server answered a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A final `result`; `is_error` when it carries `isError: true`.
    Result {
        /// The result says `isError: true`.
        is_error: bool,
    },
    /// A JSON-RPC `error` (or a response with neither member).
    Error,
    /// An interim result (`resultType: "input_required"`, MCP 2026-07-28):
    /// the request is over, the call is not. The client retries it as a
    /// new request, whose answer settles it.
    InputRequired,
    /// A task handle (`{"task":{"taskId":…}}`, the tasks utility of MCP
    /// 2025-11-25, or `resultType: "task"`): the call goes on as a task,
    /// whose final result a `tasks/result` request fetches.
    Task {
        /// The task's id; `""` when the handle names none.
        task: String,
    },
}

impl Answer {
    /// Reads a response's `result` member, given as its raw JSON text
    /// (`None` for a response without one: an error). Its members are read
    /// as a client's JSON parser reads them (the last of a name wins):
    /// `isError` (only `true` is an error), `resultType` (absent or
    /// `complete` is a final result; `input_required` an interim one;
    /// `task`, or a `task` object with a `taskId`, a task handle; any other
    /// type is not final) and `task`.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Answer;
    ///
    /// assert_eq!(Answer::read(Some(r#"{"content":[],"isError":true}"#)), Answer::Result { is_error: true });
    /// assert_eq!(Answer::read(Some(r#"{"content":[{"text":"isError"}]}"#)), Answer::Result { is_error: false });
    /// assert_eq!(Answer::read(Some(r#"{"resultType":"input_required","requestState":"s"}"#)), Answer::InputRequired);
    /// assert_eq!(
    ///     Answer::read(Some(r#"{"task":{"taskId":"t1","status":"working"}}"#)),
    ///     Answer::Task { task: "t1".into() }
    /// );
    /// assert_eq!(Answer::read(None), Answer::Error);
    /// ```
    pub fn read(result: Option<&str>) -> Answer {
        let Some(text) = result else {
            return Answer::Error;
        };
        let read = ResultMembers::read(text);
        match (read.result_type.as_deref(), read.task) {
            (None | Some("complete"), None) => Answer::Result {
                is_error: read.is_error,
            },
            (None | Some("task"), Some(task)) => Answer::Task { task },
            (Some("task"), None) => Answer::Task { task: String::new() },
            // `input_required`, and types this reader does not know: not
            // a final result, so no verdict is drawn from it.
            _ => Answer::InputRequired,
        }
    }

    /// The verdict on a call carrying undeclared keys that got this final
    /// answer; `None` for an interim one.
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Answer::Result { is_error: false } => Some(Verdict::Ignored),
            Answer::Result { is_error: true } | Answer::Error => Some(Verdict::Rejected),
            Answer::InputRequired | Answer::Task { .. } => None,
        }
    }
}

/// The members of a result that say what kind of answer it is; every other
/// value is skipped unbuilt.
#[derive(Default)]
struct ResultMembers {
    is_error: bool,
    result_type: Option<String>,
    task: Option<String>,
}

impl ResultMembers {
    /// Reads them; a result that is not an object has none.
    fn read(result: &str) -> ResultMembers {
        let mut deserializer = serde_json::Deserializer::from_str(result);
        deserializer.deserialize_map(ResultVisitor).unwrap_or_default()
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ResultMembers;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a result object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResultMembers, A::Error> {
        let mut read = ResultMembers::default();
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !matches!(&*name, "isError" | "resultType" | "task") {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let member = map.next_value::<Member>()?;
            match &*name {
                "isError" => read.is_error = matches!(member, Member::True),
                "resultType" => {
                    read.result_type = Some(match member {
                        Member::Text(text) => text,
                        _ => String::new(),
                    })
                }
                _ => {
                    read.task = match member {
                        Member::Object { task_id } => task_id,
                        _ => None,
                    }
                }
            }
        }
        Ok(read)
    }
}

/// A member's value, read for what the kind of an answer depends on: `true`,
/// a string, an object's `taskId`; anything else is skipped unbuilt.
enum Member {
    True,
    Text(String),
    Object { task_id: Option<String> },
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        deserializer.deserialize_any(MemberVisitor { reads_task: true })
    }
}

/// Reads a [`Member`]; an object's `taskId` only when `reads_task` (a
/// result's own members), so that nothing nested is read further.
struct MemberVisitor {
    reads_task: bool,
}

impl<'de> Visitor<'de> for MemberVisitor {
    type Value = Member;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Member, E> {
        Ok(if value { Member::True } else { Member::Other })
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Member, E> {
        Ok(Member::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Member, E> {
        Ok(Member::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Member, E> {
        Ok(Member::Other)
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Member, E> {
        Ok(Member::Text(value.to_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Member, E> {
        Ok(Member::Other)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Member, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Member::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Member, A::Error> {
        let mut task_id = None;
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if self.reads_task && name == "taskId" {
                task_id = map.next_value::<Text>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Member::Object { task_id })
    }
}

/// A string's text, or `None` for any other value (skipped unbuilt).
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        Ok(
            match deserializer.deserialize_any(MemberVisitor { reads_task: false })? {
                Member::Text(text) => Text(Some(text)),
                _ => Text(None),
            },
        )
    }
}

/// One call judged: the JSON line a door logs,
/// `{"verdict":"ignored","tool":"fs_read","id":"4","unknown_keys":["ffset"]}`,
/// with `"unknown_paths":[…]` when the call carried undeclared nested keys
/// and `"missing_required":[…]` when it lacked required keys.
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
    /// Every required key the call lacked, as paths
    /// ([`Warning::missing_required`](super::Warning::missing_required)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_required: Vec<String>,
    /// The W3C trace context the call carried, as
    /// [`Warning::trace`](super::Warning::trace): never serialised.
    #[serde(skip)]
    pub trace: Option<TraceContext>,
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
/// Only a final result settles a call:
///
/// - an interim result ([`Answer::InputRequired`]) ends the request, not
///   the call: the client retries it as a new request (MCP 2026-07-28's
///   multi round-trip requests), a call to the same tool, which takes its
///   place and is settled by its own answer; a call never retried is
///   unanswered at the end;
/// - a task handle ([`Answer::Task`]) leaves the call going on as a task:
///   the answer to a `tasks/result` request for that task
///   ([`Verdicts::task_result`]) settles it, `tasks/cancel`
///   ([`Verdicts::cancel_task`]) leaves it unanswered;
/// - two requests in flight under one id cannot be told apart: every call
///   awaited under an id another request in flight shared is judged
///   [`Verdict::Ambiguous`], whichever answer comes, rather than paired by
///   guess.
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
/// let (tool, key, nested, missing, counts) = verdicts.tally().counts().next().unwrap();
/// assert_eq!((tool, key, nested, missing), ("fs_read", "ffset", false, false));
/// assert_eq!((counts[&Verdict::Ignored], counts[&Verdict::Unanswered]), (1, 1));
/// ```
#[derive(Clone, Debug)]
pub struct Verdicts<K> {
    /// The calls awaiting their answer under each id, oldest first.
    awaited: HashMap<K, VecDeque<Awaited>>,
    /// How many calls are awaited, under every id.
    count: usize,
    /// Every call awaited, by id and sequence number, in the order calls
    /// came, oldest first; a call answered already is skipped when met.
    order: VecDeque<(K, u64)>,
    /// The sequence number of the next call.
    next: u64,
    cap: usize,
    /// Calls answered by an interim result, oldest first, awaiting the
    /// retry that takes their place.
    interim: VecDeque<Awaited>,
    /// Calls gone on as tasks, oldest first, by task id.
    tasks: VecDeque<(String, Awaited)>,
    /// The `tasks/result` requests awaiting their answer: the task each
    /// asks for.
    task_results: HashMap<K, String>,
    tally: VerdictTally,
}

#[derive(Clone, Debug)]
struct Awaited {
    /// Its place in the order calls came.
    sequence: u64,
    tool: String,
    id: String,
    unknown_keys: Vec<String>,
    unknown_paths: Vec<String>,
    missing_required: Vec<String>,
    /// Another request in flight shared its id.
    ambiguous: bool,
    /// The trace context the call carried, for its verdict.
    trace: Option<TraceContext>,
}

/// The verdicts counted per pair: per (tool, key), per (tool, path), and
/// per (tool, required key lacked), as [`Findings`](super::findings::Findings)
/// lists the pairs. What a session's [`Summary`](super::summary::Summary)
/// shows beside each finding, whatever the door compares ids by.
///
/// At most [`MAX_SAID_PAIRS`](crate::limits::MAX_SAID_PAIRS) pairs are
/// counted; a new pair's verdict past that is said, not counted.
#[derive(Clone, Debug, Default)]
pub struct VerdictTally {
    counted: BTreeMap<String, ToolVerdicts>,
    /// How many distinct pairs `counted` holds.
    pairs: usize,
}

#[derive(Clone, Debug, Default)]
struct ToolVerdicts {
    keys: BTreeMap<String, VerdictCounts>,
    paths: BTreeMap<String, VerdictCounts>,
    /// The required keys the calls lacked, as paths.
    missing: BTreeMap<String, VerdictCounts>,
}

impl<K: Eq + Hash + Clone> Default for Verdicts<K> {
    fn default() -> Self {
        Verdicts::with_cap(MAX_AWAITED)
    }
}

/// A verdict shows the call's id as the call gives it ([`Call::id`]): the
/// key pairs it, and may be a door's own (a gateway log's per-server
/// sequence); the session gives the id as it was written, so `1e0` stays
/// `1e0`.
impl<K: Eq + Hash + Clone> Verdicts<K> {
    /// Pairing that awaits at most `cap` calls at once (at least one).
    pub fn with_cap(cap: usize) -> Verdicts<K> {
        Verdicts {
            awaited: HashMap::new(),
            count: 0,
            order: VecDeque::new(),
            next: 0,
            cap: cap.max(1),
            interim: VecDeque::new(),
            tasks: VecDeque::new(),
            task_results: HashMap::new(),
            tally: VerdictTally::default(),
        }
    }

    /// An audited call: awaited when it carried undeclared keys or paths,
    /// or lacked required keys ([`Outcome::is_flagged`]).
    /// A call under an id already awaited makes both ambiguous. A call to
    /// a tool whose call was answered by an interim result is its retry,
    /// and takes its place. Returns the calls judged now: the oldest
    /// awaited, judged [`Verdict::Unanswered`], should the cap be exceeded.
    pub fn call(&mut self, id: K, call: &Call<'_>, outcome: &Outcome) -> Vec<Judged> {
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            missing_required,
            ..
        } = outcome
        else {
            return Vec::new();
        };
        if !outcome.is_flagged() {
            return Vec::new();
        }
        if let Some(retried) = self.interim.iter().position(|interim| interim.tool == call.tool) {
            self.interim.remove(retried);
        }
        let mut judged = Vec::new();
        while self.count >= self.cap {
            let Some((oldest, sequence)) = self.order.pop_front() else {
                break;
            };
            judged.extend(self.judge_call(&oldest, sequence, Verdict::Unanswered));
        }
        let ambiguous = self.mark_ambiguous(&id);
        let sequence = self.next;
        self.next += 1;
        let awaited = Awaited {
            sequence,
            tool: call.tool.to_owned(),
            id: id_text(call.id),
            unknown_keys: undeclared.clone(),
            unknown_paths: undeclared_paths.clone(),
            missing_required: missing_required.clone(),
            ambiguous,
            trace: None,
        };
        self.awaited.entry(id.clone()).or_default().push_back(awaited);
        self.count += 1;
        self.order.push_back((id, sequence));
        self.compact();
        judged
    }

    /// The call [`Verdicts::call`] just awaited under `id` carried `trace`:
    /// its verdict will carry it too. Kept with the awaited call, so it
    /// goes wherever the call goes (judged, replaced by its retry, dropped
    /// at a bound) and is never given to another call under the same id.
    /// Nothing, unless the call awaited last is that one.
    pub fn trace_newest(&mut self, id: &K, trace: TraceContext) {
        let newest = self.next.checked_sub(1);
        if let Some(awaited) = self.awaited.get_mut(id).and_then(VecDeque::back_mut)
            && Some(awaited.sequence) == newest
        {
            awaited.trace = Some(trace);
        }
    }

    /// Another request in flight shares `id` (a call that carried nothing
    /// undeclared, say): the calls awaited under it are ambiguous. Whether
    /// any was awaited.
    pub fn mark_ambiguous(&mut self, id: &K) -> bool {
        let Some(calls) = self.awaited.get_mut(id) else {
            return false;
        };
        for call in calls.iter_mut() {
            call.ambiguous = true;
        }
        true
    }

    /// Whether a response with this id is awaited: a call's, or a
    /// `tasks/result` request's.
    pub fn awaits(&self, id: &K) -> bool {
        self.awaited.contains_key(id) || self.task_results.contains_key(id)
    }

    /// How many calls await their answer.
    pub fn awaited(&self) -> usize {
        self.count
    }

    /// A response: the verdict on the call it answers (the oldest awaited
    /// under its id, or the task a `tasks/result` request asked for), if
    /// one was awaited and the answer is final.
    pub fn answer(&mut self, id: &K, answer: Answer) -> Option<Judged> {
        if let Some(task) = self.task_results.remove(id) {
            let verdict = answer.verdict()?;
            let at = self.tasks.iter().position(|(awaiting, _)| *awaiting == task)?;
            let (_, awaited) = self.tasks.remove(at)?;
            return Some(self.judged(awaited, verdict));
        }
        match answer {
            Answer::InputRequired => {
                let awaited = self.take_oldest(id)?;
                push_bounded(&mut self.interim, awaited, self.cap);
                None
            }
            Answer::Task { task } => {
                let awaited = self.take_oldest(id)?;
                push_bounded(&mut self.tasks, (task, awaited), self.cap);
                None
            }
            final_answer => self.judge(id, final_answer.verdict()?),
        }
    }

    /// A `tasks/result` request for `task`, under `id`: its answer settles
    /// the task's call. Whether that call is awaited.
    pub fn task_result(&mut self, id: K, task: &str) -> bool {
        if !self.tasks.iter().any(|(awaiting, _)| awaiting == task) {
            return false;
        }
        if self.task_results.len() >= self.cap {
            self.task_results.clear();
        }
        self.task_results.insert(id, task.to_owned());
        true
    }

    /// A `tasks/cancel` request: the task's call is unanswered.
    pub fn cancel_task(&mut self, task: &str) -> Option<Judged> {
        let at = self.tasks.iter().position(|(awaiting, _)| awaiting == task)?;
        let (_, awaited) = self.tasks.remove(at)?;
        Some(self.judged(awaited, Verdict::Unanswered))
    }

    /// The client cancelled a request: the oldest call awaited under its id
    /// is unanswered.
    pub fn cancel(&mut self, id: &K) -> Option<Judged> {
        self.judge(id, Verdict::Unanswered)
    }

    /// The session ended: every call still awaited, gone on as a task or
    /// awaiting its retry is unanswered, oldest first.
    pub fn finish(&mut self) -> Vec<Judged> {
        let order = std::mem::take(&mut self.order);
        let mut judged: Vec<Judged> = order
            .iter()
            .filter_map(|(id, sequence)| self.judge_call(id, *sequence, Verdict::Unanswered))
            .collect();
        let interim = std::mem::take(&mut self.interim);
        let tasks = std::mem::take(&mut self.tasks)
            .into_iter()
            .map(|(_, awaited)| awaited);
        let mut left: Vec<Awaited> = interim.into_iter().chain(tasks).collect();
        left.sort_by_key(|awaited| awaited.sequence);
        judged.extend(
            left.into_iter()
                .map(|awaited| self.judged(awaited, Verdict::Unanswered)),
        );
        self.task_results.clear();
        judged
    }

    /// The verdicts counted so far, per pair.
    pub fn tally(&self) -> &VerdictTally {
        &self.tally
    }

    /// Judges the oldest call awaited under `id`.
    fn judge(&mut self, id: &K, verdict: Verdict) -> Option<Judged> {
        let sequence = self.awaited.get(id)?.front()?.sequence;
        self.judge_call(id, sequence, verdict)
    }

    /// Judges the call `sequence` under `id`, if it is still awaited: only
    /// the oldest under an id can be (calls are judged oldest first).
    fn judge_call(&mut self, id: &K, sequence: u64, verdict: Verdict) -> Option<Judged> {
        if self.awaited.get(id)?.front()?.sequence != sequence {
            return None;
        }
        let awaited = self.take_oldest(id)?;
        Some(self.judged(awaited, verdict))
    }

    /// Takes the oldest call awaited under `id` out of the awaited.
    fn take_oldest(&mut self, id: &K) -> Option<Awaited> {
        let calls = self.awaited.get_mut(id)?;
        let awaited = calls.pop_front()?;
        if calls.is_empty() {
            self.awaited.remove(id);
        }
        self.count -= 1;
        Some(awaited)
    }

    /// The verdict on `awaited`, counted per pair (an ambiguous call's is
    /// [`Verdict::Ambiguous`], whatever the answer).
    fn judged(&mut self, awaited: Awaited, verdict: Verdict) -> Judged {
        let verdict = if awaited.ambiguous {
            Verdict::Ambiguous
        } else {
            verdict
        };
        self.tally.count(&awaited, verdict);
        Judged {
            verdict,
            tool: awaited.tool,
            id: awaited.id,
            unknown_keys: awaited.unknown_keys,
            unknown_paths: awaited.unknown_paths,
            missing_required: awaited.missing_required,
            trace: awaited.trace,
        }
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

impl VerdictTally {
    /// Every pair judged, sorted by tool, then keys, paths and the required
    /// keys lacked, as [`Findings`](super::findings::Findings) lists them:
    /// `(tool, key or path, nested, missing, counts)`.
    pub fn counts(&self) -> impl Iterator<Item = (&str, &str, bool, bool, &VerdictCounts)> {
        self.counted.iter().flat_map(|(tool, found)| {
            let keys = found.keys.iter().map(|(key, counts)| (key, false, false, counts));
            let paths = found
                .paths
                .iter()
                .map(|(path, counts)| (path, true, false, counts));
            let missing = found
                .missing
                .iter()
                .map(|(path, counts)| (path, false, true, counts));
            keys.chain(paths)
                .chain(missing)
                .map(move |(key, nested, missing, counts)| {
                    (tool.as_str(), key.as_str(), nested, missing, counts)
                })
        })
    }

    /// The counts of one pair, if any call carrying it (or, `missing`,
    /// lacking it) was judged.
    pub fn counts_of(&self, tool: &str, key: &str, nested: bool, missing: bool) -> Option<&VerdictCounts> {
        let found = self.counted.get(tool)?;
        match (nested, missing) {
            (_, true) => found.missing.get(key),
            (true, false) => found.paths.get(key),
            (false, false) => found.keys.get(key),
        }
    }

    /// The counts of the pair `finding` names, if any call was judged.
    pub fn of_finding(&self, finding: &Finding<'_>) -> Option<&VerdictCounts> {
        self.counts_of(finding.tool, finding.key, finding.nested, finding.missing)
    }

    /// Counts `verdict` on each pair `awaited` carried (or lacked).
    fn count(&mut self, awaited: &Awaited, verdict: Verdict) {
        let full = self.pairs >= crate::limits::MAX_SAID_PAIRS;
        let counted = self.counted.entry(awaited.tool.clone()).or_default();
        for (pairs, items) in [
            (&mut counted.keys, &awaited.unknown_keys),
            (&mut counted.paths, &awaited.unknown_paths),
            (&mut counted.missing, &awaited.missing_required),
        ] {
            for item in items {
                match pairs.get_mut(item.as_str()) {
                    Some(counts) => *counts.entry(verdict).or_default() += 1,
                    // Past the bound, a new pair's verdict is said, not counted.
                    None if full => {}
                    None => {
                        self.pairs += 1;
                        pairs.insert(item.clone(), VerdictCounts::from([(verdict, 1)]));
                    }
                }
            }
        }
    }
}

/// Keeps `item`, dropping the oldest once `cap` are kept: a call dropped
/// so goes unjudged, as one no session end would judge either.
fn push_bounded<T>(kept: &mut VecDeque<T>, item: T, cap: usize) {
    if kept.len() >= cap {
        kept.pop_front();
    }
    kept.push_back(item);
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
                .tally()
                .counts_of("t", key, nested, false)
                .map(|counts| counts.iter().map(|(v, n)| (*v, *n)).collect::<Vec<_>>())
        };
        assert_eq!(
            ignored("b", false),
            Some(vec![(Verdict::Ignored, 1), (Verdict::Unanswered, 1)])
        );
        assert_eq!(ignored("o.y", true), Some(vec![(Verdict::Rejected, 1)]));
        assert_eq!(ignored("o.y", false), None);
        assert_eq!(verdicts.tally().counts().count(), 2);
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
    fn calls_that_share_an_id_are_ambiguous_whatever_the_answers() {
        let mut verdicts = Verdicts::with_cap(3);
        assert!(
            flagged(&mut verdicts, 1, r#"{"b":1}"#).is_empty(),
            "nothing judged yet"
        );
        assert!(flagged(&mut verdicts, 1, r#"{"c":1}"#).is_empty());
        assert_eq!(verdicts.awaited(), 2);
        let first = verdicts.answer(&1, Answer::Error).unwrap();
        assert_eq!(keys(&[first]), [one("1", "b", Verdict::Ambiguous)]);
        let second = verdicts.answer(&1, Answer::read(Some("{}"))).unwrap();
        assert_eq!(keys(&[second]), [one("1", "c", Verdict::Ambiguous)]);
        assert!(!verdicts.awaits(&1));
        assert_eq!(
            verdicts.tally().counts_of("t", "b", false, false).unwrap()[&Verdict::Ambiguous],
            1
        );

        // A request that carried nothing undeclared under an awaited id
        // makes it ambiguous too; an id no call awaits is left alone.
        flagged(&mut verdicts, 4, r#"{"b":1}"#);
        assert!(verdicts.mark_ambiguous(&4) && !verdicts.mark_ambiguous(&9));
        assert_eq!(verdicts.cancel(&4).unwrap().verdict, Verdict::Ambiguous);

        // Past the cap, the oldest call goes, not the newest under its id.
        flagged(&mut verdicts, 5, r#"{"b":1}"#);
        flagged(&mut verdicts, 6, r#"{"c":1}"#);
        flagged(&mut verdicts, 5, r#"{"d":1}"#);
        let judged = flagged(&mut verdicts, 7, r#"{"e":1}"#);
        assert_eq!(keys(&judged), [one("5", "b", Verdict::Ambiguous)]);
        let answered = verdicts.answer(&5, Answer::Error).unwrap();
        assert_eq!(keys(&[answered]), [one("5", "d", Verdict::Ambiguous)]);
        assert_eq!(
            keys(&verdicts.finish()),
            [
                one("6", "c", Verdict::Unanswered),
                one("7", "e", Verdict::Unanswered)
            ]
        );
        assert_eq!(verdicts.awaited(), 0);
    }

    #[test]
    fn an_interim_answer_waits_for_the_retry() {
        let mut verdicts = Verdicts::default();
        flagged(&mut verdicts, 1, r#"{"b":1}"#);
        let interim = Answer::read(Some(r#"{"resultType":"input_required","inputRequests":{}}"#));
        assert_eq!(verdicts.answer(&1, interim), None);
        assert_eq!(verdicts.awaited(), 0);
        // The retry, a new request to the same tool, takes its place and
        // its answer gives the one verdict.
        flagged(&mut verdicts, 2, r#"{"b":1}"#);
        let judged = verdicts.answer(&2, Answer::read(Some("{}"))).unwrap();
        assert_eq!(keys(&[judged]), [one("2", "b", Verdict::Ignored)]);
        assert!(verdicts.finish().is_empty());
        assert_eq!(
            verdicts.tally().counts_of("t", "b", false, false).unwrap()[&Verdict::Ignored],
            1
        );

        // A call answered by an interim result and never retried is
        // unanswered at the end.
        flagged(&mut verdicts, 3, r#"{"c":1}"#);
        verdicts.answer(&3, Answer::InputRequired);
        assert_eq!(keys(&verdicts.finish()), [one("3", "c", Verdict::Unanswered)]);
    }

    #[test]
    fn a_task_is_judged_by_its_result() {
        let mut verdicts = Verdicts::default();
        flagged(&mut verdicts, 1, r#"{"b":1}"#);
        let handle = Answer::read(Some(r#"{"task":{"taskId":"t-1","status":"working"}}"#));
        assert_eq!(verdicts.answer(&1, handle), None);
        assert!(!verdicts.task_result(7, "t-unknown"));
        assert!(verdicts.task_result(8, "t-1") && verdicts.awaits(&8));
        let judged = verdicts
            .answer(&8, Answer::read(Some(r#"{"isError":true}"#)))
            .unwrap();
        assert_eq!(keys(&[judged]), [one("1", "b", Verdict::Rejected)]);

        flagged(&mut verdicts, 2, r#"{"c":1}"#);
        verdicts.answer(&2, Answer::Task { task: "t-2".into() });
        assert_eq!(verdicts.cancel_task("t-2").unwrap().verdict, Verdict::Unanswered);
        flagged(&mut verdicts, 3, r#"{"d":1}"#);
        verdicts.answer(&3, Answer::Task { task: "t-3".into() });
        assert_eq!(keys(&verdicts.finish()), [one("3", "d", Verdict::Unanswered)]);
    }
}
