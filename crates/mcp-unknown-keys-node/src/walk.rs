//! A serde `Deserializer` over a call's JavaScript values: the core's scan
//! of nested keys walks objects and arrays where they are, reading each key
//! from its string and skipping every value it has no shape for without
//! reading it.
//!
//! Values read as `JSON.stringify` writes them: an object's own enumerable
//! string keys, in order, but a key whose value is `undefined`, a function
//! or a symbol (left out of the JSON); an array's items; a `BigInt`, and
//! anything nested too deep (an object that contains itself, say), as
//! `null`. A getter or a `Proxy` that throws ends the read with an error:
//! such arguments have no JSON form, so they cannot be sent either.

use std::fmt;

use mcp_unknown_keys::audit::MAX_NESTED_DEPTH;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::js::{Js, Kind, Thrown};

/// How deep values are read: below the depth the core reads nested keys
/// to, a value reads as `null`, which also ends an object that contains
/// itself.
const MAX_DEPTH: usize = MAX_NESTED_DEPTH + 1;

/// Arguments that have no JSON form: reading them threw.
#[derive(Debug)]
pub struct NoJsonForm;

impl fmt::Display for NoJsonForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value with no JSON form")
    }
}

impl std::error::Error for NoJsonForm {}

impl de::Error for NoJsonForm {
    fn custom<T: fmt::Display>(_: T) -> NoJsonForm {
        NoJsonForm
    }
}

impl From<Thrown> for NoJsonForm {
    fn from(_: Thrown) -> NoJsonForm {
        NoJsonForm
    }
}

/// One JavaScript value as JSON reads it.
pub struct JsValue {
    value: Js,
    depth: usize,
}

impl JsValue {
    /// The top-level value of a call's arguments.
    pub fn new(value: Js) -> JsValue {
        JsValue { value, depth: 0 }
    }
}

impl<'de> Deserializer<'de> for JsValue {
    type Error = NoJsonForm;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NoJsonForm> {
        let (value, depth) = (self.value, self.depth + 1);
        if depth > MAX_DEPTH {
            return visitor.visit_unit();
        }
        match value.kind() {
            Kind::Object if value.is_array() => visitor.visit_seq(Items {
                array: value,
                len: value.len()?,
                next: 0,
                depth,
            }),
            Kind::Object => visitor.visit_map(Members::of(value, depth)?),
            Kind::String => visitor.visit_string(value.text()?),
            Kind::Bool => visitor.visit_bool(value.bool()?),
            Kind::Number => number(value.number()?, visitor),
            Kind::Null | Kind::Absent | Kind::BigInt => visitor.visit_unit(),
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

/// A number as `JSON.stringify` writes it: a whole one as an integer, one
/// that is not finite as `null`.
fn number<'de, V: Visitor<'de>>(number: f64, visitor: V) -> Result<V::Value, NoJsonForm> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !number.is_finite() {
        visitor.visit_unit()
    } else if number.fract() == 0.0 && number.abs() <= EXACT {
        visitor.visit_i64(number as i64)
    } else {
        visitor.visit_f64(number)
    }
}

/// An object's members, read key by key.
pub struct Members {
    object: Js,
    keys: Js,
    len: u32,
    next: u32,
    value: Option<Js>,
    depth: usize,
}

impl Members {
    /// The members of `object`, its keys listed but none read yet.
    pub fn of(object: Js, depth: usize) -> Result<Members, Thrown> {
        let keys = object.own_keys()?;
        Ok(Members {
            object,
            keys,
            len: keys.len()?,
            next: 0,
            value: None,
            depth,
        })
    }

    /// The next key that JSON writes, and its value.
    pub fn next_member(&mut self) -> Result<Option<(Js, Js)>, Thrown> {
        while self.next < self.len {
            let key = self.keys.element(self.next)?;
            self.next += 1;
            let value = self.object.property(key)?;
            if value.kind() != Kind::Absent {
                return Ok(Some((key, value)));
            }
        }
        Ok(None)
    }
}

impl<'de> MapAccess<'de> for Members {
    type Error = NoJsonForm;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, NoJsonForm> {
        let Some((key, value)) = self.next_member()? else {
            return Ok(None);
        };
        self.value = Some(value);
        key.with_text(|key| seed.deserialize(Key(key)))?.map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, NoJsonForm> {
        let value = self.value.take().ok_or(NoJsonForm)?;
        seed.deserialize(JsValue {
            value,
            depth: self.depth,
        })
    }
}

/// An array's items.
struct Items {
    array: Js,
    len: u32,
    next: u32,
    depth: usize,
}

impl<'de> SeqAccess<'de> for Items {
    type Error = NoJsonForm;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, NoJsonForm> {
        if self.next >= self.len {
            return Ok(None);
        }
        let item = self.array.element(self.next)?;
        self.next += 1;
        seed.deserialize(JsValue {
            value: item,
            depth: self.depth,
        })
        .map(Some)
    }
}

/// An object's key, as text.
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
