//! `--state-dir DIR`: the last catalogue each server listed, kept in a file
//! of its own so that a process which sees a call but not the listing (a
//! Claude Code `PostToolUse` hook, `mcp-unknown-keys hook claude-code`) can
//! audit the call against what the server declared.
//!
//! The file is `DIR/catalogs/NAME.json`, NAME the server's name as Claude
//! Code writes it in a tool's name (`mcp__NAME__TOOL`: every character but
//! ASCII letters, digits, `_` and `-` becomes `_`, see [`file_stem`]):
//!
//! ```json
//! {"version":1,"server":"files","allow":["toolCallId"],"top_level_only":false,
//!  "tools":[{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{}}}}]}
//! ```
//!
//! `tools` are the listed tools as the server sent them, pages assembled,
//! so the reader audits with the same rules as the proxy; `allow` and
//! `top_level_only` are the proxy's own `--allow` and `--top-level-only`.
//! Each write replaces the file whole (a temporary file renamed over it), so
//! a reader sees the last listing or the one before, never half of one. A
//! server whose tools changed (`list_changed`) has its file removed until
//! it is listed again.
//!
//! Writing is opt-in: nothing is written without `--state-dir` (or the
//! environment variable [`STATE_DIR_VAR`]).

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use mcp_unknown_keys::audit::Catalog;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The environment variable that gives the state directory when
/// `--state-dir` does not.
pub const STATE_DIR_VAR: &str = "MCP_UNKNOWN_KEYS_STATE_DIR";

/// The version of the catalogue file's format; a reader passes over a file
/// of another version.
pub const FORMAT_VERSION: u32 = 1;

/// The largest catalogue file written or read: a listing larger than this
/// (schemas run to a few kilobytes a tool) is not kept.
pub const MAX_CATALOG_FILE: u64 = 16 * 1024 * 1024;

/// The longest file stem a server's name gives; a longer name keeps no
/// file (file systems take 255 bytes, eCryptfs 143).
pub const MAX_STEM_BYTES: usize = 128;

/// One server's last catalogue, as the file holds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogFile {
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// The server's name as the proxy gives it (`--name`).
    pub server: String,
    /// The proxy's `--allow` keys.
    #[serde(default)]
    pub allow: Vec<String>,
    /// The proxy's `--top-level-only`.
    #[serde(default)]
    pub top_level_only: bool,
    /// The listed tools, as the server sent them.
    pub tools: Vec<Value>,
}

impl CatalogFile {
    /// Reads the catalogue file of the server Claude Code calls `stem`
    /// under `dir`; `None` when there is none, it is too large, or it is
    /// not one this version reads.
    pub fn read(dir: &Path, stem: &str) -> Option<CatalogFile> {
        if file_stem(stem).as_deref() != Some(stem) {
            return None;
        }
        let path = catalogs_dir(dir).join(format!("{stem}.json"));
        let text = read_capped(&path, MAX_CATALOG_FILE)?;
        let file: CatalogFile = serde_json::from_slice(&text).ok()?;
        (file.version == FORMAT_VERSION).then_some(file)
    }
}

/// Reads a file of at most `cap` bytes; `None` for a larger one or any
/// error.
pub fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = fs::File::open(path).ok()?;
    let mut text = Vec::new();
    file.take(cap + 1).read_to_end(&mut text).ok()?;
    (text.len() as u64 <= cap).then_some(text)
}

/// The file stem of a server's catalogue: its name as Claude Code writes it
/// in tool names (each character but ASCII letters, digits, `_` and `-`
/// made `_`); `None` for an empty name or one over [`MAX_STEM_BYTES`].
pub fn file_stem(server: &str) -> Option<String> {
    let stem: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    (!stem.is_empty() && stem.len() <= MAX_STEM_BYTES).then_some(stem)
}

/// Where the catalogues are, under the state directory.
pub fn catalogs_dir(dir: &Path) -> PathBuf {
    dir.join("catalogs")
}

/// Writes `contents` to `path` whole or not at all: a temporary file
/// beside it, renamed over it.
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("state");
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::File::create(&temporary)
        .and_then(|mut file| file.write_all(contents).and_then(|()| file.sync_data()))
        .and_then(|()| fs::rename(&temporary, path));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// The writer of one proxy run's catalogue file.
pub(crate) struct CatalogState {
    path: PathBuf,
    file: Mutex<CatalogFile>,
    /// The listed tools by name, pages assembled: the raw tools of the
    /// pages read so far, kept to those the installed catalogue names.
    tools: Mutex<HashMap<String, Value>>,
    /// A failure to write was said.
    said: Mutex<bool>,
}

impl CatalogState {
    /// The writer for `server` under `dir` (created), or `None` when the
    /// server's name gives no file name.
    pub(crate) fn open(
        dir: &Path,
        server: &str,
        allow: &[String],
        top_level_only: bool,
    ) -> io::Result<Option<CatalogState>> {
        let Some(stem) = file_stem(server) else {
            return Ok(None);
        };
        let catalogs = catalogs_dir(dir);
        fs::create_dir_all(&catalogs)?;
        Ok(Some(CatalogState {
            path: catalogs.join(format!("{stem}.json")),
            file: Mutex::new(CatalogFile {
                version: FORMAT_VERSION,
                server: server.to_owned(),
                allow: allow.to_vec(),
                top_level_only,
                tools: Vec::new(),
            }),
            tools: Mutex::default(),
            said: Mutex::new(false),
        }))
    }

    /// A catalogue was installed: `page`, the listing page's `result` that
    /// installed it (`None` when the server's tools changed and no
    /// catalogue is in use). Rewrites the file; a failure is said once on
    /// stderr.
    pub(crate) fn installed(&self, page: Option<&str>, catalog: &Catalog) {
        let written = match page {
            None => {
                self.tools.lock().unwrap_or_else(PoisonError::into_inner).clear();
                match fs::remove_file(&self.path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                }
            }
            Some(page) => self.write(page, catalog),
        };
        if let Err(e) = written {
            let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
            if !std::mem::replace(&mut *said, true) {
                eprintln!(
                    "mcp-unknown-keys: the state file {} could not be written: {e}; the hook will not see this server's tools",
                    self.path.display()
                );
            }
        }
    }

    fn write(&self, page: &str, catalog: &Catalog) -> io::Result<()> {
        let listed: Vec<Value> = serde_json::from_str::<Value>(page)
            .ok()
            .and_then(|mut result| match result.get_mut("tools").map(Value::take) {
                Some(Value::Array(tools)) => Some(tools),
                _ => None,
            })
            .unwrap_or_default();
        let names = catalog.tool_names();
        let tools: Vec<Value> = {
            let mut kept = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
            for tool in listed {
                if let Some(name) = tool_name(&tool) {
                    kept.insert(name.to_owned(), tool);
                }
            }
            let named: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
            kept.retain(|name, _| named.contains(name.as_str()));
            names.iter().filter_map(|name| kept.get(name).cloned()).collect()
        };
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.tools = tools;
        let text = serde_json::to_vec(&*file).map_err(io::Error::other)?;
        file.tools = Vec::new();
        if text.len() as u64 > MAX_CATALOG_FILE {
            return Err(io::Error::other(format!(
                "the listing takes {} bytes, over the {MAX_CATALOG_FILE} a state file holds",
                text.len()
            )));
        }
        write_atomically(&self.path, &text)
    }
}

/// A listed tool's name: an MCP tool's `name`, or an OpenAI declaration's
/// `function.name`.
fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name")
        .or_else(|| tool.get("function").and_then(|function| function.get("name")))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_becomes_the_stem_claude_code_writes() {
        assert_eq!(file_stem("files").as_deref(), Some("files"));
        assert_eq!(file_stem("my server.v2/x").as_deref(), Some("my_server_v2_x"));
        assert_eq!(file_stem("../etc").as_deref(), Some("___etc"));
        assert_eq!(file_stem(""), None);
        assert_eq!(file_stem(&"a".repeat(MAX_STEM_BYTES + 1)), None);
    }

    #[test]
    fn pages_are_assembled_and_a_new_listing_replaces_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let state = CatalogState::open(dir.path(), "files", &["toolCallId".into()], false)
            .unwrap()
            .unwrap();
        let read = json!({"name": "read", "inputSchema": {"properties": {"path": {}}}});
        let write = json!({"name": "write", "inputSchema": {"properties": {"path": {}}}});
        let mut listing = mcp_unknown_keys::audit::Listing::default();
        let page_1 = json!({"tools": [read], "nextCursor": "2"}).to_string();
        let so_far = listing.page(std::slice::from_ref(&read), true, true).unwrap();
        state.installed(Some(&page_1), &so_far);
        let page_2 = json!({"tools": [write]}).to_string();
        let whole = listing.page(std::slice::from_ref(&write), false, false).unwrap();
        state.installed(Some(&page_2), &whole);
        let file = CatalogFile::read(dir.path(), "files").unwrap();
        assert_eq!(file.tools, [read.clone(), write]);
        assert_eq!(file.allow, ["toolCallId"]);

        let fresh = listing.page(std::slice::from_ref(&read), true, false).unwrap();
        state.installed(Some(&json!({"tools": [read]}).to_string()), &fresh);
        assert_eq!(CatalogFile::read(dir.path(), "files").unwrap().tools.len(), 1);

        state.installed(None, &Catalog::none());
        assert!(CatalogFile::read(dir.path(), "files").is_none());
    }

    #[test]
    fn only_a_stem_claude_code_could_write_is_read() {
        let dir = tempfile::tempdir().unwrap();
        assert!(CatalogFile::read(dir.path(), "../x").is_none());
        assert!(CatalogFile::read(dir.path(), "").is_none());
    }
}
