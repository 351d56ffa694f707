//! What the diagnosis looks keys up in, built once per listing and kept
//! with the catalogue it indexes.
//!
//! A warning must cost a small multiple of its clean audit whatever the size
//! of the tool or the catalogue, so no work per warning may grow with the
//! number of declared keys. Each [`Declared`](super::Declared) and the
//! [`Catalog`] hold a [`Lazy`] index, built from their keys and kept until
//! the listing is replaced: each tool's when an
//! [`Auditor`](crate::audit::Auditor) takes the listing
//! ([`replace_catalog`](crate::audit::Auditor::replace_catalog)), once per
//! tool however many pages share it, so no call pays for it; the
//! catalogue's (a page's, rebuilt for each) on the first warning that needs
//! it.
//!
//! - [`ToolIndex`]: one tool's keys by normalised form (case variants,
//!   plurals), by prefix and suffix (truncations), by initials
//!   (abbreviations) and by length (edit distances);
//! - [`CatalogIndex`]: which tool, first by name, declares each key.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::OnceLock;

use super::Catalog;
use crate::audit::words::{MAX_EDIT_CHARS, char_mask, for_each_initial, push_normalized};

/// A value derived from its owner, built at most once, on first use.
///
/// It is not part of its owner's value: every `Lazy` equals every other, a
/// clone starts empty (and is rebuilt if needed), and `Debug` only says
/// whether it was built. The value is boxed, so that an owner that never
/// needs it (a tool never warned about) grows by a pointer and a flag.
pub(crate) struct Lazy<T>(OnceLock<Box<T>>);

impl<T> Lazy<T> {
    /// The value, built by `build` the first time.
    #[inline]
    pub(crate) fn get_or_init(&self, build: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(|| Box::new(build()))
    }

    /// The value, if it was built.
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.get().map(|value| &**value)
    }

    /// Whether the value was built.
    #[cfg(test)]
    fn is_built(&self) -> bool {
        self.0.get().is_some()
    }
}

impl<T> Default for Lazy<T> {
    fn default() -> Self {
        Lazy(OnceLock::new())
    }
}

impl<T> Clone for Lazy<T> {
    fn clone(&self) -> Self {
        Lazy::default()
    }
}

impl<T> PartialEq for Lazy<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Lazy<T> {}

impl<T> fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Lazy(built)"
        } else {
            "Lazy(not built)"
        })
    }
}

/// FNV-1a, 64 bits: the hash the index files initials under. The same bytes
/// give the same hash however they are fed, so initials hashed letter by
/// letter match a string of them hashed at once. Groups are looked up by
/// hash and their members checked, so a collision costs a comparison, never
/// a wrong answer.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(self, bytes: &[u8]) -> Fnv {
        Fnv(bytes.iter().fold(self.0, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3)
        }))
    }

    fn char(self, c: char) -> Fnv {
        self.bytes(c.encode_utf8(&mut [0; 4]).as_bytes())
    }
}

/// The hash of a whole key or form, eight bytes at a time (forms and keys
/// are hashed whole on both sides, unlike initials, built letter by letter).
fn hash(text: &str) -> u64 {
    crate::audit::hash::fold_words(text.len() as u64, text.as_bytes())
}

/// The hash of a string of initials, as [`Fnv`] builds it letter by letter.
fn initials_hash(initials: &str) -> u64 {
    Fnv::new().bytes(initials.as_bytes()).0
}

/// Many strings in one allocation: string `id` is `text[ends[id - 1]..ends[id]]`.
#[derive(Default)]
struct Strings {
    text: String,
    ends: Vec<u32>,
}

impl Strings {
    /// Ends the string pushed since the last call.
    fn end(&mut self) {
        self.ends.push(self.text.len() as u32);
    }

    fn span(&self, id: u32) -> std::ops::Range<usize> {
        let id = id as usize;
        let start = if id == 0 { 0 } else { self.ends[id - 1] as usize };
        start..self.ends[id] as usize
    }

    fn get(&self, id: u32) -> &str {
        &self.text[self.span(id)]
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Spreads a group's key, already a hash or a small number, over the table:
/// no second hash of a hash.
#[derive(Default)]
struct Spread(u64);

impl Hasher for Spread {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0 ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Ids of declared keys grouped by some property: each group is a slice of
/// one array, so a group costs one lookup and its size is known before it
/// is scanned.
struct Groups<K> {
    ids: Box<[u32]>,
    ranges: HashMap<K, (u32, u32), BuildHasherDefault<Spread>>,
}

impl<K: Hash + Eq + Ord + Copy> Groups<K> {
    /// Groups the ids of `members` by their group, each group's ids in the
    /// order of `within`.
    fn new<O: Ord>(mut members: Vec<(K, u32)>, within: impl Fn(u32) -> O) -> Groups<K> {
        members.sort_unstable_by(|(a, a_id), (b, b_id)| {
            a.cmp(b).then_with(|| within(*a_id).cmp(&within(*b_id)))
        });
        let mut ranges = HashMap::default();
        let mut start = 0;
        for (at, &(group, _)) in members.iter().enumerate() {
            if members.get(at + 1).is_none_or(|&(next, _)| next != group) {
                ranges.insert(group, (start as u32, at as u32 + 1));
                start = at + 1;
            }
        }
        Groups {
            ids: members.into_iter().map(|(_, id)| id).collect(),
            ranges,
        }
    }

    /// The ids of one group; empty when there is none.
    fn get(&self, group: K) -> &[u32] {
        match self.ranges.get(&group) {
            Some(&(start, end)) => &self.ids[start as usize..end as usize],
            None => &[],
        }
    }
}

/// One tool's declared keys, indexed for the diagnosis. Built in a few
/// allocations whatever the number of keys, in about the time it takes to
/// read them from the listing.
pub(crate) struct ToolIndex {
    /// The declared keys, sorted by code point; a key's id is its place here.
    keys: Strings,
    /// Each key's bytes, last first, in the order of `keys` (with its ends).
    backwards: Vec<u8>,
    /// The normalised form of each key.
    forms: Strings,
    /// The [`char_mask`] of each form.
    masks: Box<[u64]>,
    /// By the hash of the form.
    by_form: Groups<u64>,
    /// By the hash of the initials, longest forms first.
    by_initials: Groups<u64>,
    /// By the form's length in characters; only forms of at most
    /// [`MAX_EDIT_CHARS`] characters.
    by_length: Groups<usize>,
    /// Every id, sorted by its key read backwards: keys sharing a suffix are
    /// neighbours.
    by_suffix: Box<[u32]>,
    /// The length in bytes of the longest key, and of the longest form: a
    /// key as long cannot be a strict prefix or suffix, nor a form as long
    /// an abbreviation.
    longest_key: usize,
    longest_form: usize,
}

impl ToolIndex {
    /// Indexes `keys`, sorted by code point as
    /// [`Declared::keys`](super::Declared::keys) gives them.
    pub(crate) fn new<'k>(keys: impl ExactSizeIterator<Item = &'k str>) -> ToolIndex {
        #[cfg(test)]
        built::TOOLS.with(|built| built.set(built.get() + 1));
        let count = keys.len();
        let (mut strings, mut backwards, mut forms) = (Strings::default(), Vec::new(), Strings::default());
        let (mut masks, mut form_hashes, mut initials, mut lengths) = (
            Vec::with_capacity(count),
            Vec::with_capacity(count),
            Vec::with_capacity(count),
            Vec::with_capacity(count),
        );
        for (id, key) in keys.enumerate() {
            let id = id as u32;
            strings.text.push_str(key);
            strings.end();
            backwards.extend(key.bytes().rev());
            push_normalized(key, &mut forms.text);
            forms.end();
            let form = forms.get(id);
            masks.push(char_mask(form));
            form_hashes.push((hash(form), id));
            let mut initials_hash = Fnv::new();
            for_each_initial(key, |c| initials_hash = initials_hash.char(c));
            initials.push((initials_hash.0, id));
            let length = form.chars().count();
            if length <= MAX_EDIT_CHARS {
                lengths.push((length, id));
            }
        }
        let mut by_suffix: Vec<u32> = (0..count as u32).collect();
        by_suffix.sort_unstable_by(|&a, &b| backwards[strings.span(a)].cmp(&backwards[strings.span(b)]));
        let longest = |strings: &Strings| {
            (0..count as u32)
                .map(|id| strings.span(id).len())
                .max()
                .unwrap_or(0)
        };
        ToolIndex {
            longest_key: longest(&strings),
            longest_form: longest(&forms),
            by_form: Groups::new(form_hashes, |id| id),
            by_initials: Groups::new(initials, |id| (Reverse(forms.span(id).len()), id)),
            by_length: Groups::new(lengths, |id| id),
            by_suffix: by_suffix.into(),
            keys: strings,
            backwards,
            forms,
            masks: masks.into(),
        }
    }

    /// The declared key of id `id`.
    pub(crate) fn key(&self, id: u32) -> &str {
        self.keys.get(id)
    }

    /// The normalised form of key `id`.
    pub(crate) fn form(&self, id: u32) -> &str {
        self.forms.get(id)
    }

    /// The [`char_mask`] of key `id`'s form.
    pub(crate) fn mask(&self, id: u32) -> u64 {
        self.masks[id as usize]
    }

    /// The keys whose normalised form is `form`.
    pub(crate) fn with_form<'i>(&'i self, form: &'i str) -> impl Iterator<Item = u32> + 'i {
        let ids = self.by_form.get(hash(form));
        ids.iter().copied().filter(move |&id| self.form(id) == form)
    }

    /// How many keys [`ToolIndex::with_form`] may give for `form`, at
    /// most: what ranking them may cost, known before they are read.
    pub(crate) fn count_with_form(&self, form: &str) -> usize {
        self.by_form.get(hash(form)).len()
    }

    /// Whether some declared key is longer than `key` (in bytes).
    pub(crate) fn has_key_longer_than(&self, key: &str) -> bool {
        self.longest_key > key.len()
    }

    /// Whether some normalised form is at least `min_len` bytes long.
    pub(crate) fn has_form_of(&self, min_len: usize) -> bool {
        self.longest_form >= min_len
    }

    /// The keys that may have these initials (a hash collision adds others,
    /// which no abbreviation matches) and whose normalised form is at least
    /// `min_len` bytes long.
    pub(crate) fn with_initials(&self, initials: &str, min_len: usize) -> &[u32] {
        let ids = self.by_initials.get(initials_hash(initials));
        &ids[..ids.partition_point(|&id| self.forms.span(id).len() >= min_len)]
    }

    /// The keys whose normalised form is `length` characters long.
    pub(crate) fn with_length(&self, length: usize) -> &[u32] {
        self.by_length.get(length)
    }

    /// The keys that start with `prefix`, the key itself included if
    /// declared; found in two binary searches.
    pub(crate) fn starting_with(&self, prefix: &str) -> impl ExactSizeIterator<Item = u32> + '_ {
        let count = self.keys.len() as u32;
        let start = partition_point(count, |id| self.key(id) < prefix);
        let end = start + partition_point(count - start, |at| self.key(start + at).starts_with(prefix));
        start..end
    }

    /// The keys that end with `suffix`, the key itself included if
    /// declared; found in two binary searches.
    pub(crate) fn ending_with(&self, suffix: &str) -> impl ExactSizeIterator<Item = u32> + '_ {
        let wanted: Vec<u8> = suffix.bytes().rev().collect();
        let backwards = |id: u32| &self.backwards[self.keys.span(id)];
        let start = self.by_suffix.partition_point(|&id| backwards(id) < &wanted[..]);
        let length = self.by_suffix[start..].partition_point(|&id| backwards(id).starts_with(&wanted));
        self.by_suffix[start..start + length].iter().copied()
    }
}

/// The first of `0..count` for which `before` is false, `before` being true
/// for a leading run and false after it.
fn partition_point(count: u32, before: impl Fn(u32) -> bool) -> u32 {
    let (mut low, mut high) = (0, count);
    while low < high {
        let middle = low + (high - low) / 2;
        if before(middle) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    low
}

/// Which tool of a catalogue, first by name, declares each key.
pub(crate) struct CatalogIndex {
    /// The tool names, sorted by code point; a tool's id is its place here.
    tools: Box<[Box<str>]>,
    /// The tools declaring each key, by the key's hash, first by name first.
    by_key: Groups<u64>,
}

impl CatalogIndex {
    /// Indexes every key of every tool of `catalog`.
    pub(crate) fn new(catalog: &Catalog) -> CatalogIndex {
        #[cfg(test)]
        built::CATALOGS.with(|built| built.set(built.get() + 1));
        let mut tools: Vec<(&str, &super::Declared)> = catalog.iter().collect();
        tools.sort_unstable_by_key(|&(name, _)| name);
        let members = tools
            .iter()
            .enumerate()
            .flat_map(|(id, (_, declared))| declared.keys().map(move |key| (hash(key), id as u32)))
            .collect();
        CatalogIndex {
            by_key: Groups::new(members, |id| id),
            tools: tools.into_iter().map(|(name, _)| name.into()).collect(),
        }
    }

    /// The first tool by name, other than `except`, that declares `key` in
    /// `catalog` (the catalogue this index was built from).
    pub(crate) fn first_declaring<'c>(
        &'c self,
        catalog: &Catalog,
        key: &str,
        except: &str,
    ) -> Option<&'c str> {
        self.by_key
            .get(hash(key))
            .iter()
            .map(|&id| &*self.tools[id as usize])
            .filter(|&tool| tool != except)
            .find(|&tool| catalog.get(tool).is_some_and(|declared| declared.declares(key)))
    }
}

/// How many indexes this thread built, for the tests that hold them to
/// once per listing.
#[cfg(test)]
pub(crate) mod built {
    use std::cell::Cell;

    thread_local! {
        /// [`ToolIndex`](super::ToolIndex)es built.
        pub(crate) static TOOLS: Cell<usize> = const { Cell::new(0) };
        /// [`CatalogIndex`](super::CatalogIndex)es built.
        pub(crate) static CATALOGS: Cell<usize> = const { Cell::new(0) };
    }

    /// The tool and catalogue indexes built so far on this thread.
    pub(crate) fn counts() -> (usize, usize) {
        (TOOLS.with(Cell::get), CATALOGS.with(Cell::get))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(keys: &[&str]) -> ToolIndex {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        ToolIndex::new(keys.into_iter())
    }

    fn keys_of(index: &ToolIndex, ids: impl IntoIterator<Item = u32>) -> Vec<&str> {
        let mut keys: Vec<&str> = ids.into_iter().map(|id| index.key(id)).collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn keys_are_found_by_form_initials_and_length() {
        let index = index(&["style_id", "styleId", "target_timezone", "count", "path"]);
        assert_eq!(
            keys_of(&index, index.with_form("styleid")),
            ["styleId", "style_id"]
        );
        assert_eq!(
            keys_of(&index, index.with_initials("tt", 0).iter().copied()),
            ["target_timezone"]
        );
        assert_eq!(
            keys_of(&index, index.with_initials("c", 5).iter().copied()),
            ["count"]
        );
        assert_eq!(keys_of(&index, index.with_length(4).iter().copied()), ["path"]);
        assert_eq!(index.with_form("nothing").count(), 0);
    }

    #[test]
    fn keys_are_found_by_initials_down_to_a_length() {
        let index = index(&["sort", "sort_by", "sorted", "s", "count"]);
        let found = |min_len| keys_of(&index, index.with_initials("s", min_len).iter().copied());
        assert_eq!(found(6), ["sorted"]);
        assert_eq!(found(4), ["sort", "sorted"]);
        assert_eq!(found(0), ["s", "sort", "sorted"]);
        assert!(found(7).is_empty());
    }

    #[test]
    fn prefixes_and_suffixes_are_ranges() {
        let index = index(&["offset", "off", "office", "limit", "time_limit", "path", "of"]);
        assert_eq!(
            keys_of(&index, index.starting_with("off")),
            ["off", "office", "offset"]
        );
        assert_eq!(
            keys_of(&index, index.ending_with("limit")),
            ["limit", "time_limit"]
        );
        assert_eq!(keys_of(&index, index.ending_with("fset")), ["offset"]);
        assert_eq!(index.starting_with("zzz").len(), 0);
        assert_eq!(index.ending_with("zzz").len(), 0);
    }

    #[test]
    fn the_first_tool_by_name_declares_a_key() {
        let catalog = Catalog::from_mcp_tools(&[
            serde_json::json!({"name": "b", "inputSchema": {"properties": {"path": {}}}}),
            serde_json::json!({"name": "a", "inputSchema": {"properties": {"path": {}, "x": {}}}}),
        ]);
        let index = CatalogIndex::new(&catalog);
        assert_eq!(index.first_declaring(&catalog, "path", "c"), Some("a"));
        assert_eq!(index.first_declaring(&catalog, "path", "a"), Some("b"));
        assert_eq!(index.first_declaring(&catalog, "y", "c"), None);
    }

    #[test]
    fn a_lazy_value_is_built_once_and_is_no_part_of_its_owner() {
        let lazy: Lazy<u32> = Lazy::default();
        assert!(!lazy.is_built());
        assert_eq!(*lazy.get_or_init(|| 1), 1);
        assert_eq!(*lazy.get_or_init(|| 2), 1);
        assert!(lazy.is_built());
        assert!(!lazy.clone().is_built());
        assert_eq!(lazy, Lazy::default());
    }
}
