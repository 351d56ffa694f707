//! The paths a call names, placed lexically: no filesystem access.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use mcp_unknown_keys::ToolCall;

/// A path with `.` and empty parts dropped. Never holds `..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Lexical {
    absolute: bool,
    parts: Vec<String>,
}

impl Lexical {
    /// Reads a `/`-separated path; fails on what lexical checks cannot place.
    pub(super) fn parse(path: &str) -> Result<Lexical, Unknown> {
        if path.contains('\0') {
            return Err(Unknown::Nul);
        }
        if path.contains('\\') {
            return Err(Unknown::Backslash);
        }
        if path.contains("://") {
            return Err(Unknown::Url);
        }
        let parts: Vec<String> = path
            .split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .map(str::to_owned)
            .collect();
        if parts.iter().any(|part| part == "..") {
            return Err(Unknown::ParentDir);
        }
        Ok(Lexical {
            absolute: path.starts_with('/'),
            parts,
        })
    }

    /// This path resolved against `root`: an absolute path stays as it is,
    /// a relative one is joined onto the root.
    pub(super) fn resolve(self, root: Option<&Lexical>) -> Lexical {
        match root {
            Some(root) if !self.absolute => Lexical {
                absolute: root.absolute,
                parts: root.parts.iter().chain(&self.parts).cloned().collect(),
            },
            _ => self,
        }
    }

    /// Whether this path lies in `dir` (or is `dir`); unknown when one is
    /// absolute and the other relative. With `Case::Folded`, parts are
    /// compared without case, as a case-insensitive file system (macOS's,
    /// Windows') places them.
    fn within(&self, dir: &Lexical, case: Case) -> Result<bool, Unknown> {
        if self.absolute != dir.absolute {
            return Err(Unknown::Mixed);
        }
        Ok(match case {
            Case::Exact => self.parts.starts_with(&dir.parts),
            Case::Folded => {
                self.parts.len() >= dir.parts.len()
                    && self
                        .parts
                        .iter()
                        .zip(&dir.parts)
                        .all(|(part, of_dir)| same_folded(part, of_dir))
            }
        })
    }

    /// The directory holding this path.
    fn parent(&self) -> Lexical {
        let mut parts = self.parts.clone();
        parts.pop();
        Lexical {
            absolute: self.absolute,
            parts,
        }
    }

    /// This path relative to `root`, when it lies in it.
    fn relative_to(&self, root: &Lexical) -> Option<Lexical> {
        (self.within(root, Case::Exact).ok()?).then(|| Lexical {
            absolute: false,
            parts: self.parts[root.parts.len()..].to_vec(),
        })
    }

    fn common_ancestor(&self, other: &Lexical) -> Option<Lexical> {
        (self.absolute == other.absolute).then(|| Lexical {
            absolute: self.absolute,
            parts: self
                .parts
                .iter()
                .zip(&other.parts)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a.clone())
                .collect(),
        })
    }
}

/// How path parts are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Case {
    /// Byte for byte: for an `allow` rule, which must not match more than
    /// it says.
    Exact,
    /// Without case: for a `deny` or `ask` rule, so that `SECRETS/key`
    /// is under `secrets` on a file system that would open the same file
    /// (over-matching only asks or denies more).
    Folded,
}

/// Whether two path parts are one without case.
fn same_folded(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b) || (!(a.is_ascii() && b.is_ascii()) && a.to_lowercase() == b.to_lowercase())
}

impl fmt::Display for Lexical {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.absolute, self.parts.is_empty()) {
            (true, _) => write!(f, "/{}", self.parts.join("/")),
            (false, true) => f.write_str("."),
            (false, false) => f.write_str(&self.parts.join("/")),
        }
    }
}

/// Why a path could not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unknown {
    ParentDir,
    Nul,
    Backslash,
    Url,
    Mixed,
    NotText,
    Unreadable,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unknown::ParentDir => "it contains `..`",
            Unknown::Nul => "it contains a NUL character",
            Unknown::Backslash => "it contains a backslash; separate directories with `/`",
            Unknown::Url => "it is a URL, not a path",
            Unknown::Mixed => "it mixes an absolute and a relative path",
            Unknown::NotText => "it is not a string",
            Unknown::Unreadable => "the arguments are not a JSON object",
        })
    }
}

/// One path argument of a call.
#[derive(Clone, Debug)]
pub(super) struct NamedPath {
    /// The argument's name.
    pub(super) argument: String,
    /// The path as the model wrote it (JSON text when not a string).
    pub(super) given: String,
    /// The path resolved against the tool's root, or why it could not be.
    pub(super) resolved: Result<Lexical, Unknown>,
}

/// What a call's arguments say about paths.
#[derive(Clone, Debug)]
pub(super) struct CallPaths<'a> {
    /// The call's arguments: an object when they read as one (borrowed when
    /// the call carried one), otherwise as they came (`null` when absent).
    pub(super) arguments: Cow<'a, Value>,
    /// Whether the arguments read as an object (absent and empty count as
    /// an empty one).
    pub(super) readable: bool,
    /// The path arguments it names, in the order of `names`.
    pub(super) named: Vec<NamedPath>,
}

/// How a call's paths lie with respect to one directory.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Placement {
    pub(super) any_within: bool,
    pub(super) all_within: bool,
    pub(super) unknown: bool,
}

impl<'a> CallPaths<'a> {
    /// Reads the path arguments `names` of `call`, resolving relative paths
    /// against `root`.
    pub(super) fn read(call: &'a ToolCall, names: &[String], root: Option<&Lexical>) -> CallPaths<'a> {
        let Some(arguments) = arguments_object(call.arguments()) else {
            return CallPaths {
                arguments: call.arguments().map_or(Cow::Owned(Value::Null), Cow::Borrowed),
                readable: false,
                named: Vec::new(),
            };
        };
        let object = arguments.as_object().expect("arguments_object answers objects");
        let mut named = Vec::new();
        for name in names {
            match object.get(name) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    named.extend(items.iter().map(|item| NamedPath::read(name, item, root)))
                }
                Some(value) => named.push(NamedPath::read(name, value, root)),
            }
        }
        CallPaths {
            arguments,
            readable: true,
            named,
        }
    }

    /// Where the paths lie with respect to `dir`, their parts compared as
    /// `case` says.
    pub(super) fn placement(&self, dir: &Lexical, case: Case) -> Placement {
        let mut placement = Placement {
            any_within: false,
            all_within: !self.named.is_empty(),
            unknown: !self.readable,
        };
        for path in &self.named {
            match path
                .resolved
                .as_ref()
                .map_err(|why| *why)
                .and_then(|p| p.within(dir, case))
            {
                Ok(true) => placement.any_within = true,
                Ok(false) => placement.all_within = false,
                Err(_) => {
                    placement.unknown = true;
                    placement.all_within = false;
                }
            }
        }
        placement
    }

    /// The first reason a path could not be placed, with its argument.
    pub(super) fn first_unknown(&self) -> Option<(&str, Unknown)> {
        if !self.readable {
            return Some(("arguments", Unknown::Unreadable));
        }
        self.named.iter().find_map(|path| {
            path.resolved
                .as_ref()
                .err()
                .map(|why| (path.argument.as_str(), *why))
        })
    }

    /// The narrowest directory to suggest a grant for: the common ancestor
    /// of the directories holding the paths, relative to `root` when inside
    /// it; the root (`.`) when some path cannot be placed; `None` when the
    /// call names no path.
    pub(super) fn suggested_dir(&self, root: Option<&Lexical>) -> Option<Lexical> {
        if self.readable && self.named.is_empty() {
            return None;
        }
        let dir = match (self.common_parent(), root) {
            (Some(common), Some(root)) => common.relative_to(root).unwrap_or(common),
            (Some(common), None) => common,
            (None, _) => Lexical::parse(".").expect("`.` is a path"),
        };
        Some(dir)
    }

    /// The deepest directory holding every path, when every path is placed
    /// and all are absolute or all relative.
    fn common_parent(&self) -> Option<Lexical> {
        let mut parents = self
            .named
            .iter()
            .map(|path| path.resolved.as_ref().ok().map(Lexical::parent));
        let first = parents.next()??;
        parents.try_fold(first, |common, parent| common.common_ancestor(&parent?))
    }
}

impl NamedPath {
    fn read(argument: &str, value: &Value, root: Option<&Lexical>) -> NamedPath {
        let (given, resolved) = match value {
            Value::String(path) => (path.clone(), Lexical::parse(path).map(|p| p.resolve(root))),
            other => (other.to_string(), Err(Unknown::NotText)),
        };
        NamedPath {
            argument: argument.to_owned(),
            given,
            resolved,
        }
    }
}

/// Arguments as an object: an object (borrowed), absent/null/empty text as
/// an empty one, JSON text that parses to an object; `None` for anything
/// else.
fn arguments_object(arguments: Option<&Value>) -> Option<Cow<'_, Value>> {
    match arguments {
        None | Some(Value::Null) => Some(Cow::Owned(Value::Object(Map::new()))),
        Some(object @ Value::Object(_)) => Some(Cow::Borrowed(object)),
        Some(Value::String(text)) if text.trim().is_empty() => Some(Cow::Owned(Value::Object(Map::new()))),
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(object @ Value::Object(_)) => Some(Cow::Owned(object)),
            _ => None,
        },
        Some(_) => None,
    }
}

impl NamedPath {
    /// The path as a question shows it.
    pub(super) fn to_argument(&self) -> super::PathArgument {
        super::PathArgument {
            argument: self.argument.clone(),
            path: self.given.clone(),
            resolved: self.resolved.as_ref().ok().map(ToString::to_string),
        }
    }
}
