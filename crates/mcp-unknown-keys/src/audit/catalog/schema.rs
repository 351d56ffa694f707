//! Reading a tool's schema into the shapes its arguments are audited
//! against: the declared keys of each object, gathered across combinators
//! and local references, and the shape of each declared key's value.
//!
//! A shape stands for a set of subschemas that a value must be read against
//! together (a property declared in two `allOf` branches has both for its
//! value). Each set is read once, whatever the number of places it is met:
//! a set already read is the same shape, so a recursive schema is a cycle
//! of shapes, not an endless tree.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::note::{Note, Problem};
use super::pattern;
use super::reference::References;
use super::shape::{Object, Pattern, Shape, ShapeId, prune};
use super::table::KeyTable;
use crate::audit::path::{self, Step};
use crate::limits::{MAX_COMPOSITION_DEPTH, MAX_SHAPES, MAX_SUBSCHEMAS};

/// The most notes kept about one tool.
const MAX_NOTES: usize = 16;

/// Whether `keyword` may make a subschema an object or array shape: a
/// property whose schema has none of these (`{"type": "string"}`) has no
/// shape.
fn is_structural_keyword(keyword: &str) -> bool {
    matches!(
        keyword,
        "properties"
            | "patternProperties"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "$ref"
            | "$dynamicRef"
            | "$recursiveRef"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "if"
            | "then"
            | "else"
            | "dependentSchemas"
            | "dependencies"
    )
}

/// Whether `keyword` says nothing of a value's shape: a schema holding only
/// these beside a `$ref` is read as the schema it refers to.
fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "description"
            | "title"
            | "default"
            | "examples"
            | "$comment"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
    )
}

/// One tool's schema, read.
#[derive(Debug, Default)]
pub(crate) struct Read {
    /// Every shape the arguments are read against, the arguments' own first;
    /// empty when no declared key's value has a shape.
    pub shapes: Vec<Shape>,
    /// The arguments' object: what the tool declares at the top level.
    pub root: Object,
    /// The `default` of each top-level property that gives one.
    pub defaults: Vec<(Box<str>, Value)>,
    /// What could not be read.
    pub notes: Vec<Note>,
    /// Whether the arguments' own keys were read whole: when not, the keys
    /// in `root` are those read before a bound was met, and the tool is not
    /// audited.
    pub complete: bool,
    /// The work spent, as [`MAX_SCHEMA_WORK`] counts it.
    pub work: usize,
}

/// Reads a tool's schema, spending at most `budget` work, or `None` when
/// there is nothing to read: the schema is not an object, or its
/// `properties` is present and neither an object nor `null` (the
/// specification's reference reads a `null` one as absent: the tool
/// declares no property). A schema that cannot be read whole says why in a
/// note.
pub(crate) fn read(schema: &Value, budget: usize) -> Option<Read> {
    let members = schema.as_object()?;
    if members
        .get("properties")
        .is_some_and(|p| !p.is_object() && !p.is_null())
    {
        return None;
    }
    let mut reader = Reader {
        root: schema,
        references: References::of(schema),
        visits: 0,
        budget,
        left: budget,
        exhausted: false,
        notes: Vec::new(),
        interned: HashMap::new(),
        pending: Vec::new(),
    };
    Some(reader.read())
}

struct Reader<'s> {
    root: &'s Value,
    references: References<'s>,
    visits: usize,
    /// The work this read may spend, and what is left of it.
    budget: usize,
    left: usize,
    /// Whether a bound was met reading nested shapes: no new shape is made
    /// (and past [`MAX_SUBSCHEMAS`], none is read).
    exhausted: bool,
    notes: Vec<Note>,
    /// Each shape's set of subschemas, by their addresses, and its id.
    interned: HashMap<Box<[usize]>, ShapeId>,
    /// The shapes met, by id: their subschemas and a path to them (for
    /// notes), taken as they are read.
    pending: Vec<(Vec<&'s Value>, String)>,
}

/// What one shape's subschemas say, gathered across combinators and
/// references.
#[derive(Default)]
struct Facts<'s> {
    properties: Vec<(&'s str, &'s Value)>,
    patterns: Vec<(&'s str, &'s Value)>,
    items: Vec<&'s Value>,
    closed: bool,
    /// The keys `required` names, on the way every value must satisfy
    /// (the schema itself, `allOf` and references), as `closed` is read.
    required: Vec<&'s str>,
    /// Why the shape's declared keys are unknown, if they are.
    problem: Option<Problem>,
    /// A bound was met: what is gathered is only part of what the schemas
    /// say.
    truncated: bool,
}

impl<'s> Reader<'s> {
    fn read(&mut self) -> Read {
        // Not interned: most schemas never refer back to their root, and one
        // that does gets a shape of its own for it, read the same way.
        self.pending.push((vec![self.root], String::new()));
        let mut built: Vec<Shape> = Vec::new();
        let mut defaults = Vec::new();
        let mut complete = true;
        while built.len() < self.pending.len() {
            let id = built.len();
            let (schemas, at) = std::mem::take(&mut self.pending[id]);
            let facts = self.walk(&schemas);
            if let Some(problem) = facts.problem {
                self.note(&at, problem);
                built.push(Shape::default());
                continue;
            }
            if facts.truncated {
                // Past a bound, nothing more is read, no new shape made.
                self.exhaust(&at);
                if id != 0 {
                    built.push(Shape::default());
                    continue;
                }
                // The arguments' own keys read in part: those read stay
                // declared (for the diagnosis), and the tool is not audited.
                complete = false;
            }
            let defaults = (id == 0).then_some(&mut defaults);
            let shape = self.shape_of(facts, &at, defaults);
            built.push(shape);
        }
        let mut shapes = if built.len() == 1 { built } else { prune(built) };
        let nested = complete && shapes[0].object.as_ref().is_some_and(Object::has_children);
        let root = if nested {
            // Kept in its place too: a recursive schema's shapes may lead
            // back to the arguments' own.
            shapes[0].object.clone().unwrap_or_default()
        } else {
            let root = shapes[0].object.take().unwrap_or_default();
            shapes.clear();
            root
        };
        Read {
            shapes,
            root,
            defaults,
            notes: std::mem::take(&mut self.notes),
            complete,
            work: self.budget - self.left,
        }
    }

    /// Spends `work`; false, with nothing spent, when less than that is
    /// left (then nothing is left: reading stops).
    fn spend(&mut self, work: usize) -> bool {
        if work > self.left {
            self.left = 0;
            return false;
        }
        self.left -= work;
        true
    }

    /// Gathers what `schemas` say, following combinators and references.
    /// `closed` is read only on the way that every value must satisfy
    /// (`allOf` and references): an `anyOf` branch that is closed does not
    /// close the object.
    fn walk(&mut self, schemas: &[&'s Value]) -> Facts<'s> {
        let mut facts = Facts::default();
        let mut seen = Seen::default();
        let mut stack: Vec<(&'s Value, bool, usize)> =
            schemas.iter().rev().map(|schema| (*schema, true, 0)).collect();
        while let Some((schema, must, depth)) = stack.pop() {
            let Value::Object(members) = schema else {
                continue;
            };
            // Seen once on each way: met first in an `anyOf` branch and then
            // through `allOf`, a subschema still closes the object.
            if !seen.insert(address(schema) | usize::from(must)) {
                continue;
            }
            self.visits += 1;
            if self.visits > MAX_SUBSCHEMAS || depth > MAX_COMPOSITION_DEPTH || !self.spend(1) {
                facts.truncated = true;
                return facts;
            }
            // One pass over the members, not one lookup per keyword: most
            // subschemas hold a few members, and there are sixteen keywords.
            for (keyword, value) in members {
                // Each property, pattern, branch and reference (each member
                // or item of a structural keyword's value) is charged before
                // it is read: a listing cannot make this walk longer than
                // the budget, however it repeats itself.
                let work = match value {
                    Value::Object(members) => members.len(),
                    Value::Array(items) => items.len(),
                    _ => 1,
                };
                if is_structural_keyword(keyword) && !self.spend(work) {
                    facts.truncated = true;
                    return facts;
                }
                let mut push = |value: &'s Value, must: bool| stack.push((value, must, depth + 1));
                match (keyword.as_str(), value) {
                    ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(reference)) => {
                        match self.references.resolve(reference) {
                            Ok(target) => push(target, must),
                            Err(problem) => {
                                facts.problem.get_or_insert(problem);
                            }
                        }
                    }
                    ("properties", Value::Object(properties)) => {
                        facts
                            .properties
                            .extend(properties.iter().map(|(k, v)| (k.as_str(), v)));
                    }
                    ("patternProperties", Value::Object(patterns)) => {
                        facts
                            .patterns
                            .extend(patterns.iter().map(|(k, v)| (k.as_str(), v)));
                    }
                    ("additionalProperties" | "unevaluatedProperties", Value::Bool(false)) => {
                        facts.closed |= must;
                    }
                    ("required", Value::Array(keys)) if must => {
                        facts.required.extend(keys.iter().filter_map(Value::as_str));
                    }
                    ("items", Value::Object(_)) => facts.items.push(value),
                    ("allOf", Value::Array(branches)) => {
                        branches.iter().for_each(|branch| push(branch, must))
                    }
                    ("anyOf" | "oneOf", Value::Array(branches)) => {
                        branches.iter().for_each(|branch| push(branch, false));
                    }
                    ("if" | "then" | "else", branch) => push(branch, false),
                    ("dependentSchemas" | "dependencies", Value::Object(dependents)) => {
                        dependents.values().for_each(|branch| push(branch, false));
                    }
                    _ => {}
                }
            }
        }
        facts
    }

    /// The shape of what `facts` say, interning the shapes of its keys'
    /// values. For the arguments' own shape, `defaults` gathers the first
    /// `default` each property gives.
    fn shape_of(
        &mut self,
        mut facts: Facts<'s>,
        at: &str,
        mut defaults: Option<&mut Vec<(Box<str>, Value)>>,
    ) -> Shape {
        // Stable: within a key, the walk's order, so the first default wins.
        facts.properties.sort_by(|a, b| a.0.cmp(b.0));
        let mut keys = Vec::with_capacity(facts.properties.chunk_by(|a, b| a.0 == b.0).count());
        // Made only when some key's value has a shape: most have none.
        let mut children: Vec<Option<ShapeId>> = Vec::new();
        for group in facts.properties.chunk_by(|a, b| a.0 == b.0) {
            let key = group[0].0;
            if let Some(defaults) = defaults.as_deref_mut()
                && let Some(default) = group
                    .iter()
                    .find_map(|(_, schema)| self.normalize(schema).get("default"))
            {
                defaults.push((key.into(), default.clone()));
            }
            keys.push(Box::from(key));
            let child = self.child(group.iter().map(|(_, schema)| *schema), at, Step::Key(key));
            if child.is_some() && children.is_empty() {
                children.resize(keys.len() - 1, None);
            }
            if child.is_some() || !children.is_empty() {
                children.push(child);
            }
        }
        facts.patterns.sort_by(|a, b| a.0.cmp(b.0));
        let mut patterns = Vec::new();
        for group in facts.patterns.chunk_by(|a, b| a.0 == b.0) {
            let source = group[0].0;
            let Some(regex) = pattern::compile(source) else {
                let pattern = source.to_owned();
                self.note(at, Problem::BadPattern { pattern });
                continue;
            };
            if !regex.is_matched() {
                let pattern = source.to_owned();
                self.note(at, Problem::UnmatchedPattern { pattern });
            }
            let step = format!("/{source}/");
            let child = self.child(group.iter().map(|(_, schema)| *schema), at, Step::Key(&step));
            patterns.push(Pattern {
                source: source.into(),
                regex,
                child,
            });
        }
        let items = self.child(facts.items.iter().copied(), at, Step::Items);
        let table = KeyTable::new(keys);
        let required = required_indices(&table, &facts.required);
        let object = Object {
            required_bits: Object::bits_of(&required),
            table,
            patterns: patterns.into(),
            closed: facts.closed,
            children: children.into(),
            required,
        };
        Shape {
            object: Some(object),
            items,
        }
    }

    /// The shape of a value that must satisfy all of `schemas`, or `None`
    /// when none of them could give it one (or past [`MAX_SHAPES`]).
    fn child(
        &mut self,
        schemas: impl Iterator<Item = &'s Value>,
        at: &str,
        step: Step<'_>,
    ) -> Option<ShapeId> {
        // A schema with no structural keyword has no `$ref` to follow either.
        let mut schemas: Vec<&'s Value> = schemas
            .filter(|schema| is_structural(schema))
            .map(|schema| self.normalize(schema))
            .filter(|schema| is_structural(schema))
            .collect();
        if schemas.is_empty() {
            return None;
        }
        schemas.sort_unstable_by_key(|schema| address(schema));
        schemas.dedup_by_key(|schema| address(schema));
        self.intern(schemas, at, Some(step))
    }

    /// The id of the shape of `schemas`, a new one if they were never met;
    /// `None` past [`MAX_SHAPES`] (or another bound met before).
    fn intern(&mut self, schemas: Vec<&'s Value>, at: &str, step: Option<Step<'_>>) -> Option<ShapeId> {
        let addresses: Box<[usize]> = schemas.iter().map(|schema| address(schema)).collect();
        if let Some(&id) = self.interned.get(&addresses) {
            return Some(id);
        }
        let mut path = at.to_owned();
        if let Some(step) = step {
            path::push(&mut path, step);
        }
        if self.exhausted || self.pending.len() >= MAX_SHAPES {
            self.exhaust(&path);
            return None;
        }
        let id = self.pending.len() as ShapeId;
        self.pending.push((schemas, path));
        self.interned.insert(addresses, id);
        Some(id)
    }

    /// A bound was met while reading nested shapes at `at`: that value, and
    /// those met after it, are not audited; one note says so.
    fn exhaust(&mut self, at: &str) {
        if !self.exhausted {
            self.exhausted = true;
            self.note(at, Problem::TooLarge);
        }
    }

    /// `schema`, or what it refers to when it is a bare `$ref` (annotations
    /// aside): two places referring to one definition are one shape.
    fn normalize(&mut self, mut schema: &'s Value) -> &'s Value {
        for _ in 0..MAX_COMPOSITION_DEPTH {
            let Some(Value::String(reference)) = schema.get("$ref") else {
                break;
            };
            let bare = schema
                .as_object()
                .is_some_and(|members| members.keys().all(|k| k == "$ref" || is_annotation(k)));
            if !bare {
                break;
            }
            match self.references.resolve(reference) {
                Ok(target) => schema = target,
                Err(_) => break,
            }
        }
        schema
    }

    /// Keeps a note, once, up to [`MAX_NOTES`].
    fn note(&mut self, at: &str, problem: Problem) {
        let note = Note::new(at, problem);
        if self.notes.len() < MAX_NOTES && !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}

/// Where a subschema lives: its identity while the schema is borrowed. A
/// `Value` is aligned to eight bytes, so the lowest bit is free for a flag.
fn address(schema: &Value) -> usize {
    schema as *const Value as usize
}

fn is_structural(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|members| members.keys().any(|keyword| is_structural_keyword(keyword)))
}

/// The subschemas one walk has visited, by address: a short list searched
/// in place (most walks visit a handful), and a set past that.
#[derive(Default)]
struct Seen {
    few: [usize; Seen::FEW],
    len: usize,
    many: HashSet<usize>,
}

impl Seen {
    const FEW: usize = 16;

    /// Adds `address`; whether it was not there before.
    fn insert(&mut self, address: usize) -> bool {
        if self.len < Seen::FEW {
            if self.few[..self.len].contains(&address) {
                return false;
            }
            self.few[self.len] = address;
            self.len += 1;
            return true;
        }
        if self.many.is_empty() {
            self.many.extend(self.few);
        }
        self.many.insert(address)
    }
}

/// The indices in `table` of the keys `required` names, sorted, each once.
/// A required key that no property declares is left out: a call carrying
/// it is reported as carrying an undeclared key, and one without it is not
/// said to have lost a key the tool never described.
fn required_indices(table: &KeyTable, required: &[&str]) -> Box<[u32]> {
    let mut indices: Vec<u32> = required
        .iter()
        .filter_map(|key| table.find(key))
        .map(|index| index as u32)
        .collect();
    indices.sort_unstable();
    indices.dedup();
    indices.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_SCHEMA_WORK;
    use serde_json::json;

    #[test]
    fn a_scalar_property_makes_no_shape() {
        let read = read(
            &json!({"properties": {"a": {"type": "string"}, "b": {"$ref": "#/$defs/s"}},
                                "$defs": {"s": {"type": "string"}}}),
            MAX_SCHEMA_WORK,
        )
        .unwrap();
        assert!(read.shapes.is_empty());
        assert!(read.root.children.is_empty());
    }

    #[test]
    fn a_recursive_schema_is_a_cycle_of_shapes() {
        let read = read(&json!({
            "$ref": "#/$defs/node",
            "$defs": {"node": {"properties": {"name": {}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        }), MAX_SCHEMA_WORK)
        .unwrap();
        // The arguments, their `children` (an array) and its items: the
        // items are the node again, so read once.
        assert!(read.shapes.len() <= 3, "{:?}", read.shapes.len());
        assert!(read.root.has_children());
    }
}
