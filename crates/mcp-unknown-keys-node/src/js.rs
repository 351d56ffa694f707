//! A JavaScript value read through N-API directly: its type, an array's
//! elements, a string's text, its JSON text, a thenable's `then`.
//!
//! Every read that can run JavaScript (a getter, a `Proxy` trap) may throw;
//! the exception is cleared here and the read fails with [`Thrown`], so that
//! what a host handed in never throws back into its call.

use std::ptr;

use napi::sys;

/// A read ran JavaScript that threw (the exception is cleared), or N-API
/// refused it.
#[derive(Debug)]
pub struct Thrown;

/// What `typeof` says of a value, as N-API names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `undefined`, a function, a symbol, an external: values JSON leaves
    /// out of an object.
    Absent,
    Null,
    Bool,
    Number,
    String,
    Object,
    /// A `BigInt`, which has no JSON form.
    BigInt,
}

/// One JavaScript value of the call being read, valid for that call only.
#[derive(Clone, Copy, Debug)]
pub struct Js {
    env: sys::napi_env,
    value: sys::napi_value,
}

/// Keys up to this many bytes are read without an allocation of their own
/// by N-API (one copy from the stack).
const KEY_BUFFER: usize = 128;

impl Js {
    /// # Safety
    ///
    /// `env` and `value` come from the N-API call being served, and the
    /// `Js` is used within it, on its thread.
    pub unsafe fn new(env: sys::napi_env, value: sys::napi_value) -> Js {
        Js { env, value }
    }

    fn of(self, value: sys::napi_value) -> Js {
        Js { env: self.env, value }
    }

    /// A status checked: on failure, any exception it left pending cleared.
    fn checked(self, status: sys::napi_status) -> Result<(), Thrown> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        let mut exception = ptr::null_mut();
        // SAFETY: the env is the one of the call being served; clearing is
        // harmless when nothing is pending.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
        Err(Thrown)
    }

    /// What `typeof` says of the value.
    pub fn kind(self) -> Kind {
        let mut kind = 0;
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_typeof(self.env, self.value, &mut kind) };
        if self.checked(status).is_err() {
            return Kind::Absent;
        }
        match kind {
            sys::ValueType::napi_null => Kind::Null,
            sys::ValueType::napi_boolean => Kind::Bool,
            sys::ValueType::napi_number => Kind::Number,
            sys::ValueType::napi_string => Kind::String,
            sys::ValueType::napi_object => Kind::Object,
            sys::ValueType::napi_bigint => Kind::BigInt,
            _ => Kind::Absent,
        }
    }

    /// An array's length.
    pub fn len(self) -> Result<u32, Thrown> {
        let mut len = 0;
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_get_array_length(self.env, self.value, &mut len) };
        self.checked(status).map(|()| len)
    }

    /// An array's item (a getter or a proxy may throw).
    pub fn element(self, index: u32) -> Result<Js, Thrown> {
        let mut item = ptr::null_mut();
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_get_element(self.env, self.value, index, &mut item) };
        self.checked(status).map(|()| self.of(item))
    }

    /// A number's value.
    pub fn number(self) -> Result<f64, Thrown> {
        let mut number = 0.0;
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_get_value_double(self.env, self.value, &mut number) };
        self.checked(status).map(|()| number)
    }

    /// A boolean's value.
    pub fn bool(self) -> Result<bool, Thrown> {
        let mut flag = false;
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_get_value_bool(self.env, self.value, &mut flag) };
        self.checked(status).map(|()| flag)
    }

    /// A string's text, handed to `read` (a lone surrogate reads as
    /// U+FFFD). A short one is copied to the stack, a longer one to a
    /// buffer of its length.
    pub fn with_text<R>(self, read: impl FnOnce(&str) -> R) -> Result<R, Thrown> {
        let mut buffer = [0u8; KEY_BUFFER];
        let mut len = 0;
        // SAFETY: see `Js::new`; N-API writes at most `KEY_BUFFER` bytes,
        // the last a NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                self.value,
                buffer.as_mut_ptr().cast(),
                KEY_BUFFER,
                &mut len,
            )
        };
        self.checked(status)?;
        if len + 1 < KEY_BUFFER {
            return Ok(read(utf8(&buffer[..len])));
        }
        let text = self.text()?;
        Ok(read(&text))
    }

    /// A string's text, owned.
    pub fn text(self) -> Result<String, Thrown> {
        let mut len = 0;
        // SAFETY: see `Js::new`; a null buffer asks for the length.
        let status =
            unsafe { sys::napi_get_value_string_utf8(self.env, self.value, ptr::null_mut(), 0, &mut len) };
        self.checked(status)?;
        let mut buffer = vec![0u8; len + 1];
        // SAFETY: the buffer holds the text and its NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                self.value,
                buffer.as_mut_ptr().cast(),
                len + 1,
                &mut len,
            )
        };
        self.checked(status)?;
        buffer.truncate(len);
        Ok(String::from_utf8(buffer)
            .unwrap_or_else(|bytes| String::from_utf8_lossy(bytes.as_bytes()).into_owned()))
    }

    /// The value as `JSON.stringify` writes it; `None` for a value it
    /// writes nothing for (`undefined`, a function). Throws ([`Thrown`])
    /// for what has no JSON form: a cycle, a `BigInt`, a getter that throws.
    pub fn json_text(self) -> Result<Option<String>, Thrown> {
        let (mut global, mut json, mut stringify, mut text) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        // SAFETY: see `Js::new`; the property names are NUL-terminated.
        unsafe {
            self.checked(sys::napi_get_global(self.env, &mut global))?;
            self.checked(sys::napi_get_named_property(
                self.env,
                global,
                c"JSON".as_ptr(),
                &mut json,
            ))?;
            self.checked(sys::napi_get_named_property(
                self.env,
                json,
                c"stringify".as_ptr(),
                &mut stringify,
            ))?;
            let args = [self.value];
            self.checked(sys::napi_call_function(
                self.env,
                json,
                stringify,
                1,
                args.as_ptr(),
                &mut text,
            ))?;
        }
        match self.of(text).kind() {
            Kind::String => self.of(text).text().map(Some),
            _ => Ok(None),
        }
    }

    /// A thenable's `then`: the value is an object or a function whose
    /// `then` is a function (a getter that throws makes it none).
    pub fn then_method(self) -> Option<Js> {
        let mut kind = 0;
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_typeof(self.env, self.value, &mut kind) };
        self.checked(status).ok()?;
        if kind != sys::ValueType::napi_object && kind != sys::ValueType::napi_function {
            return None;
        }
        let mut then = ptr::null_mut();
        // SAFETY: see `Js::new`; the name is NUL-terminated.
        let status =
            unsafe { sys::napi_get_named_property(self.env, self.value, c"then".as_ptr(), &mut then) };
        self.checked(status).ok()?;
        // SAFETY: as above.
        let status = unsafe { sys::napi_typeof(self.env, then, &mut kind) };
        self.checked(status).ok()?;
        (kind == sys::ValueType::napi_function).then_some(self.of(then))
    }

    /// Calls `then.call(value, undefined, on_rejected)`: a handler for the
    /// thenable's rejection only.
    pub fn call_then(self, then: Js, on_rejected: Js) -> Result<(), Thrown> {
        let (mut undefined, mut returned) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: see `Js::new`.
        unsafe {
            self.checked(sys::napi_get_undefined(self.env, &mut undefined))?;
            let args = [undefined, on_rejected.value];
            self.checked(sys::napi_call_function(
                self.env,
                self.value,
                then.value,
                args.len(),
                args.as_ptr(),
                &mut returned,
            ))
        }
    }

    /// The value as `String(value)` makes it (a `Symbol` throws: none).
    pub fn coerced_text(self) -> Option<String> {
        let mut text = ptr::null_mut();
        // SAFETY: see `Js::new`.
        let status = unsafe { sys::napi_coerce_to_string(self.env, self.value, &mut text) };
        self.checked(status).ok()?;
        self.of(text).text().ok()
    }
}

/// N-API writes whole UTF-8 sequences; should it ever not, the text up to
/// the break is read.
fn utf8(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}
