//! A JSON-RPC message a host hands over as Python values, written as the
//! JSON text its sender puts on the wire, so that a `Session` reads it with
//! the proxy's reader, byte for byte as the proxy would.
//!
//! The text is written without recursion: the reader skips what it does
//! not need at any depth, so a message as values must not be refused (or
//! overflow the stack) at a depth the wire would read.

use std::borrow::Cow;
use std::collections::HashSet;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::convert::{NotUtf8, Scalar, json_text, key_text, model_dump_with, sequence};

/// A host's message as the bytes a door reads: JSON text (`str`, `bytes`,
/// `bytearray`) as it is, anything else written as JSON ([`write`]).
/// `None` for a `str` that is not UTF-8, which the reader could not read
/// either.
pub fn wire_bytes<'a>(message: &'a Bound<'_, PyAny>) -> PyResult<Option<Cow<'a, [u8]>>> {
    Ok(match json_text(message) {
        Some(Ok(Cow::Borrowed(text))) => Some(Cow::Borrowed(text.as_bytes())),
        Some(Ok(Cow::Owned(text))) => Some(Cow::Owned(text.into_bytes())),
        Some(Err(NotUtf8)) => None,
        None => Some(Cow::Owned(write(message)?)),
    })
}

/// One open container: its items still to write.
enum Open<'py> {
    Object(Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>),
    Array(Vec<Bound<'py, PyAny>>),
}

/// Writes `value` as JSON: dicts with their keys as `json.dumps` writes
/// them, lists and tuples, scalars as JSON reads them (an integer beyond
/// 64 bits and a float that is not finite as `null`), and a pydantic model
/// as its JSON dump by alias without its unset fields (`JSONRPCMessage`).
/// A value or key with no JSON form, or a container that contains itself,
/// is a `TypeError`.
pub fn write(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut out = Vec::new();
    // Each open container, innermost last, its items reversed (popped in
    // order), and the containers on that path, to refuse a cycle.
    let mut open: Vec<(usize, Open<'_>)> = Vec::new();
    let mut on_path: HashSet<usize> = HashSet::new();
    let mut next = Some(value.clone());
    loop {
        if let Some(value) = next.take() {
            match value_start(&value)? {
                Start::Scalar(value) => write_json(&mut out, &value),
                Start::Open(container) => {
                    let address = value.as_ptr() as usize;
                    if !on_path.insert(address) {
                        return Err(PyTypeError::new_err(
                            "a value that contains itself has no JSON form",
                        ));
                    }
                    out.push(match container {
                        Open::Object(_) => b'{',
                        Open::Array(_) => b'[',
                    });
                    open.push((address, container));
                }
            }
        }
        let Some((address, container)) = open.last_mut() else {
            break;
        };
        let first = matches!(out.last(), Some(b'{' | b'['));
        match container {
            Open::Object(items) => match items.pop() {
                Some((key, item)) => {
                    if !first {
                        out.push(b',');
                    }
                    let key = key_text(&key).ok_or_else(|| no_json_form("a key", &key))?;
                    write_json(&mut out, &*key);
                    out.push(b':');
                    next = Some(item);
                }
                None => {
                    out.push(b'}');
                    on_path.remove(address);
                    open.pop();
                }
            },
            Open::Array(items) => match items.pop() {
                Some(item) => {
                    if !first {
                        out.push(b',');
                    }
                    next = Some(item);
                }
                None => {
                    out.push(b']');
                    on_path.remove(address);
                    open.pop();
                }
            },
        }
    }
    Ok(out)
}

/// How a value starts: written whole, or opened.
enum Start<'py> {
    Scalar(Value),
    Open(Open<'py>),
}

fn value_start<'py>(value: &Bound<'py, PyAny>) -> PyResult<Start<'py>> {
    if let Some(start) = plain_start(value) {
        return Ok(start);
    }
    // A dump is dicts, lists and scalars; anything else in its place (a
    // `model_dump` that returns a model) is refused, not dumped again.
    if let Some(dumped) = model_dump_with(value, true)? {
        return plain_start(&dumped).ok_or_else(|| no_json_form("a value", value));
    }
    Err(no_json_form("a value", value))
}

/// A scalar, a dict, a list or a tuple; `None` for anything else.
fn plain_start<'py>(value: &Bound<'py, PyAny>) -> Option<Start<'py>> {
    if let Some(scalar) = Scalar::of(value) {
        return Some(Start::Scalar(Value::from(scalar)));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        // Copied out (reversed, to pop in order): a dict is not iterated
        // while other Python code (a model's `model_dump`) may change it.
        let mut items: Vec<_> = dict.iter().collect();
        items.reverse();
        return Some(Start::Open(Open::Object(items)));
    }
    let mut items: Vec<_> = sequence(value)?.collect();
    items.reverse();
    Some(Start::Open(Open::Array(items)))
}

fn write_json(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    // A string or a JSON value, written to memory: nothing can fail.
    serde_json::to_writer(&mut *out, value).expect("JSON is written to memory");
}

fn no_json_form(what: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let kind = value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |name| name.to_string());
    PyTypeError::new_err(format!("{what} of type {kind} has no JSON form"))
}
