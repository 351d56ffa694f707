//! The replay: every record in order, through auditors that hold the rules.

use std::io::{self, Write};

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Listing, Outcome, Skip, Warning};
use serde_json::{Map, Value};

use super::catalogue::Catalogues;
use super::names::{self, Bound};
use super::report::Tally;
use super::shapes::{Found, Handler};

/// A catalogue and the auditor that says what calls against it carry: one
/// for the catalogue of the input (and of `--tools FILE`), one per server
/// bound by `--tools SERVER=FILE`, so each remembers what it said.
struct Shelf {
    auditor: Auditor,
    catalog: Catalog,
}

/// Replays recorded records through the auditors, as the layer or the
/// proxy would have audited them live.
///
/// The catalogues are held here and handed to [`Auditor::audit`] with each
/// call: they change only between records, so every batch meets one
/// snapshot.
pub struct Replay<W> {
    unbound: Shelf,
    bound: Vec<Bound<Shelf>>,
    /// The fingerprint of the catalogue text the unbound catalogue was made
    /// from, when it was a whole catalogue in the input.
    unbound_print: Option<u64>,
    /// A `tools/list` listing whose last page has not come yet.
    listing: Listing,
    /// Where each warning goes as it is raised (`None` for the text report).
    jsonl: Option<W>,
    /// The first error writing a warning: the replay then stops writing.
    write_error: Option<io::Error>,
    /// What was counted.
    pub tally: Tally,
}

impl<W: Write> Replay<W> {
    /// A replay starting from the `--tools` catalogues, tolerating the
    /// `allowed` keys, writing warnings to `jsonl` if given.
    pub fn new(catalogues: Catalogues, allowed: &[String], jsonl: Option<W>) -> Replay<W> {
        let auditor = || {
            Auditor::new()
                .with_sink(())
                .allow_all(allowed.iter().map(String::as_str))
        };
        let mut tally = Tally::default();
        if let Some(catalog) = &catalogues.unbound {
            tally.listed(catalog, None);
        }
        let bound = catalogues
            .bound
            .into_iter()
            .map(|Bound { server, with }| {
                tally.listed(&with, Some(&server));
                let shelf = Shelf {
                    auditor: auditor(),
                    catalog: with,
                };
                Bound { server, with: shelf }
            })
            .collect();
        Replay {
            unbound: Shelf {
                auditor: auditor(),
                catalog: catalogues.unbound.unwrap_or_default(),
            },
            bound,
            unbound_print: None,
            listing: Listing::default(),
            jsonl,
            write_error: None,
            tally,
        }
    }

    /// The first error met writing a warning, if any.
    pub fn take_write_error(&mut self) -> Option<io::Error> {
        self.write_error.take()
    }

    /// One input ends: a proxy log cut short keeps its warning lines' counts.
    pub fn end_of_input(&mut self) {
        self.tally.end_of_log();
    }

    fn say(&mut self, warning: &Warning) {
        self.tally.warnings += 1;
        let Some(out) = self.jsonl.as_mut() else {
            return;
        };
        if self.write_error.is_some() {
            return;
        }
        // Flushed per warning: warnings are rare, and a reader following the
        // output live sees each one when it is raised.
        let written = writeln!(out, "{}", warning.to_json_line()).and_then(|()| out.flush());
        if let Err(error) = written {
            self.write_error = Some(error);
        }
    }

    fn set_unbound(&mut self, catalog: Catalog) {
        self.tally.listed(&catalog, None);
        self.unbound.catalog = catalog;
        self.unbound_print = None;
    }

    fn set_unbound_none(&mut self) {
        self.unbound.catalog = Catalog::none();
        self.unbound_print = None;
    }
}

impl<W: Write> Handler for Replay<W> {
    fn tools(&mut self, text: &str, page: Option<bool>) {
        // A request log sends the same tools with every request: the
        // catalogue they make is made once.
        let print = page.is_none().then(|| fingerprint(text));
        if print.is_some() && print == self.unbound_print {
            self.listing.abandon();
            return;
        }
        let Ok(tools) = serde_json::from_str::<Vec<Value>>(text) else {
            return;
        };
        match page {
            // A catalogue in the input is a whole listing of its own.
            None => {
                self.listing.abandon();
                let mut catalog = Catalog::new();
                catalog.extend_tools(&tools);
                self.set_unbound(catalog);
                self.unbound_print = print;
            }
            // A page continues the listing only when the page before it said
            // more was to come (offline, the request it answers is unknown).
            // Pairs already said stay said: that memory is the auditor's.
            Some(more) => {
                let first = !self.listing.is_assembling();
                if let Some(catalog) = self.listing.page(&tools, first, more) {
                    self.set_unbound(catalog);
                }
            }
        }
    }

    /// Audits one call against the catalogue that declares its tool, under
    /// the name the call gave it; counts it either way.
    fn call(&mut self, found: Found<'_>) {
        let shown = names::shown(found.tool, found.server);
        let arguments = found.arguments.map(Arguments::Json);
        let as_shown = Call {
            tool: &shown,
            arguments,
            id: found.id,
        };
        let target = names::resolve(
            &self.unbound.catalog,
            &self.bound,
            |shelf| &shelf.catalog,
            found.tool,
            found.server,
        );
        let Some(target) = target else {
            let listed = self.unbound.catalog.is_listed() || !self.bound.is_empty();
            let skip = if listed {
                Skip::UnlistedTool
            } else {
                Skip::NoCatalogue
            };
            self.tally.coverage.count_unaudited(&shown, skip);
            return;
        };
        let shelf = match target.server {
            Some(at) => &self.bound[at].with,
            None => &self.unbound,
        };
        let call = Call {
            tool: target.tool,
            ..as_shown
        };
        let mut outcome = shelf.auditor.audit(&shelf.catalog, call);
        if let Outcome::Audited {
            warning: Some(warning),
            ..
        } = &mut outcome
        {
            warning.tool = shown.to_string();
        }
        if outcome == Outcome::Skipped(Skip::DeclaresNothing)
            && let Some(calls) = self.tally.declares_nothing.get_mut(target.tool)
        {
            *calls += 1;
        }
        self.tally.coverage.record(&as_shown, &outcome);
        self.tally.findings.record(&as_shown, &outcome);
        if let Some(warning) = outcome.warning() {
            self.say(&warning);
        }
    }

    /// A warning the proxy logged is said again through the auditor: against
    /// the declaration the warning records, a call carrying its keys. So a
    /// pair the log repeats (one proxy run after another) is said once, and
    /// keys given to `--allow` are tolerated. It is counted as one audited
    /// call carrying its keys until the log's summary gives the real counts.
    fn logged_warning(&mut self, logged: Warning) {
        self.tally.logged_warnings += 1;
        self.tally.segment.warning(&logged);
        let declared: Map<String, Value> = logged
            .declared_keys
            .iter()
            .map(|key| (key.clone(), Value::Object(Map::new())))
            .collect();
        let mut catalog = Catalog::new();
        catalog.insert(&logged.tool, Some(&serde_json::json!({ "properties": declared })));
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
        // A logged warning whose declaration reads as declaring nothing
        // cannot be said again. When it is said again, it says what the log
        // said: the log holds no values to diagnose a fragment from.
        let Some(mut warning) = self.unbound.auditor.audit(&catalog, call).warning() else {
            return;
        };
        if !logged.hints.is_empty() {
            let hints = logged
                .hints
                .iter()
                .filter(|h| warning.unknown_keys.contains(&h.key))
                .cloned()
                .collect();
            warning = warning.with_diagnosis(hints, logged.missing_keys.clone());
        }
        self.say(&warning);
    }

    fn summary(&mut self, summary: &str) {
        let tally = &mut self.tally;
        tally
            .segment
            .summary(summary, &mut tally.coverage, &mut tally.logged);
    }

    /// As in the proxy: nothing is audited until the next listing.
    fn list_changed(&mut self) {
        self.set_unbound_none();
        self.listing.abandon();
    }

    /// A listing asked for from the start: a page left open before it is
    /// abandoned, as the proxy would.
    fn listing_requested(&mut self) {
        self.listing.abandon();
    }
}

fn fingerprint(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut hasher, text.as_bytes());
    std::hash::Hasher::finish(&hasher)
}
