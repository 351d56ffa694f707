//! The ground floor of the audit: a call as the auditor reads it, and what
//! auditing it found. Every module above (the auditor, the coverage, the
//! findings, the verdicts, the notices) imports these from here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::diagnosis::hint::Cause;
use super::keys::Arguments;
use super::warning::Warning;
use crate::wire::ToolCall;

/// One call as the auditor reads it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// Its arguments, or `None` when they are of a type that cannot be
    /// audited. Absent arguments are best given as empty text
    /// (`Arguments::Json("")`), as [`Call::of_tool_call`] does: read as no
    /// arguments at all, they are audited when the tool requires keys
    /// ([`Cause::Emptied`]), and unaudited as `None` otherwise.
    pub arguments: Option<Arguments<'a>>,
    /// Its id, as it came.
    pub id: Option<&'a Value>,
}

impl<'a> Call<'a> {
    /// A call without an id.
    pub fn new(tool: &'a str, arguments: Arguments<'a>) -> Call<'a> {
        Call {
            tool,
            arguments: Some(arguments),
            id: None,
        }
    }

    /// The same call with an id.
    pub fn with_id(self, id: &'a Value) -> Call<'a> {
        Call { id: Some(id), ..self }
    }

    /// Reads an OpenAI tool call; `None` for a call without a tool name.
    pub fn from_tool_call(call: &'a ToolCall) -> Option<Call<'a>> {
        call.name()?;
        Some(Call::of_tool_call(call))
    }

    /// Reads an OpenAI tool call, one without a readable tool name as a
    /// call to the empty name `""` (which no listing names: counted as an
    /// unlisted tool).
    pub fn of_tool_call(call: &'a ToolCall) -> Call<'a> {
        Call {
            tool: call.name().unwrap_or_default(),
            arguments: match call.arguments() {
                None | Some(Value::Null) => Some(Arguments::Json("")),
                Some(value) => Arguments::from_value(value),
            },
            id: call.id(),
        }
    }
}

/// What auditing one call found.
// Returned by value once per call and matched at once: moving a few hundred
// bytes costs less than boxing the warning would.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The call was not audited, for this reason.
    Skipped(Skip),
    /// The call was audited.
    Audited {
        /// Every undeclared top-level key the call carried, sorted, without
        /// duplicates, whether said before or not.
        undeclared: Vec<String>,
        /// Every undeclared nested key the call carried, as a path
        /// ([`Warning::unknown_paths`]), sorted, without duplicates, whether
        /// said before or not.
        undeclared_paths: Vec<String>,
        /// Every required key the call lacked, as a path
        /// ([`Warning::missing_required`]), sorted, without duplicates,
        /// whether said before or not; empty when required keys are not
        /// checked ([`Auditor::check_required`]).
        missing_required: Vec<String>,
        /// Whether the call carried no arguments at all to a tool that
        /// requires some: its missing keys are [`Cause::Emptied`].
        emptied: bool,
        /// The warning to deliver, when some of those keys are said now for
        /// the first time.
        warning: Option<Warning>,
    },
}

impl Outcome {
    /// The warning to deliver, if any.
    pub fn warning(self) -> Option<Warning> {
        match self {
            Outcome::Audited { warning, .. } => warning,
            Outcome::Skipped(_) => None,
        }
    }

    /// Whether the call was audited and carried an undeclared key or path
    /// or lacked a required key, said before or not: a call whose answer
    /// a door awaits for its verdict.
    pub fn is_flagged(&self) -> bool {
        matches!(self, Outcome::Audited { undeclared, undeclared_paths, missing_required, .. }
            if !undeclared.is_empty() || !undeclared_paths.is_empty() || !missing_required.is_empty())
    }

    /// Why the call's missing required keys were lost, when it lacked any:
    /// [`Cause::Emptied`] or [`Cause::MissingRequired`].
    pub fn missing_cause(&self) -> Option<Cause> {
        match self {
            Outcome::Audited {
                missing_required,
                emptied,
                ..
            } if !missing_required.is_empty() => Some(if *emptied {
                Cause::Emptied
            } else {
                Cause::MissingRequired
            }),
            _ => None,
        }
    }
}

/// Why a call was not audited. Every door counts its calls by these
/// reasons ([`Coverage`](super::Coverage)), under the stable snake_case
/// names of [`Skip::as_str`], which are also their serde names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// No listing was known when the call was made: before the first one,
    /// or after the server's tools changed and before the next.
    NoCatalogue,
    /// A listing was known, and the tool is not in it; a call that names no
    /// tool is counted so, under the empty name `""` (before any listing,
    /// as [`Skip::NoCatalogue`], as every call is).
    UnlistedTool,
    /// The tool is listed, and declares no property nor pattern and its
    /// schema is open, so every key would be equally undeclared; or it was
    /// listed with no schema, or one that is not an object schema; or its
    /// schema could not be read whole (see [`Catalog::notes`](super::Catalog::notes)).
    DeclaresNothing,
    /// The arguments are absent or do not read as a JSON object: the
    /// provider's to report.
    UnreadableArguments,
}

impl Skip {
    /// Every reason, in the order a report lists them.
    pub const ALL: [Skip; 4] = [
        Skip::NoCatalogue,
        Skip::UnlistedTool,
        Skip::DeclaresNothing,
        Skip::UnreadableArguments,
    ];

    /// The stable snake_case name: `no_catalogue`, `unlisted_tool`,
    /// `declares_nothing`, `unreadable_arguments`.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::NoCatalogue => "no_catalogue",
            Skip::UnlistedTool => "unlisted_tool",
            Skip::DeclaresNothing => "declares_nothing",
            Skip::UnreadableArguments => "unreadable_arguments",
        }
    }
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
