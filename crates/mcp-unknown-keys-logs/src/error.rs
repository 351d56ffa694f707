//! What can stop an audit: a file that cannot be opened or read, or a
//! catalogue holding no tool.

use std::fmt;
use std::io;

/// Which kind of file an [`Error`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A log to audit.
    Input,
    /// A catalogue of the tools' schemas ([`Tools`](crate::Tools)).
    Catalogue,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Input => "input",
            Role::Catalogue => "catalogue",
        })
    }
}

/// Why an input or a catalogue could not be read. Nothing is half done: a
/// file that fails to open fails before anything of it is read, and a read
/// that fails partway says so rather than passing for the whole file.
///
/// Each message names the file and says what to do:
///
/// ```
/// use mcp_unknown_keys_logs::{Audit, Error, Options};
///
/// let mut audit = Audit::new(&Options::default())?;
/// let error = audit.read_file("no/such/log.jsonl").unwrap_err();
/// assert!(matches!(error, Error::Open { .. }));
/// assert!(error.to_string().starts_with("cannot open the input no/such/log.jsonl: "));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened.
    Open {
        /// An input or a catalogue.
        role: Role,
        /// The file, as given.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// The file could not be read, at its start or partway.
    Read {
        /// An input or a catalogue.
        role: Role,
        /// The file, as given.
        name: String,
        /// Why.
        source: io::Error,
    },
    /// The path names a directory.
    Directory {
        /// An input or a catalogue.
        role: Role,
        /// The directory, as given.
        name: String,
    },
    /// The file is not text (NUL or control bytes, UTF-16): refused whole,
    /// rather than line by line.
    NotText {
        /// An input or a catalogue.
        role: Role,
        /// The file, as given.
        name: String,
        /// What shows it, and what to do.
        why: &'static str,
    },
    /// A file could not be read whole: a catalogue cut short or holding a
    /// line past the longest read (it is not used in part), or, for
    /// [`audit_files`](crate::audit_files), an input cut short or failing
    /// partway ([`Audit`](crate::Audit) reads on past it, and says it).
    Incomplete {
        /// An input or a catalogue.
        role: Role,
        /// The file, as given.
        name: String,
        /// What is missing of it.
        why: String,
    },
    /// A catalogue holds no tool that can be read (a name with a schema of
    /// its arguments).
    NoTools {
        /// The catalogue, as given.
        name: String,
        /// What it holds instead, in a few words.
        holds: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Open { role, name, source } => write!(f, "cannot open the {role} {name}: {source}"),
            Error::Read { role, name, source } => write!(f, "cannot read the {role} {name}: {source}"),
            Error::Directory { role, name } => write!(
                f,
                "cannot read the {role} {name}: it is a directory; give the files in it (e.g. {}/*.jsonl)",
                name.trim_end_matches('/')
            ),
            Error::NotText { role, name, why } => {
                write!(f, "the {role} {name} is not text ({why}): nothing read from it")
            }
            Error::Incomplete { role, name, why } => {
                write!(
                    f,
                    "cannot read the {role} {name} whole: {why}; give the whole file"
                )
            }
            Error::NoTools { name, holds } => write!(
                f,
                "the catalogue {name} holds no readable tool (a name with a schema of its arguments): it holds {holds}; \
                 give MCP tools, a tools/list response, or OpenAI, Anthropic, Gemini or Bedrock declarations"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Open { source, .. } | Error::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}
