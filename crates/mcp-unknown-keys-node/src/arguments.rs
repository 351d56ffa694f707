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
pub struct ObjectArguments(pub Js);

impl fmt::Debug for ObjectArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ObjectArguments")
    }
}

impl HostObject for ObjectArguments {
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
        let mut members = Members::of(self.0, 0).map_err(|_| NotAnObject)?;
        while let Some((key, _)) = members.next_member().map_err(|_| NotAnObject)? {
            key.with_text(&mut *on_key).map_err(|_| NotAnObject)?;
        }
        Ok(())
    }

    fn to_object(&self) -> Option<Map<String, Value>> {
        Map::deserialize(JsValue::new(self.0)).ok()
    }

    fn scan(&self, scan: NestedScan<'_, '_, '_>) -> Result<(), NotAnObject> {
        JsValue::new(self.0)
            .deserialize_map(scan)
            .map_err(|_| NotAnObject)
    }
}
