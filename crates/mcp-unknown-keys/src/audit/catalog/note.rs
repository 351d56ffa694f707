//! What a catalogue could not read in a tool's schema, for each door to say
//! once.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::audit::printable::Printable;

/// Something in one tool's schema that could not be read, and what that
/// leaves unaudited. Serialised as `{"at":…,"problem":…}` with the
/// problem's own members (`reference`, `pattern`), as a proxy's `--log`
/// writes it; read back the same way. The core does no I/O: a catalogue keeps its notes
/// ([`Catalog::notes`](super::Catalog::notes)) and an
/// [`Auditor`](crate::audit::Auditor) hands each one, once, to its sink's
/// [`Sink::note`](crate::audit::Sink::note).
///
/// ```
/// use mcp_unknown_keys::audit::{Catalog, Problem};
/// use serde_json::json;
///
/// let catalog = Catalog::from_mcp_tools(&[json!({
///     "name": "fetch",
///     "inputSchema": {"$ref": "https://example.com/fetch.json"},
/// })]);
/// let (tool, note) = catalog.notes()[0];
/// assert_eq!(tool, "fetch");
/// assert!(matches!(&note.problem, Problem::RemoteRef { .. }));
/// assert_eq!(
///     note.to_string(),
///     r#"the $ref "https://example.com/fetch.json" is not local and is not fetched: the tool's arguments are not audited"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Note {
    /// Where in the arguments the problem lies, as a path
    /// (`options`, `entities[]`; see [`Warning::unknown_paths`](crate::audit::Warning::unknown_paths)),
    /// or `""` for the arguments themselves.
    pub at: String,
    /// What could not be read.
    #[serde(flatten)]
    pub problem: Problem,
}

/// What could not be read in a schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Problem {
    /// A `$ref` to another document. It is never fetched: the keys of the
    /// object it stands for are unknown, so that object is not audited.
    RemoteRef {
        /// The reference as the schema wrote it.
        reference: String,
    },
    /// A local `$ref` that points at nothing in the schema: that object is
    /// not audited.
    UnresolvedRef {
        /// The reference as the schema wrote it.
        reference: String,
    },
    /// A `patternProperties` pattern that is not an ECMA-262 regular
    /// expression: it matches no key.
    BadPattern {
        /// The pattern as the schema wrote it.
        pattern: String,
    },
    /// A `patternProperties` pattern that cannot be matched in time linear
    /// in the key (lookaround, a backreference, a Unicode property class,
    /// or too large): it is never run, and taken to match every key, so
    /// that the keys beside it are not reported.
    UnmatchedPattern {
        /// The pattern as the schema wrote it.
        pattern: String,
    },

    /// The schema is not a JSON object, or its `properties` is not one:
    /// the tool is listed, declaring nothing, and not audited.
    UnreadableSchema,

    /// The schema is too large or too deeply composed to be read whole
    /// within the catalogue's bounds (subschemas visited, reference chains,
    /// object shapes): the tool is not audited when this happens reading the
    /// arguments' own keys (`at` is `""`); otherwise, the nested values from
    /// `at` on that were not read yet are not.
    TooLarge,

    /// The listed tool nests deeper than a JSON parser builds (serde_json
    /// stops at 128 levels), so its schema could not be read at all: the
    /// tool is listed, declaring nothing, and not audited.
    TooDeep,
}

impl Note {
    /// The note on a listed tool whose schema nests too deep to read at
    /// all: it is listed declaring nothing, and its calls are not audited.
    pub fn too_deep() -> Note {
        Note::new("", Problem::TooDeep)
    }

    pub(crate) fn new(at: impl Into<String>, problem: Problem) -> Note {
        Note {
            at: at.into(),
            problem,
        }
    }

    /// Whether the problem leaves the tool's arguments unaudited altogether.
    pub fn leaves_tool_unaudited(&self) -> bool {
        match self.problem {
            Problem::TooLarge
            | Problem::RemoteRef { .. }
            | Problem::UnresolvedRef { .. }
            | Problem::UnreadableSchema
            | Problem::TooDeep => self.at.is_empty(),
            Problem::BadPattern { .. } | Problem::UnmatchedPattern { .. } => false,
        }
    }

    /// What is left unaudited, as the end of a sentence.
    fn effect(&self) -> String {
        match self.problem {
            _ if self.leaves_tool_unaudited() => "the tool's arguments are not audited".to_owned(),
            Problem::TooLarge => format!(
                "the keys inside {} and the nested values read after it are not audited",
                Printable(&self.at)
            ),
            _ => format!("the keys inside {} are not audited", Printable(&self.at)),
        }
    }
}

/// One line, without the tool's name, e.g.
/// `the patternProperties pattern "([" is not an ECMA-262 regular expression: it matches no key`.
/// Schema text is shown as [`Printable`] would: a server wrote it.
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::RemoteRef { reference } => write!(
                f,
                "the $ref \"{}\" is not local and is not fetched: {}",
                Printable(reference),
                self.effect()
            ),
            Problem::UnresolvedRef { reference } => write!(
                f,
                "the $ref \"{}\" points at nothing in the schema: {}",
                Printable(reference),
                self.effect()
            ),
            Problem::BadPattern { pattern } => {
                write!(
                    f,
                    "the patternProperties pattern \"{}\" is not an ECMA-262 regular expression: it matches no key",
                    Printable(pattern)
                )?;
                if !self.at.is_empty() {
                    write!(f, " inside {}", Printable(&self.at))?;
                }
                Ok(())
            }
            Problem::UnmatchedPattern { pattern } => {
                write!(
                    f,
                    "the patternProperties pattern \"{}\" cannot be matched in time linear in the key (lookaround, a backreference, a Unicode property class, or too large): it is taken to match every key, so keys outside properties are not reported",
                    Printable(pattern)
                )?;
                if !self.at.is_empty() {
                    write!(f, " inside {}", Printable(&self.at))?;
                }
                Ok(())
            }
            Problem::UnreadableSchema => write!(
                f,
                "the schema is not an object schema (or its properties are not an object): {}",
                self.effect()
            ),
            Problem::TooLarge => write!(f, "the schema is too large to read whole: {}", self.effect()),
            Problem::TooDeep => write!(f, "its schema nests too deep to read: {}", self.effect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_back_as_a_log_writes_it_whatever_else_the_line_holds() {
        for problem in [
            Problem::RemoteRef {
                reference: "https://example.com/a.json".into(),
            },
            Problem::UnresolvedRef {
                reference: "#/$defs/x".into(),
            },
            Problem::BadPattern { pattern: "([".into() },
            Problem::UnmatchedPattern {
                pattern: "(?=a)".into(),
            },
            Problem::UnreadableSchema,
            Problem::TooLarge,
            Problem::TooDeep,
        ] {
            let note = Note::new("entities[]", problem);
            let mut logged = serde_json::to_value(&note).unwrap();
            // A proxy's log line adds the tool and the note in words.
            logged["tool"] = "fetch".into();
            logged["text"] = note.to_string().into();
            assert_eq!(serde_json::from_value::<Note>(logged).unwrap(), note);
        }
    }
}
