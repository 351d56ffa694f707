//! Every bound that keeps the alarm's memory and work finite, whatever a
//! model, a server or a log sends: what one call, one schema, one listing
//! and one session may cost, and how much is remembered. Past a bound,
//! things are counted, not remembered, and that is said once ([`Notice`]),
//! or the schema's part is noted ([`Problem`]). The modules that keep each
//! bound import it from here: a newcomer reads them all in one place.
//!
//! [`Notice`]: crate::audit::Notice
//! [`Problem`]: crate::audit::Problem

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

/// The most `tools/list` requests awaited at once; the oldest is forgotten
/// beyond it (a server may never answer a request).
pub const MAX_AWAITED_LISTINGS: usize = 64;

/// A `tools/list` request is forgotten once this many other responses came
/// without answering it: a door that reads every line while a listing is
/// awaited must not keep reading them all for one never answered (or
/// answered with an id it does not match).
pub const MAX_RESPONSES_AWAITING: u64 = 256;

/// The most subschemas visited to read one tool's schema, over all its
/// shapes. Past it while reading the arguments' own keys, the tool is not
/// audited; past it later, the nested values not yet read are not
/// ([`Problem::TooLarge`](crate::audit::Problem::TooLarge) either way).
pub const MAX_SUBSCHEMAS: usize = 65_536;

/// The longest chain of references and combinators followed from a shape's
/// schemas. Past it, that shape is not read, as for [`MAX_SUBSCHEMAS`].
pub const MAX_COMPOSITION_DEPTH: usize = 64;

/// The most object and array shapes read for one tool. Past it, the values
/// of the shapes not read are not audited ([`Problem::TooLarge`](crate::audit::Problem::TooLarge)); the
/// arguments' own keys still are.
pub const MAX_SHAPES: usize = 4_096;

/// The most work spent reading one tool's schema: each subschema visited,
/// each property and pattern read, each branch and reference followed
/// counts one, over all its shapes (a definition read again for another
/// shape counts again). Past it, reading stops: met reading the arguments'
/// own keys, the keys read so far stay declared but the tool is not audited;
/// met later, the nested values not read yet are not
/// ([`Problem::TooLarge`](crate::audit::Problem::TooLarge) either way).
pub const MAX_SCHEMA_WORK: usize = 1 << 18;

/// The most work (as [`MAX_SCHEMA_WORK`] counts it) spent reading the
/// schemas of one listing, over all its tools: a tool read when it is spent
/// is read as one past its own bound.
pub const MAX_LISTING_WORK: usize = 1 << 23;

/// The most distinct tool names [`Coverage::unlisted_tools`](crate::audit::Coverage::unlisted_tools) names; calls to
/// further names are counted under [`OTHER_UNLISTED_TOOLS`](crate::audit::OTHER_UNLISTED_TOOLS). A log full of
/// invented names costs bounded memory.
pub const MAX_NAMED_UNLISTED_TOOLS: usize = 1000;

/// The longest unlisted tool name kept, in bytes: a longer one is cut at a
/// character boundary and ends with `…`, within this length.
pub const MAX_UNLISTED_NAME_BYTES: usize = 256;

/// The most calls awaiting their answer at once; beyond it the oldest is
/// judged [`Verdict::Unanswered`](crate::audit::Verdict::Unanswered). Calls gone on as tasks, and calls
/// answered by an interim result and awaiting their retry, are bounded
/// alike, each.
pub const MAX_AWAITED: usize = 1024;

/// How deep below the top level values are read: the keys of a value nested
/// deeper are not audited. Well within serde_json's own recursion limit
/// (128), so the scan never makes a call unreadable.
pub const MAX_NESTED_DEPTH: usize = 64;

/// The most items of one list a human-readable warning line shows.
pub const MAX_LISTED: usize = 20;

/// The most characters of one key shown in a human-readable line.
pub const MAX_SHOWN_CHARS: usize = 64;

/// The most findings a session's summary lists in its text
/// ([`Summary::to_text`](crate::audit::Summary::to_text)); its JSON line
/// has them all.
pub const MAX_SHOWN_FINDINGS: usize = 50;

/// The most unlisted tool names a session's summary names in its text.
pub const MAX_SHOWN_UNLISTED: usize = 20;
