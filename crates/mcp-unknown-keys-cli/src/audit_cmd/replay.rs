//! The replay: one auditor, one catalogue, every line in order.

use std::io::{self, Write};

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Listing, Outcome, Skip, Warning};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::report::Tally;
use super::shapes::Handler;

/// Replays recorded lines through one [`Auditor`], as the layer or the proxy
/// would have audited them live.
///
/// The catalogue is held here and handed to [`Auditor::audit`] with each
/// call: it changes only between lines, so every batch meets one snapshot.
pub struct Replay<W> {
    auditor: Auditor,
    catalog: Catalog,
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
    /// A replay starting from `catalog` (empty when no `--tools` was given),
    /// tolerating the `allowed` keys, writing warnings to `jsonl` if given.
    pub fn new(catalog: Option<Catalog>, allowed: &[String], jsonl: Option<W>) -> Replay<W> {
        let auditor = Auditor::new()
            .with_sink(())
            .allow_all(allowed.iter().map(String::as_str));
        let mut tally = Tally::default();
        if let Some(catalog) = &catalog {
            tally.listed(catalog);
        }
        Replay {
            auditor,
            catalog: catalog.unwrap_or_default(),
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

    /// Audits one call against `catalog`, counts the keys it carried and
    /// says the warning it raised; why it was not audited, if it was not.
    fn audit(&mut self, catalog: &Catalog, call: Call<'_>) -> Option<Skip> {
        let outcome = self.auditor.audit(catalog, call);
        self.tally.findings.record(&call, &outcome);
        match outcome {
            Outcome::Skipped(skip) => Some(skip),
            Outcome::Audited { warning, .. } => {
                if let Some(warning) = warning {
                    self.say(&warning);
                }
                None
            }
        }
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
}

impl<W: Write> Handler for Replay<W> {
    fn tools(&mut self, tools: &RawValue, page: Option<bool>) {
        let Ok(tools) = serde_json::from_str::<Vec<Value>>(tools.get()) else {
            return;
        };
        match page {
            // A catalogue line is a whole listing of its own.
            None => {
                self.listing.abandon();
                self.catalog = Catalog::new();
                self.catalog.extend_tools(&tools);
            }
            // A page continues the listing only when the page before it said
            // more was to come (offline, the request it answers is unknown);
            // the catalogue is replaced when the last page arrives. Pairs
            // already said stay said: that memory is the auditor's.
            Some(more) => {
                let first = !self.listing.is_assembling();
                match self.listing.page(&tools, first, more) {
                    Some(catalog) => self.catalog = catalog,
                    None => return,
                }
            }
        }
        self.tally.listed(&self.catalog);
    }

    fn call(&mut self, call: Call<'_>) {
        self.tally.calls += 1;
        let catalog = std::mem::take(&mut self.catalog);
        match self.audit(&catalog, call) {
            None => self.tally.audited += 1,
            Some(skip) => self.tally.skipped(call.tool, skip),
        }
        self.catalog = catalog;
    }

    /// A warning the proxy logged is said again through the auditor: against
    /// the declaration the warning records, a call carrying its keys. So a
    /// pair the log repeats (one proxy run after another) is said once, keys
    /// given to `--allow` are tolerated, and the report counts each logged
    /// warning as one call that carried its keys.
    fn logged_warning(&mut self, logged: Warning) {
        self.tally.logged_warnings += 1;
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
        // cannot be said again; it stays counted as read. When it is said
        // again, it says what the log said: the log holds no values to
        // diagnose a fragment from.
        let mut outcome = self.auditor.audit(&catalog, call);
        if let Outcome::Audited {
            warning: Some(warning),
            ..
        } = &mut outcome
            && !logged.hints.is_empty()
        {
            let hints = logged
                .hints
                .iter()
                .filter(|h| warning.unknown_keys.contains(&h.key))
                .cloned()
                .collect();
            *warning = warning.clone().with_diagnosis(hints, logged.missing_keys.clone());
        }
        self.tally.findings.record(&call, &outcome);
        if let Some(warning) = outcome.warning() {
            self.say(&warning);
        }
    }

    /// As in the proxy: nothing is audited until the next listing.
    fn list_changed(&mut self) {
        self.catalog = Catalog::none();
        self.listing.abandon();
    }

    /// A listing asked for from the start: a page left open before it is
    /// abandoned, as the proxy would.
    fn listing_requested(&mut self) {
        self.listing.abandon();
    }
}
