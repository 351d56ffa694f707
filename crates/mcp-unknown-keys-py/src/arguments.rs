//! A call's arguments given as a dict, as the core reads them: in place.
//!
//! A call's arguments are model-written, so reading them never fails: a key
//! with no JSON form makes the arguments unreadable (the call is counted
//! unaudited), and a value with none reads as `null`.

use std::fmt;

use mcp_unknown_keys::audit::{HostObject, NestedScan, NotAnObject};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::convert::key_text;
use crate::walk::PyValue;

/// A call's arguments given as a dict, read in place: its keys are
/// borrowed from the dict's strings, its nested dicts and lists walked
/// where they are, and its values converted only for a warning's
/// diagnosis.
pub struct DictArguments<'a, 'py>(pub &'a Bound<'py, PyDict>);

impl fmt::Debug for DictArguments<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DictArguments").field(&self.0.len()).finish()
    }
}

impl HostObject for DictArguments<'_, '_> {
    fn for_each_key(&self, on_key: &mut dyn FnMut(&str)) -> Result<(), NotAnObject> {
        for (key, _) in self.0.iter() {
            on_key(&key_text(&key).ok_or(NotAnObject)?);
        }
        Ok(())
    }

    fn to_object(&self) -> Option<Map<String, Value>> {
        Map::deserialize(PyValue::new(self.0.as_any())).ok()
    }

    fn scan(&self, scan: NestedScan<'_, '_, '_>) -> Result<(), NotAnObject> {
        PyValue::new(self.0.as_any())
            .deserialize_map(scan)
            .map_err(|_| NotAnObject)
    }
}
