//! Where a Node auditor's warnings and notes go: the host's callbacks, or
//! stderr.
//!
//! The core says them through a `Sink`, which may not call JavaScript (it
//! has no `Env`, and it may be called with the auditor's state borrowed):
//! [`Queue`] keeps them, and [`Callbacks::deliver`] hands them out once the
//! call into the addon has finished with its state, so a callback may call
//! the auditor back.

use std::sync::{Mutex, PoisonError};

use mcp_unknown_keys::audit::{Note, Sink, StderrSink};
use napi::bindgen_prelude::{FnArgs, FunctionRef, Unknown};
use napi::{Env, Result};

use crate::report::Warning;

/// What the core said during one call into the addon, in order.
pub enum Said {
    /// A warning to deliver.
    Warning(Box<mcp_unknown_keys::audit::Warning>),
    /// A note about a tool: its name and the text.
    Note(String, String),
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
}

/// A host's `onWarn`: takes each warning.
pub type OnWarn = FunctionRef<Warning, Unknown<'static>>;
/// A host's `onNote`: takes a tool's name and the note's text.
pub type OnNote = FunctionRef<FnArgs<(String, String)>, Unknown<'static>>;

/// The host's callbacks. Without `onWarn`, warnings go to stderr as the
/// core's stderr sink words them; notes follow warnings when there is no
/// `onNote` (to stderr beside them, or nowhere beside a callback), as in
/// every door.
pub struct Callbacks {
    pub on_warn: Option<OnWarn>,
    pub on_note: Option<OnNote>,
}

impl Callbacks {
    /// Hands out everything `queue` holds. A callback that throws is said
    /// on stderr and otherwise ignored: the host's bookkeeping never
    /// changes a call.
    pub fn deliver(&self, env: &Env, queue: &Queue) {
        // A callback may call the auditor, which may say more: delivered too.
        loop {
            let said = queue.take();
            if said.is_empty() {
                return;
            }
            for said in said {
                match said {
                    Said::Warning(warning) => self.warn(env, &warning),
                    Said::Note(tool, text) => self.note(env, &tool, &text),
                }
            }
        }
    }

    fn warn(&self, env: &Env, warning: &mcp_unknown_keys::audit::Warning) {
        match &self.on_warn {
            Some(on_warn) => {
                let called = on_warn
                    .borrow_back(env)
                    .and_then(|f| f.call(Warning::from(warning)));
                said_threw("onWarn", called);
            }
            None => write_stderr(&StderrSink::warning_line(warning)),
        }
    }

    fn note(&self, env: &Env, tool: &str, text: &str) {
        match (&self.on_note, &self.on_warn) {
            (Some(on_note), _) => {
                let args = FnArgs::from((tool.to_owned(), text.to_owned()));
                let called = on_note.borrow_back(env).and_then(|f| f.call(args));
                said_threw("onNote", called);
            }
            (None, None) => write_stderr(&StderrSink::text_line(tool, text)),
            (None, Some(_)) => {}
        }
    }
}

/// A callback that threw, said on stderr (its exception already cleared)
/// without its message, which may hold anything.
fn said_threw<T>(name: &str, called: Result<T>) {
    if called.is_err() {
        write_stderr(&format!(
            "mcp-unknown-keys: the host's {name} callback threw; the call goes on unchanged\n"
        ));
    }
}

/// One write of the whole line, so that a server sharing this stderr does
/// not land inside it; a closed stderr is no reason to fail a call.
pub fn write_stderr(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Says that a listed tool's schema nests too deep to read (it stays
/// listed, declaring nothing), in the words every door uses.
pub fn unreadable_tool(queue: &Queue, tool: &str) {
    queue.push(Said::Note(
        tool.to_owned(),
        "its schema nests too deep to read: the tool's arguments are not audited".to_owned(),
    ));
}
