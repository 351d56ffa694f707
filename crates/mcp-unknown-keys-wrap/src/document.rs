//! One configuration document: find its server entries, decide what
//! becomes of each, and return the edits — no I/O, so every decision is
//! tested on text.
//!
//! Unwrap restores each entry exactly from the backups wrap wrote, and
//! checks before it does: a backup's entry is the original only when
//! wrapping it again gives, byte for byte, the entry as it stands now. An
//! entry edited since wrap (or one wrapped by hand) finds no such backup
//! and is rebuilt from the proxy's arguments instead, which hold the
//! server; nothing newer is ever replaced by a stale copy.

use std::cell::OnceCell;
use std::path::Path;

use super::edit::{Edit, apply, slice};
use super::entry::{self, Dialect, Entry, Invocation, Wrapped};
use super::jsonc::{self, Unreadable, Value};

/// Where servers are listed: a path of keys from the document's root to an
/// object of servers; `*` stands for every member (Claude Code's
/// `projects.<path>.mcpServers`).
pub(crate) type MapPath = &'static [&'static str];

/// What to do to each server.
pub(crate) enum Action<'a> {
    /// Put the proxy in front: run as `program` with `program_args`
    /// before `proxy` (a launcher's: `npx -y mcp-unknown-keys@1.0.0`),
    /// logging to `log_dir/NAME.jsonl` when a directory is given, keeping
    /// its catalogue in `state_dir` when one is given (for the Claude Code
    /// hook: an entry already wrapped without one gets it too).
    Wrap {
        program: &'a str,
        program_args: &'a [String],
        log_dir: Option<&'a Path>,
        state_dir: Option<&'a Path>,
    },
    /// Take the proxy out, with the backups' texts to restore from.
    Unwrap { backups: &'a [String] },
}

/// The edits for one document, and what became of each server.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The edits to make (none: leave the file alone).
    pub edits: Vec<Edit>,
    /// One line per server considered.
    pub servers: Vec<Outcome>,
}

/// What became of one server.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The server's name, with the project it belongs to when the document
    /// holds several.
    pub place: String,
    /// What was done.
    pub what: What,
}

/// What was done to a server.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum What {
    /// The proxy now stands in front of it.
    Wrapped,
    /// It was already wrapped: left as it is.
    AlreadyWrapped,
    /// It was already wrapped, without `--state-dir`: given one.
    StateDirAdded,
    /// It was not wrapped: left as it is.
    NotWrapped,
    /// Unwrapped to its exact original, from a backup.
    Restored,
    /// Unwrapped from the proxy's arguments (no backup held its original).
    Rebuilt,
    /// Left as it is, for this reason.
    Skipped(String),
}

/// A server entry and where it is.
struct Found<'d> {
    /// The keys from the root to the entry.
    location: Vec<&'d str>,
    /// How to name it in a report.
    place: String,
    value: &'d Value,
}

/// Plans `action` over every server of `text` listed at `maps` (only those
/// named in `only`, unless it is empty). An entry the tool cannot read
/// makes the whole document unreadable: nothing is half done.
pub(crate) fn plan(
    text: &str,
    maps: &[MapPath],
    dialect: Dialect,
    action: &Action,
    only: &[String],
) -> Result<Plan, Unreadable> {
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        return Ok(Plan::default());
    }
    let root = jsonc::parse(text)?;
    let found = servers(&root, maps)?;
    // Each backup is read the first time an entry looks into it: the
    // newest usually holds every original, and a file such as
    // `~/.claude.json` may be large and backed up often.
    let backups: Vec<(&str, OnceCell<Option<Value>>)> = match action {
        Action::Unwrap { backups } => backups
            .iter()
            .map(|text| (text.as_str(), OnceCell::new()))
            .collect(),
        Action::Wrap { .. } => Vec::new(),
    };
    let mut plan = Plan::default();
    for server in found {
        let name = server.location[server.location.len() - 1];
        if !only.is_empty() && !only.iter().any(|wanted| wanted == name) {
            continue;
        }
        let form = entry::classify(text, server.value, name)?;
        let what = match (action, &form) {
            (_, Entry::Unsupported(reason)) => What::Skipped(reason.clone()),
            (
                Action::Wrap {
                    program,
                    program_args,
                    log_dir,
                    state_dir,
                },
                Entry::Stdio { .. } | Entry::Remote { .. },
            ) => {
                let proxy = Invocation {
                    program: (*program).to_owned(),
                    program_args: program_args.to_vec(),
                    log: log_dir.map(|dir| path_text(&dir.join(log_file_name(name)))),
                    state_dir: state_dir.map(path_text),
                };
                plan.edits
                    .extend(entry::wrap(text, server.value, &form, name, &proxy));
                What::Wrapped
            }
            (Action::Wrap { state_dir, .. }, Entry::Wrapped(wrapped)) => {
                let dir = state_dir.map(path_text);
                match dir.and_then(|dir| entry::add_state_dir(server.value, wrapped, &dir)) {
                    Some(edit) => {
                        plan.edits.push(edit);
                        What::StateDirAdded
                    }
                    None => What::AlreadyWrapped,
                }
            }
            (Action::Unwrap { .. }, Entry::Stdio { .. } | Entry::Remote { .. }) => What::NotWrapped,
            (Action::Unwrap { .. }, Entry::Wrapped(wrapped)) => {
                let current = slice(text, server.value.span);
                match original(&backups, &server.location, current, wrapped) {
                    Some(original) => {
                        plan.edits.push(Edit::replace(server.value.span, original));
                        What::Restored
                    }
                    None => match entry::rebuild(text, server.value, wrapped, dialect) {
                        Some(edits) => {
                            plan.edits.extend(edits);
                            What::Rebuilt
                        }
                        None => What::Skipped("its proxy arguments name no server to restore".to_owned()),
                    },
                }
            }
        };
        plan.servers.push(Outcome {
            place: server.place,
            what,
        });
    }
    Ok(plan)
}

/// A path as a configuration holds it.
fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The longest log file name wrap gives, in bytes. Most file systems take
/// 255; eCryptfs (an encrypted home on Ubuntu) takes 143, and a name the
/// file system refuses keeps the server from starting.
const MAX_LOG_FILE_NAME: usize = 143;

/// `NAME.jsonl`, with what a file name cannot hold replaced by `_`. A name
/// too long for a file name is cut, and ends with a hash of the whole name
/// so that two long names that begin alike still get files of their own.
pub(crate) fn log_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    let safe = if safe.is_empty() { "server" } else { safe };
    const SUFFIX: &str = ".jsonl";
    if safe.len() + SUFFIX.len() <= MAX_LOG_FILE_NAME {
        return format!("{safe}{SUFFIX}");
    }
    // `safe` is ASCII: any byte is a character boundary.
    let hash = format!("-{:016x}", fnv1a(name.as_bytes()));
    let kept = MAX_LOG_FILE_NAME - SUFFIX.len() - hash.len();
    format!("{}{hash}{SUFFIX}", &safe[..kept])
}

/// FNV-1a, 64 bits: short, and the same in every build (the standard
/// library's hasher may change between releases, and a log's name should
/// not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The exact original of a wrapped entry: the entry at the same place in a
/// backup (newest first) that wraps into exactly `current`.
fn original(
    backups: &[(&str, OnceCell<Option<Value>>)],
    location: &[&str],
    current: &str,
    wrapped: &Wrapped,
) -> Option<String> {
    let name = *location.last()?;
    if wrapped.name.as_deref() != Some(name) {
        return None;
    }
    let proxy = Invocation {
        program: wrapped.program.clone(),
        program_args: wrapped.program_args.clone(),
        log: wrapped.log.clone(),
        state_dir: wrapped.state_dir.clone(),
    };
    backups.iter().find_map(|(text, root)| {
        let root = root.get_or_init(|| jsonc::parse(text).ok()).as_ref()?;
        let value = at(root, location)?;
        let form = entry::classify(text, value, name).ok()?;
        if !matches!(form, Entry::Stdio { .. } | Entry::Remote { .. }) {
            return None;
        }
        let shifted: Vec<Edit> = entry::wrap(text, value, &form, name, &proxy)
            .into_iter()
            .map(|edit| {
                let mut span = edit.span;
                span.start -= value.span.start;
                span.end -= value.span.start;
                Edit::replace(span, edit.text)
            })
            .collect();
        let original = slice(text, value.span);
        (apply(original, &shifted) == current).then(|| original.to_owned())
    })
}

/// The value at a path of keys.
fn at<'d>(root: &'d Value, location: &[&str]) -> Option<&'d Value> {
    location.iter().try_fold(root, |value, key| {
        value
            .as_object()?
            .iter()
            .find(|member| member.key == *key)
            .map(|member| &member.value)
    })
}

/// Every server entry listed at `maps`, in document order per map: what
/// `plan` reads, for what a dry run shows of them.
pub(crate) fn entries<'d>(root: &'d Value, maps: &[MapPath]) -> Result<Vec<&'d Value>, Unreadable> {
    Ok(servers(root, maps)?
        .into_iter()
        .map(|found| found.value)
        .collect())
}

/// Every server entry listed at `maps`, in document order per map.
fn servers<'d>(root: &'d Value, maps: &[MapPath]) -> Result<Vec<Found<'d>>, Unreadable> {
    if root.as_object().is_none() {
        return Err(Unreadable {
            offset: root.span.start,
            message: format!("a configuration should be a JSON object, not {}", root.describe()),
        });
    }
    let mut found = Vec::new();
    for map in maps {
        let mut holders = vec![(Vec::new(), String::new(), root)];
        for (depth, key) in map.iter().enumerate() {
            let mut next = Vec::new();
            for (location, scope, value) in holders {
                let members = object(value, &location)?;
                if *key == "*" {
                    for member in members {
                        let parent = depth.checked_sub(1).map_or("", |d| map[d]);
                        let scope = format!(" ({parent} {})", member.key);
                        next.push((extend(&location, &member.key), scope, &member.value));
                    }
                } else if let Some(i) = entry::find(members, key)? {
                    next.push((extend(&location, key), scope, &members[i].value));
                }
            }
            holders = next;
        }
        for (location, scope, value) in holders {
            for member in object(value, &location)? {
                found.push(Found {
                    location: extend(&location, &member.key),
                    place: format!("{}{scope}", member.key),
                    value: &member.value,
                });
            }
        }
    }
    Ok(found)
}

fn extend<'d>(location: &[&'d str], key: &'d str) -> Vec<&'d str> {
    let mut longer = location.to_vec();
    longer.push(key);
    longer
}

/// The members of an object the configuration's shape says is there.
fn object<'d>(value: &'d Value, location: &[&str]) -> Result<&'d [jsonc::Member], Unreadable> {
    value.as_object().ok_or_else(|| Unreadable {
        offset: value.span.start,
        message: format!(
            "{} should be an object, not {}",
            location.join("."),
            value.describe()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &[MapPath] = &[&["mcpServers"]];
    const URL: Dialect = Dialect { url_key: "url" };

    fn wrap(text: &str) -> (String, Vec<What>) {
        let action = Action::Wrap {
            program: "mcp-unknown-keys",
            program_args: &[],
            log_dir: None,
            state_dir: None,
        };
        let plan = plan(text, MAPS, URL, &action, &[]).unwrap();
        (
            apply(text, &plan.edits),
            plan.servers.into_iter().map(|s| s.what).collect(),
        )
    }

    fn unwrap(text: &str, backups: &[String]) -> (String, Vec<What>) {
        let plan = plan(text, MAPS, URL, &Action::Unwrap { backups }, &[]).unwrap();
        (
            apply(text, &plan.edits),
            plan.servers.into_iter().map(|s| s.what).collect(),
        )
    }

    #[test]
    fn a_launcher_form_wraps_is_known_again_and_unwraps() {
        let original = r#"{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}, "r": {"url": "https://x/mcp?k=1"}}}"#;
        let program_args = ["-y".to_owned(), "mcp-unknown-keys@1.2.3".to_owned()];
        let action = Action::Wrap {
            program: "npx",
            program_args: &program_args,
            log_dir: None,
            state_dir: None,
        };
        let wrapped = apply(original, &plan(original, MAPS, URL, &action, &[]).unwrap().edits);
        assert!(
            wrapped.contains(r#""command": "npx", "args": ["-y", "mcp-unknown-keys@1.2.3", "proxy", "--name", "t", "--", "uvx", "mcp-server-time"]"#),
            "{wrapped}"
        );
        let again = plan(&wrapped, MAPS, URL, &action, &[]).unwrap();
        assert!(again.edits.is_empty(), "wrapping twice nests no second proxy");
        assert_eq!(
            again.servers.iter().map(|s| &s.what).collect::<Vec<_>>(),
            [&What::AlreadyWrapped, &What::AlreadyWrapped]
        );
        assert_eq!(
            unwrap(&wrapped, &[original.to_owned()]),
            (original.to_owned(), vec![What::Restored, What::Restored])
        );
        let (rebuilt, what) = unwrap(&wrapped, &[]);
        assert_eq!(rebuilt, original);
        assert_eq!(what, [What::Rebuilt, What::Rebuilt]);
    }

    #[test]
    fn an_entry_wrapped_before_the_hook_gets_a_state_dir_where_wrap_puts_it() {
        let original = r#"{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}, "r": {"url": "https://x/mcp"}}}"#;
        let with_dir = |text: &str| {
            let action = Action::Wrap {
                program: "mcp-unknown-keys",
                program_args: &[],
                log_dir: Some(Path::new("/logs")),
                state_dir: Some(Path::new("/state")),
            };
            let plan = plan(text, MAPS, URL, &action, &[]).unwrap();
            let what: Vec<What> = plan.servers.into_iter().map(|s| s.what).collect();
            (apply(text, &plan.edits), what)
        };
        let log_only = Action::Wrap {
            program: "mcp-unknown-keys",
            program_args: &[],
            log_dir: Some(Path::new("/logs")),
            state_dir: None,
        };
        let before = apply(
            original,
            &plan(original, MAPS, URL, &log_only, &[]).unwrap().edits,
        );
        let (after, what) = with_dir(&before);
        assert_eq!(what, [What::StateDirAdded, What::StateDirAdded]);
        assert_eq!(
            after,
            with_dir(original).0,
            "as wrap would have written it at once"
        );
        assert!(
            after.contains(r#""--log", "/logs/t.jsonl", "--state-dir", "/state", "--", "uvx""#),
            "{after}"
        );
        assert_eq!(
            with_dir(&after),
            (after.clone(), vec![What::AlreadyWrapped, What::AlreadyWrapped])
        );
        assert_eq!(
            unwrap(&after, &[original.to_owned()]),
            (original.to_owned(), vec![What::Restored, What::Restored])
        );
        assert_eq!(unwrap(&after, &[]).0, original);
    }

    #[test]
    fn npx_running_another_package_is_not_a_proxy() {
        let text = r#"{"mcpServers": {"t": {"command": "npx", "args": ["-y", "mcp-unknown-keys-helper", "proxy", "--name", "x"]}}}"#;
        let (wrapped, what) = wrap(text);
        assert_eq!(what, [What::Wrapped]);
        assert!(
            wrapped.contains(r#""--", "npx", "-y", "mcp-unknown-keys-helper""#),
            "{wrapped}"
        );
    }

    #[test]
    fn a_member_wrap_adds_follows_the_line_endings() {
        let text =
            "{\r\n  \"mcpServers\": {\r\n    \"s\": {\r\n      \"command\": \"srv\"\r\n    }\r\n  }\r\n}\r\n";
        let (wrapped, _) = wrap(text);
        assert!(
            wrapped.contains(
                "      \"command\": \"mcp-unknown-keys\",\r\n      \"args\": [\"proxy\", \"--name\", \"s\", \"--\", \"srv\"]\r\n"
            ),
            "{wrapped:?}"
        );
        assert_eq!(unwrap(&wrapped, &[text.to_owned()]).0, text);
    }

    #[test]
    fn an_entry_wrapped_by_hand_is_rebuilt_from_its_arguments() {
        let text = r#"{"mcpServers": {"t": {"command": "/opt/bin/mcp-unknown-keys", "args": ["proxy", "--log=t.jsonl", "--allow", "--", "--", "uvx", "mcp-server-time"]}}}"#;
        let (unwrapped, what) = unwrap(text, &[]);
        assert_eq!(
            unwrapped,
            r#"{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}"#
        );
        assert_eq!(what, [What::Rebuilt]);
    }

    #[test]
    fn an_entry_edited_since_wrap_is_not_replaced_by_its_backup() {
        let original = r#"{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
        let (wrapped, _) = wrap(original);
        let edited = wrapped.replace("mcp-server-time\"", "mcp-server-time\", \"--local-timezone=UTC\"");
        let (unwrapped, what) = unwrap(&edited, &[original.to_owned()]);
        assert_eq!(
            unwrapped,
            r#"{"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=UTC"]}}}"#
        );
        assert_eq!(what, [What::Rebuilt]);
        assert_eq!(
            unwrap(&wrapped, &[original.to_owned()]),
            (original.to_owned(), vec![What::Restored])
        );
    }

    #[test]
    fn the_newest_backup_that_wraps_into_the_entry_is_the_original() {
        let older = r#"{"mcpServers": {"r": {"type": "streamable-http", "url": "https://x/mcp", "headers": { "A": "1" }}}}"#;
        let newer =
            r#"{"mcpServers": {"r": {"type": "http", "url": "https://x/mcp", "headers": { "A": "1" }}}}"#;
        let (wrapped, _) = wrap(newer);
        assert_eq!(wrap(older).0, wrapped, "both wrap alike");
        let stale = r#"{"mcpServers": {"r": {"command": "other"}}}"#.to_owned();
        let backups = [stale, newer.to_owned(), older.to_owned()];
        assert_eq!(unwrap(&wrapped, &backups).0, newer);
    }

    #[test]
    fn a_comment_above_headers_survives_wrap_and_unwrap_gives_back_the_bytes() {
        let servers = [
            "{\n  \"mcpServers\": {\n    \"r\": {\n      \"url\": \"https://x/mcp\",\n      // the token, from VS Code's prompt\n      \"headers\": {\"A\": \"${input:t}\"}\n    }\n  }\n}\n",
            // No host writes both env and headers; the comment stays all the same.
            "{\n  \"mcpServers\": {\n    \"r\": {\n      \"url\": \"https://x/mcp\",\n      \"env\": {\"B\": \"1\"},\n      // the token, from VS Code's prompt\n      \"headers\": {\"A\": \"${input:t}\"}\n    }\n  }\n}\n",
        ];
        for original in servers {
            let (wrapped, what) = wrap(original);
            assert_eq!(what, [What::Wrapped]);
            assert!(
                wrapped.contains("// the token, from VS Code's prompt\n"),
                "{wrapped}"
            );
            assert!(jsonc::parse(&wrapped).is_ok(), "{wrapped}");
            assert_eq!(
                unwrap(&wrapped, &[original.to_owned()]),
                (original.to_owned(), vec![What::Restored])
            );
        }
    }

    #[test]
    fn a_proxy_that_names_no_server_is_left_alone() {
        let text = r#"{"mcpServers": {"p": {"command": "mcp-unknown-keys", "args": ["proxy", "--quiet"]}}}"#;
        let (unwrapped, what) = unwrap(text, &[]);
        assert_eq!(unwrapped, text);
        assert!(matches!(&what[0], What::Skipped(reason) if reason.contains("no server")));
    }

    #[test]
    fn unreadable_entries_leave_the_whole_document_alone() {
        let text = r#"{"mcpServers": {"good": {"command": "x"}, "bad": {"command": "y", "args": "z"}}}"#;
        let action = Action::Unwrap { backups: &[] };
        let fault = plan(text, MAPS, URL, &action, &[]).unwrap_err();
        assert_eq!(fault.offset, text.find("\"z\"").unwrap());
        assert!(fault.message.contains("args should be an array"), "{fault}");
    }

    #[test]
    fn log_files_are_named_after_their_server() {
        assert_eq!(log_file_name("github"), "github.jsonl");
        assert_eq!(log_file_name("my server/v2"), "my_server_v2.jsonl");
        assert_eq!(log_file_name("..hidden"), "hidden.jsonl");
        assert_eq!(log_file_name("日本"), "__.jsonl");
        assert_eq!(log_file_name(""), "server.jsonl");
        let fits = "a".repeat(MAX_LOG_FILE_NAME - ".jsonl".len());
        assert_eq!(log_file_name(&fits), format!("{fits}.jsonl"));
        let long = log_file_name(&format!("{fits}a"));
        assert_eq!(long.len(), MAX_LOG_FILE_NAME);
        assert!(long.starts_with("aaa") && long.ends_with(".jsonl"), "{long}");
        assert_ne!(long, log_file_name(&format!("{fits}b")));
        assert_eq!(long, log_file_name(&format!("{fits}a")), "the same every time");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use serde_json::{Map, Value as Json, json};

        /// A stdio entry: a command, maybe arguments, maybe an environment.
        fn entry() -> impl Strategy<Value = Json> {
            let text = "[a-zA-Z0-9 ./\\\"é\u{1F600}\t-]{0,10}";
            (
                text,
                proptest::option::of(proptest::collection::vec(text, 0..4)),
                proptest::option::of(text),
            )
                .prop_map(|(command, args, env)| {
                    let mut entry = Map::new();
                    if let Some(env) = env {
                        entry.insert("env".into(), json!({ "V": env }));
                    }
                    entry.insert("command".into(), json!(command));
                    if let Some(args) = args {
                        entry.insert("args".into(), json!(args));
                    }
                    Json::Object(entry)
                })
        }

        fn document() -> impl Strategy<Value = String> {
            (
                proptest::collection::btree_map("[a-z.é/ -]{1,6}", entry(), 1..4),
                any::<bool>(),
            )
                .prop_map(|(servers, pretty)| {
                    let document = json!({ "mcpServers": servers, "other": [1, {"k": "v"}] });
                    if pretty {
                        serde_json::to_string_pretty(&document).unwrap()
                    } else {
                        document.to_string()
                    }
                })
        }

        /// What the host runs: an entry with `args: []` runs as one without.
        fn as_run(text: &str) -> Json {
            let mut document: Json = serde_json::from_str(text).unwrap();
            for entry in document["mcpServers"].as_object_mut().unwrap().values_mut() {
                let entry = entry.as_object_mut().unwrap();
                if entry.get("args") == Some(&json!([])) {
                    entry.remove("args");
                }
            }
            document
        }

        proptest! {
            #[test]
            fn wrap_then_unwrap_round_trips(original in document()) {
                let (wrapped, _) = wrap(&original);
                let document: Json = serde_json::from_str(&wrapped).unwrap();
                let before: Json = serde_json::from_str(&original).unwrap();
                for (name, entry) in before["mcpServers"].as_object().unwrap() {
                    let mut expected = vec![json!("proxy"), json!("--name"), json!(name), json!("--"), entry["command"].clone()];
                    expected.extend(entry.get("args").and_then(Json::as_array).cloned().unwrap_or_default());
                    prop_assert_eq!(&document["mcpServers"][name]["args"], &Json::Array(expected));
                    prop_assert_eq!(&document["mcpServers"][name]["env"], &entry["env"]);
                }
                prop_assert_eq!(&document["other"], &before["other"]);
                prop_assert_eq!(wrap(&wrapped).0, wrapped.clone());
                prop_assert_eq!(unwrap(&wrapped, std::slice::from_ref(&original)).0, original.clone());
                prop_assert_eq!(as_run(&unwrap(&wrapped, &[]).0), as_run(&original));
            }

            #[test]
            fn reading_any_text_never_panics(text in "\\PC{0,64}|[{}\\[\\]\",:/*\\\\u0-9a-f \n]{0,64}") {
                let _ = jsonc::parse(&text);
            }
        }
    }
}
