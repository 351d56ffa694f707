//! The core's reading of a call's top-level keys (`Arguments::for_each_key`
//! on JSON text), which reads a small flat object in one pass of its own
//! and leaves every other text to serde_json, against serde_json alone
//! reading the same keys through its map visitor, as the core did before:
//! on any text, both accept it or both refuse it, and they read the same
//! keys in the same order, duplicates included.

#![no_main]

use std::fmt;

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys::audit::Arguments;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// Every top-level key serde_json reads, values skipped.
struct Keys<'k>(&'k mut Vec<String>);

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(Key)? {
            self.0.push(key);
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// One key, decoded.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> Result<String, E> {
        Ok(key.to_owned())
    }
}

fn serde_keys(text: &str) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(Keys(&mut keys)).ok()?;
    deserializer.end().ok()?;
    Some(keys)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut keys = Vec::new();
    let read = Arguments::Json(text)
        .for_each_key(|key| keys.push(key.to_owned()))
        .ok()
        .map(|()| keys);
    assert_eq!(read, serde_keys(text), "{text:?}");
});
