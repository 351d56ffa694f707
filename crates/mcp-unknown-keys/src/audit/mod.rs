//! The core, shared by every door: synchronous, without I/O.
//!
//! - [`Catalog`]: which keys each listed tool declares, read from its schema
//!   across combinators and references, with [`Note`]s on what could not be
//!   read; assembled from a paginated listing by [`Listing`], from
//!   declarations in every form ([`declarations()`]);
//! - [`Arguments`]: a scan of a call's keys, nested ones included, that
//!   builds no values;
//! - [`Auditor`]: the audit rules and the said-once memory;
//!   [`CountingAuditor`], one with its listing and its coverage, for hosts
//!   that hand it calls one by one;
//! - [`Warning`]: what a finding says, with a [diagnosis] of each
//!   undeclared key ([`Hint`], [`Cause`], [`MissingKey`]);
//! - [`Findings`]: every undeclared pair counted, for summaries and reports;
//! - [`Coverage`]: every call counted, audited or unaudited for a named
//!   reason ([`Skip`]);
//! - [`Verdicts`]: each call that carried undeclared keys paired with the
//!   server's answer ([`Verdict`]: ignored, rejected, unanswered);
//! - [`Notice`]: what the alarm says of itself (a gap, an ambiguity, a
//!   bound met);
//! - [`Summary`]: what a session ended with (coverage, findings and
//!   their verdicts, lines passed over unread), in words or as a JSON line;
//! - [`Sink`]: where warnings, notes, notices, verdicts and summaries go
//!   ([`StderrSink`], [`TracingSink`], a closure).
//!
//! The [`UnknownKeys`](crate::UnknownKeys) layer, the `mcp-unknown-keys proxy`
//! and the `mcp-unknown-keys audit` command are thin shells around an
//! [`Auditor`].

pub(crate) mod auditor;
pub(crate) mod call;
pub(crate) mod catalog;
pub(crate) mod counting;
pub(crate) mod coverage;
mod declarations;
pub mod diagnosis;
pub(crate) mod findings;
mod hash;
pub(crate) mod keys;
pub(crate) mod listing;
pub(crate) mod notice;
mod path;
mod printable;
pub(crate) mod sink;
pub(crate) mod summary;
pub(crate) mod verdicts;
pub(crate) mod warning;
mod words;

pub use auditor::Auditor;
pub(crate) use auditor::REASON_KEY;
pub use call::{Call, Outcome, Skip};
pub use catalog::{Catalog, Declared, ListedTools, Note, Problem};
pub use counting::CountingAuditor;
pub use coverage::{Coverage, OTHER_UNLISTED_TOOLS};
pub use declarations::declarations;
pub use diagnosis::{Cause, Hint, MissingKey};
pub use findings::{Finding, Findings};
pub use keys::{Arguments, HostObject, NestedScan, NotAnObject, arguments_text};
pub use listing::Listing;
pub use notice::Notice;
pub use printable::Printable;
pub use sink::{Sink, StderrSink, TRACING_TARGET, TracingSink};
pub use summary::{Summary, Unread};
pub use verdicts::{Answer, Judged, Verdict, VerdictCounts, VerdictTally, Verdicts, verdicts_text};
pub use warning::Warning;
