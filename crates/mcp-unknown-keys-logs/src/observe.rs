//! What an audit says as it goes: warnings as they are raised, notices
//! beside them, and how far each input has been read.

use std::fmt;

use mcp_unknown_keys::audit::{Judged, Note, Printable, Warning};

/// Follows an audit as it goes. Every method has a default that does
/// nothing; `()` is the observer that follows nothing. Whatever it is told
/// is also kept in the [`Report`](crate::Report): an observer is for saying
/// things as they happen (the command line prints each warning as it is
/// raised, and each notice on stderr).
///
/// ```
/// use mcp_unknown_keys::audit::Warning;
/// use mcp_unknown_keys_logs::{Audit, Input, Observer, Options};
///
/// struct Print;
///
/// impl Observer for Print {
///     fn warning(&mut self, warning: &Warning) {
///         println!("{}", warning.to_json_line());
///     }
/// }
///
/// let mut audit = Audit::with_observer(&Options::default(), Print)?;
/// audit.read(Input::from_reader("empty", &b""[..])?)?;
/// # Ok::<(), mcp_unknown_keys_logs::Error>(())
/// ```
pub trait Observer {
    /// A warning, as it is raised (each undeclared pair is said once).
    fn warning(&mut self, warning: &Warning) {
        let _ = warning;
    }

    /// A verdict: what the server did with a call that carried undeclared
    /// keys, paired with its answer in a recording of both directions of
    /// JSON-RPC traffic (or read back from a proxy's `--log`). Each call is
    /// judged once, when its answer is read, or when the input ends without
    /// one.
    fn verdict(&mut self, judged: &Judged) {
        let _ = judged;
    }

    /// Something said beside the warnings.
    fn notice(&mut self, notice: &Notice) {
        let _ = notice;
    }

    /// How far an input has been read: after each line, and once when it
    /// is done.
    fn progress(&mut self, progress: &Progress<'_>) {
        let _ = progress;
    }
}

/// Follows nothing.
impl Observer for () {}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn warning(&mut self, warning: &Warning) {
        (**self).warning(warning);
    }

    fn verdict(&mut self, judged: &Judged) {
        (**self).verdict(judged);
    }

    fn notice(&mut self, notice: &Notice) {
        (**self).notice(notice);
    }

    fn progress(&mut self, progress: &Progress<'_>) {
        (**self).progress(progress);
    }
}

/// How far one input has been read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress<'a> {
    /// The input's name.
    pub input: &'a str,
    /// The bytes read so far (of the text, after decompression).
    pub read: u64,
    /// The input's size, when it is a plain file ([`Input::size`](crate::Input::size)).
    pub size: Option<u64>,
    /// The input has been read to its end.
    pub done: bool,
}

/// Something an audit says beside its warnings, once. Its `Display` is the
/// line the command line prints after `mcp-unknown-keys audit: `.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A line that could not be read: counted, and named for the first
    /// [`NAMED_UNREADABLE_LINES`](crate::NAMED_UNREADABLE_LINES) of each input.
    UnreadableLine {
        /// The input's name.
        input: String,
        /// The line's number, from 1.
        line: u64,
        /// Why it could not be read.
        why: Unreadable,
    },
    /// An input had more unreadable lines than were named: counted, not
    /// named.
    MoreUnreadableLines {
        /// The input's name.
        input: String,
        /// How many were not named.
        lines: u64,
    },
    /// An input is one JSON document (or several, one after another), not
    /// JSON Lines: it is read element by element, and held in memory.
    Document {
        /// The input's name.
        input: String,
        /// How many JSON values it holds.
        values: usize,
    },
    /// A catalogue replaces a tool an earlier one gave.
    ToolReplaced {
        /// The tool.
        tool: String,
        /// The server both catalogues are bound to, if any.
        server: Option<String>,
        /// The catalogue that wins.
        by: String,
        /// The catalogue that gave it first.
        previous: String,
    },
    /// What a listed tool's schema could not be read for (the core's
    /// [`Note`]), said once per tool and note.
    Schema {
        /// The tool, as calls name it (`mcp__SERVER__TOOL` for a catalogue
        /// bound to a server).
        tool: String,
        /// What could not be read.
        note: Note,
    },
    /// An input ends partway through a JSON document (a file cut short):
    /// the values before the cut were read. Counted in
    /// [`Report::incomplete_inputs`](crate::Report::incomplete_inputs).
    CutShort {
        /// The input's name.
        input: String,
        /// Where it ends: the length of its text (after decompression).
        at: usize,
    },
    /// Reading an input failed partway (a corrupt compressed stream, a disk
    /// error): the lines before were read, the rest is not. Counted in
    /// [`Report::incomplete_inputs`](crate::Report::incomplete_inputs).
    ReadFailed {
        /// The input's name.
        input: String,
        /// The number of the line that could not be read, from 1.
        line: u64,
        /// Why, as the reader said it.
        error: String,
    },
    /// The findings reached the most pairs they keep
    /// ([`MAX_FINDINGS`](crate::MAX_FINDINGS)): calls carrying further
    /// pairs are counted ([`Report::calls_past_findings_bound`]), their
    /// pairs not remembered. Said once.
    ///
    /// [`Report::calls_past_findings_bound`]: crate::Report::calls_past_findings_bound
    FindingsBounded {
        /// The bound.
        pairs: usize,
    },
    /// A listed tool that could not be read at all (its schema nests deeper
    /// than JSON is built): calls to it are not audited. Said once.
    UnreadableTool {
        /// Its name (`#N` when that cannot be read either).
        tool: String,
    },
}

/// Why a line could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// It is not JSON.
    NotJson,
    /// It is not UTF-8 (so not JSON either).
    NotUtf8,
    /// It nests records deeper than they are read, as only a hostile
    /// record does: read no deeper (what lay above the cut was read).
    TooDeep,
    /// It is longer than any log writes a line
    /// ([`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES)): read past, not kept.
    TooLong,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unreadable::NotJson => "not JSON",
            Unreadable::NotUtf8 => "not UTF-8",
            Unreadable::TooDeep => "nested deeper than records are read (read no deeper)",
            Unreadable::TooLong => "longer than the longest line read (read past)",
        })
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::UnreadableLine { input, line, why } => {
                write!(f, "{input}:{line}: {why}, counted as unreadable")
            }
            Notice::MoreUnreadableLines { input, lines } => write!(
                f,
                "{input}: {lines} more unreadable line(s), counted but not named"
            ),
            Notice::Document { input, values: 1 } => {
                write!(
                    f,
                    "{input} is one JSON document, not JSON Lines: read element by element"
                )
            }
            Notice::Document { input, values } => write!(
                f,
                "{input} is {values} JSON documents, not JSON Lines: read element by element"
            ),
            Notice::ToolReplaced {
                tool,
                server,
                by,
                previous,
            } => {
                write!(f, "tool {}", Printable(tool))?;
                if let Some(server) = server {
                    write!(f, " of server {}", Printable(server))?;
                }
                write!(f, " in {by} replaces the one in {previous}")
            }
            Notice::CutShort { input, at } => write!(
                f,
                "{input} is cut short at byte {at}, partway through a JSON document: the values before the cut were read, element by element; the rest is missing"
            ),
            Notice::ReadFailed { input, line, error } => write!(
                f,
                "{input}:{line}: cannot read on ({error}): the lines before were read, the rest is not"
            ),
            Notice::Schema { tool, note } => write!(f, "note: {}: {note}", Printable(tool)),
            Notice::FindingsBounded { pairs } => write!(
                f,
                "findings are kept for {pairs} distinct (tool, key) pairs at most: calls carrying further pairs are counted, their pairs not remembered"
            ),
            Notice::UnreadableTool { tool } => write!(
                f,
                "the listed tool {} could not be read (its schema nests too deep to build); calls to it are not audited",
                Printable(tool)
            ),
        }
    }
}
