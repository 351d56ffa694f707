//! Python values as the core reads them: a call's dict in place (through
//! `walk` for its values), and catalogues as JSON.
//!
//! A call's arguments are model-written, so reading them never fails: a key
//! with no JSON form makes the arguments unreadable (the call is counted
//! unaudited), and a value with none reads as `null`. A catalogue is the
//! host's, so a catalogue that cannot be read is an error the host sees.

use std::borrow::Cow;
use std::fmt;

use mcp_unknown_keys::audit::{HostObject, NestedScan, NotAnObject};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Number, Value};

use crate::walk::PyValue;

/// How deep a catalogue is read: serde_json's own limit when it parses
/// JSON text, so a listing reads the same as a dict and as text. A deeper
/// (or self-containing) structure is refused rather than overflowing the
/// stack.
const MAX_CATALOGUE_DEPTH: usize = 128;

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

/// A dict key as `json.dumps` writes it: a string as it is (an unpaired
/// surrogate replaced), an integer in decimal, `true`, `false`, `null`, a
/// float as Python writes it; `None` for a key of any other type, which
/// `json.dumps` refuses.
pub fn key_text<'a>(key: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    if let Ok(text) = key.cast::<PyString>() {
        return Some(match text.to_str() {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => Cow::Owned(text.to_string_lossy().into_owned()),
        });
    }
    if let Ok(flag) = key.cast::<PyBool>() {
        return Some(Cow::Borrowed(if flag.is_true() { "true" } else { "false" }));
    }
    if key.is_none() {
        return Some(Cow::Borrowed("null"));
    }
    if key.is_instance_of::<PyInt>() || key.is_instance_of::<PyFloat>() {
        return key
            .repr()
            .ok()
            .map(|repr| Cow::Owned(repr.to_string_lossy().into_owned()));
    }
    None
}

/// A string, a boolean, a number or `None` as JSON; `None` for anything
/// else. An integer beyond 64 bits, or a float that is not finite, has no
/// exact JSON number here and reads as `null`.
fn scalar(value: &Bound<'_, PyAny>) -> Option<Value> {
    if let Ok(text) = value.cast::<PyString>() {
        return Some(Value::String(text.to_string_lossy().into_owned()));
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Some(Value::Bool(flag.is_true()));
    }
    if value.is_none() {
        return Some(Value::Null);
    }
    if value.is_instance_of::<PyInt>() {
        let number = value
            .extract::<i64>()
            .map(Number::from)
            .or_else(|_| value.extract::<u64>().map(Number::from));
        return Some(number.map(Value::Number).unwrap_or(Value::Null));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return Some(Number::from_f64(float.value()).map_or(Value::Null, Value::Number));
    }
    None
}

/// The items of a list or a tuple.
fn sequence<'py>(value: &Bound<'py, PyAny>) -> Option<Box<dyn Iterator<Item = Bound<'py, PyAny>> + 'py>> {
    if let Ok(list) = value.cast::<PyList>() {
        return Some(Box::new(list.clone().into_iter()));
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return Some(Box::new(tuple.clone().into_iter()));
    }
    None
}

/// A catalogue, or anything of the host's, as JSON: JSON text (`str`,
/// `bytes`) parsed, dicts, lists, tuples and scalars as they are, and a
/// pydantic model (the MCP SDK's `Tool`, `ListToolsResult`) as its JSON dump
/// by alias (`inputSchema`). Anything else is a `TypeError` naming it.
pub fn host_value(value: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = value.py();
    if let Ok(text) = value.cast::<PyString>() {
        return parse(py, text.to_str()?.as_bytes());
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return parse(py, bytes.as_bytes());
    }
    if let Ok(bytes) = value.cast::<PyByteArray>() {
        return parse(py, &bytes.to_vec());
    }
    structure(value, 0)
}

/// JSON text parsed with the GIL released: a listing's text can be large.
fn parse(py: Python<'_>, text: &[u8]) -> PyResult<Value> {
    py.detach(|| serde_json::from_slice(text))
        .map_err(|error| PyValueError::new_err(format!("not JSON: {error}")))
}

fn structure(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_CATALOGUE_DEPTH {
        return Err(PyValueError::new_err(format!(
            "nested more than {MAX_CATALOGUE_DEPTH} levels deep"
        )));
    }
    if let Some(scalar) = scalar(value) {
        return Ok(scalar);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut object = Map::new();
        for (key, item) in dict.iter() {
            let key = key_text(&key).ok_or_else(|| {
                PyTypeError::new_err(format!("a key of type {} has no JSON form", type_name(&key)))
            })?;
            object.insert(key.into_owned(), structure(&item, depth + 1)?);
        }
        return Ok(Value::Object(object));
    }
    if let Some(items) = sequence(value) {
        return items.map(|item| structure(&item, depth + 1)).collect();
    }
    if value.hasattr("model_dump")? {
        let kwargs = PyDict::new(value.py());
        kwargs.set_item("mode", "json")?;
        kwargs.set_item("by_alias", true)?;
        let dumped = value.call_method("model_dump", (), Some(&kwargs))?;
        return structure(&dumped, depth + 1);
    }
    Err(PyTypeError::new_err(format!(
        "a value of type {} has no JSON form",
        type_name(value)
    )))
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string())
}
