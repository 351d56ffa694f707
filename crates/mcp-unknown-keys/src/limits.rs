//! The bounds that keep every door's memory and work per call finite,
//! whatever a model, a server or a log sends. Past a bound, things are
//! counted, not remembered, and that is said once ([`Notice`]).
//!
//! [`Notice`]: crate::audit::Notice

/// How many distinct undeclared (tool, key) and (tool, path) pairs an
/// [`Auditor`](crate::audit::Auditor) remembers as said. Each is kept as a
/// 128-bit fingerprint, whatever the key's length (about 40 bytes a pair
/// at most), so the said-once memory stays under 3 MiB. Past it, a new
/// pair is not said: it is counted
/// ([`Auditor::unsaid_pairs`](crate::audit::Auditor::unsaid_pairs)), and
/// [`Notice::SaidMemoryFull`](crate::audit::Notice::SaidMemoryFull) is
/// said once.
pub const MAX_SAID_PAIRS: usize = 65_536;

/// How many catalogue notes (a tool and what its schema could not be read
/// for) an auditor remembers as said; past it, notes are no longer said.
pub const MAX_SAID_NOTES: usize = 4_096;

/// How many undeclared keys and paths are read of one call: the first
/// ones, in the order the call wrote them. Past it the rest are passed over,
/// not claimed nor diagnosed, so no call costs the work of a million keys;
/// [`Notice::ManyKeys`](crate::audit::Notice::ManyKeys) is said once.
pub const MAX_UNDECLARED_PER_CALL: usize = 1_024;
