//! `Session`: the core's session state machine ([`Session`]) for Node hosts
//! that see both sides of an MCP session, the messages they send and the
//! server's answers, so they get verdicts as the proxy does.
//!
//! Each message is made JSON text (`JSON.stringify`, as a transport writes
//! it) and read with the one JSON-RPC reader ([`read_line`]), exactly as
//! the proxy reads a line off the wire, then handed to the session; what
//! the session says is delivered once the session is no longer borrowed,
//! so a callback may call it back.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;

use mcp_unknown_keys::audit::{self, Judged};
use mcp_unknown_keys::jsonrpc::{Line, read_line};
use mcp_unknown_keys::session::{Session as CoreSession, Side, Step};
use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;

use crate::auditor::js;
use crate::js::Kind;
use crate::listing::no_json_form;
use crate::options::{Built, Given, build};
use crate::report::{Coverage, Verdict, Warning};
use crate::sink::{Callbacks, OnNote, OnVerdict, OnWarn, Queue, Said};

/// How many settled verdicts `verdicts` keeps, the latest: a long session
/// must not grow without bound. `onVerdict` is handed every one.
const MAX_KEPT_VERDICTS: usize = 10_000;

/// A `Session`'s options: an `Auditor`'s, and `onVerdict`.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct SessionOptions {
    /// Takes each warning instead of stderr (one line each, the default).
    #[napi(ts_type = "(warning: Warning) => unknown")]
    pub on_warn: Option<OnWarn>,
    /// Keys tolerated on every tool; `reason` always is.
    pub allow: Option<Vec<String>>,
    /// Audits top-level keys only.
    pub top_level_only: Option<bool>,
    /// Does not report the required keys a call lacks (nor audit a call
    /// with no arguments as emptied): the first version's behaviour.
    pub no_missing: Option<bool>,
    /// Takes what a schema could not be read for.
    #[napi(ts_type = "(tool: string, text: string) => unknown")]
    pub on_note: Option<OnNote>,
    /// Takes each verdict as it is settled.
    #[napi(ts_type = "(verdict: Verdict) => unknown")]
    pub on_verdict: Option<OnVerdict>,
}

/// One MCP session as the alarm sees it: hand it each message the host
/// sends (`fromHost`) and each the server sends back (`fromServer`).
#[napi(js_name = "Session")]
pub struct JsSession {
    auditor: audit::Auditor,
    queue: Arc<Queue>,
    callbacks: Rc<Callbacks>,
    session: RefCell<CoreSession>,
    /// The latest verdicts settled, oldest first.
    settled: RefCell<VecDeque<Judged>>,
}

#[napi]
impl JsSession {
    /// A session with nothing read yet.
    #[napi(constructor)]
    pub fn new(options: Option<SessionOptions>) -> JsSession {
        let options = options.unwrap_or_default();
        let Built {
            auditor,
            queue,
            callbacks,
        } = build(Given {
            on_warn: options.on_warn,
            on_note: options.on_note,
            on_verdict: options.on_verdict,
            allow: options.allow,
            top_level_only: options.top_level_only,
            no_missing: options.no_missing,
        });
        JsSession {
            auditor,
            queue,
            callbacks,
            session: RefCell::default(),
            settled: RefCell::default(),
        }
    }

    /// Reads one message (or batch) the host sent, as an object or its JSON
    /// text. Returns the warnings it raised. Never throws on what the
    /// message holds; a value with no JSON form throws a `TypeError`.
    #[napi(js_name = "fromHost", ts_args_type = "message: unknown")]
    pub fn read_from_host(&self, env: &Env, message: Unknown<'_>) -> Result<Vec<Warning>> {
        self.read(env, Side::Host, message)
    }

    /// Reads one message (or batch) the server sent: listings, answers,
    /// `list_changed`. Returns the warnings it raised (none: a server sends
    /// no call).
    #[napi(js_name = "fromServer", ts_args_type = "message: unknown")]
    pub fn read_from_server(&self, env: &Env, message: Unknown<'_>) -> Result<Vec<Warning>> {
        self.read(env, Side::Server, message)
    }

    /// Ends the session: every call still awaiting its answer is judged
    /// `unanswered`. Returns those verdicts (after handing each to
    /// `onVerdict`); called again, it judges only the calls read since.
    #[napi]
    pub fn finish(&self, env: &Env) -> Vec<Verdict> {
        let judged = self.session.borrow_mut().finish();
        self.keep(&judged);
        self.say_verdicts(&judged);
        self.callbacks.deliver(env, &self.queue);
        judged.iter().map(Verdict::from).collect()
    }

    /// Every call read so far: how many, and why the rest were not audited.
    #[napi]
    pub fn coverage(&self) -> Coverage {
        Coverage::from(self.session.borrow().coverage())
    }

    /// The verdicts settled so far (the latest 10,000), oldest first.
    #[napi(getter)]
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.settled.borrow().iter().map(Verdict::from).collect()
    }

    /// Every tool of the current catalogue, sorted.
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.auditor.listed_tools()
    }

    /// The tools whose calls are audited now, sorted.
    #[napi(getter)]
    pub fn audited_tools(&self) -> Vec<String> {
        self.auditor.audited_tools()
    }
}

impl JsSession {
    /// Reads a message from `from`, then delivers what the session said.
    fn read(&self, env: &Env, from: Side, message: Unknown<'_>) -> Result<Vec<Warning>> {
        let message = js(env, message);
        let line = match message.kind() {
            Kind::String => message.text().ok(),
            _ => message.json_text().map_err(|_| no_json_form())?,
        };
        let Some(line) = line else {
            return Ok(Vec::new());
        };
        let steps = self.steps(from, line.as_bytes());
        let mut warnings = Vec::new();
        for step in steps {
            warnings.extend(self.deliver(env, step));
        }
        Ok(warnings)
    }

    /// Hands each message of a line to the session. A bug met reading one
    /// message loses that message only.
    fn steps(&self, from: Side, line: &[u8]) -> Vec<Step> {
        let messages = match catch_unwind(|| read_line(line)) {
            Ok(Line::Message(message)) => vec![message],
            Ok(Line::Batch(messages)) => messages,
            Ok(Line::Unreadable) | Err(_) => Vec::new(),
        };
        let mut session = self.session.borrow_mut();
        let mut steps = Vec::with_capacity(messages.len());
        for message in messages {
            let read = catch_unwind(AssertUnwindSafe(|| session.read(&self.auditor, from, message)));
            if let Ok(step) = read {
                self.keep(&step.verdicts);
                steps.push(step);
            }
        }
        steps
    }

    fn keep(&self, judged: &[Judged]) {
        let mut settled = self.settled.borrow_mut();
        for judged in judged {
            if settled.len() == MAX_KEPT_VERDICTS {
                settled.pop_front();
            }
            settled.push_back(judged.clone());
        }
    }

    /// Delivers what one message made the session say, as every door
    /// does ([`Step::deliver`]): into the queue, then to the host's
    /// callbacks. Returns the warning.
    fn deliver(&self, env: &Env, step: Step) -> Option<Warning> {
        step.deliver(&self.auditor);
        self.callbacks.deliver(env, &self.queue);
        step.warning().map(Warning::from)
    }

    /// Says each verdict, for `onVerdict` (delivered by the caller).
    fn say_verdicts(&self, judged: &[Judged]) {
        for judged in judged {
            self.queue.push(Said::Verdict(Box::new(judged.clone())));
        }
    }
}
