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
//!
//! The interface gives no buffer's length: a consumer is to trust that the
//! offsets lie within the data. An array is not trusted here: the
//! exporter's library gives each buffer's length (pyarrow's
//! `Array.buffers()`), and before any value is read the validity bitmap and
//! the offsets are checked to be long enough for the array's length and
//! offset, and the offsets to never go backwards or past the data buffer.

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

/// One string or binary array, borrowed from the capsules that own it, its
/// buffers checked against their lengths: every offset it will read lies
/// in its offsets buffer, every value in its data buffer.
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

/// The three buffers of a string array: where each is, and how many bytes
/// it holds (the C Data Interface gives no lengths: the exporter's library
/// tells them, pyarrow's `Array.buffers()`).
struct Buffers {
    pointers: [*const u8; 3],
    sizes: [usize; 3],
}

/// What each buffer is, for messages.
const BUFFER_NAMES: [&str; 3] = ["validity bitmap", "offsets", "data"];

impl Buffers {
    /// Buffer `at`, which must hold `needed` bytes (a null pointer holds
    /// none).
    fn holding(&self, at: usize, needed: usize) -> PyResult<*const u8> {
        let pointer = self.pointers[at];
        if needed > 0 && (pointer.is_null() || self.sizes[at] < needed) {
            let held = if pointer.is_null() { 0 } else { self.sizes[at] };
            return Err(PyValueError::new_err(format!(
                "a malformed Arrow array: its {} buffer holds {held} bytes, and its length and offset need {needed}",
                BUFFER_NAMES[at]
            )));
        }
        Ok(pointer)
    }
}

impl StringColumn {
    /// The column the two capsules of `__arrow_c_array__()` describe: an
    /// array of type `string`, `large_string`, `binary` or `large_binary`,
    /// whose three buffers hold `sizes` bytes (validity bitmap, offsets,
    /// data; 0 for an absent one). Any other type is a `TypeError` naming
    /// its format; an array whose buffers are shorter than its length and
    /// offset need, or whose offsets go backwards or past its data, a
    /// `ValueError`: nothing is read outside its buffers.
    pub fn of(
        schema: &Bound<'_, PyCapsule>,
        array: &Bound<'_, PyCapsule>,
        sizes: &[usize],
    ) -> PyResult<StringColumn> {
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
        let Ok(sizes) = <[usize; 3]>::try_from(sizes) else {
            return Err(PyValueError::new_err(
                "a string Arrow array's buffers have three lengths",
            ));
        };
        // SAFETY: `buffers` points to `n_buffers` (3) pointers.
        let pointers = [0, 1, 2].map(|at| unsafe { *array.buffers.add(at) }.cast::<u8>());
        let buffers = Buffers { pointers, sizes };
        let too_long = || PyValueError::new_err("a malformed Arrow array: its length and offset overflow");
        let values = offset.checked_add(length).ok_or_else(too_long)?;
        // A bit per value; then `offset + length + 1` offsets, of a width.
        let validity = match array.null_count {
            0 => std::ptr::null(),
            _ if buffers.pointers[0].is_null() => std::ptr::null(),
            _ => buffers.holding(0, values.div_ceil(8))?,
        };
        let offset_bytes = match length {
            0 => 0,
            _ => values
                .checked_add(1)
                .and_then(|count| count.checked_mul(width.bytes()))
                .ok_or_else(too_long)?,
        };
        let column = StringColumn {
            length,
            offset,
            validity,
            offsets: buffers.holding(1, offset_bytes)?,
            data: buffers.pointers[2],
            width,
        };
        let data_bytes = column.checked_offsets()?;
        buffers.holding(2, data_bytes)?;
        Ok(column)
    }

    /// Checks that the offsets the column's values use never go backwards
    /// and never below zero; gives the last, the bytes its data buffer
    /// must hold.
    fn checked_offsets(&self) -> PyResult<usize> {
        if self.length == 0 {
            return Ok(0);
        }
        let mut last = 0;
        for at in self.offset..=self.offset + self.length {
            // SAFETY: `of` checked that the offsets buffer holds
            // `offset + length + 1` offsets of the column's width.
            let next = unsafe { self.offset_at(at) };
            let next = usize::try_from(next).map_err(|_| malformed_offsets(at, "is negative"))?;
            if next < last {
                return Err(malformed_offsets(at, "goes backwards"));
            }
            last = next;
        }
        Ok(last)
    }

    /// The offset at `at`, read as the column's width gives it.
    ///
    /// # Safety
    ///
    /// The offsets buffer holds at least `at + 1` offsets.
    unsafe fn offset_at(&self, at: usize) -> i64 {
        // SAFETY: as the caller promises.
        unsafe {
            match self.width {
                Offsets::Small => i64::from(self.offsets.cast::<i32>().add(at).read_unaligned()),
                Offsets::Large => self.offsets.cast::<i64>().add(at).read_unaligned(),
            }
        }
    }

    /// How many values (null ones too) the column holds.
    pub fn len(&self) -> usize {
        self.length
    }

    /// The bytes of the value at `row`; `None` for a null.
    pub fn value(&self, row: usize) -> Option<&[u8]> {
        debug_assert!(row < self.length);
        let at = self.offset + row;
        // SAFETY: `of` checked, against the buffers' lengths, that the
        // validity bitmap (when there is one) holds a bit for each of
        // `offset + length` values, that the offsets buffer holds
        // `offset + length + 1` offsets, and that those offsets never go
        // backwards and end within the data buffer.
        unsafe {
            if !self.validity.is_null() && *self.validity.add(at / 8) & (1 << (at % 8)) == 0 {
                return None;
            }
            let (start, end) = (self.offset_at(at) as usize, self.offset_at(at + 1) as usize);
            if end == start {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(self.data.add(start), end - start))
        }
    }
}

impl Offsets {
    /// The bytes of one offset.
    fn bytes(self) -> usize {
        match self {
            Offsets::Small => 4,
            Offsets::Large => 8,
        }
    }
}

/// The error of an offset that cannot be.
fn malformed_offsets(at: usize, why: &str) -> PyErr {
    PyValueError::new_err(format!("a malformed Arrow array: its offset {at} {why}"))
}
