//! The recorded sessions of `tests/fixtures/sessions/` (their format is in
//! that folder's README): each message with its side, kept as the bytes
//! that travelled, and the options every door is run with.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

/// Which side sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Host,
    Server,
}

/// One recorded message: its side and its text, byte for byte as it
/// travelled (escapes, repeated members and number forms kept).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub from: Side,
    pub text: String,
}

/// What every door of one session is run with.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub top_level_only: bool,
}

impl Options {
    /// As command-line options: `--allow KEY`… `--top-level-only`.
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for key in &self.allow {
            args.extend(["--allow".to_owned(), key.clone()]);
        }
        if self.top_level_only {
            args.push("--top-level-only".to_owned());
        }
        args
    }
}

/// One recorded session.
#[derive(Clone, Debug)]
pub struct Session {
    /// The file's name without `.jsonl`: what a mismatch is named by.
    pub name: String,
    pub options: Options,
    pub messages: Vec<Recorded>,
}

impl Session {
    /// The recording as `audit` reads one: each message as a line of its
    /// own, in order, whatever its side.
    pub fn recording(&self) -> String {
        self.messages.iter().map(|m| format!("{}\n", m.text)).collect()
    }

    /// The server's messages that follow host message `at` (an index into
    /// `messages`) until the next host message: what answers or accompanies
    /// it.
    pub fn replies_to(&self, at: usize) -> Vec<&Recorded> {
        self.messages[at + 1..]
            .iter()
            .take_while(|m| m.from == Side::Server)
            .collect()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    from: Side,
    #[serde(borrow)]
    message: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    options: Options,
}

/// The corpus's folder.
pub fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions")
}

/// Every session of the corpus, in the order of their names.
pub fn sessions() -> Vec<Session> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(folder())
        .expect("the corpus folder")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    paths.iter().map(|path| read(path)).collect()
}

/// Reads one session, holding it to the format: a line is exactly
/// `{"from":"host"|"server","message":MESSAGE}` (so that a reader without a
/// JSON parser that keeps raw text, the Python test's, can cut MESSAGE out),
/// and a session opens with a host message.
pub fn read(path: &Path) -> Session {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let mut options = Options::default();
    let mut messages = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", n + 1);
        if n == 0 && line.starts_with(r#"{"options":"#) {
            let header: Header = serde_json::from_str(line).unwrap_or_else(|e| panic!("{at}: {e}"));
            options = header.options;
            continue;
        }
        let read: Line = serde_json::from_str(line).unwrap_or_else(|e| panic!("{at}: {e}"));
        let side = match read.from {
            Side::Host => "host",
            Side::Server => "server",
        };
        let text = read.message.get().to_owned();
        assert_eq!(
            line,
            format!(r#"{{"from":"{side}","message":{text}}}"#),
            "{at}: not in the corpus's one form"
        );
        messages.push(Recorded {
            from: read.from,
            text,
        });
    }
    assert_eq!(
        messages.first().map(|m| m.from),
        Some(Side::Host),
        "{name}: a session opens with a host message"
    );
    Session {
        name,
        options,
        messages,
    }
}
