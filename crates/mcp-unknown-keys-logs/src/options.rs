//! What an audit is told: the catalogues of the tools' schemas, the keys to
//! tolerate, and how deep to look.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::groups::Dimension;

/// How to audit. `Options::default()` audits against the catalogues the
/// inputs themselves hold (request bodies, `tools/list` responses), reads
/// nested keys, and tolerates only `reason`.
///
/// ```
/// use mcp_unknown_keys_logs::{Options, Tools};
///
/// let options = Options::default()
///     .tools(Tools::file("fs-tools.json").of_server("fs"))
///     .allow("toolCallId")
///     .top_level_only(true);
/// assert_eq!(options.tools[0].server.as_deref(), Some("fs"));
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// Catalogues of the tools' schemas, in order: those for the same
    /// server (or for none) merge, a later one winning a name clash (said as
    /// a [`Notice::ToolReplaced`](crate::Notice::ToolReplaced)). A catalogue
    /// in the input replaces the unbound one from there on; bound ones stay.
    pub tools: Vec<Tools>,
    /// Keys tolerated on every tool besides `reason`: for keys a host or
    /// middleware injects. Paths such as `entities[].id` tolerate a nested
    /// key.
    pub allow: Vec<String>,
    /// Audit top-level keys only: no nested key is read or reported
    /// ([`Auditor::top_level_only`](mcp_unknown_keys::audit::Auditor::top_level_only)).
    pub top_level_only: bool,
    /// Do not report required keys calls lacked (`--no-missing`): the
    /// specification's first behaviour
    /// ([`Auditor::check_required`](mcp_unknown_keys::audit::Auditor::check_required)
    /// off). Required keys are checked by default.
    pub no_missing: bool,
    /// The groupings to count calls in ([`Report::groups`]), each a list of
    /// dimensions: `[Model]` groups by model, `[Model, Tool]` by each
    /// (model, tool) pair. None by default: grouping costs a little per
    /// call.
    ///
    /// [`Report::groups`]: crate::Report::groups
    pub group_by: Vec<Vec<Dimension>>,
    /// Count what a server that rejects undeclared keys would have refused
    /// ([`Report::strict_preview`](crate::Report::strict_preview)). Off by
    /// default: it costs a little per call.
    pub strict_preview: bool,
}

impl Options {
    /// Adds a catalogue.
    pub fn tools(mut self, tools: Tools) -> Options {
        self.tools.push(tools);
        self
    }

    /// Tolerates `key` on every tool.
    pub fn allow(mut self, key: impl Into<String>) -> Options {
        self.allow.push(key.into());
        self
    }

    /// Counts calls grouped by `by` too ([`Options::group_by`]).
    pub fn group_by(mut self, by: impl IntoIterator<Item = Dimension>) -> Options {
        self.group_by.push(by.into_iter().collect());
        self
    }

    /// Audits top-level keys only, with `true`.
    pub fn top_level_only(mut self, top_level_only: bool) -> Options {
        self.top_level_only = top_level_only;
        self
    }

    /// Reports no required key calls lacked, with `true`
    /// ([`Options::no_missing`]).
    pub fn no_missing(mut self, no_missing: bool) -> Options {
        self.no_missing = no_missing;
        self
    }

    /// Counts what a strict server would have refused, with `true`
    /// ([`Options::strict_preview`]).
    pub fn strict_preview(mut self, strict_preview: bool) -> Options {
        self.strict_preview = strict_preview;
        self
    }
}

/// One catalogue of the tools' schemas, for any server or bound to one.
///
/// A host that connects several MCP servers renames their tools (Claude
/// Code calls `read_file` of server `fs` `mcp__fs__read_file`): a catalogue
/// bound to `fs` is the one such calls meet, so servers whose tool names
/// clash are told apart.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Tools {
    /// The server whose tools these are, or `None` for any.
    pub server: Option<String>,
    /// Where the tools are.
    pub source: Source,
}

/// Where a catalogue's tools are.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Source {
    /// A file, read as an input is (JSON Lines or JSON, plain, gzip or
    /// zstd; `-` is stdin), every list of tools in it taken whatever the
    /// shape around it (a JSON array of tools, `{"tools":[…]}`, a
    /// `tools/list` response, a request body, a Bedrock `toolConfig`), and
    /// every record that is itself one declaration.
    File(PathBuf),
    /// Declarations at hand, in any form (MCP, OpenAI, Anthropic, Gemini,
    /// Bedrock), called `name` in messages.
    Declarations {
        /// How messages name them.
        name: String,
        /// The declarations.
        tools: Vec<Value>,
    },
}

impl Tools {
    /// The catalogue in `path`.
    pub fn file(path: impl Into<PathBuf>) -> Tools {
        Tools {
            server: None,
            source: Source::File(path.into()),
        }
    }

    /// The declarations given, named `name` in messages.
    pub fn declarations(name: impl Into<String>, tools: Vec<Value>) -> Tools {
        Tools {
            server: None,
            source: Source::Declarations {
                name: name.into(),
                tools,
            },
        }
    }

    /// The same catalogue, bound to `server`.
    pub fn of_server(self, server: impl Into<String>) -> Tools {
        Tools {
            server: Some(server.into()),
            ..self
        }
    }

    /// The command line's `[SERVER=]FILE`: `SERVER=FILE` binds the file to a
    /// server when the part before `=` is a server name (letters, digits,
    /// `_`, `-`, `.`) and the whole is no existing file.
    ///
    /// ```
    /// use mcp_unknown_keys_logs::Tools;
    ///
    /// assert_eq!(Tools::from_arg("fs=tools.json").server.as_deref(), Some("fs"));
    /// assert_eq!(Tools::from_arg("dir/a=b.json").server, None);
    /// ```
    pub fn from_arg(spec: &str) -> Tools {
        let (server, file) = split(spec);
        let tools = Tools::file(file);
        match server {
            Some(server) => tools.of_server(server),
            None => tools,
        }
    }

    /// How messages name the catalogue: its path as given, or its name.
    pub fn name(&self) -> String {
        match &self.source {
            Source::File(path) => path.display().to_string(),
            Source::Declarations { name, .. } => name.clone(),
        }
    }
}

fn split(spec: &str) -> (Option<&str>, &str) {
    if Path::new(spec).exists() {
        return (None, spec);
    }
    match spec.split_once('=') {
        Some((server, file))
            if !server.is_empty()
                && server
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) =>
        {
            (Some(server), file)
        }
        _ => (None, spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_value_binds_a_server_only_when_it_names_one() {
        assert_eq!(split("fs=tools.json"), (Some("fs"), "tools.json"));
        assert_eq!(split("tools.json"), (None, "tools.json"));
        assert_eq!(split("dir/a=b.json"), (None, "dir/a=b.json"));
        assert_eq!(split("=b.json"), (None, "=b.json"));
    }
}
