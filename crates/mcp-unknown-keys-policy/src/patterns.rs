//! The names a rule is about: tools, directories and programs.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::paths::Lexical;
use crate::error::RuleError;

/// Gives a checked string type its conversions: from `String` through the
/// check (so serde refuses what `new` refuses), back to `String`, `as_str`
/// and `Display` as written.
macro_rules! checked_string {
    ($name:ident) => {
        impl $name {
            /// As written.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = RuleError;

            fn try_from(text: String) -> Result<$name, RuleError> {
                $name::new(text)
            }
        }

        impl From<$name> for String {
            fn from(checked: $name) -> String {
                checked.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}
pub(super) use checked_string;

/// The tools a rule is about: a tool name (`fs_read`), or a prefix followed
/// by `*` (`fs_*`; `*` alone is every tool).
///
/// A `*` anywhere but at the end, and the glob characters `?`, `[`, `]`,
/// `{` and `}`, are refused: a pattern that looks like a richer glob than it
/// is would match other tools than its author meant.
///
/// ```
/// use mcp_unknown_keys_policy::ToolPattern;
///
/// let files = ToolPattern::new("fs_*").unwrap();
/// assert!(files.matches("fs_write"));
/// assert!(!files.matches("git_commit"));
/// assert!(ToolPattern::new("fs_*_file").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolPattern(String);

impl ToolPattern {
    /// Reads a pattern; fails on an empty one and on anything but a name or
    /// a prefix followed by `*`.
    pub fn new(pattern: impl Into<String>) -> Result<ToolPattern, RuleError> {
        let pattern = pattern.into();
        if pattern.is_empty() {
            return Err(RuleError::new("a tool pattern cannot be empty"));
        }
        let body = pattern.strip_suffix('*').unwrap_or(&pattern);
        if body.contains('*') {
            return Err(RuleError::new(format!(
                "`{pattern}` is not a tool pattern: `*` may only end one (write a tool name, or a prefix followed by `*`)"
            )));
        }
        if let Some(glob) = body.chars().find(|c| matches!(c, '?' | '[' | ']' | '{' | '}')) {
            return Err(RuleError::new(format!(
                "`{pattern}` is not a tool pattern: `{glob}` is not supported (write a tool name, or a prefix followed by `*`)"
            )));
        }
        Ok(ToolPattern(pattern))
    }

    /// Whether the pattern matches the tool of this name.
    pub fn matches(&self, tool: &str) -> bool {
        prefix_glob(&self.0, tool)
    }

    /// Whether it names one tool rather than a prefix.
    pub(super) fn is_exact(&self) -> bool {
        !self.0.ends_with('*')
    }
}

checked_string!(ToolPattern);

/// A directory a rule is about, or a root relative paths resolve against:
/// a `/`-separated path, absolute or relative (`.` for the root itself).
///
/// Checks are lexical, so a directory that could mean two places is refused:
/// an empty one, or one holding `..`, a NUL, a backslash or `://`.
///
/// ```
/// use mcp_unknown_keys_policy::Dir;
///
/// assert!(Dir::new("src/generated").is_ok());
/// assert!(Dir::new("/srv/project").is_ok());
/// assert!(Dir::new("src/../secrets").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Dir(String);

impl Dir {
    /// Reads a directory; fails on one that lexical checks cannot place.
    pub fn new(dir: impl Into<String>) -> Result<Dir, RuleError> {
        let dir = dir.into();
        if dir.is_empty() {
            return Err(RuleError::new(
                "a directory cannot be empty (write `.` for the root)",
            ));
        }
        // The very check a call's paths go through, so a Dir always places.
        match Lexical::parse(&dir) {
            Ok(_) => Ok(Dir(dir)),
            Err(problem) => Err(RuleError::new(format!(
                "`{}` is not a usable directory: {problem}",
                dir.escape_debug()
            ))),
        }
    }
}

checked_string!(Dir);

impl Dir {
    /// The directory as paths are read, which [`Dir::new`] checked it is.
    pub(crate) fn lexical(&self) -> Lexical {
        Lexical::parse(self.as_str()).expect("a Dir has been checked to be placeable")
    }
}

/// The programs a rule is about, by base name: `git` matches `git`,
/// `/usr/bin/git` and `./git`; a trailing `*` makes a prefix (`mkfs*`
/// matches `mkfs.ext4`; `*` alone is every program that can be read).
///
/// A `/` is refused (a base name never holds one, so the rule could never
/// match), and so are whitespace, quotes and the shell's glob characters
/// other than a final `*`.
///
/// A `deny` or `ask` rule compares names with case folded (`RM` is `rm` on
/// a case-insensitive file system); an `allow` rule compares them exactly.
///
/// ```
/// use mcp_unknown_keys_policy::CommandPattern;
///
/// let mkfs = CommandPattern::new("mkfs*").unwrap();
/// assert!(mkfs.matches("mkfs.ext4", false));
/// assert!(CommandPattern::new("git").unwrap().matches("GIT", true));
/// assert!(!CommandPattern::new("git").unwrap().matches("GIT", false));
/// assert!(CommandPattern::new("/usr/bin/git").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CommandPattern(String);

impl CommandPattern {
    /// Reads a pattern; fails on an empty one and on anything but a base
    /// name or a prefix followed by `*`.
    pub fn new(pattern: impl Into<String>) -> Result<CommandPattern, RuleError> {
        let pattern = pattern.into();
        if pattern.is_empty() {
            return Err(RuleError::new("a command pattern cannot be empty"));
        }
        let body = pattern.strip_suffix('*').unwrap_or(&pattern);
        let refused = |c: char| c.is_whitespace() || c.is_control() || "/\\*?[]{}'\"$`".contains(c);
        if let Some(bad) = body.chars().find(|&c| refused(c)) {
            return Err(RuleError::new(format!(
                "`{}` is not a command pattern: `{}` is not allowed (write a program's base name, such as `git`, or a prefix followed by `*`)",
                pattern.escape_debug(),
                bad.escape_debug()
            )));
        }
        Ok(CommandPattern(pattern))
    }

    /// Whether the pattern matches a program of this base name; `fold`
    /// compares with case folded.
    pub fn matches(&self, name: &str, fold: bool) -> bool {
        if fold {
            prefix_glob(&self.0.to_lowercase(), &name.to_lowercase())
        } else {
            prefix_glob(&self.0, name)
        }
    }
}

checked_string!(CommandPattern);

/// Whether `name` is `pattern`, or starts with it less its final `*`.
fn prefix_glob(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}
