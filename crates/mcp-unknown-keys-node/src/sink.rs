//! Where a Node alarm's warnings, notes and verdicts go: the host's
//! callbacks, or stderr.
//!
//! The core says them through a `Sink`, which may not call JavaScript (it
//! has no `Env`, and it may be called with the auditor's state borrowed):
//! [`Queue`] keeps them, and [`Callbacks::deliver`] hands them out once the
//! call into the addon has finished with its state, so a callback may call
//! the alarm back.
//!
//! Whatever a callback does, the call goes on: a callback that throws, or
//! returns a promise that rejects, is said on stderr without its message,
//! once per thread (per callback's name and kind of failure: the line names
//! no auditor, so saying it again would add nothing); one that calls the alarm back more than [`MAX_REENTRY`] deep
//! has the deeper warnings delivered once the callbacks above it return,
//! so that no host's callback can overflow the stack.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_unknown_keys::audit::{Judged, Note, Notice, Sink, StderrSink};
use napi::bindgen_prelude::{FnArgs, FunctionRef, JsValue, Unknown};
use napi::{Env, Result};

use crate::js::Js;
use crate::report::{Verdict, Warning};

/// What the core said during one call into the addon, in order.
pub enum Said {
    /// A warning to deliver.
    Warning(Box<mcp_unknown_keys::audit::Warning>),
    /// A note about a tool: its name and the text.
    Note(String, String),
    /// A verdict a session settled.
    Verdict(Box<Judged>),
}

/// The core auditor's sink: what it says, kept for delivery.
#[derive(Default)]
pub struct Queue(Mutex<Vec<Said>>);

impl Queue {
    /// Keeps one thing said.
    pub fn push(&self, said: Said) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(said);
    }

    fn take(&self) -> Vec<Said> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Sink for Queue {
    fn warn(&self, warning: &mcp_unknown_keys::audit::Warning) {
        self.push(Said::Warning(Box::new(warning.clone())));
    }

    fn note(&self, tool: &str, note: &Note) {
        self.push(Said::Note(tool.to_owned(), note.to_string()));
    }

    /// Notices go where notes go, under no tool's name (`""`).
    fn notice(&self, notice: &Notice) {
        self.push(Said::Note(String::new(), notice.to_string()));
    }

    fn verdict(&self, judged: &Judged) {
        self.push(Said::Verdict(Box::new(judged.clone())));
    }
}

/// A host's `onWarn`: takes each warning.
pub type OnWarn = FunctionRef<Warning, Unknown<'static>>;
/// A host's `onNote`: takes a tool's name and the note's text.
pub type OnNote = FunctionRef<FnArgs<(String, String)>, Unknown<'static>>;
/// A host's `onVerdict`: takes each verdict settled.
pub type OnVerdict = FunctionRef<Verdict, Unknown<'static>>;

/// How many deliveries may run inside one another: a callback that calls
/// the alarm back from this depth on has its call audited and counted as
/// any other, and the warnings it raises delivered once the callbacks above
/// it have returned, by the delivery below them. Each level holds native
/// stack (about 36 KiB); Node's main thread overflows at about 240.
pub const MAX_REENTRY: usize = 16;

thread_local! {
    /// How many deliveries are under way on this thread, one inside another.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// What deliveries too deep to run left to the ones below them: each
    /// queue once, with its callbacks.
    static DEFERRED: RefCell<Vec<(Rc<Callbacks>, Arc<Queue>)>> = const { RefCell::new(Vec::new()) };
    /// Whether deferring has been said on stderr.
    static SAID_DEEP: Cell<bool> = const { Cell::new(false) };
    /// Which failures of the host's callbacks have been said.
    static SAID_FAILURES: [Cell<bool>; 6] = const { [const { Cell::new(false) }; 6] };
}

/// The host's callbacks. Without `onWarn`, warnings go to stderr as the
/// core's stderr sink words them; notes follow warnings when there is no
/// `onNote` (to stderr beside them, or nowhere beside a callback), as in
/// every door; verdicts go nowhere without `onVerdict`.
pub struct Callbacks {
    on_warn: Option<OnWarn>,
    on_note: Option<OnNote>,
    on_verdict: Option<OnVerdict>,
}

/// One of the host's callbacks.
#[derive(Clone, Copy)]
enum Callback {
    Warn,
    Note,
    Verdict,
}

impl Callback {
    fn name(self) -> &'static str {
        match self {
            Callback::Warn => "onWarn",
            Callback::Note => "onNote",
            Callback::Verdict => "onVerdict",
        }
    }
}

/// How a callback failed.
#[derive(Clone, Copy)]
enum Failure {
    Threw,
    Rejected,
}

impl Failure {
    /// Says on stderr, once per thread, callback and kind of failure, that
    /// a callback failed: never its message, which may hold anything.
    fn say(self, callback: Callback) {
        if SAID_FAILURES.with(|said| said[callback as usize * 2 + self as usize].replace(true)) {
            return;
        }
        let what = match self {
            Failure::Threw => "threw",
            Failure::Rejected => "returned a promise that rejected",
        };
        write_stderr(&format!(
            "mcp-unknown-keys: the host's {} callback {what}; the call goes on unchanged (said once)\n",
            callback.name()
        ));
    }
}

impl Callbacks {
    /// The host's callbacks, shared with the deliveries they defer.
    pub fn new(
        on_warn: Option<OnWarn>,
        on_note: Option<OnNote>,
        on_verdict: Option<OnVerdict>,
    ) -> Rc<Callbacks> {
        Rc::new(Callbacks {
            on_warn,
            on_note,
            on_verdict,
        })
    }

    /// Hands out everything `queue` holds, then what deeper deliveries
    /// left (see [`MAX_REENTRY`]). A callback's failure changes nothing.
    pub fn deliver(self: &Rc<Self>, env: &Env, queue: &Arc<Queue>) {
        if DEPTH.get() >= MAX_REENTRY {
            defer(self, queue);
            return;
        }
        let _delivering = Delivering::enter();
        // A callback may call the alarm, which may say more: delivered too.
        while let Some((callbacks, said)) = next_to_deliver(self, queue) {
            for said in said {
                callbacks.say(env, said);
            }
        }
    }

    fn say(&self, env: &Env, said: Said) {
        match said {
            Said::Warning(warning) => match &self.on_warn {
                Some(on_warn) => {
                    let called = on_warn
                        .borrow_back(env)
                        .and_then(|f| f.call(Warning::from(&*warning)));
                    Self::settle(env, Callback::Warn, called);
                }
                None => write_stderr(&StderrSink::warning_line(&warning)),
            },
            Said::Note(tool, text) => match (&self.on_note, &self.on_warn) {
                (Some(on_note), _) => {
                    let called = on_note
                        .borrow_back(env)
                        .and_then(|f| f.call(FnArgs::from((tool, text))));
                    Self::settle(env, Callback::Note, called);
                }
                (None, None) => write_stderr(&StderrSink::text_line(&tool, &text)),
                (None, Some(_)) => {}
            },
            Said::Verdict(judged) => {
                if let Some(on_verdict) = &self.on_verdict {
                    let called = on_verdict
                        .borrow_back(env)
                        .and_then(|f| f.call(Verdict::from(&*judged)));
                    Self::settle(env, Callback::Verdict, called);
                }
            }
        }
    }

    /// What a callback's call came to: a throw (its exception already
    /// cleared) is said; a thenable it returned gets a rejection handler,
    /// which says its rejection, so that a rejected promise never ends the
    /// host as an unhandled rejection.
    fn settle(env: &Env, callback: Callback, called: Result<Unknown<'_>>) {
        let returned = match called {
            Ok(returned) => returned,
            Err(_) => return Failure::Threw.say(callback),
        };
        // SAFETY: the value was returned to this call, on its thread.
        let returned = unsafe { Js::new(env.raw(), returned.raw()) };
        let Some(then) = returned.then_method() else {
            return;
        };
        let on_rejected = env.create_function_from_closure::<Unknown<'_>, (), _>("onRejected", move |_| {
            Failure::Rejected.say(callback);
            Ok(())
        });
        if let Ok(on_rejected) = on_rejected {
            // SAFETY: made by this call, on its thread.
            let on_rejected = unsafe { Js::new(env.raw(), on_rejected.raw()) };
            // A `then` that throws is the thenable's own failure: as a throw.
            if returned.call_then(then, on_rejected).is_err() {
                Failure::Threw.say(callback);
            }
        }
    }
}

/// One delivery under way on this thread, counted while it lasts.
struct Delivering;

impl Delivering {
    fn enter() -> Delivering {
        DEPTH.set(DEPTH.get() + 1);
        Delivering
    }
}

impl Drop for Delivering {
    fn drop(&mut self) {
        DEPTH.set(DEPTH.get() - 1);
    }
}

/// What to deliver next: `queue`'s own, else a deferred queue's.
fn next_to_deliver(callbacks: &Rc<Callbacks>, queue: &Queue) -> Option<(Rc<Callbacks>, Vec<Said>)> {
    let said = queue.take();
    if !said.is_empty() {
        return Some((Rc::clone(callbacks), said));
    }
    loop {
        let (callbacks, queue) = DEFERRED.with_borrow_mut(Vec::pop)?;
        let said = queue.take();
        if !said.is_empty() {
            return Some((callbacks, said));
        }
    }
}

/// Leaves `queue` to the deliveries below this one, and says so once.
fn defer(callbacks: &Rc<Callbacks>, queue: &Arc<Queue>) {
    DEFERRED.with_borrow_mut(|deferred| {
        if !deferred.iter().any(|(_, pending)| Arc::ptr_eq(pending, queue)) {
            deferred.push((Rc::clone(callbacks), Arc::clone(queue)));
        }
    });
    if !SAID_DEEP.replace(true) {
        write_stderr(&format!(
            "mcp-unknown-keys: the host's callbacks called the alarm back more than {MAX_REENTRY} deep; \
             the deeper calls go on, audited, and their warnings are delivered once the callbacks above them return (said once)\n"
        ));
    }
}

/// One write of the whole line, so that a server sharing this stderr does
/// not land inside it; a closed stderr is no reason to fail a call.
pub fn write_stderr(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
