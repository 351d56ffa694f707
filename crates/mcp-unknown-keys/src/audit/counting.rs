//! An auditor for hosts that hand it calls one by one, not JSON-RPC
//! messages: the Python and Node `Auditor`s. It holds what such a host
//! needs around the core [`Auditor`]: the listing being assembled page by
//! page, and the count of every call ([`Coverage`]), so that both bindings
//! only read their language's values and hand them here.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::auditor::Auditor;
use super::call::{Call, Outcome, Skip};
use super::catalog::Catalog;
use super::catalog::listed::ListedTools;
use super::coverage::Coverage;
use super::listing::Listing;

/// An [`Auditor`] with its listing and its coverage. Every method takes
/// `&self` and may be called from several threads at once; no lock is held
/// while the auditor's sink runs (which may call back into a host's code,
/// and that code into this auditor).
///
/// ```
/// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, CountingAuditor, ListedTools, Skip};
/// use serde_json::json;
///
/// let auditor = CountingAuditor::new(Auditor::new().with_sink(()));
/// let page = json!([{"name": "fs_read", "inputSchema": {"properties": {"path": {}}}}]);
/// let listed = ListedTools::read(&page.to_string()).unwrap();
/// auditor.page(&listed, true, true); // more pages follow: audited against this one meanwhile
/// let outcome = auditor.audit(Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":1}"#)));
/// assert_eq!(outcome.warning().unwrap().unknown_keys, ["ffset"]);
/// auditor.clear();
/// auditor.audit(Call::new("fs_read", Arguments::Json("{}")));
/// let coverage = auditor.coverage();
/// assert_eq!((coverage.calls, coverage.audited), (2, 1));
/// assert_eq!(coverage.unaudited[&Skip::NoCatalogue], 1);
/// ```
#[derive(Debug)]
pub struct CountingAuditor {
    auditor: Auditor,
    coverage: Mutex<Coverage>,
    listings: Mutex<Listings>,
    /// The stamp of the catalogue installed last (0: none yet).
    installed: Mutex<u64>,
}

/// The listing being assembled, and a stamp for each catalogue decided
/// while it is locked: the order in which calls decided what the catalogue
/// is to be. Installing happens after this lock is released (installing
/// says notes, through the sink), so two threads may install in either
/// order; the stamps keep the older from replacing the newer.
#[derive(Debug, Default)]
struct Listings {
    listing: Listing,
    stamped: u64,
}

impl Listings {
    fn stamp(&mut self) -> u64 {
        self.stamped += 1;
        self.stamped
    }
}

impl CountingAuditor {
    /// Counts the calls `auditor` audits, with no catalogue yet.
    pub fn new(auditor: Auditor) -> CountingAuditor {
        CountingAuditor {
            auditor,
            coverage: Mutex::default(),
            listings: Mutex::default(),
            installed: Mutex::default(),
        }
    }

    /// The auditor: its catalogue, its tools, its sink.
    pub fn auditor(&self) -> &Auditor {
        &self.auditor
    }

    /// Replaces the catalogue with `listed`, giving up any listing being
    /// assembled. Pairs already said stay said.
    pub fn replace(&self, listed: &ListedTools) {
        let mut catalog = Catalog::new();
        catalog.extend_listed(listed);
        self.decided(catalog);
    }

    /// Takes one page of a paginated MCP listing ([`Listing::page_listed`]):
    /// `first` for a page answering a request without a cursor, `more`
    /// when it carries a `nextCursor`. Calls are audited against the pages
    /// so far.
    pub fn page(&self, listed: &ListedTools, first: bool, more: bool) {
        let decided = {
            let mut listings = self.listings();
            let catalog = listings.listing.page_listed(listed, first, more);
            catalog.map(|catalog| (listings.stamp(), catalog))
        };
        if let Some((stamp, catalog)) = decided {
            self.install(stamp, catalog);
        }
    }

    /// Forgets the catalogue until the next listing (as after
    /// `notifications/tools/list_changed`): calls meanwhile are unaudited,
    /// for [`Skip::NoCatalogue`].
    pub fn clear(&self) {
        self.decided(Catalog::none());
    }

    /// Audits one call against the catalogue in use and counts it. The
    /// warning it returns, if any, is not delivered: the host delivers it
    /// (the auditor's [`Auditor::warn`]) with its own values. A call whose
    /// audit panicked is counted unaudited ([`Skip::UnreadableArguments`]):
    /// a host's process never ends for what a model wrote.
    pub fn audit(&self, call: Call<'_>) -> Outcome {
        let catalog = self.auditor.catalog();
        let outcome = catch_unwind(AssertUnwindSafe(|| self.auditor.audit(&catalog, call)))
            .unwrap_or(Outcome::Skipped(Skip::UnreadableArguments));
        self.coverage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .record(&call, &outcome);
        outcome
    }

    /// Every call audited so far: how many, and why the rest were not.
    pub fn coverage(&self) -> Coverage {
        self.coverage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A catalogue decided otherwise than by a listing: the listing being
    /// assembled is given up.
    fn decided(&self, catalog: Catalog) {
        let stamp = {
            let mut listings = self.listings();
            listings.listing.abandon();
            listings.stamp()
        };
        self.install(stamp, catalog);
    }

    fn listings(&self) -> MutexGuard<'_, Listings> {
        self.listings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Installs the catalogue stamped `stamp` unless a newer one was
    /// installed first, then says its notes with no lock held.
    fn install(&self, stamp: u64, catalog: Catalog) {
        let installed = {
            let mut newest = self.installed.lock().unwrap_or_else(PoisonError::into_inner);
            if stamp < *newest {
                return;
            }
            *newest = stamp;
            // Calls no sink: safe under the lock.
            self.auditor.install_catalog(catalog)
        };
        self.auditor.say_notes(&installed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::keys::Arguments;
    use serde_json::json;

    fn listed(tools: serde_json::Value) -> ListedTools {
        ListedTools::read(&tools.to_string()).unwrap()
    }

    #[test]
    fn pages_make_one_catalogue_and_a_replacement_gives_up_the_listing() {
        let auditor = CountingAuditor::new(Auditor::new().with_sink(()));
        auditor.page(
            &listed(json!([{"name": "a", "inputSchema": {"properties": {}}}])),
            true,
            true,
        );
        auditor.page(
            &listed(json!([{"name": "b", "inputSchema": {"properties": {}}}])),
            false,
            false,
        );
        assert_eq!(auditor.auditor().listed_tools(), ["a", "b"]);
        auditor.page(
            &listed(json!([{"name": "c", "inputSchema": {"properties": {}}}])),
            true,
            true,
        );
        auditor.replace(&listed(json!([{"name": "d", "inputSchema": {"properties": {}}}])));
        // A late page of the listing given up changes nothing.
        auditor.page(
            &listed(json!([{"name": "e", "inputSchema": {"properties": {}}}])),
            false,
            false,
        );
        assert_eq!(auditor.auditor().listed_tools(), ["d"]);
    }

    #[test]
    fn every_call_is_counted_audited_or_not() {
        let auditor = CountingAuditor::new(Auditor::new().with_sink(()));
        auditor.audit(Call::new("a", Arguments::Json("{}")));
        auditor.replace(&listed(
            json!([{"name": "a", "inputSchema": {"properties": {"p": {}}}}]),
        ));
        let outcome = auditor.audit(Call::new("a", Arguments::Json(r#"{"q":1}"#)));
        assert!(outcome.is_flagged());
        auditor.audit(Call::new("z", Arguments::Json("{}")));
        let coverage = auditor.coverage();
        assert_eq!((coverage.calls, coverage.audited), (3, 1));
        assert_eq!(coverage.unaudited[&Skip::NoCatalogue], 1);
        assert_eq!(coverage.unlisted_tools["z"], 1);
    }

    #[test]
    fn of_two_threads_installing_at_once_the_newer_catalogue_stays() {
        let auditor = std::sync::Arc::new(CountingAuditor::new(Auditor::new().with_sink(())));
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let auditor = auditor.clone();
                std::thread::spawn(move || {
                    for round in 0..200 {
                        let name = format!("t{n}_{round}");
                        auditor.replace(&listed(
                            json!([{"name": name, "inputSchema": {"properties": {}}}]),
                        ));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        // Whichever replaced last, its catalogue is the one in use, and
        // the stamp of no older one can bring it back.
        let newest = *auditor.installed.lock().unwrap();
        assert_eq!(newest, auditor.listings().stamped);
        assert_eq!(auditor.auditor().listed_tools().len(), 1);
    }
}
