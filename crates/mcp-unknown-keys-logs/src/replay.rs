//! The replay: what each record carries, acted on as the layer or the proxy
//! would have acted on it live.

use mcp_unknown_keys::audit::{
    Answer, Arguments, Call, Catalog, Judged, ListedTools, Note, Outcome, Skip, Warning,
};
use mcp_unknown_keys::jsonrpc::{ListingPage, Message};
use serde_json::{Map, Value};

use crate::audit::Audit;
use crate::groups::CallFacts;
use crate::names::{self, Naming};
use crate::observe::{Notice, Observer};
use crate::shapes::{Found, Handler};

impl<O: Observer> Handler for Audit<O> {
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
        let Some((catalog, unreadable)) = catalogue_of(text) else {
            return;
        };
        self.report.listed(&catalog, None);
        self.unbound.auditor.say_notes(&catalog);
        self.say_notes(None);
        self.record_tools.made(print, catalog);
        self.say_unreadable(unreadable);
    }

    /// A listing kept on its own (`{"tools": […]}`): the catalogue from
    /// there on, as a `tools/list` response's. The same listing again is
    /// made once.
    fn listed_tools(&mut self, text: &str) {
        let print = fingerprint(text);
        if Some(print) == self.unbound_print {
            self.listing.abandon();
            return;
        }
        let Some((catalog, unreadable)) = catalogue_of(text) else {
            return;
        };
        self.listing.abandon();
        self.set_unbound(catalog);
        self.unbound_print = Some(print);
        self.say_unreadable(unreadable);
    }

    fn begin_record(&mut self) {
        self.record_tools.begin();
    }

    fn end_record(&mut self) {
        self.record_tools.end();
    }

    /// Audits one call against the catalogue that declares its tool, under
    /// the name the call gave it: its record's own, else one that lasts
    /// (`--tools`, a listing); counts it either way. A JSON-RPC call that
    /// carried undeclared keys awaits its answer, as the proxy awaits it.
    fn call(&mut self, found: Found<'_>) {
        let shown = names::shown(found.tool, found.server);
        let as_shown = Call {
            tool: &shown,
            arguments: found.arguments.map(Arguments::Json),
            id: found.id,
        };
        let naming = match (found.as_listed, found.server) {
            (true, _) => Naming::Listed,
            (false, Some(server)) => Naming::Server(server),
            (false, None) => Naming::Host,
        };
        let own = self.record_tools.current().cloned();
        let resolve = |unbound: &Catalog| {
            names::resolve(unbound, &self.bound, |shelf| &shelf.catalog, found.tool, naming)
        };
        let in_record = own
            .as_deref()
            .and_then(|catalog| resolve(catalog).map(|target| (target, catalog)));
        let (target, record) = match in_record {
            Some((target, catalog)) => (Some(target), Some(catalog)),
            None => (resolve(&self.unbound.catalog), None),
        };
        let report = &mut self.report;
        let Some(target) = target else {
            let listed = own.as_ref().is_some_and(|own| own.is_listed())
                || self.unbound.catalog.is_listed()
                || !self.bound.is_empty();
            let skip = if listed {
                Skip::UnlistedTool
            } else {
                Skip::NoCatalogue
            };
            report.coverage.count_unaudited(&shown, skip);
            report.groups.record(CallFacts {
                tool: &shown,
                model: found.model,
                outcome: &Outcome::Skipped(skip),
            });
            return;
        };
        let (auditor, catalog) = match (target.server, record) {
            (Some(at), _) => (&self.bound[at].with.auditor, &self.bound[at].with.catalog),
            (None, Some(own)) => (&self.unbound.auditor, own),
            (None, None) => (&self.unbound.auditor, &self.unbound.catalog),
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
            warning.tool = shown.to_string();
        }
        if outcome == Outcome::Skipped(Skip::DeclaresNothing)
            && let Some(calls) = report.declares_nothing.get_mut(target.tool)
        {
            *calls += 1;
        }
        report.coverage.record(&as_shown, &outcome);
        report.findings.record(&as_shown, &outcome);
        report.groups.record(CallFacts {
            tool: &shown,
            model: found.model,
            outcome: &outcome,
        });
        let awaited = found.rpc_id.filter(|_| found.as_listed).cloned();
        let judged = match awaited {
            Some(id) => report.pairing.call(id, &as_shown, &outcome),
            None => Vec::new(),
        };
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
        let auditor = &self.unbound.auditor;
        let keys = auditor.audit(&catalog, call).warning();
        let paths = if self.top_level_only {
            Vec::new()
        } else {
            auditor.claim_logged_paths(&logged.tool, &logged.unknown_paths)
        };
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
            None if paths.is_empty() => return,
            None => Warning::new(&logged.tool, Vec::new(), logged.declared_keys.clone(), &logged.id),
        };
        self.warn(warning.with_unknown_paths(paths));
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

    /// A JSON-RPC message, acted on as the proxy acts on it: a `tools/list`
    /// request is awaited by id, and only the response answering it is a
    /// listing page (opening a listing when the request had no cursor); a
    /// response that is no listing (an error) abandons the listing being
    /// assembled and keeps the catalogue; `notifications/tools/list_changed`
    /// drops the catalogue until the next listing. A response also answers
    /// the call awaiting it, and a cancellation gives that call up: each is
    /// judged as the proxy judges it ([`Verdicts`]).
    ///
    /// [`Verdicts`]: mcp_unknown_keys::audit::Verdicts
    ///
    /// An input that recorded no `tools/list` request at all (a server's
    /// side only, a listing kept on its own) takes each listing response as
    /// a page: a further page of an open listing, or a new listing.
    fn message(&mut self, message: Message<'_>) -> bool {
        match message {
            Message::ListTools { id, first } => {
                self.requests_seen = true;
                self.awaited.request(id, first);
                true
            }
            Message::Cancelled { request } => {
                let listing = self.awaited.cancel(&request);
                let judged = self.report.pairing.cancel(&request);
                let call = judged.is_some();
                self.judged(judged);
                listing || call
            }
            Message::ListChanged => {
                self.listing.abandon();
                self.unbound.catalog = Catalog::none();
                self.unbound_print = None;
                true
            }
            Message::Response { id, result } => {
                let answered = self.awaited.answer(&id);
                let result = result.map(|result| result.get());
                let page = result.and_then(ListingPage::read);
                let listing = match (answered, page) {
                    (Some(first), Some(page)) => {
                        self.page(page, first);
                        true
                    }
                    (Some(_), None) => {
                        self.listing.abandon();
                        true
                    }
                    (None, Some(page)) if !self.requests_seen => {
                        let first = !self.listing.is_assembling();
                        self.page(page, first);
                        true
                    }
                    (None, _) => false,
                };
                let judged = self.report.pairing.answer(&id, Answer::read(result));
                let call = judged.is_some();
                self.judged(judged);
                listing || call
            }
            Message::Call { .. } | Message::Other => false,
        }
    }
}

impl<O: Observer> Audit<O> {
    /// A page of a listing: calls meet the listing so far. Pairs already
    /// said stay said: that memory is the auditor's.
    fn page(&mut self, page: ListingPage, first: bool) {
        if let Some(catalog) = self.listing.page(&page.tools.tools, first, page.more) {
            self.set_unbound(catalog);
        }
        self.say_unreadable(page.tools.unreadable);
    }

    /// Says, once each, the listed tools that could not be read.
    fn say_unreadable(&mut self, tools: Vec<String>) {
        for tool in tools {
            let notice = Notice::UnreadableTool { tool };
            if !self.report.notices.contains(&notice) {
                self.say(notice);
            }
        }
    }
}

/// The catalogue of a `tools` array's text, with the tools too deep to
/// read; `None` when the text is no array, or declares nothing at all (a
/// list of tool names is no catalogue).
fn catalogue_of(text: &str) -> Option<(Catalog, Vec<String>)> {
    let listed = ListedTools::read(text)?;
    let mut catalog = Catalog::new();
    catalog.extend_tools(&listed.tools);
    (!catalog.is_empty() || !listed.unreadable.is_empty()).then_some((catalog, listed.unreadable))
}

fn fingerprint(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut hasher, text.as_bytes());
    std::hash::Hasher::finish(&hasher)
}
