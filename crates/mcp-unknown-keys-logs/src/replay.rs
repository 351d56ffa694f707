//! The replay: what each record carries, acted on as the layer or the proxy
//! would have acted on it live.
//!
//! The JSON-RPC traffic of an input is handed to the core's [`Session`], the
//! proxy's own: listings, their pages and errors, `list_changed`, and the
//! verdicts on calls are decided there, once for every door. What stays
//! here is the log reader's own: which side sent a message (a recording
//! does not say), the calls' meeting with catalogues the session does not
//! hold (a record's own `tools`, `--tools` bound to servers, names as hosts
//! write them), and the lines of a proxy's `--log` said again.
//!
//! [`Session`]: mcp_unknown_keys::session::Session

use mcp_unknown_keys::audit::{
    Arguments, Call, Catalog, Cause, Judged, ListedTools, Note, Outcome, Skip, Warning,
};
use mcp_unknown_keys::jsonrpc::Message;
use mcp_unknown_keys::session::Side;
use serde_json::{Map, Value};

use crate::audit::Audit;
use crate::groups::CallFacts;
use crate::names::{self, Naming};
use crate::observe::{Notice, Observer};
use crate::shapes::{Event, Found};

impl<O: Observer> Audit<O> {
    /// Takes one event the log reader yields, as the layer or the proxy
    /// would have acted on it live; whether it was of any use (read by the
    /// reader for a JSON-RPC message only).
    pub(crate) fn take(&mut self, event: Event<'_>) -> bool {
        match event {
            Event::BeginRecord => self.record_tools.begin(),
            Event::EndRecord => self.record_tools.end(),
            Event::Tools(text) => self.tools(text),
            Event::ListedTools(text) => self.listed_tools(text),
            Event::Call(found) => self.call(found),
            Event::LoggedWarning(warning) => self.logged_warning(warning),
            Event::Summary(summary) => self.summary(summary),
            Event::LoggedVerdict(judged) => self.logged_verdict(judged),
            Event::LoggedNote { tool, note } => self.logged_note(tool, note),
            Event::Message(message) => return self.message(message),
            Event::Relayed(relayed) => self.relay(relayed),
            // A record of no shape is nothing to an audit.
            Event::Unrecognised(_) => return false,
        }
        true
    }

    /// A catalogue a record holds (a request body's `tools`): the
    /// catalogue of that record's calls, and of no other record's. A request
    /// log sends the same tools with every request: the catalogue they make
    /// is made once. A `tools` array holding no declaration (Claude Code's
    /// `init` line lists tool names as strings) is no catalogue.
    fn tools(&mut self, text: &str) {
        let print = fingerprint(text);
        if self.record_tools.reuse(print) {
            return;
        }
        let Some(catalog) = catalogue_of(text) else {
            return;
        };
        self.report.listed(&catalog, None);
        self.unbound.say_notes(&catalog);
        self.say_notes(None);
        self.record_tools.made(print, catalog);
    }

    /// A listing kept on its own (`{"tools": […]}`): the catalogue from
    /// there on, as a `tools/list` response's. The same listing again is
    /// made once.
    fn listed_tools(&mut self, text: &str) {
        let print = fingerprint(text);
        if Some(print) == self.unbound_print {
            self.session.abandon_listing();
            return;
        }
        let Some(catalog) = catalogue_of(text) else {
            return;
        };
        self.session.abandon_listing();
        self.set_unbound(catalog);
        self.unbound_print = Some(print);
    }

    /// Audits one call against the catalogue that declares its tool, under
    /// the name the call gave it: its record's own, else one that lasts
    /// (`--tools`, a listing); counts it either way. A JSON-RPC call is a
    /// call of the input's session, handed to it as audited here: one that
    /// carried undeclared keys awaits its answer there, as the proxy's does.
    pub(crate) fn call(&mut self, found: Found<'_>) {
        let shown = names::shown(found.tool, found.server);
        // No arguments member is no arguments, as the core reads it.
        let as_shown = Call {
            tool: &shown,
            arguments: Some(Arguments::Json(found.arguments.unwrap_or_default())),
            id: found.id,
        };
        let mut outcome = self.audit_call(&found, as_shown);
        if found.truncated {
            self.in_truncated_response(&shown, &mut outcome);
        }
        // A JSON-RPC call is counted and judged with its id as it was
        // written (`1e0`, not the `1.0` its value reads as), as the
        // session counts the calls it reads.
        let written = match (found.as_listed, found.rpc_id) {
            (true, Some(id)) => Some(Value::String(id.to_string())),
            _ => None,
        };
        let as_shown = Call {
            id: written.as_ref().or(found.id),
            ..as_shown
        };
        let mut judged = Vec::new();
        // A call sent to its server (JSON-RPC, or relayed by a gateway):
        // a call of the input's session, awaiting its answer by its key.
        if found.as_listed || found.rpc_id.is_some() {
            let key = found.rpc_id.cloned();
            // Counted once, in the report, below.
            let step = self.session.pair_audited_call(&as_shown, key, outcome);
            let call = step.call.expect("a call read is a call step");
            (outcome, judged) = (call.outcome, step.verdicts);
        }
        let report = &mut self.report;
        report.coverage.record(&as_shown, &outcome);
        if found.truncated {
            report.coverage.count_in_truncated_response();
        }
        let cause = found.truncated.then_some(Cause::TruncatedResponse);
        report.findings.record_as(&as_shown, &outcome, cause);
        report.strict.record(&shown, found.server, &outcome);
        report.groups.record(CallFacts {
            tool: &shown,
            model: found.model,
            outcome: &outcome,
            truncated: found.truncated,
        });
        if let Some(warning) = outcome.warning() {
            self.warn(warning);
        }
        self.judged(judged);
    }

    /// A warning the proxy logged is said again through the auditor: against
    /// the declaration the warning records, a call carrying its keys, and
    /// its nested keys claimed as said ([`Auditor::claim_logged_paths`]).
    /// So a pair the log repeats (one proxy run after another) is said once,
    /// and keys given to `allow` are tolerated. It is counted as one audited
    /// call carrying its keys until the log's summary gives the real counts.
    ///
    /// [`Auditor::claim_logged_paths`]: mcp_unknown_keys::audit::Auditor::claim_logged_paths
    fn logged_warning(&mut self, logged: Warning) {
        self.report.logged_warnings += 1;
        self.segment.warning(&logged);
        let declared: Map<String, Value> = logged
            .declared_keys
            .iter()
            .map(|key| (key.clone(), Value::Object(Map::new())))
            .collect();
        // Closed: the log already found these keys undeclared, whatever
        // else the schema allowed (a closed schema declaring nothing has no
        // property to write; a pattern is not logged).
        let schema = serde_json::json!({ "properties": declared, "additionalProperties": false });
        let mut catalog = Catalog::new();
        catalog.insert(&logged.tool, Some(&schema));
        let carried: Map<String, Value> = logged
            .unknown_keys
            .iter()
            .map(|key| (key.clone(), Value::Null))
            .collect();
        let id = Value::String(logged.id.clone());
        let call = Call {
            tool: &logged.tool,
            arguments: Some(Arguments::Object(&carried)),
            id: Some(&id),
        };
        let auditor = &self.unbound;
        // The schema written requires nothing: what the call lacked is
        // claimed as logged, below.
        let keys = auditor.audit(&catalog, call).warning();
        let paths = if self.top_level_only {
            Vec::new()
        } else {
            auditor.claim_logged_paths(&logged.tool, &logged.unknown_paths)
        };
        let missing = auditor.claim_logged_missing(&logged.tool, &logged.missing_required);
        // Said again, it says what the log said: the log holds no values to
        // diagnose a fragment from.
        let warning = match keys {
            Some(warning) if logged.hints.is_empty() => warning,
            Some(warning) => {
                let hints = logged
                    .hints
                    .iter()
                    .filter(|hint| warning.unknown_keys.contains(&hint.key))
                    .cloned()
                    .collect();
                warning.with_diagnosis(hints, logged.missing_keys.clone())
            }
            None if paths.is_empty() && missing.is_empty() => return,
            None => Warning::new(&logged.tool, Vec::new(), logged.declared_keys.clone(), &logged.id),
        };
        let cause = logged.missing_cause.unwrap_or(Cause::MissingRequired);
        self.warn(
            warning
                .with_unknown_paths(paths)
                .with_missing_required(missing, cause),
        );
    }

    /// A verdict the proxy logged is said again and counted; its pairs'
    /// counts stand until the log's summary gives them.
    fn logged_verdict(&mut self, judged: Judged) {
        self.report.logged_verdicts += 1;
        self.segment.verdict(&judged);
        self.judged([judged]);
    }

    /// A note the proxy logged is said again, once.
    fn logged_note(&mut self, tool: String, note: Note) {
        let notice = Notice::Schema { tool, note };
        if !self.report.notices.contains(&notice) {
            self.say(notice);
        }
    }

    fn summary(&mut self, summary: &str) {
        let report = &mut self.report;
        self.segment
            .summary(summary, &mut report.coverage, &mut report.logged);
    }

    /// A JSON-RPC message, acted on by the input's session as the proxy's
    /// session acts on it ([`Session::read`]): listings awaited, assembled
    /// page by page and installed as the catalogue of the inputs, errors
    /// answering them, `list_changed`, and the verdicts on the calls
    /// awaiting an answer. A recording does not say which side sent a
    /// message: each is taken as from the side that sends its kind, so any
    /// response answers the call awaiting it. Until an input records a
    /// `tools/list` request, a listing response answering none is taken as
    /// a page all the same (a server's side alone): a further page of an
    /// open listing, or a new listing.
    ///
    /// [`Session::read`]: mcp_unknown_keys::session::Session::read
    fn message(&mut self, message: Message<'_>) -> bool {
        let from = match &message {
            Message::ListTools { .. } => {
                self.session.take_unrequested_listings(false);
                Side::Host
            }
            Message::Cancelled { .. } | Message::TaskResult { .. } | Message::CancelTask { .. } => Side::Host,
            Message::ListChanged | Message::Response { .. } => Side::Server,
            // A call is handed over as any call is, through `call`.
            Message::Call { .. } | Message::Other => return false,
        };
        let list_changed = matches!(message, Message::ListChanged);
        let step = self.session.read(&self.unbound, from, message);
        if let Some(catalog) = &step.installed {
            if list_changed {
                self.unbound_print = None;
            } else {
                self.installed(catalog);
            }
        }
        self.judged(step.verdicts);
        step.used
    }
}

impl<O: Observer> Audit<O> {
    /// A call of a model response cut at its length limit: its warning's
    /// causes are the cut's ([`Cause::TruncatedResponse`]), and arguments
    /// it left unreadable are said to be its doing, the first time.
    fn in_truncated_response(&mut self, tool: &str, outcome: &mut Outcome) {
        match outcome {
            Outcome::Audited {
                warning: Some(warning),
                ..
            } => {
                for hint in &mut warning.hints {
                    hint.cause = Cause::TruncatedResponse;
                }
                if warning.missing_cause.is_some() {
                    warning.missing_cause = Some(Cause::TruncatedResponse);
                }
            }
            Outcome::Skipped(Skip::UnreadableArguments) if !self.unreadable_cut_said => {
                self.unreadable_cut_said = true;
                self.say(Notice::UnreadableInTruncatedResponse {
                    tool: tool.to_owned(),
                });
            }
            _ => {}
        }
    }

    /// Audits one call against the catalogue that declares its tool, as
    /// [`Audit::call`] says, and counts one to a tool listed as declaring
    /// nothing.
    fn audit_call(&mut self, found: &Found<'_>, as_shown: Call<'_>) -> Outcome {
        let naming = match (found.as_listed, found.server) {
            (true, _) => Naming::Listed,
            (false, Some(server)) => Naming::Server(server),
            (false, None) => Naming::Host,
        };
        let own = self.record_tools.current().cloned();
        let unbound = self.unbound.catalog();
        let resolve = |catalog: &Catalog| {
            names::resolve(catalog, &self.bound, |shelf| &shelf.catalog, found.tool, naming)
        };
        let in_record = own
            .as_deref()
            .and_then(|catalog| resolve(catalog).map(|target| (target, catalog)));
        let (target, record) = match in_record {
            Some((target, catalog)) => (Some(target), Some(catalog)),
            None => (resolve(&unbound), None),
        };
        let Some(target) = target else {
            let listed = own.as_ref().is_some_and(|own| own.is_listed())
                || unbound.is_listed()
                || !self.bound.is_empty();
            return Outcome::Skipped(if listed {
                Skip::UnlistedTool
            } else {
                Skip::NoCatalogue
            });
        };
        let (auditor, catalog) = match (target.server, record) {
            (Some(at), _) => (&self.bound[at].with.auditor, &self.bound[at].with.catalog),
            (None, Some(own)) => (&self.unbound, own),
            (None, None) => (&self.unbound, &*unbound),
        };
        let call = Call {
            tool: target.tool,
            ..as_shown
        };
        let mut outcome = auditor.audit(catalog, call);
        if let Outcome::Audited {
            warning: Some(warning),
            ..
        } = &mut outcome
        {
            warning.tool = as_shown.tool.to_owned();
        }
        if outcome == Outcome::Skipped(Skip::DeclaresNothing)
            && let Some(calls) = self.report.declares_nothing.get_mut(target.tool)
        {
            *calls += 1;
        }
        outcome
    }
}

/// The catalogue of a `tools` array's text, with the tools too deep to
/// read; `None` when the text is no array, or declares nothing at all (a
/// list of tool names is no catalogue).
fn catalogue_of(text: &str) -> Option<Catalog> {
    let listed = ListedTools::read(text)?;
    let mut catalog = Catalog::new();
    catalog.extend_listed(&listed);
    (!catalog.is_empty()).then_some(catalog)
}

fn fingerprint(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut hasher, text.as_bytes());
    std::hash::Hasher::finish(&hasher)
}
