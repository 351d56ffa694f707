//! What probably went wrong: a diagnosis for each undeclared key.
//!
//! "Undeclared argument `ffset`" tells a user something is off; "`ffset` is
//! `offset` cut short, `offset` was not sent, the server will use its
//! default, 0" tells them what the server is about to do instead of what the
//! model meant. Each undeclared key of a warning gets one [`Hint`], whose
//! [`Cause`] is the first of these that fits:
//!
//! 1. [`Cause::CaseVariant`]: the key is a declared key in another case or
//!    with other separators (`styleId`, `StyleId`, `style-id` for
//!    `style_id`);
//! 2. [`Cause::Plural`]: the key is the singular of a declared plural or
//!    the plural of a declared singular (`filter` for `filters`, `queries`
//!    for `query`), case and separators aside. Before the checks below,
//!    because a singular is also a prefix of its plural;
//! 3. [`Cause::Abbreviation`]: the key's words shorten the declared key's
//!    words, in order, each keeping its first letter and dropping two
//!    letters or more — as a prefix of three letters or more (`max_res` for
//!    `max_results`, `desc` for `description`) or as a skeleton (`cnt` for
//!    `count`, `target_tz` for `target_timezone`) — or stand for several of
//!    them by their initials (`tz` for `time_zone`);
//! 4. [`Cause::Truncated`]: the key, of three characters or more, is a
//!    strict prefix or suffix of a declared key the call did not carry, and
//!    not a short form of its words: it lost its beginning (`ffset` for
//!    `offset`), a word (`timeout` for `timeout_ms`) or the end of one
//!    (`subagent_ty`, `working_d`);
//! 5. [`Cause::NearMiss`]: the key is a few edits from a declared key, case
//!    and separators aside (`patern`): one edit up to five characters, two up
//!    to nine, three beyond. After abbreviations, because a short form is
//!    several edits from its word (`cnt` is two from `count`); a word that
//!    lost a single letter is a typo (`ofset`), not a short form;
//! 6. [`Cause::Fragment`]: the key is not identifier-like (spaces,
//!    punctuation, more than five words) or, being three characters or more,
//!    occurs inside a string value of another argument of the same call — the
//!    mark of a truncated generation closed into valid JSON, as in
//!    `{"prompt":"Investigate the","nvestigate":…}`;
//! 7. [`Cause::OtherTool`]: another tool of the catalogue declares the key;
//! 8. [`Cause::Injected`]: the key has now been seen undeclared on calls to
//!    [`INJECTED_AFTER_TOOLS`] or more tools — a host or middleware adds it;
//! 9. [`Cause::Invented`]: none of the above.
//!
//! Where a cause points to a declared key, the hint suggests it, and when
//! the call did not carry that key it is listed in the warning's
//! `missing_keys` with its schema default.
//!
//! # Bounded work
//!
//! The diagnosis runs only for a call that raises a warning, and before the
//! call goes on, so its work is bounded by the size of the call, never by
//! the size of the tool or the catalogue:
//!
//! - what a key is matched against comes from indexes built once per
//!   listing (each tool's when an auditor takes the listing, the
//!   catalogue's on the first warning that needs it): case variants,
//!   plurals and other tools' keys are hash lookups, and abbreviations,
//!   truncations and near misses only compare a key with the declared keys
//!   that share a prefix or suffix, initials or a length with it;
//! - those comparisons, and each declared key a case or plural lookup
//!   finds, draw on a budget of [`COMPARISONS_PER_WARNING`] plus
//!   [`COMPARISONS_PER_KEY`] for each key the call carried, and the searches
//!   of values for fragments on a budget of [`SEARCHED_BYTES_PER_WARNING`]
//!   plus [`SEARCHES_PER_WARNING`] times the call's text. A check whose
//!   comparisons or search would overrun what is left is not run: its key
//!   is [`Cause::Undiagnosed`] (still reported, with no hint as to why),
//!   and the keys after it go on with what is left. Keys are taken in the
//!   warning's order (sorted).
//!
//! It reads the call's values (for fragments) but never puts one in a hint:
//! a hint names keys, declared keys, tools and schema defaults only.
//!
//! ```
//! use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Cause};
//! use serde_json::json;
//!
//! let auditor = Auditor::new().with_sink(());
//! auditor.replace_catalog(Catalog::from_mcp_tools(&[json!({
//!     "name": "fs_read",
//!     "inputSchema": {"properties": {"path": {}, "offset": {"default": 0}, "style_id": {}}},
//! })]));
//! let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":12,"styleId":3,"the rest":"…"}"#));
//! let warning = auditor.audit(&auditor.catalog(), call).warning().unwrap();
//!
//! assert_eq!(warning.hint("ffset").unwrap().cause, Cause::Truncated);
//! assert_eq!(warning.hint("styleId").unwrap().cause, Cause::CaseVariant);
//! assert_eq!(warning.hint("the rest").unwrap().cause, Cause::Fragment);
//! assert_eq!(warning.missing_keys[0].default, Some(json!(0)));
//! assert!(warning.to_string().ends_with(
//!     "— ffset → offset? (truncated), styleId → style_id? (case_variant), the rest (fragment); \
//!      offset was not sent: the server will use its default, 0; style_id was not sent"
//! ));
//! ```

mod fragment;
pub(crate) mod hint;

use serde_json::{Map, Value};

pub use hint::{Cause, Hint, MissingKey};

use super::catalog::index::ToolIndex;
use super::catalog::{Catalog, Declared};
use super::words;
use super::words::{
    MAX_EDIT_CHARS, MAX_KEY_WORDS, Pattern, abbreviates, allowed_edits, char_mask, for_each_initials_wanted,
    for_each_plural_form, is_identifier_like, is_subsequence, normalized,
};
use fragment::Texts;

/// A key seen undeclared on calls to this many tools or more is
/// [`Cause::Injected`].
pub const INJECTED_AFTER_TOOLS: usize = 3;

/// The comparisons of undeclared keys with declared ones that any warning
/// may make: enough to diagnose a few keys against a tool of fifty, or one
/// against a tool of a hundred keys of one length. A comparison costs about
/// as much as auditing two or three keys of a clean call.
pub const COMPARISONS_PER_WARNING: usize = 128;

/// The comparisons a warning may make for each key its call carried, on top
/// of [`COMPARISONS_PER_WARNING`]: the budget grows with the call, as its
/// clean audit does, and not with the tool.
pub const COMPARISONS_PER_KEY: usize = 1;

/// The bytes of value text any warning may search for fragments.
pub const SEARCHED_BYTES_PER_WARNING: usize = 64 << 10;

/// How many times over a warning may search its call's text for fragments,
/// on top of [`SEARCHED_BYTES_PER_WARNING`].
pub const SEARCHES_PER_WARNING: usize = 8;

/// A key shorter than this (in characters) is too common to count as found
/// inside a value, or as a truncated declared key.
const MIN_PIECE_CHARS: usize = 3;

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

/// The work one diagnosis did, counted so that tests can hold it to the
/// size of the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Work {
    /// Declared keys compared with an undeclared one.
    pub comparisons: usize,
    /// Index lookups and binary searches.
    pub lookups: usize,
    /// Bytes of value text searched.
    pub searched_bytes: usize,
}

impl<'a> Diagnosed<'a> {
    /// One hint per key of `unknown_keys` (each paired with the number of
    /// tools it has now been seen undeclared on), and the declared keys they
    /// point to that the call did not carry.
    pub(crate) fn diagnose(&self, unknown_keys: &[(String, usize)]) -> (Vec<Hint>, Vec<MissingKey>) {
        let (hints, missing, _) = self.diagnose_counted(unknown_keys);
        (hints, missing)
    }

    /// [`Diagnosed::diagnose`], with the work it did.
    pub(crate) fn diagnose_counted(
        &self,
        unknown_keys: &[(String, usize)],
    ) -> (Vec<Hint>, Vec<MissingKey>, Work) {
        let carried = self.arguments.map_or(0, Map::len).max(unknown_keys.len());
        let mut checks = Checks {
            diagnosed: self,
            index: self.declared.diagnosis_index(),
            comparisons_left: COMPARISONS_PER_WARNING
                .saturating_add(carried.saturating_mul(COMPARISONS_PER_KEY)),
            texts: None,
            work: Work::default(),
        };
        let hints: Vec<Hint> = unknown_keys
            .iter()
            .map(|(key, seen_on_tools)| checks.hint(key, *seen_on_tools))
            .collect();
        let mut missing: Vec<MissingKey> = hints
            .iter()
            .filter(|hint| hint.cause.suggests_a_declared_key())
            .filter_map(|hint| hint.suggestion.as_deref())
            .filter(|suggestion| !self.carries(suggestion))
            .map(|key| MissingKey::new(key, self.declared.default_of(key).cloned()))
            .collect();
        missing.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        missing.dedup_by(|a, b| a.key == b.key);
        (hints, missing, checks.work)
    }

    /// Whether the call carried `key`.
    fn carries(&self, key: &str) -> bool {
        self.arguments
            .is_some_and(|arguments| arguments.contains_key(key))
    }
}

/// A check's comparisons or search would overrun what is left of the
/// warning's budget: its key is [`Cause::Undiagnosed`].
struct OverBudget;

/// The checks of one warning's keys, and what they share from key to key.
struct Checks<'d, 'a> {
    diagnosed: &'d Diagnosed<'a>,
    index: &'a ToolIndex,
    comparisons_left: usize,
    /// The call's strings and what is left of the search budget, gathered
    /// on the first search.
    texts: Option<(Texts<'a>, usize)>,
    work: Work,
}

impl<'a> Checks<'_, 'a> {
    /// The hint about `key`.
    fn hint(&mut self, key: &str, seen_on_tools: usize) -> Hint {
        self.cause_of(key, seen_on_tools)
            .unwrap_or_else(|OverBudget| Hint::new(key, Cause::Undiagnosed))
    }

    /// The checks, in their order: the first that fits is the key's cause.
    fn cause_of(&mut self, key: &str, seen_on_tools: usize) -> Result<Hint, OverBudget> {
        let suggesting = |cause, declared: &str| Hint::new(key, cause).with_suggestion(declared);
        let form = normalized(key);
        if let Some(declared) = self.case_variant_of(&form)? {
            return Ok(suggesting(Cause::CaseVariant, declared));
        }
        if let Some(declared) = self.plural_of(&form)? {
            return Ok(suggesting(Cause::Plural, declared));
        }
        if let Some(declared) = self.abbreviation_of(key, &form)? {
            return Ok(suggesting(Cause::Abbreviation, declared));
        }
        if let Some(declared) = self.truncation_of(key)? {
            return Ok(suggesting(Cause::Truncated, declared));
        }
        if let Some(declared) = self.near_miss_of(&form)? {
            return Ok(suggesting(Cause::NearMiss, declared));
        }
        if !is_identifier_like(key) || self.occurs_in_another_value(key)? {
            return Ok(Hint::new(key, Cause::Fragment));
        }
        if let Some(tool) = self.other_tool_declaring(key) {
            return Ok(Hint::new(key, Cause::OtherTool).with_declared_by(tool));
        }
        if seen_on_tools >= INJECTED_AFTER_TOOLS {
            return Ok(Hint::new(key, Cause::Injected).with_seen_on_tools(seen_on_tools));
        }
        Ok(Hint::new(key, Cause::Invented))
    }

    /// Takes `comparisons` from the budget, or none if they would overrun
    /// it.
    fn spend(&mut self, comparisons: usize) -> Result<(), OverBudget> {
        self.comparisons_left = self.comparisons_left.checked_sub(comparisons).ok_or(OverBudget)?;
        self.work.comparisons += comparisons;
        Ok(())
    }

    /// Of `candidates`, the one ranked first: declared keys the call did not
    /// carry before those it did, then by `rank`, then by code point. Whether
    /// the call carried a key is asked in rank order, and only until one it
    /// did not carry is found.
    fn first_of<R: Ord>(
        &mut self,
        candidates: impl Iterator<Item = (u32, R)>,
        carried_too: bool,
    ) -> Option<&'a str> {
        let mut ranked: Vec<(R, u32)> = candidates.map(|(id, rank)| (rank, id)).collect();
        ranked.sort_unstable();
        let index = self.index;
        let mut first_carried = None;
        for &(_, id) in &ranked {
            self.work.lookups += 1;
            if !self.diagnosed.carries(index.key(id)) {
                return Some(index.key(id));
            }
            first_carried = first_carried.or(Some(id));
        }
        first_carried.filter(|_| carried_too).map(|id| index.key(id))
    }

    /// A declared key with the same normalised form. Each key of that form
    /// is a candidate ranked, so each is charged to the budget.
    fn case_variant_of(&mut self, form: &str) -> Result<Option<&'a str>, OverBudget> {
        if form.is_empty() {
            return Ok(None);
        }
        self.work.lookups += 1;
        let index = self.index;
        self.spend(index.count_with_form(form))?;
        Ok(self.first_of(index.with_form(form).map(|id| (id, ())), true))
    }

    /// A declared key whose normalised form is a singular or plural of
    /// `form`; each key of each such form charged, as for case variants.
    fn plural_of(&mut self, form: &str) -> Result<Option<&'a str>, OverBudget> {
        let index = self.index;
        let mut ids: Vec<u32> = Vec::new();
        let mut over_budget = false;
        for_each_plural_form(form, |form| {
            self.work.lookups += 1;
            if over_budget || self.spend(index.count_with_form(form)).is_err() {
                over_budget = true;
                return;
            }
            ids.extend(index.with_form(form));
        });
        if over_budget {
            return Err(OverBudget);
        }
        Ok(self.first_of(ids.into_iter().map(|id| (id, ())), true))
    }

    /// The declared key, longer and not carried, that `key` is a prefix or
    /// suffix of; the closest in length when several are.
    fn truncation_of(&mut self, key: &str) -> Result<Option<&'a str>, OverBudget> {
        let index = self.index;
        if key.chars().count() < MIN_PIECE_CHARS || !index.has_key_longer_than(key) {
            return Ok(None);
        }
        let (prefixed, suffixed) = (index.starting_with(key), index.ending_with(key));
        self.work.lookups += 4;
        self.spend(prefixed.len() + suffixed.len())?;
        let candidates = prefixed
            .chain(suffixed)
            .map(|id| (id, index.key(id).len()))
            .filter(|&(_, length)| length > key.len());
        Ok(self.first_of(candidates, false))
    }

    /// The declared key whose words `key`'s words abbreviate; of those
    /// filed under the initials the key could stand for.
    fn abbreviation_of(&mut self, key: &str, form: &str) -> Result<Option<&'a str>, OverBudget> {
        let index = self.index;
        // An abbreviation drops two letters at least: only declared keys
        // that much longer are compared.
        if !index.has_form_of(form.len() + 2) {
            return Ok(None);
        }
        let key_words = words::words(key);
        if key_words.is_empty() || key_words.len() > MAX_KEY_WORDS || form.chars().count() < 2 {
            return Ok(None);
        }
        let mut found = Vec::new();
        let mut over_budget = false;
        for_each_initials_wanted(&key_words, |initials| {
            self.work.lookups += 1;
            let ids = index.with_initials(initials, form.len() + 2);
            if over_budget || self.spend(ids.len()).is_err() {
                over_budget = true;
                return;
            }
            found.extend(ids.iter().filter(|&&id| {
                // Its letters in order, checked before the words are split.
                is_subsequence(form, index.form(id)) && abbreviates(&key_words, &words::words(index.key(id)))
            }));
        });
        if over_budget {
            return Err(OverBudget);
        }
        Ok(self.first_of(found.into_iter().map(|id| (id, ())), true))
    }

    /// The declared key a few edits from `form`, normalised: the closest,
    /// of the lengths within reach.
    fn near_miss_of(&mut self, form: &str) -> Result<Option<&'a str>, OverBudget> {
        let length = form.chars().count();
        if length > MAX_EDIT_CHARS {
            return Ok(None);
        }
        let index = self.index;
        // Each length within reach, its keys and the edits allowed.
        let reach: Vec<(usize, &[u32], usize)> = (length.saturating_sub(3)..=length + 3)
            .filter_map(|other| {
                let allowed = allowed_edits(length.max(other))?;
                (length.abs_diff(other) <= allowed).then(|| (other, index.with_length(other), allowed))
            })
            .collect();
        self.work.lookups += reach.len();
        self.spend(reach.iter().map(|(_, ids, _)| ids.len()).sum())?;
        let Some(pattern) = Pattern::new(form) else {
            return Ok(None);
        };
        let (mask, pattern) = (char_mask(form), &pattern);
        let candidates = reach.into_iter().flat_map(|(other, ids, allowed)| {
            ids.iter()
                .filter(move |&&id| (mask ^ index.mask(id)).count_ones() as usize <= 2 * allowed)
                .filter_map(move |&id| Some((id, pattern.distance(index.form(id), other, allowed)?)))
        });
        Ok(self.first_of(candidates, true))
    }

    /// Whether `key` occurs inside a string value of another argument.
    fn occurs_in_another_value(&mut self, key: &str) -> Result<bool, OverBudget> {
        let Some(arguments) = self.diagnosed.arguments else {
            return Ok(false);
        };
        if key.chars().count() < MIN_PIECE_CHARS {
            return Ok(false);
        }
        let (texts, left) = self.texts.get_or_insert_with(|| {
            let texts = Texts::of(arguments);
            let budget =
                SEARCHED_BYTES_PER_WARNING.saturating_add(texts.len().saturating_mul(SEARCHES_PER_WARNING));
            (texts, budget)
        });
        // The whole text is charged, wherever the key is found: what is
        // diagnosed never depends on where in the values a match lies.
        *left = left.checked_sub(texts.len()).ok_or(OverBudget)?;
        self.work.searched_bytes += texts.len();
        Ok(texts.found_outside(key, key))
    }

    /// The first tool, by name, other than the one called that declares
    /// `key`.
    fn other_tool_declaring(&mut self, key: &str) -> Option<&'a str> {
        self.work.lookups += 1;
        let Diagnosed { catalog, tool, .. } = *self.diagnosed;
        catalog.diagnosis_index().first_declaring(catalog, key, tool)
    }
}

#[cfg(test)]
mod tests;
