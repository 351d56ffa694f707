//! A string or binary column of an Arrow array, read in place through the
//! Arrow C Data Interface: each value's bytes borrowed from the array's own
//! buffers, never copied into Python objects.
//!
//! The array comes as the two capsules of the Arrow PyCapsule interface
//! (`array.__arrow_c_array__()`: an `arrow_schema` and an `arrow_array`),
//! which pyarrow, polars and every Arrow library for Python hand over. The
//! C structs are the interface's, declared here (they are an ABI, stable
//! since Arrow 1.0) rather than through the `arrow` crate, which would
//! bring a large dependency for four fields. The capsules keep ownership:
//! their destructors release the array when Python drops them, so the
//! column is read while they are held.

use std::ffi::{CStr, c_char, c_void};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The C Data Interface's `struct ArrowSchema`: every field declared, for
/// the layout, though only `format` and `release` are read.
#[repr(C)]
#[allow(dead_code)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

/// The C Data Interface's `struct ArrowArray`: every field declared, for
/// the layout.
#[repr(C)]
#[allow(dead_code)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

/// The width of a column's offsets: `utf8`/`binary` have 32-bit ones,
/// `large_utf8`/`large_binary` 64-bit ones.
#[derive(Clone, Copy, Debug)]
enum Offsets {
    Small,
    Large,
}

/// One string or binary array, borrowed from the capsules that own it.
pub struct StringColumn {
    length: usize,
    offset: usize,
    validity: *const u8,
    offsets: *const u8,
    data: *const u8,
    width: Offsets,
}

// SAFETY: the column only reads immutable buffers that the capsules keep
// alive; the caller holds the capsules for as long as it reads, on
// whichever thread (the GIL released meanwhile).
unsafe impl Send for StringColumn {}

impl StringColumn {
    /// The column the two capsules of `__arrow_c_array__()` describe: an
    /// array of type `string`, `large_string`, `binary` or `large_binary`.
    /// Any other type is a `TypeError` naming its format.
    pub fn of(schema: &Bound<'_, PyCapsule>, array: &Bound<'_, PyCapsule>) -> PyResult<StringColumn> {
        let schema = schema
            .pointer_checked(Some(c"arrow_schema"))?
            .cast::<ArrowSchema>();
        let array = array.pointer_checked(Some(c"arrow_array"))?.cast::<ArrowArray>();
        // SAFETY: a capsule named `arrow_schema` (`arrow_array`) holds a
        // pointer to a live ArrowSchema (ArrowArray), as the PyCapsule
        // interface requires, valid while the capsule is.
        let (schema, array) = unsafe { (schema.as_ref(), array.as_ref()) };
        if schema.release.is_none() || array.release.is_none() {
            return Err(PyValueError::new_err("the Arrow array was already released"));
        }
        // SAFETY: `format` is a NUL-terminated string, by the interface.
        let format = unsafe { CStr::from_ptr(schema.format) }.to_bytes();
        let width = match format {
            b"u" | b"z" => Offsets::Small,
            b"U" | b"Z" => Offsets::Large,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "an Arrow column of JSON text is string, large_string, binary or large_binary, \
                     not of format {:?}",
                    String::from_utf8_lossy(other)
                )));
            }
        };
        let (Ok(length), Ok(offset)) = (usize::try_from(array.length), usize::try_from(array.offset)) else {
            return Err(PyValueError::new_err(
                "an Arrow array with a negative length or offset",
            ));
        };
        if array.n_buffers != 3 || array.buffers.is_null() {
            return Err(PyValueError::new_err("a string Arrow array has three buffers"));
        }
        // SAFETY: `buffers` points to `n_buffers` (3) pointers.
        let buffer = |at: usize| unsafe { *array.buffers.add(at) }.cast::<u8>();
        let column = StringColumn {
            length,
            offset,
            validity: if array.null_count == 0 {
                std::ptr::null()
            } else {
                buffer(0)
            },
            offsets: buffer(1),
            data: buffer(2),
            width,
        };
        if column.offsets.is_null() && length > 0 {
            return Err(PyValueError::new_err("a string Arrow array without offsets"));
        }
        Ok(column)
    }

    /// How many values (null ones too) the column holds.
    pub fn len(&self) -> usize {
        self.length
    }

    /// The bytes of the value at `row`; `None` for a null.
    pub fn value(&self, row: usize) -> Option<&[u8]> {
        debug_assert!(row < self.length);
        let at = self.offset + row;
        // SAFETY: the validity bitmap, when there is one, holds a bit for
        // each of `offset + length` values; the offsets buffer holds
        // `offset + length + 1` offsets of the column's width, each within
        // the data buffer, as the Arrow format requires of a valid array.
        unsafe {
            if !self.validity.is_null() && *self.validity.add(at / 8) & (1 << (at % 8)) == 0 {
                return None;
            }
            let (start, end) = match self.width {
                Offsets::Small => {
                    let offsets = self.offsets.cast::<i32>();
                    (
                        offsets.add(at).read_unaligned() as usize,
                        offsets.add(at + 1).read_unaligned() as usize,
                    )
                }
                Offsets::Large => {
                    let offsets = self.offsets.cast::<i64>();
                    (
                        offsets.add(at).read_unaligned() as usize,
                        offsets.add(at + 1).read_unaligned() as usize,
                    )
                }
            };
            if end <= start || self.data.is_null() {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(self.data.add(start), end - start))
        }
    }
}
