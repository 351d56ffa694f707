//! The scan of a call whose tool declares nested objects: each key is checked
//! against the shape of the object it is in, and a declared key's value is
//! read against its own shape, down to [`MAX_NESTED_DEPTH`].
//!
//! Like the top-level scan, it builds no value: keys are borrowed from the
//! text, values with no shape to read are skipped with [`IgnoredAny`]
//! (which serde_json skips without recursion, so no value is too deep to
//! skip), and the path to the current value is a chain of frames on the
//! stack, written out only for a key that is reported. A call whose keys
//! are all declared allocates nothing.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{Arguments, NotAnObject};
use crate::audit::catalog::Declared;
use crate::audit::catalog::shape::{Object, Shape, ShapeId};
use crate::audit::path::{self, Step};
use crate::limits::MAX_NESTED_DEPTH;

/// What a scan found undeclared: top-level keys, and nested keys as paths;
/// and, when required keys are checked, the required keys missing, as paths
/// (a top-level key is its own path). None sorted nor deduplicated. At most
/// [`MAX_UNDECLARED_PER_CALL`](crate::limits::MAX_UNDECLARED_PER_CALL) are
/// kept, so that no call costs the claims and the diagnosis of a million
/// keys; the rest are counted in `more`.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub keys: Vec<String>,
    pub paths: Vec<String>,
    pub missing: Vec<String>,
    /// How many keys the arguments' own object held, duplicates included:
    /// none, and required keys missing, is an emptied call.
    pub top_level_keys: usize,
    pub more: usize,
}

impl Found {
    /// Keeps an undeclared top-level key, or counts it past the bound.
    pub(crate) fn push_key(&mut self, key: &str) {
        if self.is_full() {
            self.more += 1;
        } else {
            self.keys.push(key.to_owned());
        }
    }

    /// Keeps an undeclared nested key's path, or counts it past the bound.
    fn push_path(&mut self, path: &str) {
        if self.is_full() {
            self.more += 1;
        } else {
            self.paths.push(path.to_owned());
        }
    }

    /// Keeps the path of a missing required key, or counts it past the
    /// bound.
    fn push_missing(&mut self, path: &str) {
        if self.is_full() {
            self.more += 1;
        } else {
            self.missing.push(path.to_owned());
        }
    }

    /// Keeps each of `object`'s required keys that `present` lacks, as
    /// top-level keys: for the scan of a tool without nested shapes.
    pub(crate) fn push_missing_keys(&mut self, object: &Object, present: &Present) {
        let mut path = String::new();
        for (rank, key) in object.required_keys().enumerate() {
            if !present.has(rank) {
                path.clear();
                path::push(&mut path, Step::Key(key));
                self.push_missing(&path);
            }
        }
    }

    /// Whether as many keys and paths are kept as one call is read for.
    pub(crate) fn is_full(&self) -> bool {
        self.keys.len() + self.paths.len() + self.missing.len() >= crate::limits::MAX_UNDECLARED_PER_CALL
    }
}

/// Which of an object's required keys (by rank) a call's object carried.
/// The first 64 are bits of one word; a schema requiring more spills into
/// a vector, made only then.
#[derive(Debug, Default)]
pub(crate) struct Present {
    low: u64,
    high: Vec<u64>,
}

impl Present {
    /// The required key of `rank` was carried.
    #[inline(always)]
    pub(crate) fn mark(&mut self, rank: usize) {
        if rank < 64 {
            self.low |= 1 << rank;
        } else {
            self.mark_high(rank);
        }
    }

    #[cold]
    #[inline(never)]
    fn mark_high(&mut self, rank: usize) {
        let word = rank / 64 - 1;
        if self.high.len() <= word {
            self.high.resize(word + 1, 0);
        }
        self.high[word] |= 1 << (rank % 64);
    }

    /// Whether the required key of `rank` was carried.
    pub(crate) fn has(&self, rank: usize) -> bool {
        match rank {
            0..64 => self.low & (1 << rank) != 0,
            _ => self
                .high
                .get(rank / 64 - 1)
                .is_some_and(|word| word & (1 << (rank % 64)) != 0),
        }
    }

    /// Whether every one of `required` keys was carried.
    #[inline]
    pub(crate) fn has_all(&self, required: usize) -> bool {
        if required <= 64 {
            let all = if required == 64 {
                u64::MAX
            } else {
                (1u64 << required) - 1
            };
            return self.low == all;
        }
        (0..required).all(|rank| self.has(rank))
    }
}

/// Scans `arguments` against every shape `declared` has. `tolerates` says
/// which top-level keys and which paths are not reported.
/// With `check_required`, the required keys each object read lacks are
/// kept too.
pub(crate) fn scan(
    arguments: Arguments<'_>,
    declared: &Declared,
    tolerates: &dyn Fn(&str) -> bool,
    check_required: bool,
    found: &mut Found,
) -> Result<(), NotAnObject> {
    let mut scan = Scan {
        shapes: declared.shapes(),
        tolerates,
        check_required,
        found,
        path: String::new(),
        reported: HashSet::new(),
    };
    let top = ObjectVisitor {
        scan: &mut scan,
        object: declared.root(),
        at: None,
        depth: 0,
    };
    let scanned = match arguments {
        Arguments::Json(text) => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            deserializer
                .deserialize_map(top)
                .and_then(|()| deserializer.end())
        }
        Arguments::Object(object) => object.deserialize_map(top),
        Arguments::Host(host) => return host.scan(NestedScan(top)),
    };
    scanned.map_err(|_| NotAnObject)
}

/// The scan of a call's nested keys, handed to a [`HostObject`] to run over
/// its own object: a serde [`Visitor`] of the arguments' top-level map, to
/// give to a serde `Deserializer` over the host's object
/// (`deserialize_map`). The scan reads keys and descends only into the
/// values that have a shape; it skips every other value with
/// [`IgnoredAny`], which a host's deserializer may answer without reading
/// the value at all (`visit_unit`).
///
/// [`HostObject`]: super::HostObject
pub struct NestedScan<'s, 'c, 't>(ObjectVisitor<'s, 'c, 't, 'static>);

impl NestedScan<'_, '_, '_> {
    /// Runs the scan over `object`, the host's object converted to JSON:
    /// what [`HostObject::scan`](super::HostObject::scan) does unless the
    /// host has a deserializer of its own.
    pub fn over_object(self, object: &Map<String, Value>) -> Result<(), NotAnObject> {
        object.deserialize_map(self).map_err(|_| NotAnObject)
    }
}

impl<'de> Visitor<'de> for NestedScan<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        self.0.visit_map(map)
    }
}

struct Scan<'c, 't> {
    shapes: &'c [Shape],
    tolerates: &'t dyn Fn(&str) -> bool,
    /// Whether the required keys an object lacks are kept.
    check_required: bool,
    found: &'t mut Found,
    /// The path of the key being reported, written into one buffer reused
    /// from finding to finding.
    path: String,
    /// The paths reported (or tolerated) so far in this call: the items of
    /// an array that all carry one undeclared key make one finding, each
    /// further one costing a lookup, not an allocation.
    reported: HashSet<Box<str>>,
}

impl Scan<'_, '_> {
    /// Reports `key`, undeclared in the object at `at` (`None`: the top
    /// level).
    #[cold]
    fn undeclared(&mut self, at: Option<&Frame<'_>>, key: &str) {
        match at {
            None => {
                if !(self.tolerates)(key) {
                    self.found.push_key(key);
                }
            }
            Some(at) => {
                self.path.clear();
                at.write_path(&mut self.path);
                path::push(&mut self.path, Step::Key(key));
                if self.reported.contains(self.path.as_str()) {
                    return;
                }
                if self.found.is_full() {
                    // Past the bound, the paths reported are no longer
                    // remembered either: counted, at most once per item.
                    self.found.more += 1;
                    return;
                }
                self.reported.insert(self.path.as_str().into());
                if !(self.tolerates)(&self.path) {
                    self.found.push_path(&self.path);
                }
            }
        }
    }

    /// Keeps each required key of `object` (at `at`) that `present` lacks,
    /// as a path; each path once per call, however many items lack it.
    #[cold]
    fn missing(&mut self, at: Option<&Frame<'_>>, object: &Object, present: &Present) {
        for (rank, key) in object.required_keys().enumerate() {
            if present.has(rank) {
                continue;
            }
            self.path.clear();
            if let Some(at) = at {
                at.write_path(&mut self.path);
            }
            path::push(&mut self.path, Step::Key(key));
            if self.reported.contains(self.path.as_str()) {
                continue;
            }
            if self.found.is_full() {
                self.found.more += 1;
                continue;
            }
            self.reported.insert(self.path.as_str().into());
            self.found.push_missing(&self.path);
        }
    }
}

/// One step of the path to the value being read, on the stack.
struct Frame<'a> {
    parent: Option<&'a Frame<'a>>,
    step: Step<'a>,
}

impl Frame<'_> {
    /// Appends the path from the top level through this frame to `path`.
    /// Recursive: frames are at most [`MAX_NESTED_DEPTH`] deep.
    fn write_path(&self, path: &mut String) {
        if let Some(parent) = self.parent {
            parent.write_path(path);
        }
        path::push(path, self.step);
    }
}

/// The text of a key being descended into: a declared key's own, borrowed
/// from the catalogue, or a key matched by pattern, as the call wrote it.
enum KeyText<'c, 'de> {
    Declared(&'c str),
    Written(Cow<'de, str>),
}

impl KeyText<'_, '_> {
    fn as_str(&self) -> &str {
        match self {
            KeyText::Declared(key) => key,
            KeyText::Written(key) => key,
        }
    }
}

/// What to do with the value of the key just read.
enum Next<'c, 'de> {
    Skip,
    Descend { shape: ShapeId, key: KeyText<'c, 'de> },
}

/// Reads the keys of an object against `object`.
struct ObjectVisitor<'s, 'c, 't, 'f> {
    scan: &'s mut Scan<'c, 't>,
    object: &'c Object,
    /// Where the object is; `None` at the top level.
    at: Option<&'f Frame<'f>>,
    depth: usize,
}

impl<'de, 'c> Visitor<'de> for ObjectVisitor<'_, 'c, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let shapes = self.scan.shapes;
        let mut present = Present::default();
        let check_required = self.scan.check_required && !self.object.required.is_empty();
        loop {
            let key = KeySeed {
                scan: &mut *self.scan,
                object: self.object,
                at: self.at,
                descend: self.depth < MAX_NESTED_DEPTH,
                present: &mut present,
            };
            match map.next_key_seed(key)? {
                None => {
                    if check_required && !present.has_all(self.object.required.len()) {
                        self.scan.missing(self.at, self.object, &present);
                    }
                    return Ok(());
                }
                Some(Next::Skip) => {
                    map.next_value::<IgnoredAny>()?;
                }
                Some(Next::Descend { shape, key }) => {
                    let frame = Frame {
                        parent: self.at,
                        step: Step::Key(key.as_str()),
                    };
                    map.next_value_seed(ValueSeed {
                        scan: &mut *self.scan,
                        shape: &shapes[shape as usize],
                        at: &frame,
                        depth: self.depth + 1,
                    })?;
                }
            }
        }
    }
}

/// Reads one key of an object, reports it if undeclared, and says what to
/// do with its value.
struct KeySeed<'s, 'c, 't, 'f> {
    scan: &'s mut Scan<'c, 't>,
    object: &'c Object,
    at: Option<&'f Frame<'f>>,
    /// Whether a value may still be descended into.
    descend: bool,
    /// The object's required keys read so far.
    present: &'s mut Present,
}

impl<'c, 'de> KeySeed<'_, 'c, '_, '_> {
    fn next(self, key: &str, written: impl FnOnce() -> Cow<'de, str>) -> Next<'c, 'de> {
        let object = self.object;
        if self.at.is_none() {
            self.scan.found.top_level_keys += 1;
        }
        if let Some(index) = object.table.find(key) {
            if let Some(rank) = object.required_rank(index) {
                self.present.mark(rank);
            }
            return match object.child(index) {
                Some(shape) if self.descend => Next::Descend {
                    shape,
                    key: KeyText::Declared(&object.table.keys()[index]),
                },
                _ => Next::Skip,
            };
        }
        match object.by_pattern(key) {
            Some(Some(shape)) if self.descend => Next::Descend {
                shape,
                key: KeyText::Written(written()),
            },
            Some(_) => Next::Skip,
            None => {
                self.scan.undeclared(self.at, key);
                Next::Skip
            }
        }
    }
}

impl<'de, 'c> DeserializeSeed<'de> for KeySeed<'_, 'c, '_, '_> {
    type Value = Next<'c, 'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Next<'c, 'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'c> Visitor<'de> for KeySeed<'_, 'c, '_, '_> {
    type Value = Next<'c, 'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Next<'c, 'de>, E> {
        Ok(self.next(key, || Cow::Borrowed(key)))
    }

    fn visit_str<E>(self, key: &str) -> Result<Next<'c, 'de>, E> {
        // A key with escapes, decoded into a buffer the next key reuses:
        // copied only when its value is descended into by pattern.
        Ok(self.next(key, || Cow::Owned(key.to_owned())))
    }
}

/// Reads a value against `shape`, whatever its JSON type.
struct ValueSeed<'s, 'c, 't, 'f> {
    scan: &'s mut Scan<'c, 't>,
    shape: &'c Shape,
    at: &'f Frame<'f>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match &self.shape.object {
            Some(object) if object.audits() => ObjectVisitor {
                scan: self.scan,
                object,
                at: Some(self.at),
                depth: self.depth,
            }
            .visit_map(map),
            // An object where the schema says nothing of objects.
            _ => {
                while map.next_key::<IgnoredAny>()?.is_some() {
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(())
            }
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let items = match self.shape.items {
            Some(items) if self.depth < MAX_NESTED_DEPTH => items,
            // An array where the schema says nothing of arrays, or too deep.
            _ => {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(());
            }
        };
        let frame = Frame {
            parent: Some(self.at),
            step: Step::Items,
        };
        let shapes = self.scan.shapes;
        let shape = &shapes[items as usize];
        loop {
            let item = ValueSeed {
                scan: &mut *self.scan,
                shape,
                at: &frame,
                depth: self.depth + 1,
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(());
            }
        }
    }

    // A value of another type than the shape's is not read further.
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}
