//! What the diagnosis looks keys up in, built once per listing.
//!
//! A warning must cost a small multiple of its clean audit whatever the size
//! of the tool or the catalogue, so no work per warning may grow with the
//! number of declared keys. Each [`Declared`](super::super::Declared) and the
//! [`Catalog`](super::super::Catalog) hold a [`Lazy`] index, built from their
//! keys on the first warning that needs it and kept until the listing is
//! replaced: calls that raise nothing never pay for it.
//!
//! - [`ToolIndex`]: one tool's keys by normalised form (case variants,
//!   plurals), by prefix and suffix (truncations), by initials
//!   (abbreviations) and by length (edit distances);
//! - [`CatalogIndex`]: which tool, first by name, declares each key.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::OnceLock;

use super::words::{MAX_EDIT_CHARS, char_mask, initials, normalized, words};
use crate::audit::Catalog;

/// A value derived from its owner, built at most once, on first use.
///
/// It is not part of its owner's value: every `Lazy` equals every other, a
/// clone starts empty (and is rebuilt if needed), and `Debug` only says
/// whether it was built.
pub(crate) struct Lazy<T>(OnceLock<T>);

impl<T> Lazy<T> {
    /// The value, built by `build` the first time.
    pub(crate) fn get_or_init(&self, build: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(build)
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

/// Ids of declared keys grouped by some property: each group is a slice of
/// one array, in ascending id order, so a group costs one lookup and its
/// size is known before it is scanned.
struct Groups<K> {
    ids: Box<[u32]>,
    ranges: HashMap<K, (u32, u32)>,
}

impl<K: Hash + Eq> Groups<K> {
    /// Groups ids `0..count` by `group_of`; an id whose group is `None` is
    /// left out.
    fn new(count: usize, mut group_of: impl FnMut(usize) -> Option<K>) -> Groups<K> {
        let mut members: HashMap<K, Vec<u32>> = HashMap::new();
        for id in 0..count {
            if let Some(group) = group_of(id) {
                members.entry(group).or_default().push(id as u32);
            }
        }
        let mut ids = Vec::with_capacity(count);
        let ranges = members
            .into_iter()
            .map(|(group, members)| {
                let start = ids.len() as u32;
                ids.extend(members);
                (group, (start, ids.len() as u32))
            })
            .collect();
        Groups {
            ids: ids.into(),
            ranges,
        }
    }

    /// The ids of one group; empty when there is none.
    fn get<Q: Hash + Eq + ?Sized>(&self, group: &Q) -> &[u32]
    where
        K: Borrow<Q>,
    {
        match self.ranges.get(group) {
            Some(&(start, end)) => &self.ids[start as usize..end as usize],
            None => &[],
        }
    }
}

/// One tool's declared keys, indexed for the diagnosis.
pub(crate) struct ToolIndex {
    /// The declared keys, sorted by code point; a key's id is its place here.
    keys: Box<[Box<str>]>,
    /// The normalised form of each key.
    forms: Box<[Box<str>]>,
    /// The [`char_mask`] of each form.
    masks: Box<[u64]>,
    by_form: Groups<Box<str>>,
    by_initials: Groups<Box<str>>,
    /// Only forms of at most [`MAX_EDIT_CHARS`] characters.
    by_length: Groups<usize>,
    /// Every id, sorted by its key read backwards: keys sharing a suffix are
    /// neighbours.
    by_suffix: Box<[u32]>,
}

impl ToolIndex {
    /// Indexes `keys`, sorted by code point as
    /// [`Declared::keys`](super::super::Declared::keys) gives them.
    pub(crate) fn new<'k>(keys: impl Iterator<Item = &'k str>) -> ToolIndex {
        #[cfg(test)]
        built::TOOLS.with(|built| built.set(built.get() + 1));
        let keys: Box<[Box<str>]> = keys.map(Box::from).collect();
        let forms: Box<[Box<str>]> = keys.iter().map(|key| normalized(key).into()).collect();
        let masks = forms.iter().map(|form| char_mask(form)).collect();
        let by_form = Groups::new(keys.len(), |id| Some(forms[id].clone()));
        let by_initials = Groups::new(keys.len(), |id| Some(initials(&words(&keys[id])).into()));
        let by_length = Groups::new(keys.len(), |id| {
            Some(forms[id].chars().count()).filter(|&length| length <= MAX_EDIT_CHARS)
        });
        let mut by_suffix: Vec<u32> = (0..keys.len() as u32).collect();
        by_suffix.sort_unstable_by(|&a, &b| backwards(&keys[a as usize]).cmp(backwards(&keys[b as usize])));
        ToolIndex {
            keys,
            forms,
            masks,
            by_form,
            by_initials,
            by_length,
            by_suffix: by_suffix.into(),
        }
    }

    /// The declared key of id `id`.
    pub(crate) fn key(&self, id: u32) -> &str {
        &self.keys[id as usize]
    }

    /// The normalised form of key `id`.
    pub(crate) fn form(&self, id: u32) -> &str {
        &self.forms[id as usize]
    }

    /// The [`char_mask`] of key `id`'s form.
    pub(crate) fn mask(&self, id: u32) -> u64 {
        self.masks[id as usize]
    }

    /// The keys whose normalised form is `form`.
    pub(crate) fn with_form(&self, form: &str) -> &[u32] {
        self.by_form.get(form)
    }

    /// The keys whose words have these initials.
    pub(crate) fn with_initials(&self, initials: &str) -> &[u32] {
        self.by_initials.get(initials)
    }

    /// The keys whose normalised form is `length` characters long.
    pub(crate) fn with_length(&self, length: usize) -> &[u32] {
        self.by_length.get(&length)
    }

    /// The keys that start with `prefix`, the key itself included if
    /// declared; found in two binary searches.
    pub(crate) fn starting_with(&self, prefix: &str) -> impl ExactSizeIterator<Item = u32> + '_ {
        let start = self.keys.partition_point(|key| **key < *prefix);
        let length = self.keys[start..].partition_point(|key| key.starts_with(prefix));
        start as u32..(start + length) as u32
    }

    /// The keys that end with `suffix`, the key itself included if
    /// declared; found in two binary searches.
    pub(crate) fn ending_with(&self, suffix: &str) -> impl ExactSizeIterator<Item = u32> + '_ {
        let key_of = |id: &u32| &*self.keys[*id as usize];
        let start = self
            .by_suffix
            .partition_point(|id| backwards(key_of(id)).lt(backwards(suffix)));
        let length = self.by_suffix[start..].partition_point(|id| key_of(id).ends_with(suffix));
        self.by_suffix[start..start + length].iter().copied()
    }
}

/// A key's bytes, last first: sorting by it puts keys sharing a suffix
/// side by side.
fn backwards(key: &str) -> std::iter::Rev<std::str::Bytes<'_>> {
    key.bytes().rev()
}

/// Which tool of a catalogue, first by name, declares each key.
pub(crate) struct CatalogIndex {
    /// The tool names, sorted by code point; a tool's id is its place here.
    tools: Box<[Box<str>]>,
    first_declared_by: HashMap<Box<str>, u32>,
}

impl CatalogIndex {
    /// Indexes every key of every tool of `catalog`.
    pub(crate) fn new(catalog: &Catalog) -> CatalogIndex {
        #[cfg(test)]
        built::CATALOGS.with(|built| built.set(built.get() + 1));
        let mut tools: Vec<(&str, &crate::audit::Declared)> = catalog.iter().collect();
        tools.sort_unstable_by_key(|&(name, _)| name);
        let mut first_declared_by: HashMap<Box<str>, u32> = HashMap::new();
        for (id, (_, declared)) in tools.iter().enumerate() {
            for key in declared.keys() {
                if !first_declared_by.contains_key(key) {
                    first_declared_by.insert(key.into(), id as u32);
                }
            }
        }
        CatalogIndex {
            tools: tools.into_iter().map(|(name, _)| name.into()).collect(),
            first_declared_by,
        }
    }

    /// The first tool by name that declares `key`.
    pub(crate) fn first_declaring(&self, key: &str) -> Option<&str> {
        let id = *self.first_declared_by.get(key)?;
        Some(&self.tools[id as usize])
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
            keys_of(&index, index.with_form("styleid").iter().copied()),
            ["styleId", "style_id"]
        );
        assert_eq!(
            keys_of(&index, index.with_initials("tt").iter().copied()),
            ["target_timezone"]
        );
        assert_eq!(
            keys_of(&index, index.with_initials("c").iter().copied()),
            ["count"]
        );
        assert_eq!(keys_of(&index, index.with_length(4).iter().copied()), ["path"]);
        assert!(index.with_form("nothing").is_empty());
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
        assert_eq!(index.first_declaring("path"), Some("a"));
        assert_eq!(index.first_declaring("y"), None);
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
