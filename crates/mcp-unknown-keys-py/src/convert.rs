//! Python values as JSON reads them: dict keys as `json.dumps` writes them,
//! scalars, JSON text, and a host's catalogue as JSON.
//!
//! A catalogue is the host's, so a catalogue that cannot be read is an
//! error the host sees (a call's arguments, read by `arguments`, never
//! are).

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// From this many bytes on, JSON text is scanned with the GIL released:
/// other Python threads run meanwhile. Below it, releasing and taking back
/// the GIL would cost more than the scan (a few hundred nanoseconds).
pub const DETACH_FROM_BYTES: usize = 16 * 1024;

/// How deep a catalogue is read: serde_json's own limit when it parses
/// JSON text, so a listing reads the same as a dict and as text. A deeper
/// (or self-containing) structure is refused rather than overflowing the
/// stack.
const MAX_CATALOGUE_DEPTH: usize = 128;

/// A dict key as `json.dumps` writes it: a string as it is (an unpaired
/// surrogate replaced), `true`, `false`, `null`, an integer in decimal and a
/// float as `float.__repr__` writes it (`Infinity`, `-Infinity`, `NaN` when
/// not finite), whatever the subclass's own `repr` (an `IntEnum` member is
/// its number); `None` for a key of any other type, which `json.dumps`
/// refuses. Arguments a host hands over as a dict and as `json.dumps` text
/// are thus read alike.
pub fn key_text<'a>(key: &'a Bound<'_, PyAny>) -> Option<Cow<'a, str>> {
    if let Ok(text) = key.cast::<PyString>() {
        return Some(match text.to_str() {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => Cow::Owned(text.to_string_lossy().into_owned()),
        });
    }
    if let Ok(float) = key.cast::<PyFloat>() {
        return Some(float_key(key.py(), float.value()));
    }
    if let Ok(flag) = key.cast::<PyBool>() {
        return Some(Cow::Borrowed(if flag.is_true() { "true" } else { "false" }));
    }
    if key.is_none() {
        return Some(Cow::Borrowed("null"));
    }
    if key.is_instance_of::<PyInt>() {
        if let Ok(int) = key.extract::<i128>() {
            return Some(Cow::Owned(int.to_string()));
        }
        // Beyond 128 bits: `int.__repr__`, as `json.dumps` calls it.
        let repr = key
            .py()
            .get_type::<PyInt>()
            .getattr("__repr__")
            .ok()?
            .call1((key,))
            .ok()?;
        return Some(Cow::Owned(
            repr.cast::<PyString>().ok()?.to_string_lossy().into_owned(),
        ));
    }
    None
}

/// A float key as `json.dumps` writes it.
fn float_key(py: Python<'_>, float: f64) -> Cow<'static, str> {
    if float.is_nan() {
        return Cow::Borrowed("NaN");
    }
    if float.is_infinite() {
        return Cow::Borrowed(if float > 0.0 { "Infinity" } else { "-Infinity" });
    }
    // Python's shortest repr (`1e+16`, `0.1`), which Rust's formatting does
    // not write alike; of a plain float, so a subclass's `repr` is not used.
    let repr = PyFloat::new(py, float).repr();
    Cow::Owned(repr.map_or_else(|_| float.to_string(), |repr| repr.to_string_lossy().into_owned()))
}

/// A string, a boolean, a number or `None`, as JSON reads it: the one rule
/// for a call's values (walked in place by `walk`) and a catalogue's.
pub enum Scalar<'a> {
    /// A string, borrowed where it is UTF-8 (an unpaired surrogate is
    /// replaced).
    Str(Cow<'a, str>),
    /// `True` or `False`.
    Bool(bool),
    /// An integer that fits 64 bits, signed.
    Int(i64),
    /// An integer that fits 64 bits, unsigned only.
    UInt(u64),
    /// A finite float.
    Float(f64),
    /// `None`, an integer beyond 64 bits, a float that is not finite: no
    /// exact JSON number here.
    Null,
}

impl<'a> Scalar<'a> {
    /// `value` as a scalar; `None` for any other type.
    pub fn of(value: &'a Bound<'_, PyAny>) -> Option<Scalar<'a>> {
        if let Ok(text) = value.cast::<PyString>() {
            return Some(Scalar::Str(match text.to_str() {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => Cow::Owned(text.to_string_lossy().into_owned()),
            }));
        }
        if let Ok(flag) = value.cast::<PyBool>() {
            return Some(Scalar::Bool(flag.is_true()));
        }
        if value.is_none() {
            return Some(Scalar::Null);
        }
        if value.is_instance_of::<PyInt>() {
            let int = value.extract::<i64>().map(Scalar::Int);
            return Some(
                int.or_else(|_| value.extract::<u64>().map(Scalar::UInt))
                    .unwrap_or(Scalar::Null),
            );
        }
        if let Ok(float) = value.cast::<PyFloat>() {
            let float = float.value();
            return Some(if float.is_finite() {
                Scalar::Float(float)
            } else {
                Scalar::Null
            });
        }
        None
    }
}

impl From<Scalar<'_>> for Value {
    fn from(scalar: Scalar<'_>) -> Value {
        match scalar {
            Scalar::Str(text) => Value::String(text.into_owned()),
            Scalar::Bool(flag) => Value::Bool(flag),
            Scalar::Int(int) => Value::from(int),
            Scalar::UInt(int) => Value::from(int),
            Scalar::Float(float) => Number::from_f64(float).map_or(Value::Null, Value::Number),
            Scalar::Null => Value::Null,
        }
    }
}

/// Text given as JSON (`str`, `bytes`, `bytearray`), borrowed where Python
/// lets it be: the one rule for a call's arguments and a catalogue given as
/// text. `None` for any other type; `Some(Err)` for text that is not UTF-8
/// (a `str` with an unpaired surrogate).
pub fn json_text<'a>(value: &'a Bound<'_, PyAny>) -> Option<Result<Cow<'a, str>, NotUtf8>> {
    if let Ok(text) = value.cast::<PyString>() {
        return Some(text.to_str().map(Cow::Borrowed).map_err(|_| NotUtf8));
    }
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Some(
            std::str::from_utf8(bytes.as_bytes())
                .map(Cow::Borrowed)
                .map_err(|_| NotUtf8),
        );
    }
    if let Ok(bytes) = value.cast::<PyByteArray>() {
        return Some(
            String::from_utf8(bytes.to_vec())
                .map(Cow::Owned)
                .map_err(|_| NotUtf8),
        );
    }
    None
}

/// JSON text that is not UTF-8.
#[derive(Debug)]
pub struct NotUtf8;

/// The items of a list or a tuple.
pub fn sequence<'py>(value: &Bound<'py, PyAny>) -> Option<Box<dyn Iterator<Item = Bound<'py, PyAny>> + 'py>> {
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
    match json_text(value) {
        Some(Ok(text)) => parse(value.py(), &text),
        Some(Err(NotUtf8)) => Err(not_utf8()),
        None => structure(value, 0).map_err(PyErr::from),
    }
}

/// A host's value as JSON ([`host_value`]) unless it nests deeper than a
/// catalogue is read (`Ok(None)`): for the tools of a listing, each read on
/// its own, so that one tool too deep to read loses that tool's schema
/// alone, as every other door reads a listing.
pub fn host_value_within_depth(value: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    match structure(value, 0) {
        Ok(value) => Ok(Some(value)),
        Err(Unreadable::TooDeep) => Ok(None),
        Err(Unreadable::Error(error)) => Err(error),
    }
}

/// A pydantic model (the MCP SDK's `Tool`, `ListToolsResult`) as its JSON
/// dump by alias (`inputSchema`); `None` for anything else.
pub fn model_dump<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    model_dump_with(value, false)
}

/// A pydantic model as its JSON dump by alias, its unset optional fields
/// left out when `exclude_none`: a JSON-RPC message (the MCP SDK's
/// `JSONRPCMessage`) as its sender writes it, with no `"params": null`;
/// `None` for anything else.
pub fn model_dump_with<'py>(
    value: &Bound<'py, PyAny>,
    exclude_none: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !value.hasattr("model_dump")? {
        return Ok(None);
    }
    let kwargs = PyDict::new(value.py());
    kwargs.set_item("mode", "json")?;
    kwargs.set_item("by_alias", true)?;
    if exclude_none {
        kwargs.set_item("exclude_none", true)?;
    }
    value.call_method("model_dump", (), Some(&kwargs)).map(Some)
}

/// The error for JSON text that is not UTF-8.
pub fn not_utf8() -> PyErr {
    PyValueError::new_err("not JSON: the text is not UTF-8")
}

/// JSON text parsed with the GIL released: a listing's text can be large.
fn parse(py: Python<'_>, text: &str) -> PyResult<Value> {
    py.detach(|| serde_json::from_str(text))
        .map_err(|error| PyValueError::new_err(format!("not JSON: {error}")))
}

/// Why a host's value was not made JSON.
enum Unreadable {
    /// It nests deeper than [`MAX_CATALOGUE_DEPTH`] (or contains itself).
    TooDeep,
    /// Python raised, or a value or key has no JSON form.
    Error(PyErr),
}

impl From<PyErr> for Unreadable {
    fn from(error: PyErr) -> Unreadable {
        Unreadable::Error(error)
    }
}

impl From<Unreadable> for PyErr {
    fn from(unreadable: Unreadable) -> PyErr {
        match unreadable {
            Unreadable::TooDeep => {
                PyValueError::new_err(format!("nested more than {MAX_CATALOGUE_DEPTH} levels deep"))
            }
            Unreadable::Error(error) => error,
        }
    }
}

fn structure(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Unreadable> {
    if depth > MAX_CATALOGUE_DEPTH {
        return Err(Unreadable::TooDeep);
    }
    if let Some(scalar) = Scalar::of(value) {
        return Ok(Value::from(scalar));
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
    if let Some(dumped) = model_dump(value)? {
        return structure(&dumped, depth + 1);
    }
    Err(PyTypeError::new_err(format!("a value of type {} has no JSON form", type_name(value))).into())
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string())
}
