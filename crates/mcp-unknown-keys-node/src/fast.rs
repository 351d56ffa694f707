//! The `audit` that `index.js` calls: a plain N-API function, registered
//! by hand, of the auditor's slot and the call.
//!
//! napi-rs wraps every function it exports in bookkeeping (a borrow scope,
//! a check of each optional argument) that costs about as much as parsing
//! a small call's JSON text; a call's audit is the one function a host
//! calls per call, so it reads its arguments itself.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use napi::bindgen_prelude::{Function, ToNapiValue, Unknown};
use napi::{Env, Result, sys};
use napi_derive::napi;

use crate::auditor::slots;
use crate::auditor::{Handed, Read};
use crate::js::{Js, Kind};

/// How many arguments `audit` takes: slot, tool, args, id, and what
/// `index.js` read of the arguments: joined keys, count, shape, keys,
/// scalars.
const ARGUMENTS: usize = 9;

/// The function `index.js` calls as
/// `audit(slot, tool, args, id, joined, count, shape, keys, scalars)`:
/// made once, when the package loads.
#[napi(js_name = "__auditFunction")]
pub fn audit_function(env: &Env) -> Result<Function<'_, Unknown<'_>, Unknown<'_>>> {
    env.create_function("audit", audit)
}

/// Audits one call; the warning, or `null`. Nothing it meets throws into
/// JavaScript: a bug is a `null`.
unsafe extern "C" fn audit(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let warning = catch_unwind(AssertUnwindSafe(|| {
        let mut argc = ARGUMENTS;
        let mut argv = [ptr::null_mut(); ARGUMENTS];
        // SAFETY: N-API fills `argv` (with `undefined` past the arguments
        // given) for the call being served.
        let status = unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if status != sys::Status::napi_ok {
            return None;
        }
        // SAFETY: each value comes from this call, on its thread.
        let [slot, tool, args, id, joined, count, shape, keys, scalars] =
            argv.map(|value| unsafe { Js::new(env, value) });
        let state = slots::get(number(slot)?)?;
        let present = |value: Js, kind: Kind| (value.kind() == kind).then_some(value);
        let read = present(joined, Kind::String)
            .zip(number(count))
            .map(|(joined, count)| Read {
                joined,
                count,
                keys,
                shape: present(shape, Kind::String),
                scalars,
            });
        let handed = Handed {
            tool,
            args,
            id: Some(id),
            read,
        };
        state.audit(&Env::from_raw(env), handed)
    }))
    .ok()
    .flatten();
    let mut value = ptr::null_mut();
    // SAFETY: `env` is the call's; a warning is a plain object N-API makes.
    unsafe {
        match warning.map(|warning| ToNapiValue::to_napi_value(env, warning)) {
            Some(Ok(object)) => object,
            _ => {
                sys::napi_get_null(env, &mut value);
                value
            }
        }
    }
}

/// A whole number that fits 32 bits.
fn number(value: Js) -> Option<u32> {
    let number = value.number().ok().filter(|_| value.kind() == Kind::Number)?;
    (number.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&number)).then_some(number as u32)
}
