//! Which (tool, key) pairs the hook has said in each Claude Code session:
//! one file per session under `DIR/hook/sessions/`, named by its
//! `session_id`, holding a 64-bit hash per pair (never a key: keys are the
//! model's text), read and rewritten under an exclusive lock, since Claude
//! Code runs the hooks of parallel tool calls at once.
//!
//! Bounded: at most [`MAX_SAID_PER_SESSION`] pairs a session (past it,
//! nothing new is said in that session) and [`MAX_SESSIONS`] session files
//! (the oldest are removed to make room for a new one).

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The most (tool, key) pairs remembered in one session.
pub(super) const MAX_SAID_PER_SESSION: usize = 4096;

/// The most sessions remembered.
pub(super) const MAX_SESSIONS: usize = 256;

/// The longest session id taken; Claude Code's are UUIDs.
pub(super) const MAX_SESSION_ID_BYTES: usize = 128;

/// What one session has been told, locked while held.
pub(super) struct SessionMemory {
    file: File,
    said: BTreeSet<u64>,
}

impl SessionMemory {
    /// Opens (creating) and locks the memory of `session_id` under `dir`;
    /// `None` for a session id that cannot name a file (empty, too long,
    /// or other than ASCII letters, digits, `-` and `_`) or any error.
    pub(super) fn open(dir: &Path, session_id: &str) -> Option<SessionMemory> {
        let named = !session_id.is_empty()
            && session_id.len() <= MAX_SESSION_ID_BYTES
            && session_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !named {
            return None;
        }
        let sessions = dir.join("hook").join("sessions");
        fs::create_dir_all(&sessions).ok()?;
        let path = sessions.join(session_id);
        if !path.exists() {
            make_room(&sessions);
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .ok()?;
        // An exclusive lock (flock on Unix), released when the file is
        // closed: two hooks of one session never interleave.
        file.lock().ok()?;
        let mut text = String::new();
        let cap = (MAX_SAID_PER_SESSION as u64 + 1) * 17;
        (&mut file).take(cap).read_to_string(&mut text).ok()?;
        let said = text
            .lines()
            .filter_map(|line| u64::from_str_radix(line, 16).ok())
            .take(MAX_SAID_PER_SESSION)
            .collect();
        Some(SessionMemory { file, said })
    }

    /// Remembers that `key` of `tool` is said now; false when it was said
    /// before, or the session remembers as many pairs as it may.
    pub(super) fn claim(&mut self, tool: &str, key: &str) -> bool {
        let pair = pair_hash(tool, key);
        if self.said.contains(&pair) || self.said.len() >= MAX_SAID_PER_SESSION {
            return false;
        }
        self.said.insert(pair)
    }

    /// Writes the memory back; the lock is let go when it is dropped.
    pub(super) fn save(mut self) {
        let text: String = self.said.iter().map(|pair| format!("{pair:016x}\n")).collect();
        let _ = self
            .file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.set_len(0))
            .and_then(|()| self.file.write_all(text.as_bytes()));
    }
}

/// Removes the oldest session files while there are [`MAX_SESSIONS`] or
/// more.
fn make_room(sessions: &Path) {
    let Ok(entries) = fs::read_dir(sessions) else {
        return;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .filter_map(|entry| {
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, entry.path()))
        })
        .collect();
    if files.len() < MAX_SESSIONS {
        return;
    }
    files.sort();
    for (_, path) in &files[..=files.len() - MAX_SESSIONS] {
        let _ = fs::remove_file(path);
    }
}

/// FNV-1a over the tool, a byte no UTF-8 text holds, and the key: stable
/// across versions and platforms, as the files outlive the binary.
fn pair_hash(tool: &str, key: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in tool.bytes().chain([0xff]).chain(key.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_claimed_once_per_session_and_kept_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut memory = SessionMemory::open(dir.path(), "abc-123").unwrap();
        assert!(memory.claim("fs_read", "ffset"));
        assert!(!memory.claim("fs_read", "ffset"));
        memory.save();
        let mut again = SessionMemory::open(dir.path(), "abc-123").unwrap();
        assert!(!again.claim("fs_read", "ffset"));
        assert!(again.claim("fs_write", "ffset"));
        again.save();
        let mut other = SessionMemory::open(dir.path(), "def").unwrap();
        assert!(other.claim("fs_read", "ffset"));
    }

    #[test]
    fn a_session_id_that_cannot_name_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["", "../x", "a/b", &"a".repeat(MAX_SESSION_ID_BYTES + 1)] {
            assert!(SessionMemory::open(dir.path(), id).is_none(), "{id}");
        }
    }

    #[test]
    fn memory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut memory = SessionMemory::open(dir.path(), "s").unwrap();
        for i in 0..MAX_SAID_PER_SESSION {
            assert!(memory.claim("t", &i.to_string()));
        }
        assert!(!memory.claim("t", "one more"));
        drop(memory);
        for i in 0..MAX_SESSIONS + 3 {
            drop(SessionMemory::open(dir.path(), &format!("s{i}")).unwrap());
        }
        let kept = fs::read_dir(dir.path().join("hook/sessions")).unwrap().count();
        assert_eq!(kept, MAX_SESSIONS);
    }
}
