//! What a host passes to build an alarm (`Auditor`, `Session`): its
//! callbacks, its allowed keys, and the core auditor made of them. Both
//! classes build theirs here, so they read their options alike.

use std::rc::Rc;
use std::sync::Arc;

use mcp_unknown_keys::audit;
use napi_derive::napi;

use crate::sink::{Callbacks, OnNote, OnVerdict, OnWarn, Queue};

/// An `Auditor`'s options.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct AuditorOptions {
    /// Takes each warning instead of stderr (one line each, the default).
    #[napi(ts_type = "(warning: Warning) => unknown")]
    pub on_warn: Option<OnWarn>,
    /// Keys tolerated on every tool (keys your host injects; paths such as
    /// `entities[].age` too); `reason` always is.
    pub allow: Option<Vec<String>>,
    /// Audits top-level keys only.
    pub top_level_only: Option<bool>,
    /// Does not report the required keys a call lacks (nor audit a call
    /// with no arguments as emptied): the first version's behaviour.
    pub no_missing: Option<bool>,
    /// Takes what a schema could not be read for (a tool's name and the
    /// text); without it, notes go to stderr beside warnings, or nowhere
    /// beside an `onWarn`.
    #[napi(ts_type = "(tool: string, text: string) => unknown")]
    pub on_note: Option<OnNote>,
}

/// The core auditor a class wraps, the queue it says things into and the
/// host's callbacks that deliver them.
pub struct Built {
    pub auditor: audit::Auditor,
    pub queue: Arc<Queue>,
    pub callbacks: Rc<Callbacks>,
}

/// What a host passed: its callbacks, the keys it allows, `topLevelOnly`,
/// `noMissing`.
pub struct Given {
    pub on_warn: Option<OnWarn>,
    pub on_note: Option<OnNote>,
    pub on_verdict: Option<OnVerdict>,
    pub allow: Option<Vec<String>>,
    pub top_level_only: Option<bool>,
    pub no_missing: Option<bool>,
}

/// Builds the core auditor for what a host passed.
pub fn build(given: Given) -> Built {
    let Given {
        on_warn,
        on_note,
        on_verdict,
        allow,
        top_level_only,
        no_missing,
    } = given;
    let queue = Arc::new(Queue::default());
    let auditor = audit::Auditor::new()
        .with_shared_sink(queue.clone())
        .allow_all(allow.unwrap_or_default())
        .top_level_only(top_level_only.unwrap_or(false))
        .check_required(!no_missing.unwrap_or(false));
    Built {
        auditor,
        queue,
        callbacks: Callbacks::new(on_warn, on_note, on_verdict),
    }
}
