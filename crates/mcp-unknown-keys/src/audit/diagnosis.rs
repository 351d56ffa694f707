//! What probably went wrong: a diagnosis for each undeclared key.
//!
//! "Undeclared argument `ffset`" tells a user something is off; "`ffset` is
//! `offset` cut short, `offset` was not sent, the server will use its
//! default, 0" tells them what the server is about to do instead of what the
//! model meant. Each undeclared key of a warning gets one [`Hint`], whose
//! [`Cause`] is the first of these that fits:
//!
//! 1. [`Cause::Truncated`]: the key, of three characters or more, is a strict
//!    prefix or suffix of a declared key the call did not carry (`ffset` for
//!    `offset`);
//! 2. [`Cause::NearMiss`]: the key is close to a declared key — a case or
//!    separator variant (`tokenBudget`, `file-path`), a singular or plural
//!    (`filter` for `filters`), or a small edit distance for its length;
//! 3. [`Cause::Fragment`]: the key is not identifier-like (spaces,
//!    punctuation, more than five words) or, being three characters or more,
//!    occurs inside a string value of another argument of the same call — the
//!    mark of a truncated generation closed into valid JSON, as in
//!    `{"prompt":"Investigate the","nvestigate":…}`;
//! 4. [`Cause::OtherTool`]: another tool of the catalogue declares the key;
//! 5. [`Cause::Injected`]: the key has now been seen undeclared on calls to
//!    [`INJECTED_AFTER_TOOLS`] or more tools — a host or middleware adds it;
//! 6. [`Cause::Invented`]: none of the above.
//!
//! The diagnosis runs only for a call that raises a warning: a call whose
//! keys are all declared costs nothing more. It reads the call's values (for
//! fragments) but never puts one in a hint: a hint names keys, declared keys,
//! tools and schema defaults only. Its work is bounded whatever the call
//! ([`MAX_COMPARED_KEYS`], [`FRAGMENT_SEARCH_BUDGET`]).
//!
//! ```
//! use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Cause};
//! use serde_json::json;
//!
//! let auditor = Auditor::new().with_sink(());
//! auditor.replace_catalog(Catalog::from_mcp_tools(&[json!({
//!     "name": "fs_read",
//!     "inputSchema": {"properties": {"path": {}, "offset": {"default": 0}}},
//! })]));
//! let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":12,"the rest":"…"}"#));
//! let warning = auditor.audit(&auditor.catalog(), call).warning().unwrap();
//!
//! assert_eq!(warning.hint("ffset").unwrap().cause, Cause::Truncated);
//! assert_eq!(warning.hint("the rest").unwrap().cause, Cause::Fragment);
//! assert_eq!(warning.missing_keys[0].default, Some(json!(0)));
//! assert!(warning.to_string().ends_with(
//!     "— ffset → offset? (truncated), the rest (fragment); offset was not sent: the server will use its default, 0"
//! ));
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Catalog, Declared, Printable};

/// Why an undeclared key probably reached the tool.
///
/// Its serde name and its `Display` are the same stable snake_case word
/// (`truncated`, `near_miss`, …), so a text report and a JSON line say the
/// same thing.
///
/// ```
/// use mcp_unknown_keys::audit::Cause;
///
/// assert_eq!(Cause::NearMiss.to_string(), "near_miss");
/// assert_eq!(serde_json::to_string(&Cause::OtherTool).unwrap(), r#""other_tool""#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A strict prefix or suffix of a declared key that the call did not
    /// carry: the model's key lost its beginning or its end.
    Truncated,
    /// Close to a declared key: a typo, a case or separator variant, a
    /// singular for a plural.
    NearMiss,
    /// Not a key at all but a piece of text: not identifier-like, or a piece
    /// of another argument's value.
    Fragment,
    /// Declared by another tool of the catalogue: the model mixed two tools.
    OtherTool,
    /// Seen undeclared on calls to several tools: added by the host or a
    /// middleware rather than the model.
    Injected,
    /// None of the above: the model made the key up.
    Invented,
}

impl Cause {
    /// Every cause, in the order they are checked.
    pub const ALL: [Cause; 6] = [
        Cause::Truncated,
        Cause::NearMiss,
        Cause::Fragment,
        Cause::OtherTool,
        Cause::Injected,
        Cause::Invented,
    ];

    /// The stable snake_case name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Truncated => "truncated",
            Cause::NearMiss => "near_miss",
            Cause::Fragment => "fragment",
            Cause::OtherTool => "other_tool",
            Cause::Injected => "injected",
            Cause::Invented => "invented",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The diagnosis of one undeclared key.
///
/// Serialised, the optional fields appear only when they say something:
///
/// ```json
/// {"key":"ffset","cause":"truncated","suggestion":"offset"}
/// {"key":"pattern","cause":"other_tool","declared_by":"fs_search"}
/// {"key":"toolCallId","cause":"injected","seen_on_tools":3}
/// ```
///
/// Its `Display` is the brief form of the one-line note, with model-written
/// text escaped and cut: `ffset → offset? (truncated)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Hint {
    /// The undeclared key.
    pub key: String,
    /// Why it probably reached the tool.
    pub cause: Cause,
    /// For [`Cause::Truncated`] and [`Cause::NearMiss`]: the declared key
    /// the model probably meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// For [`Cause::OtherTool`]: the tool that declares the key (the first
    /// by name when several do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_by: Option<String>,
    /// For [`Cause::Injected`]: on how many tools' calls the key has been
    /// seen undeclared so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_on_tools: Option<usize>,
}

impl Hint {
    /// A hint with no suggestion, tool or count.
    pub fn new(key: impl Into<String>, cause: Cause) -> Hint {
        Hint {
            key: key.into(),
            cause,
            suggestion: None,
            declared_by: None,
            seen_on_tools: None,
        }
    }

    /// The same hint suggesting the declared key `suggestion`.
    pub fn with_suggestion(self, suggestion: impl Into<String>) -> Hint {
        Hint {
            suggestion: Some(suggestion.into()),
            ..self
        }
    }

    /// The same hint naming the tool that declares the key.
    pub fn with_declared_by(self, tool: impl Into<String>) -> Hint {
        Hint {
            declared_by: Some(tool.into()),
            ..self
        }
    }

    /// The same hint with the number of tools the key was seen on.
    pub fn with_seen_on_tools(self, tools: usize) -> Hint {
        Hint {
            seen_on_tools: Some(tools),
            ..self
        }
    }
}

/// `ffset → offset? (truncated)`, `pattern (other_tool: declared by fs_search)`,
/// `toolCallId (injected: seen on 3 tools; --allow toolCallId silences it)`.
impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = Printable(&self.key);
        if let Some(suggestion) = &self.suggestion {
            return write!(f, "{key} → {}? ({})", Printable(suggestion), self.cause);
        }
        write!(f, "{key} ({}", self.cause)?;
        if let Some(tool) = &self.declared_by {
            write!(f, ": declared by {}", Printable(tool))?;
        }
        if self.cause == Cause::Injected {
            if let Some(tools) = self.seen_on_tools {
                write!(f, ": seen on {tools} tools")?;
            }
            write!(f, "; --allow {key} silences it")?;
        }
        f.write_str(")")
    }
}

/// A declared key that a [`Cause::Truncated`] or [`Cause::NearMiss`] hint
/// points to and that the call did not carry: the part of the job the server
/// is about to do differently from what the model meant.
///
/// ```json
/// {"key":"offset","default":0}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MissingKey {
    /// The declared key that was not sent.
    pub key: String,
    /// The `default` its schema gives, if it gives one (a schema's own
    /// value, never the call's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub default: Option<Value>,
}

impl MissingKey {
    /// A missing key with the default its schema gives, if any.
    pub fn new(key: impl Into<String>, default: Option<Value>) -> MissingKey {
        MissingKey {
            key: key.into(),
            default,
        }
    }
}

/// A `default` member that is present is `Some`, even when it is `null`.
fn present_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// `offset was not sent: the server will use its default, 0`, or
/// `limit was not sent` when the schema gives no default.
impl fmt::Display for MissingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} was not sent", Printable(&self.key))?;
        if let Some(default) = &self.default {
            write!(
                f,
                ": the server will use its default, {}",
                Printable(&default.to_string())
            )?;
        }
        Ok(())
    }
}

/// A key seen undeclared on calls to this many tools or more is
/// [`Cause::Injected`].
pub const INJECTED_AFTER_TOOLS: usize = 3;

/// The most bytes of string values searched for fragments in one warning:
/// a call with thousands of new keys and megabytes of text costs a bounded
/// amount once, and the keys past the budget are judged without that search.
pub const FRAGMENT_SEARCH_BUDGET: usize = 16 << 20;

/// A key with more words than this is a piece of text, not a parameter name.
const MAX_KEY_WORDS: usize = 5;

/// A key shorter than this (in characters) is too common to count as found
/// inside a value, or as a truncated declared key.
const MIN_PIECE_CHARS: usize = 3;

/// Keys longer than this are never compared by edit distance: the
/// comparison stays small and bounded.
const MAX_EDIT_CHARS: usize = 64;

/// The most unknown keys of one warning compared with the declared keys and
/// searched for in values; the keys past them get the cheaper checks only.
/// A call with thousands of new keys is diagnosed in bounded time.
pub const MAX_COMPARED_KEYS: usize = 256;

/// With more unknown keys than this, which other tool declares each is
/// found in one pass over the catalogue instead of one per key.
const INDEX_OTHER_TOOLS_AFTER: usize = 8;

/// What the diagnosis of one warning reads.
pub(crate) struct Diagnosed<'a> {
    /// The catalogue snapshot the call was audited against.
    pub catalog: &'a Catalog,
    /// The tool called.
    pub tool: &'a str,
    /// Its declaration.
    pub declared: &'a Declared,
    /// The call's arguments, re-read as an object (`None` if they could not
    /// be: then every declared key counts as not sent and no value is read).
    pub arguments: Option<&'a Map<String, Value>>,
}

impl<'a> Diagnosed<'a> {
    /// One hint per key of `unknown_keys` (each paired with the number of
    /// tools it has now been seen undeclared on), and the declared keys they
    /// point to that the call did not carry.
    pub fn diagnose(&self, unknown_keys: &[(String, usize)]) -> (Vec<Hint>, Vec<MissingKey>) {
        let mut work = Work {
            // Normalised once per warning, not once per unknown key.
            declared: self.declared.keys().map(|key| (key, normalized(key))).collect(),
            search_budget: FRAGMENT_SEARCH_BUDGET,
            other_tools: (unknown_keys.len() > INDEX_OTHER_TOOLS_AFTER)
                .then(|| self.other_tools_of(unknown_keys)),
        };
        let hints: Vec<Hint> = unknown_keys
            .iter()
            .enumerate()
            .map(|(at, (key, seen_on_tools))| {
                let compared = at < MAX_COMPARED_KEYS;
                self.hint(key, *seen_on_tools, compared, &mut work)
            })
            .collect();
        let mut missing: Vec<MissingKey> = hints
            .iter()
            .filter(|hint| matches!(hint.cause, Cause::Truncated | Cause::NearMiss))
            .filter_map(|hint| hint.suggestion.as_deref())
            .filter(|suggestion| !self.carries(suggestion))
            .map(|key| MissingKey::new(key, self.declared.default_of(key).cloned()))
            .collect();
        missing.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        missing.dedup_by(|a, b| a.key == b.key);
        (hints, missing)
    }

    /// The hint about `key`. Past [`MAX_COMPARED_KEYS`] keys (`compared`
    /// false), a key is no longer compared with the declared ones nor
    /// searched for in values: the work a call can cause stays bounded.
    fn hint(&self, key: &str, seen_on_tools: usize, compared: bool, work: &mut Work<'_>) -> Hint {
        if compared {
            if let Some(declared) = self.truncation_of(key) {
                return Hint::new(key, Cause::Truncated).with_suggestion(declared);
            }
            if let Some(declared) = near_miss_of(key, &work.declared, |key| self.carries(key)) {
                return Hint::new(key, Cause::NearMiss).with_suggestion(declared);
            }
        }
        if !is_identifier_like(key)
            || (compared && self.occurs_in_another_value(key, &mut work.search_budget))
        {
            return Hint::new(key, Cause::Fragment);
        }
        let other_tool = match &work.other_tools {
            Some(index) => index.get(key).copied(),
            None => self.other_tool_declaring(key),
        };
        if let Some(tool) = other_tool {
            return Hint::new(key, Cause::OtherTool).with_declared_by(tool);
        }
        if seen_on_tools >= INJECTED_AFTER_TOOLS {
            return Hint::new(key, Cause::Injected).with_seen_on_tools(seen_on_tools);
        }
        Hint::new(key, Cause::Invented)
    }

    /// Whether the call carried `key`.
    fn carries(&self, key: &str) -> bool {
        self.arguments
            .is_some_and(|arguments| arguments.contains_key(key))
    }

    /// The declared key, not carried, that `key` is a strict prefix or
    /// suffix of; the closest in length when several are. A singular of a
    /// declared plural (`filter`, `filters`) is a near miss instead.
    fn truncation_of(&self, key: &str) -> Option<&str> {
        if key.chars().count() < MIN_PIECE_CHARS {
            return None;
        }
        self.declared
            .keys()
            .filter(|declared| declared.len() > key.len())
            .filter(|declared| declared.starts_with(key) || declared.ends_with(key))
            .filter(|declared| !is_plural_of(declared, key))
            .filter(|declared| !self.carries(declared))
            .min_by_key(|declared| declared.len())
    }

    /// Whether `key` occurs inside a string value of another argument.
    fn occurs_in_another_value(&self, key: &str, budget: &mut usize) -> bool {
        let Some(arguments) = self.arguments else {
            return false;
        };
        if key.chars().count() < MIN_PIECE_CHARS {
            return false;
        }
        arguments
            .iter()
            .filter(|(name, _)| name.as_str() != key)
            .any(|(_, value)| contains_text(value, key, budget))
    }

    /// The first tool, by name, other than the one called that declares
    /// `key`.
    fn other_tool_declaring(&self, key: &str) -> Option<&'a str> {
        self.catalog
            .iter()
            .filter(|(tool, declared)| *tool != self.tool && declared.declares(key))
            .map(|(tool, _)| tool)
            .min()
    }

    /// [`Diagnosed::other_tool_declaring`] for many keys at once, in one pass
    /// over the catalogue rather than one per key.
    fn other_tools_of(&self, unknown_keys: &[(String, usize)]) -> HashMap<&'a str, &'a str> {
        let wanted: HashSet<&str> = unknown_keys.iter().map(|(key, _)| key.as_str()).collect();
        let mut found: HashMap<&'a str, &'a str> = HashMap::new();
        for (tool, declared) in self.catalog.iter().filter(|(tool, _)| *tool != self.tool) {
            for key in declared.keys().filter(|key| wanted.contains(key)) {
                let first = found.entry(key).or_insert(tool);
                *first = (*first).min(tool);
            }
        }
        found
    }
}

/// What one diagnosis keeps from key to key.
struct Work<'a> {
    /// Each declared key with its normalised form.
    declared: Vec<(&'a str, String)>,
    /// What is left of [`FRAGMENT_SEARCH_BUDGET`].
    search_budget: usize,
    /// Which other tool declares each unknown key, when there are enough
    /// keys to make one pass over the catalogue cheaper than one per key.
    other_tools: Option<HashMap<&'a str, &'a str>>,
}

/// The declared key `key` is closest to, if close enough: keys the call
/// carried (`carried`) only when no key the call lacks is as close.
fn near_miss_of<'d>(
    key: &str,
    declared: &[(&'d str, String)],
    carried: impl Fn(&str) -> bool,
) -> Option<&'d str> {
    let key = normalized(key);
    declared
        .iter()
        .filter_map(|(declared, normalized)| Some((closeness(&key, normalized)?, *declared)))
        .min_by_key(|&(distance, declared)| (carried(declared), distance))
        .map(|(_, declared)| declared)
}

/// Whether some string inside `value` contains `piece`, within `budget`
/// bytes of text searched. Walks with a stack of its own, not by recursion:
/// an object handed in already parsed may be nested arbitrarily deep.
fn contains_text(value: &Value, piece: &str, budget: &mut usize) -> bool {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(text) => {
                if *budget < text.len() {
                    *budget = 0;
                    return false;
                }
                *budget -= text.len();
                if text.contains(piece) {
                    return true;
                }
            }
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.values()),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    false
}

/// Whether `key` reads like a parameter name: letters, digits and the
/// separators `_`, `-`, `.` (a leading `$` or `@` allowed, as in `$schema`),
/// starting with a letter or `_`, of at most [`MAX_KEY_WORDS`] words.
fn is_identifier_like(key: &str) -> bool {
    let body = key.strip_prefix(['$', '@']).unwrap_or(key);
    let Some(first) = body.chars().next() else {
        return false;
    };
    (first.is_alphabetic() || first == '_')
        && body
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && word_count(body) <= MAX_KEY_WORDS
}

/// Words of an identifier: split at separators and at lower-to-upper case
/// changes (`tokenBudget` and `token_budget` both have two).
fn word_count(identifier: &str) -> usize {
    let mut words = 0;
    let mut in_word = false;
    let mut previous_lower = false;
    for c in identifier.chars() {
        if !c.is_alphanumeric() {
            in_word = false;
            previous_lower = false;
            continue;
        }
        if !in_word || (previous_lower && c.is_uppercase()) {
            words += 1;
        }
        in_word = true;
        previous_lower = c.is_lowercase() || c.is_numeric();
    }
    words
}

/// The key without case or separators: `tokenBudget`, `token_budget` and
/// `Token-Budget` all read `tokenbudget`.
fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `plural` is `singular` with a plural ending (`s`, `es`, or `y`
/// become `ies`).
fn is_plural_of(plural: &str, singular: &str) -> bool {
    match plural.strip_prefix(singular) {
        Some(ending) => ending == "s" || ending == "es",
        None => singular
            .strip_suffix('y')
            .and_then(|stem| plural.strip_prefix(stem))
            .is_some_and(|ending| ending == "ies"),
    }
}

/// How close two normalised keys are, when close enough to be a near miss:
/// 0 for the same word (case, separators, singular or plural aside), else
/// their edit distance when it is small for their length.
fn closeness(key: &str, declared: &str) -> Option<usize> {
    if key == declared || is_plural_of(key, declared) || is_plural_of(declared, key) {
        return Some(0);
    }
    let longest = key.chars().count().max(declared.chars().count());
    let allowed = match longest {
        0..=2 => return None,
        3..=5 => 1,
        6..=9 => 2,
        _ => 3,
    };
    if longest > MAX_EDIT_CHARS {
        return None;
    }
    edit_distance(key, declared, allowed)
}

/// The optimal-string-alignment distance between `a` and `b` (insertions,
/// deletions, substitutions and swaps of neighbours), when it is at most
/// `limit`. Both must be at most [`MAX_EDIT_CHARS`] characters long (callers
/// check), so the table lives on the stack.
fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        return osa_distance(a.as_bytes(), b.as_bytes(), limit);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    osa_distance(&a, &b, limit)
}

fn osa_distance<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit || b.len() > MAX_EDIT_CHARS {
        return None;
    }
    // Three rows, used in turn: the one before the previous is needed for
    // swaps. Row `i` of the table is `rows[i % 3]`.
    const WIDTH: usize = MAX_EDIT_CHARS + 1;
    let mut rows = [[0usize; WIDTH]; 3];
    for (j, cell) in rows[0].iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (row, previous, before) = (i % 3, (i - 1) % 3, (i + 1) % 3);
        rows[row][0] = i;
        let mut row_best = i;
        for j in 1..=b.len() {
            let substitution = rows[previous][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = substitution.min(rows[previous][j] + 1).min(rows[row][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[before][j - 2] + 1);
            }
            rows[row][j] = best;
            row_best = row_best.min(best);
        }
        // Distances never shrink down the table: stop once a row is past
        // the limit.
        if row_best > limit {
            return None;
        }
    }
    let distance = rows[a.len() % 3][b.len()];
    (distance <= limit).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        Catalog::from_mcp_tools(&[
            json!({"name": "fs_read", "inputSchema": {"properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "default": 0},
                "limit": {"type": "integer"},
            }}}),
            json!({"name": "fs_search", "inputSchema": {"properties": {
                "pattern": {}, "filters": {}, "token_budget": {"default": 4000}, "file_path": {},
            }}}),
            json!({"name": "task", "inputSchema": {"properties": {
                "prompt": {}, "description": {}, "subagent_type": {},
            }}}),
        ])
    }

    fn diagnose(tool: &str, arguments: Value, seen: usize) -> (Vec<Hint>, Vec<MissingKey>) {
        let catalog = catalog();
        let declared = catalog.get(tool).unwrap();
        let arguments = arguments.as_object().unwrap();
        let unknown: Vec<(String, usize)> = arguments
            .keys()
            .filter(|key| !declared.declares(key))
            .map(|key| (key.clone(), seen))
            .collect();
        let diagnosed = Diagnosed {
            catalog: &catalog,
            tool,
            declared,
            arguments: Some(arguments),
        };
        diagnosed.diagnose(&unknown)
    }

    fn cause_of(tool: &str, arguments: Value, key: &str) -> (Cause, Option<String>) {
        let (hints, _) = diagnose(tool, arguments, 1);
        let hint = hints.into_iter().find(|hint| hint.key == key).unwrap();
        (hint.cause, hint.suggestion)
    }

    #[test]
    fn a_cut_key_is_truncated_when_its_declared_key_was_not_sent() {
        let found = cause_of("fs_read", json!({"path": "a", "ffset": 12}), "ffset");
        assert_eq!(found, (Cause::Truncated, Some("offset".into())));
        let found = cause_of("fs_read", json!({"path": "a", "offs": 12}), "offs");
        assert_eq!(found, (Cause::Truncated, Some("offset".into())));
    }

    #[test]
    fn a_cut_key_whose_declared_key_was_sent_is_not_truncated() {
        let (cause, _) = cause_of("fs_read", json!({"offset": 1, "ffset": 12}), "ffset");
        assert_ne!(cause, Cause::Truncated);
    }

    #[test]
    fn case_separator_plural_and_typo_variants_are_near_misses() {
        for (key, meant) in [
            ("tokenBudget", "token_budget"),
            ("file-path", "file_path"),
            ("filter", "filters"),
            ("patern", "pattern"),
            ("Pattern", "pattern"),
        ] {
            let found = cause_of("fs_search", json!({ key: 1 }), key);
            assert_eq!(found, (Cause::NearMiss, Some(meant.into())), "{key}");
        }
    }

    #[test]
    fn far_keys_are_not_near_misses() {
        let (cause, _) = cause_of("fs_read", json!({"colour": 1}), "colour");
        assert_eq!(cause, Cause::Invented);
    }

    #[test]
    fn text_that_is_not_a_name_or_comes_from_a_value_is_a_fragment() {
        let arguments = json!({"prompt": "Investigate the", "nvestigate": "…", "the rest": "…"});
        let (hints, missing) = diagnose("task", arguments, 1);
        assert!(
            hints.iter().all(|hint| hint.cause == Cause::Fragment),
            "{hints:?}"
        );
        assert!(missing.is_empty());
        for key in ["a, b", "{\"x\"", "", "12", "one_two_three_four_five_six"] {
            assert_eq!(
                cause_of("fs_read", json!({ key: 1 }), key).0,
                Cause::Fragment,
                "{key:?}"
            );
        }
    }

    #[test]
    fn a_key_another_tool_declares_names_that_tool() {
        let (hints, _) = diagnose("fs_read", json!({"path": "a", "subagent_type": "x"}), 1);
        assert_eq!(
            hints,
            [Hint::new("subagent_type", Cause::OtherTool).with_declared_by("task")]
        );
    }

    #[test]
    fn a_key_seen_on_three_tools_is_injected() {
        let (hints, _) = diagnose("fs_read", json!({"toolCallId": "x"}), 3);
        assert_eq!(
            hints,
            [Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(3)]
        );
        let (hints, _) = diagnose("fs_read", json!({"toolCallId": "x"}), 2);
        assert_eq!(hints[0].cause, Cause::Invented);
    }

    #[test]
    fn missing_keys_carry_the_schema_default_and_only_keys_not_sent() {
        let (_, missing) = diagnose("fs_read", json!({"ffset": 1, "limt": 2, "Path": "x"}), 1);
        assert_eq!(
            missing,
            [
                MissingKey::new("limit", None),
                MissingKey::new("offset", Some(json!(0))),
                MissingKey::new("path", None),
            ]
        );
        let (_, missing) = diagnose("fs_read", json!({"path": "x", "Path": "y"}), 1);
        assert!(missing.is_empty());
    }

    #[test]
    fn the_hint_reads_briefly() {
        let shown = |hint: Hint| hint.to_string();
        assert_eq!(
            shown(Hint::new("ffset", Cause::Truncated).with_suggestion("offset")),
            "ffset → offset? (truncated)"
        );
        assert_eq!(
            shown(Hint::new("the rest", Cause::Fragment)),
            "the rest (fragment)"
        );
        assert_eq!(
            shown(Hint::new("pattern", Cause::OtherTool).with_declared_by("fs_search")),
            "pattern (other_tool: declared by fs_search)"
        );
        assert_eq!(
            shown(Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(3)),
            "toolCallId (injected: seen on 3 tools; --allow toolCallId silences it)"
        );
        assert_eq!(shown(Hint::new("a\nb", Cause::Invented)), r"a\nb (invented)");
    }

    #[test]
    fn the_missing_key_says_what_the_server_will_do() {
        assert_eq!(
            MissingKey::new("offset", Some(json!(0))).to_string(),
            "offset was not sent: the server will use its default, 0"
        );
        assert_eq!(MissingKey::new("limit", None).to_string(), "limit was not sent");
    }

    #[test]
    fn hints_round_trip_through_json_with_only_the_fields_that_say_something() {
        let hint = Hint::new("ffset", Cause::Truncated).with_suggestion("offset");
        let line = serde_json::to_string(&hint).unwrap();
        assert_eq!(
            line,
            r#"{"key":"ffset","cause":"truncated","suggestion":"offset"}"#
        );
        assert_eq!(serde_json::from_str::<Hint>(&line).unwrap(), hint);
        let null_default = MissingKey::new("mode", Some(Value::Null));
        let line = serde_json::to_string(&null_default).unwrap();
        assert_eq!(serde_json::from_str::<MissingKey>(&line).unwrap(), null_default);
    }

    #[test]
    fn edit_distance_counts_swaps_as_one_and_stops_at_its_limit() {
        assert_eq!(edit_distance("offset", "ofsfet", 2), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("", "abc", 3), Some(3));
    }

    #[test]
    fn words_split_at_separators_and_case_changes() {
        assert_eq!(word_count("tokenBudget"), 2);
        assert_eq!(word_count("token_budget"), 2);
        assert_eq!(word_count("URL"), 1);
        assert_eq!(word_count("maxTokens2"), 2);
    }

    #[test]
    fn the_fragment_search_stops_at_its_budget() {
        let mut budget = 10;
        assert!(!contains_text(
            &json!("xxxxxxxxxxxxnvestigate"),
            "nvestigate",
            &mut budget
        ));
        assert_eq!(budget, 0);
        let mut budget = 100;
        assert!(contains_text(
            &json!({"a": ["Investigate"]}),
            "nvestigate",
            &mut budget
        ));
    }
}
