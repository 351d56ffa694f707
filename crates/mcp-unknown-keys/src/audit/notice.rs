//! What the alarm says about itself, beside its findings: a gap in what it
//! audits, a pairing it cannot make, a bound it met. Worded here, once, for
//! every door.

use std::fmt;

use super::call::Skip;
use super::printable::Printable;

/// Something a door should say once, so that silence never reads as
/// "nothing found". A [`Session`](crate::session::Session) or an
/// [`Auditor`](super::Auditor) decides when; a [`Sink`](super::Sink) says
/// it ([`Sink::notice`](super::Sink::notice)), in the words of its
/// `Display`.
///
/// ```
/// use mcp_unknown_keys::audit::{Notice, Skip};
///
/// let notice = Notice::Unaudited { tool: "fs_read".into(), skip: Skip::NoCatalogue };
/// assert!(notice.to_string().starts_with("the call to fs_read was not audited: no tools/list answer seen yet"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Notice {
    /// The first call of the session unaudited for this reason (the
    /// coverage counts them all).
    Unaudited {
        /// The tool called, `""` for a call naming none.
        tool: String,
        /// Why it was not audited.
        skip: Skip,
    },
    /// Two requests in flight shared an id (compared by value, `1` and
    /// `1.0` alike): the server's answers to them cannot be told apart, so
    /// their verdicts are [`Verdict::Ambiguous`](super::Verdict::Ambiguous).
    AmbiguousId {
        /// The id, as the later request wrote it.
        id: String,
    },
    /// The said-once memory holds as many (tool, key) pairs as it may:
    /// pairs found from now on are counted, not said.
    SaidMemoryFull {
        /// How many pairs it holds.
        pairs: usize,
    },
    /// A call carried more undeclared keys than one call is read for: the
    /// first ones are said, the rest passed over (the call still counts as
    /// one carrying undeclared keys).
    ManyKeys {
        /// The tool called.
        tool: String,
        /// How many undeclared keys are read of one call.
        read: usize,
    },
    /// A door that relays lines forwarded a client line longer than it
    /// reads unread (the proxy holds at most `limit` bytes of one): each
    /// such line that may be a call is counted as a call not audited
    /// ([`Skip::UnreadableArguments`]).
    LineTooLong {
        /// The longest line read, in bytes: said in whole MiB.
        limit: usize,
    },
    /// A door that audits off its relay's path fell behind: lines were
    /// forwarded unread while its queue was full, and those that may be
    /// calls are counted as calls not audited.
    FellBehind,
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Unaudited { tool, skip } => {
                match tool.as_str() {
                    "" => f.write_str("a call naming no tool")?,
                    tool => write!(f, "the call to {}", Printable(tool))?,
                }
                write!(
                    f,
                    " was not audited: {}; the summary counts each call not audited ({skip})",
                    unaudited_because(*skip)
                )
            }
            Notice::AmbiguousId { id } => write!(
                f,
                "two requests in flight share the id {}: the server's answers to them cannot be told apart, \
                 so their verdicts are ambiguous",
                Printable(id)
            ),
            Notice::SaidMemoryFull { pairs } => write!(
                f,
                "{pairs} distinct (tool, key) pairs have been said, as many as are remembered: \
                 further new pairs are counted in the summary, not said"
            ),
            Notice::ManyKeys { tool, read } => write!(
                f,
                "a call to {} carried more than {read} undeclared keys: the first {read} are said, \
                 the rest are passed over",
                Printable(tool)
            ),
            Notice::LineTooLong { limit } => write!(
                f,
                "a client line over {} was forwarded unread; each such line that may be a tools/call \
                 is counted as a call not audited ({})",
                Size(*limit),
                Skip::UnreadableArguments
            ),
            Notice::FellBehind => f.write_str(
                "the audit fell behind: lines were forwarded unread while its queue was full; \
                 those that may be calls are counted as calls not audited",
            ),
        }
    }
}

/// Why a call went unaudited, as the end of a sentence.
fn unaudited_because(skip: Skip) -> &'static str {
    match skip {
        Skip::NoCatalogue => {
            "no tools/list answer seen yet (or the server's tools changed since the last one); \
             calls are audited once the client lists the tools"
        }
        Skip::UnlistedTool => "the server's tools/list does not name it",
        Skip::DeclaresNothing => {
            "its tool declares no argument and its schema is open (or could not be read)"
        }
        Skip::UnreadableArguments => "its arguments are not a JSON object",
    }
}

/// A line limit in words, as the notice and the summary say it: whole MiB
/// when it is some, bytes otherwise.
pub(super) struct Size(pub(super) usize);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            bytes if bytes >= 1 << 20 && bytes % (1 << 20) == 0 => write!(f, "{} MiB", bytes >> 20),
            bytes => write!(f, "{bytes} bytes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The proxy's notices about lines it forwarded unread, word for word
    /// as it has always said them.
    #[test]
    fn lines_forwarded_unread_are_said_as_before() {
        assert_eq!(
            Notice::LineTooLong {
                limit: 64 * 1024 * 1024
            }
            .to_string(),
            "a client line over 64 MiB was forwarded unread; each such line that may be a tools/call is counted as a call not audited (unreadable_arguments)"
        );
        assert_eq!(
            Notice::FellBehind.to_string(),
            "the audit fell behind: lines were forwarded unread while its queue was full; those that may be calls are counted as calls not audited"
        );
    }
}
