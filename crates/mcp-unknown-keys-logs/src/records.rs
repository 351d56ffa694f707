//! Records handed over one by one, each an input of its own: what an engine
//! that holds a corpus as rows (Arrow batches on Ray Data or Spark) feeds an
//! audit, so that the rows of a corpus can be audited in any partition and
//! the partial reports added up to the report of one run.

use mcp_unknown_keys::audit::Catalog;

use crate::audit::{Audit, NAMED_UNREADABLE_LINES};
use crate::observe::{Notice, Observer, Unreadable};
use crate::shapes::walk::Reader;

impl<O: Observer> Audit<O> {
    /// Reads one record given whole, as JSON text, as an input of its own
    /// named `name` (the `file` of its calls' groups) whose one line is the
    /// record: a transcript's line, a request or response body, a span, or a
    /// whole conversation as a JSON array or document. `number` names it in
    /// a notice when it cannot be read (the first
    /// [`NAMED_UNREADABLE_LINES`] of the audit are named, the rest counted).
    ///
    /// Nothing of one record's reading carries to the next: a listing (a
    /// `tools/list` response) or a request body's `tools` serves the calls
    /// of its own record, a call is
    /// a repeat only of a call read before in the same record, and a stream
    /// is assembled within one record. What carries is what carries between
    /// inputs: the catalogues given ([`Options::tools`]) and the pairs
    /// already said. So the records of a corpus can be read in any order and
    /// any partition, and the counts of the partitions add up to those of
    /// one run; the `audit` command reads a file of such records, one a
    /// line, the same way.
    ///
    /// ```
    /// use mcp_unknown_keys_logs::{Audit, Options};
    ///
    /// let mut audit = Audit::new(&Options::default())?;
    /// let body = br#"{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"q":{}}}}}],"messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"q\":1,\"limt\":2}"}}]}]}"#;
    /// audit.read_record("rows", 1, body);
    /// audit.read_record("rows", 2, b"not JSON");
    /// let report = audit.finish();
    /// assert_eq!(report.warnings[0].unknown_keys, ["limt"]);
    /// assert_eq!((report.coverage.calls, report.lines.read, report.lines.not_json), (1, 2, 1));
    /// # Ok::<(), mcp_unknown_keys_logs::Error>(())
    /// ```
    ///
    /// [`Options::tools`]: crate::Options::tools
    pub fn read_record(&mut self, name: &str, number: u64, record: &[u8]) {
        if self.given.is_none() {
            self.given = Some(self.unbound.catalog());
        }
        let before = (self.report.catalogues, self.unbound.catalog().is_listed());
        self.report.groups.start_file(name);
        let mut reader = Reader::default();
        let read = match std::str::from_utf8(record) {
            Ok(text) => Ok(reader.read_line(text, |event| self.take(event))),
            Err(_) => Err(Unreadable::NotUtf8),
        };
        if let Some(why) = self.count(read) {
            let lines = &self.report.lines;
            let unreadable = lines.not_json + lines.not_utf8 + lines.records_cut();
            if unreadable <= NAMED_UNREADABLE_LINES {
                self.say(Notice::UnreadableLine {
                    input: name.to_owned(),
                    line: number,
                    why,
                });
            }
        }
        reader.finish(|event| self.take(event));
        self.end_of_input();
        // A listing (or `list_changed`) in the record served its own calls
        // only: the next record meets the catalogue given again. A listing
        // left unfinished ended with the record's session.
        let after = (self.report.catalogues, self.unbound.catalog().is_listed());
        if after != before
            && let Some(given) = &self.given
        {
            self.unbound.install_catalog(Catalog::clone(given));
            self.unbound_print = None;
        }
    }
}
