//! A serde `Deserializer` over a call's Python values: the core's scan of
//! nested keys walks dicts and lists in place, borrowing each key from its
//! string and skipping every value it has no shape for without reading it.

use std::borrow::Cow;
use std::fmt;

use mcp_unknown_keys::limits::MAX_NESTED_DEPTH;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::convert::{Scalar, key_text};

/// How deep values are read: below the depth the core reads nested keys
/// to, a value reads as `null`, which also ends a dict that contains itself.
const MAX_DEPTH: usize = MAX_NESTED_DEPTH + 1;

/// A dict key that has no JSON form: the arguments have none either.
#[derive(Debug)]
pub struct NoJsonForm;

impl fmt::Display for NoJsonForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a dict key with no JSON form")
    }
}

impl std::error::Error for NoJsonForm {}

impl de::Error for NoJsonForm {
    fn custom<T: fmt::Display>(_: T) -> NoJsonForm {
        NoJsonForm
    }
}

/// One Python value as JSON reads it: a dict as a map (its keys as
/// `json.dumps` writes them), a list or a tuple as a sequence, a string,
/// a boolean, a number that fits 64 bits, `None`; anything else, and
/// anything nested too deep, as `null`.
pub struct PyValue<'a, 'py> {
    value: &'a Bound<'py, PyAny>,
    depth: usize,
}

impl<'a, 'py> PyValue<'a, 'py> {
    /// The top-level value of a call's arguments.
    pub fn new(value: &'a Bound<'py, PyAny>) -> PyValue<'a, 'py> {
        PyValue { value, depth: 0 }
    }
}

impl<'de> Deserializer<'de> for PyValue<'_, '_> {
    type Error = NoJsonForm;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NoJsonForm> {
        let (value, depth) = (self.value, self.depth + 1);
        if depth > MAX_DEPTH {
            return visitor.visit_unit();
        }
        if let Ok(dict) = value.cast::<PyDict>() {
            return visitor.visit_map(DictItems {
                items: dict.iter(),
                value: None,
                depth,
            });
        }
        if let Ok(list) = value.cast::<PyList>() {
            return visitor.visit_seq(Items {
                items: list.iter(),
                depth,
            });
        }
        if let Ok(tuple) = value.cast::<PyTuple>() {
            return visitor.visit_seq(Items {
                items: tuple.iter(),
                depth,
            });
        }
        match Scalar::of(value) {
            Some(Scalar::Str(Cow::Borrowed(text))) => visitor.visit_str(text),
            Some(Scalar::Str(Cow::Owned(text))) => visitor.visit_string(text),
            Some(Scalar::Bool(flag)) => visitor.visit_bool(flag),
            Some(Scalar::Int(int)) => visitor.visit_i64(int),
            Some(Scalar::UInt(int)) => visitor.visit_u64(int),
            Some(Scalar::Float(float)) => visitor.visit_f64(float),
            Some(Scalar::Null) | None => visitor.visit_unit(),
        }
    }

    /// A value the scan skips is not read at all.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NoJsonForm> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}

/// A dict's items, each key read as text.
struct DictItems<'py> {
    items: pyo3::types::iter::BoundDictIterator<'py>,
    value: Option<Bound<'py, PyAny>>,
    depth: usize,
}

impl<'de> MapAccess<'de> for DictItems<'_> {
    type Error = NoJsonForm;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, NoJsonForm> {
        let Some((key, value)) = self.items.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let key = key_text(&key).ok_or(NoJsonForm)?;
        seed.deserialize(Key(&key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, NoJsonForm> {
        let value = self.value.take().ok_or(NoJsonForm)?;
        seed.deserialize(PyValue {
            value: &value,
            depth: self.depth,
        })
    }
}

/// A list's or a tuple's items.
struct Items<I> {
    items: I,
    depth: usize,
}

impl<'de, 'py, I: Iterator<Item = Bound<'py, PyAny>>> SeqAccess<'de> for Items<I> {
    type Error = NoJsonForm;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, NoJsonForm> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        seed.deserialize(PyValue {
            value: &item,
            depth: self.depth,
        })
        .map(Some)
    }
}

/// A dict key, as text.
struct Key<'a>(&'a str);

impl<'de> Deserializer<'de> for Key<'_> {
    type Error = NoJsonForm;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NoJsonForm> {
        visitor.visit_str(self.0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NoJsonForm> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier
    }
}
