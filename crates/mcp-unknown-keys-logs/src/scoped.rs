//! The catalogues records hold: a request's `tools`, a span's
//! `gen_ai.tool.definitions`. Each applies to the calls of the record that
//! holds it, and to no other record's: tool names repeat from one request
//! to the next with other schemas, and a call met against another
//! request's tools gives false warnings. Only `--tools` and an MCP listing
//! make catalogues that last.

use std::sync::Arc;

use mcp_unknown_keys::audit::Catalog;

/// The records open, and the catalogue each holds.
#[derive(Debug, Default)]
pub(crate) struct RecordTools {
    /// Per record open, outermost first: the catalogue it holds, if any.
    open: Vec<Option<Arc<Catalog>>>,
    /// The last catalogue made, by the fingerprint of its text: a request
    /// log sends the same tools with every request, made into a catalogue
    /// once.
    last: Option<(u64, Arc<Catalog>)>,
}

impl RecordTools {
    /// A record opens.
    pub(crate) fn begin(&mut self) {
        self.open.push(None);
    }

    /// The record opened last ends, and its catalogue with it.
    pub(crate) fn end(&mut self) {
        self.open.pop();
    }

    /// The catalogue made last from a text of fingerprint `print`, if it
    /// was the last made: it now belongs to the record open.
    pub(crate) fn reuse(&mut self, print: u64) -> bool {
        match &self.last {
            Some((last, catalog)) if *last == print => {
                let catalog = Arc::clone(catalog);
                self.hold(catalog);
                true
            }
            _ => false,
        }
    }

    /// `catalog`, made from a text of fingerprint `print`, belongs to the
    /// record open (a second one in the same record replaces the first).
    pub(crate) fn made(&mut self, print: u64, catalog: Catalog) {
        let catalog = Arc::new(catalog);
        self.last = Some((print, Arc::clone(&catalog)));
        self.hold(catalog);
    }

    fn hold(&mut self, catalog: Arc<Catalog>) {
        // Read outside any record (never, as the walker reads), a catalogue
        // has no record to apply to.
        if let Some(open) = self.open.last_mut() {
            *open = Some(catalog);
        }
    }

    /// The catalogue the calls of the record open meet: that of the
    /// innermost open record holding one.
    pub(crate) fn current(&self) -> Option<&Arc<Catalog>> {
        self.open.iter().rev().find_map(Option::as_ref)
    }
}
