//! A call's arguments given as a JavaScript object, as `index.js` read
//! them, once, as `JSON.stringify` reads them (so `toJSON` honoured, each
//! getter run once): their top-level keys, their shape (their JSON with
//! every scalar written `0`) when a value nests, and their scalars. The
//! core reads these, never the object: reading it again could run a
//! getter twice, and would not see what `toJSON` makes of it.

use std::cell::Cell;
use std::fmt;

use mcp_unknown_keys::audit::{HostObject, NestedScan, NotAnObject};
use serde::de::value::{Error as NoValue, StrDeserializer, UnitDeserializer};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::js::{Js, Kind};

/// What `index.js` read of a call's arguments (see its `readArguments`).
pub struct ReadArguments<'k> {
    /// The top-level keys JSON writes, joined by NUL.
    pub joined: &'k str,
    /// How many there are; when the joined keys split into more (a key
    /// holds a NUL), they are read from `keys` instead.
    pub count: u32,
    /// The same keys, as an array of strings.
    pub keys: Js,
    /// The arguments' JSON with every scalar written `0`, when a value
    /// is an object or an array: the core's scan of nested keys reads it.
    pub shape: Option<&'k str>,
    /// The scalars, in the order they are written (in `shape`, or one per
    /// key): read only for a warning's diagnosis.
    pub scalars: Js,
}

impl ReadArguments<'_> {
    /// Hands the top-level keys to `read`.
    fn with_keys<R>(&self, read: impl FnOnce(&mut dyn Iterator<Item = &str>) -> R) -> Result<R, NotAnObject> {
        let parts = match self.joined.is_empty() {
            true => 0,
            false => self.joined.bytes().filter(|byte| *byte == 0).count() + 1,
        };
        if parts == self.count as usize {
            return Ok(read(&mut self.joined.split('\0').take(parts)));
        }
        let keys = (0..self.keys.len().map_err(|_| NotAnObject)?)
            .map(|index| self.keys.element(index).and_then(Js::text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| NotAnObject)?;
        Ok(read(&mut keys.iter().map(String::as_str)))
    }
}

impl fmt::Debug for ReadArguments<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReadArguments")
    }
}

impl HostObject for ReadArguments<'_> {
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
        self.with_keys(|keys| keys.for_each(on_key))
    }

    fn to_object(&self) -> Option<Map<String, Value>> {
        let scalars = Scalars::new(self.scalars);
        match self.shape {
            Some(shape) => {
                let mut shape = serde_json::Deserializer::from_str(shape);
                match Filled(&scalars).deserialize(&mut shape).ok()? {
                    Value::Object(object) => Some(object),
                    _ => None,
                }
            }
            None => self
                .with_keys(|keys| keys.map(|key| (key.to_owned(), scalars.next())).collect())
                .ok(),
        }
    }

    fn scan(&self, scan: NestedScan<'_, '_, '_>) -> Result<(), NotAnObject> {
        match self.shape {
            Some(shape) => serde_json::Deserializer::from_str(shape)
                .deserialize_map(scan)
                .map_err(|_| NotAnObject),
            None => self
                .with_keys(|keys| scan.visit_map(FlatKeys(keys)))?
                .map_err(|_| NotAnObject),
        }
    }
}

/// The keys of arguments whose values are all scalars, each value read as
/// `null` (the scan reads no scalar).
struct FlatKeys<'i, 'k>(&'i mut dyn Iterator<Item = &'k str>);

impl<'de> MapAccess<'de> for FlatKeys<'_, '_> {
    type Error = NoValue;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, NoValue> {
        self.0
            .next()
            .map(|key| seed.deserialize(StrDeserializer::new(key)))
            .transpose()
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, NoValue> {
        seed.deserialize(UnitDeserializer::new())
    }
}

/// The scalars `index.js` kept, handed out in order.
struct Scalars {
    array: Js,
    next: Cell<u32>,
}

impl Scalars {
    fn new(array: Js) -> Scalars {
        Scalars {
            array,
            next: Cell::new(0),
        }
    }

    /// The next scalar as JSON holds it (`null` if it cannot be read).
    fn next(&self) -> Value {
        let index = self.next.get();
        self.next.set(index + 1);
        let Ok(scalar) = self.array.element(index) else {
            return Value::Null;
        };
        match scalar.kind() {
            Kind::String => scalar.text().map_or(Value::Null, Value::String),
            Kind::Bool => scalar.bool().map_or(Value::Null, Value::Bool),
            Kind::Number => scalar.number().map_or(Value::Null, number),
            _ => Value::Null,
        }
    }
}

/// A number as `JSON.stringify` writes it: a whole one as an integer, one
/// that is not finite as `null`.
fn number(number: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if number.fract() == 0.0 && number.abs() <= EXACT {
        Value::from(number as i64)
    } else {
        Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

/// The arguments' shape read back with each `0` replaced by the next
/// scalar: the arguments as JSON holds them, to the depth `index.js` read.
#[derive(Clone, Copy)]
struct Filled<'s>(&'s Scalars);

impl<'de> DeserializeSeed<'de> for Filled<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Filled<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an arguments' shape")
    }

    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(self.0.next())
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut array = Vec::new();
        while let Some(item) = items.next_element_seed(self)? {
            array.push(item);
        }
        Ok(Value::Array(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = members.next_key::<String>()? {
            let value = members.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
