//! Tool names as hosts write them. A host that connects several MCP servers
//! renames each server's tools so they cannot clash: Claude Code calls
//! `read_file` of server `fs` `mcp__fs__read_file`, Codex `fs__read_file`;
//! Codex's `exec --json` and Anthropic's MCP connector keep server and tool
//! apart. Each form is matched to the catalogue's `read_file` when that is
//! unambiguous; a catalogue given as `--tools fs=FILE` is the one of server
//! `fs`, so several servers with clashing tool names are told apart.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use mcp_unknown_keys::audit::{Catalog, Printable};

/// The most catalogue names remembered for near matches.
const MAX_KNOWN_NAMES: usize = 10_000;

/// A catalogue bound to one server by `--tools SERVER=FILE`.
pub(crate) struct Bound<T> {
    /// The server's name.
    pub server: String,
    /// Its catalogue, and what goes with it.
    pub with: T,
}

/// Where a call's tool is declared: in the catalogue of the input (or of
/// `--tools FILE`), or in one server's; under which name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Target<'n> {
    /// The bound server's index, or `None` for the unbound catalogue.
    pub server: Option<usize>,
    /// The tool's name in that catalogue.
    pub tool: &'n str,
}

/// The name a report gives a call: as the call wrote it, or, where the
/// call names its server apart, in Claude Code's form.
pub(crate) fn shown<'a>(tool: &'a str, server: Option<&str>) -> Cow<'a, str> {
    match server {
        Some(server) => Cow::Owned(format!("mcp__{server}__{tool}")),
        None => Cow::Borrowed(tool),
    }
}

/// The (server, tool) readings of a host's name: `mcp__S__T`, then `S__T`,
/// split at each `__` in turn (a server's name may hold one too).
pub(crate) fn readings(name: &str) -> impl Iterator<Item = (&str, &str)> {
    let rest = name.strip_prefix("mcp__").unwrap_or(name);
    rest.match_indices("__")
        .map(move |(at, _)| (&rest[..at], &rest[at + 2..]))
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
}

/// How a call names its tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Naming<'n> {
    /// As a host does: perhaps `mcp__S__T` or `S__T`.
    Host,
    /// With its server apart.
    Server(&'n str),
    /// As its server listed it (a JSON-RPC call, sent to the server
    /// itself): exactly.
    Listed,
}

/// Finds where a call to `tool`, named as `naming` says, is declared:
/// `None` when no catalogue has it, or more than one bound server does and
/// the call does not say which. A call that names its server (apart, or in
/// a host's name) meets that server's catalogue or the unbound one, never
/// another server's: the same tool name on another server is another tool,
/// and auditing against it would warn of keys its own server declares.
pub(crate) fn resolve<'n, T>(
    unbound: &Catalog,
    bound: &[Bound<T>],
    catalog_of: impl Fn(&T) -> &Catalog,
    tool: &'n str,
    naming: Naming<'n>,
) -> Option<Target<'n>> {
    let in_server = |server: &str, tool: &'n str| {
        let at = bound
            .iter()
            .position(|b| b.server == server && catalog_of(&b.with).get(tool).is_some())?;
        Some(Target {
            server: Some(at),
            tool,
        })
    };
    let in_unbound = |tool: &'n str| {
        unbound
            .get(tool)
            .is_some()
            .then_some(Target { server: None, tool })
    };
    let in_one_server = |tool: &'n str| {
        let mut having = bound
            .iter()
            .enumerate()
            .filter(|(_, b)| catalog_of(&b.with).get(tool).is_some());
        match (having.next(), having.next()) {
            (Some((at, _)), None) => Some(Target {
                server: Some(at),
                tool,
            }),
            _ => None,
        }
    };
    match naming {
        Naming::Server(server) => return in_server(server, tool).or_else(|| in_unbound(tool)),
        Naming::Listed => return in_unbound(tool).or_else(|| in_one_server(tool)),
        Naming::Host => {}
    }
    in_unbound(tool)
        .or_else(|| readings(tool).find_map(|(server, tool)| in_server(server, tool)))
        .or_else(|| readings(tool).find_map(|(_, tool)| in_unbound(tool)))
        .or_else(|| in_one_server(tool))
}

/// Every tool name met in a catalogue, with the servers it was bound to
/// (`None` for an unbound catalogue): what an unlisted name is compared
/// with. At most [`MAX_KNOWN_NAMES`] names.
#[derive(Debug, Default)]
pub(crate) struct Known {
    names: BTreeMap<String, BTreeSet<Option<String>>>,
}

impl Known {
    /// Notes the tools of `catalog`, bound to `server` if given.
    pub(crate) fn learn(&mut self, catalog: &Catalog, server: Option<&str>) {
        for (name, _) in catalog.iter() {
            if let Some(servers) = self.names.get_mut(name) {
                servers.insert(server.map(str::to_owned));
            } else if self.names.len() < MAX_KNOWN_NAMES {
                self.names
                    .insert(name.to_owned(), BTreeSet::from([server.map(str::to_owned)]));
            }
        }
    }

    /// What to say of a name no catalogue matched when it was called: the
    /// catalogue name it stands for or nearly is (noting when several bound
    /// servers have it), or that another catalogue than the one its calls
    /// met lists it; `None` when nothing comes near.
    pub(crate) fn note(&self, name: &str) -> Option<String> {
        let as_written = std::iter::once(name).chain(readings(name).map(|(_, tool)| tool));
        for tool in as_written {
            let Some(servers) = self.names.get(tool) else {
                continue;
            };
            let bound: Vec<String> = servers
                .iter()
                .flatten()
                .map(|s| Printable(s).to_string())
                .collect();
            let tool = Printable(tool);
            return Some(if bound.len() > 1 && !servers.contains(&None) {
                format!(
                    "nearly matches {tool}, on servers {}: bind one with --tools SERVER=FILE",
                    bound.join(", ")
                )
            } else if tool.0 == name {
                "listed by another catalogue than the one its calls met".to_owned()
            } else {
                format!("nearly matches {tool}")
            });
        }
        // A misspelling, of the name or of the tool a host's name stands for.
        let spellings = std::iter::once(name).chain(readings(name).map(|(_, tool)| tool));
        spellings
            .flat_map(|spelling| {
                let limit = (spelling.chars().count() / 4).max(1);
                self.names
                    .keys()
                    .map(move |known| (distance(spelling, known), known))
                    .filter(move |(d, known)| *d <= limit && *d < known.chars().count())
            })
            .min()
            .map(|(_, known)| format!("nearly matches {}", Printable(known)))
    }
}

/// The edit distance between two names, case aside (insertions, deletions
/// and substitutions of characters); names over 64 characters are not
/// compared.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog(names: &[&str]) -> Catalog {
        let tools: Vec<_> = names
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"properties": {"path": {}}}}))
            .collect();
        Catalog::from_mcp_tools(&tools)
    }

    fn bound(servers: &[(&str, &[&str])]) -> Vec<Bound<Catalog>> {
        servers
            .iter()
            .map(|(server, names)| Bound {
                server: server.to_string(),
                with: catalog(names),
            })
            .collect()
    }

    fn target(server: Option<usize>, tool: &str) -> Option<Target<'_>> {
        Some(Target { server, tool })
    }

    #[test]
    fn host_names_match_the_catalogue_name() {
        let unbound = catalog(&["read_file"]);
        let none: Vec<Bound<Catalog>> = Vec::new();
        let resolve = |name| resolve(&unbound, &none, |c| c, name, Naming::Host);
        assert_eq!(resolve("read_file"), target(None, "read_file"));
        assert_eq!(resolve("mcp__fs__read_file"), target(None, "read_file"));
        assert_eq!(resolve("fs__read_file"), target(None, "read_file"));
        assert_eq!(resolve("mcp__my__fs__read_file"), target(None, "read_file"));
        assert_eq!(resolve("write_file"), None);
        assert_eq!(resolve("mcp__fs__write_file"), None);
    }

    #[test]
    fn bound_servers_tell_clashing_names_apart() {
        let unbound = Catalog::none();
        let servers = bound(&[("a", &["read"]), ("b", &["read", "write"])]);
        let resolve = |name, naming| resolve(&unbound, &servers, |c| c, name, naming);
        assert_eq!(resolve("mcp__a__read", Naming::Host), target(Some(0), "read"));
        assert_eq!(resolve("b__read", Naming::Host), target(Some(1), "read"));
        assert_eq!(resolve("read", Naming::Server("b")), target(Some(1), "read"));
        // Unique to one server: matched by its own name, never under
        // another server's.
        assert_eq!(resolve("write", Naming::Host), target(Some(1), "write"));
        assert_eq!(resolve("mcp__c__write", Naming::Host), None);
        assert_eq!(resolve("write", Naming::Server("c")), None);
        // On two servers, and the call does not say which: ambiguous.
        assert_eq!(resolve("read", Naming::Host), None);
        assert_eq!(resolve("mcp__c__read", Naming::Host), None);
    }

    #[test]
    fn a_name_as_its_server_listed_it_is_matched_exactly() {
        let unbound = catalog(&["read_file"]);
        let servers = bound(&[("b", &["write"])]);
        let resolve = |name| resolve(&unbound, &servers, |c| c, name, Naming::Listed);
        assert_eq!(resolve("read_file"), target(None, "read_file"));
        assert_eq!(resolve("write"), target(Some(0), "write"));
        assert_eq!(resolve("mcp__fs__read_file"), None);
        assert_eq!(resolve("b__write"), None);
    }

    #[test]
    fn an_unlisted_name_is_given_what_it_nearly_matches() {
        let mut known = Known::default();
        known.learn(&catalog(&["read_file", "list_directory"]), None);
        known.learn(&catalog(&["search"]), Some("a"));
        known.learn(&catalog(&["search"]), Some("b"));
        let note = |name| known.note(name);
        assert_eq!(
            note("mcp__fs__read_file").as_deref(),
            Some("nearly matches read_file")
        );
        assert_eq!(note("read_files").as_deref(), Some("nearly matches read_file"));
        assert_eq!(
            note("List_Directory").as_deref(),
            Some("nearly matches list_directory")
        );
        assert_eq!(
            note("mcp__fs__reed_file").as_deref(),
            Some("nearly matches read_file")
        );
        assert_eq!(note("rm"), None);
        assert_eq!(
            note("read_file").as_deref(),
            Some("listed by another catalogue than the one its calls met")
        );
        for name in ["search", "mcp__c__search"] {
            assert_eq!(
                note(name).as_deref(),
                Some("nearly matches search, on servers a, b: bind one with --tools SERVER=FILE")
            );
        }
    }

    #[test]
    fn shown_names_keep_the_call_s_form() {
        assert_eq!(shown("read", None), "read");
        assert_eq!(shown("read", Some("fs")), "mcp__fs__read");
    }
}
