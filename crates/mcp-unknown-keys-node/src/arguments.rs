//! A call's arguments given as a JavaScript object, as the core reads
//! them: in place, with no JSON made.
//!
//! A call's arguments are model-written, so reading them never fails the
//! call: arguments whose reading throws (a getter, a `Proxy`) are
//! unreadable (the call is counted unaudited), and a value with no JSON
//! form reads as `null`.

use std::fmt;

use mcp_unknown_keys::audit::{HostObject, NestedScan, NotAnObject};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::js::Js;
use crate::walk::{JsValue, Members};

/// A call's arguments given as an object (not an array), read in place:
/// its keys read from the object's strings, its nested objects and arrays
/// walked where they are, and its values converted only for a warning's
/// diagnosis.
pub struct ObjectArguments<'k> {
    /// The object.
    pub object: Js,
    /// Its top-level keys as `index.js` read them (JavaScript reads an
    /// object's keys faster than N-API hands them out one by one), joined
    /// by NUL, and how many there are; when the count disagrees (a key
    /// holds a NUL), the object's own keys are read instead.
    pub keys: Option<(&'k str, u32)>,
    /// The object's shape as `index.js` read it, for the scan of nested
    /// keys: its JSON with every scalar written `0`, so that no value is
    /// in it (see `index.js`'s `shapeOf`).
    pub shape: Option<&'k str>,
}

impl ObjectArguments<'_> {
    /// The keys `index.js` read, if they split into as many as it counted.
    fn read_keys(&self) -> Option<impl Iterator<Item = &str>> {
        let (joined, count) = self.keys?;
        let parts = match joined.is_empty() {
            true => 0,
            false => joined.bytes().filter(|byte| *byte == 0).count() + 1,
        };
        (parts == count as usize).then(|| joined.split('\0').take(parts))
    }
}

impl fmt::Debug for ObjectArguments<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ObjectArguments")
    }
}

impl HostObject for ObjectArguments<'_> {
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
        if let Some(keys) = self.read_keys() {
            keys.for_each(on_key);
            return Ok(());
        }
        let mut members = Members::of(self.object, 0).map_err(|_| NotAnObject)?;
        while let Some((key, _)) = members.next_member().map_err(|_| NotAnObject)? {
            key.with_text(&mut *on_key).map_err(|_| NotAnObject)?;
        }
        Ok(())
    }

    fn to_object(&self) -> Option<Map<String, Value>> {
        Map::deserialize(JsValue::new(self.object)).ok()
    }

    fn scan(&self, scan: NestedScan<'_, '_, '_>) -> Result<(), NotAnObject> {
        if let Some(shape) = self.shape {
            let mut shape = serde_json::Deserializer::from_str(shape);
            return shape.deserialize_map(scan).map_err(|_| NotAnObject);
        }
        JsValue::new(self.object)
            .deserialize_map(scan)
            .map_err(|_| NotAnObject)
    }
}
