//! The shapes a tool's arguments are audited against: which keys an object
//! declares, and the shape of each declared key's value.
//!
//! A schema may refer to itself (a tree's nodes, a linked list), so shapes
//! form a graph, not a tree: a value's shape is named by its index in the
//! tool's list of shapes, and a recursive schema is a cycle of indices, read
//! once however deep the arguments go.

use super::pattern::Matcher;
use super::table::KeyTable;

/// The index of a shape in its tool's list.
pub(crate) type ShapeId = u32;

/// What a value is audited against, by its JSON type: an object's keys
/// against `object`, an array's items against `items`. A value of any other
/// type, or of a type the shape says nothing about, is not audited further.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    pub object: Option<Object>,
    pub items: Option<ShapeId>,
}

/// The keys an object schema declares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Object {
    /// The keys of `properties`, across combinators and references.
    pub table: KeyTable,
    /// The patterns of `patternProperties`: a key matching one is declared.
    pub patterns: Box<[Pattern]>,
    /// Whether the schema allows no key but those it declares
    /// (`additionalProperties: false` or `unevaluatedProperties: false`).
    pub closed: bool,
    /// The shape of each declared key's value, in the order of the table's
    /// keys; empty when no key has one.
    pub children: Box<[Option<ShapeId>]>,
    /// The indices in `table` of the keys the schema requires (`required`,
    /// on the schema itself and through `allOf` and references), sorted;
    /// a required key no property declares is not among them.
    pub required: Box<[u32]>,
    /// The same indices as bits, for a table of at most 64 keys: a call's
    /// keys are checked against them with one OR per key and one compare.
    pub required_bits: u64,
}

/// One `patternProperties` pattern, compiled.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    pub source: Box<str>,
    pub regex: Matcher,
    /// The shape of the value of a key it matches.
    pub child: Option<ShapeId>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.source == other.source && self.child == other.child
    }
}

impl Eq for Pattern {}

impl Object {
    /// Whether keys are audited against this object: it declares a key or
    /// a pattern, or it is closed. An open object with neither declares
    /// nothing, and every key would be equally undeclared.
    pub(crate) fn audits(&self) -> bool {
        !self.table.keys().is_empty() || !self.patterns.is_empty() || self.closed
    }

    /// Whether `key` is declared, by name or by pattern. Inlined always:
    /// it runs once per key of every call, and a call to it costs as much
    /// as the lookup (saving and restoring the registers it uses).
    #[inline(always)]
    pub(crate) fn declares(&self, key: &str) -> bool {
        self.table.find(key).is_some() || (!self.patterns.is_empty() && self.pattern_of(key).is_some())
    }

    /// The shape of the value of the declared key at `index` in the
    /// table, if it has one.
    #[inline]
    pub(crate) fn child(&self, index: usize) -> Option<ShapeId> {
        self.children.get(index).copied().flatten()
    }

    /// When `key` matches a pattern: the shape of its value, if it has one.
    #[inline]
    pub(crate) fn by_pattern(&self, key: &str) -> Option<Option<ShapeId>> {
        if self.patterns.is_empty() {
            return None;
        }
        self.pattern_of(key).map(|pattern| pattern.child)
    }

    /// The first pattern `key` matches. Patterns are not anchored, as in
    /// JSON Schema: `^x-` must say so to match only at the start.
    #[cold]
    #[inline(never)]
    fn pattern_of(&self, key: &str) -> Option<&Pattern> {
        self.patterns.iter().find(|pattern| pattern.regex.is_match(key))
    }

    /// Which of the required keys the declared key at `index` in the table
    /// is (its rank in `required`), if it is one. Inlined always: it runs
    /// once per declared key of a call to a tool that requires keys.
    #[inline(always)]
    pub(crate) fn required_rank(&self, index: usize) -> Option<usize> {
        if self.required.is_empty() {
            return None;
        }
        self.required.binary_search(&(index as u32)).ok()
    }

    /// `required`'s indices as the bits of [`Object::required_bits`]; the
    /// indices past 63 have no bit (a table that large is checked by rank).
    pub(crate) fn bits_of(required: &[u32]) -> u64 {
        required
            .iter()
            .filter(|&&index| index < 64)
            .fold(0, |bits, &index| bits | 1 << index)
    }

    /// Whether every key a call may carry has a bit: the table holds at
    /// most 64 keys.
    #[inline(always)]
    pub(crate) fn fits_bits(&self) -> bool {
        self.table.keys().len() <= 64
    }

    /// The required keys, in the order of their ranks (sorted).
    pub(crate) fn required_keys(&self) -> impl ExactSizeIterator<Item = &str> {
        let keys = self.table.keys();
        self.required.iter().map(move |&index| &*keys[index as usize])
    }

    /// Whether some key's value has a shape of its own.
    pub(crate) fn has_children(&self) -> bool {
        self.children.iter().any(Option::is_some) || self.patterns.iter().any(|p| p.child.is_some())
    }
}

/// Drops the shapes that audit nothing (an object declaring nothing, an
/// array of such values), and renumbers the rest; the arguments' shape stays
/// first. A shape audits something when its object does, or when its items
/// do: a fixpoint, since items may lead back to a shape.
pub(crate) fn prune(built: Vec<Shape>) -> Vec<Shape> {
    let mut useful = vec![false; built.len()];
    loop {
        let mut changed = false;
        for (id, shape) in built.iter().enumerate() {
            if !useful[id]
                && (shape.object.as_ref().is_some_and(Object::audits)
                    || shape.items.is_some_and(|items| useful[items as usize]))
            {
                useful[id] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut ids: Vec<Option<ShapeId>> = vec![None; built.len()];
    let mut next = 0;
    for (id, keep) in useful.iter().enumerate() {
        if id == 0 || *keep {
            ids[id] = Some(next);
            next += 1;
        }
    }
    let renumber = |child: Option<ShapeId>| {
        child
            .filter(|&c| useful[c as usize])
            .and_then(|c| ids[c as usize])
    };
    built
        .into_iter()
        .enumerate()
        .filter(|(id, _)| ids[*id].is_some())
        .map(|(_, mut shape)| {
            shape.items = renumber(shape.items);
            if let Some(object) = &mut shape.object {
                object
                    .children
                    .iter_mut()
                    .for_each(|child| *child = renumber(*child));
                if object.children.iter().all(Option::is_none) {
                    object.children = Box::default();
                }
                object
                    .patterns
                    .iter_mut()
                    .for_each(|p| p.child = renumber(p.child));
            }
            shape
        })
        .collect()
}
