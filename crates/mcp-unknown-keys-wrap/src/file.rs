//! Reading and writing a configuration file safely: a timestamped backup
//! next to it, then an atomic replace (a temporary file in the same folder,
//! renamed over it) with the file's permissions (and, where allowed, its
//! owner) kept. What is not a regular file, or is larger than any
//! configuration, is refused unread, and so is a file made read-only. A
//! symbolic link (a dotfiles repository) is followed, so the file it points
//! to is edited and the link stays a link.

use std::fs::{self, File, Metadata, OpenOptions, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mcp_unknown_keys::utc::Utc;

/// How backups end, after `<file name>.<UTC time>`.
const BACKUP_SUFFIX: &str = ".mcp-unknown-keys.bak";

/// A configuration file as read.
pub(crate) struct Config {
    /// The file itself, links followed.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    permissions: Permissions,
    /// Its user and group.
    owner: (u32, u32),
}

/// The most of a configuration that is read. Claude Code's `~/.claude.json`
/// grows with its history to a few megabytes; a file far larger is not a
/// configuration, and reading it whole (`/dev/zero` never ends) would only
/// grow memory.
pub(crate) const MAX_BYTES: u64 = 64 << 20;

/// Reads the file at `path`; a file that is not UTF-8 is refused, and so
/// is one that is not a regular file or is larger than [`MAX_BYTES`].
pub(crate) fn read(path: &Path) -> Result<Config, String> {
    let real = fs::canonicalize(path).map_err(|e| format!("cannot open it: {e}"))?;
    let (bytes, metadata) = read_regular(&real)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {}): not a JSON configuration",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(Config {
        path: real,
        text,
        permissions: metadata.permissions(),
        owner: (metadata.uid(), metadata.gid()),
    })
}

/// [`read`], or `None` when nothing is at `path` (a settings file that is
/// not there yet, for [`create`]).
pub(crate) fn read_if_present(path: &Path) -> Result<Option<Config>, String> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        _ => read(path).map(Some),
    }
}

/// Creates the file at `path`, and its folder, holding `text`: private to
/// its owner (a settings file may come to hold secrets). Refuses a file
/// that appeared since it was found missing: nothing is overwritten.
pub(crate) fn create(path: &Path, text: &str) -> Result<(), String> {
    if let Some(folder) = path.parent() {
        fs::create_dir_all(folder).map_err(|e| format!("cannot create its folder: {e}"))?;
    }
    let mut file = private_file(path).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => {
            "it appeared while being edited: nothing written; run again".to_owned()
        }
        _ => format!("cannot create it: {e}"),
    })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write it: {e}"))
}

/// The bytes of the regular file at `path`, at most [`MAX_BYTES`], and its
/// metadata. It is opened without waiting (a FIFO would wait for a writer
/// forever) and its type is read from the open file, so what is read is
/// what was checked.
fn read_regular(path: &Path) -> Result<(Vec<u8>, Metadata), String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open it: {e}"))?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot read its permissions: {e}"))?;
    if !metadata.is_file() {
        return Err(format!(
            "not a regular file but {}: name the configuration file itself; left as it is",
            kind(&metadata)
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!(
            "larger than {} MiB: not an MCP configuration; left as it is",
            MAX_BYTES >> 20
        ));
    }
    Ok((bytes, metadata))
}

/// What a file that is not a regular file is, for a message.
fn kind(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Refuses a file its user has made read-only. The replace is a rename in
/// the folder, which a read-only file does not stop (nor does root's
/// right to write anything): so the mode is read as the user meant it —
/// no write bit for anyone is "do not change this", even for root — and
/// an open for writing, which the system refuses to a user without the
/// right, decides the rest.
pub(crate) fn writable(config: &Config) -> Result<(), String> {
    let mode = config.permissions.mode() & 0o7777;
    if mode & 0o222 == 0 {
        return Err(format!(
            "it is read-only (mode {mode:04o}): nothing written; make it writable (chmod u+w) to change it"
        ));
    }
    OpenOptions::new()
        .write(true)
        .open(&config.path)
        .map(drop)
        .map_err(|e| format!("it cannot be written ({e}): nothing written"))
}

/// The texts of the file's backups, newest first (unreadable ones passed
/// over: they only help restore exact bytes).
pub(crate) fn backups(config: &Config) -> Vec<String> {
    let (Some(folder), Some(name)) = (config.path.parent(), file_name(&config.path)) else {
        return Vec::new();
    };
    let prefix = format!("{name}.");
    let mut found: Vec<((String, u32), PathBuf)> = fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name().into_string().ok()?;
            let stamp = file.strip_prefix(&prefix)?.strip_suffix(BACKUP_SUFFIX)?;
            let (time, count) = match stamp.split_once('-') {
                Some((time, count)) => (time, count.parse().ok()?),
                None => (stamp, 0),
            };
            Some(((time.to_owned(), count), entry.path()))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found
        .into_iter()
        .filter_map(|(_, path)| String::from_utf8(read_regular(&path).ok()?.0).ok())
        .collect()
}

/// Replaces the file's text with `text`, after writing a backup of what it
/// held. Refuses a file made read-only, and one that changed since it was read (its host wrote
/// it meanwhile): nothing is lost, and running again starts from the new
/// text. Returns the backup's path.
pub(crate) fn write(config: &Config, text: &str) -> Result<PathBuf, String> {
    writable(config)?;
    let (now, _) = read_regular(&config.path).map_err(|e| format!("reading it again: {e}"))?;
    if now != config.text.as_bytes() {
        return Err(
            "it changed while being edited (its host wrote it?): nothing written; run again".to_owned(),
        );
    }
    let backup = create_backup(config).map_err(|e| format!("cannot write a backup next to it: {e}"))?;
    replace(config, text).map_err(|e| format!("cannot write it: {e}; its backup is {}", backup.display()))?;
    Ok(backup)
}

fn create_backup(config: &Config) -> io::Result<PathBuf> {
    let name = file_name(&config.path).ok_or_else(|| io::Error::other("no file name"))?;
    let stamp = utc_stamp(SystemTime::now());
    for count in 0u32.. {
        let stamp = match count {
            0 => stamp.clone(),
            n => format!("{stamp}-{n}"),
        };
        let path = config
            .path
            .with_file_name(format!("{name}.{stamp}{BACKUP_SUFFIX}"));
        match private_file(&path) {
            Ok(file) => {
                fill(file, &path, config.text.as_bytes(), config)?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("some count is free")
}

/// Writes `text` to a temporary file beside the configuration, then renames
/// it over the configuration: a reader sees the old file or the new one,
/// never half of one.
fn replace(config: &Config, text: &str) -> io::Result<()> {
    let name = file_name(&config.path).ok_or_else(|| io::Error::other("no file name"))?;
    let temporary = config
        .path
        .with_file_name(format!(".{name}.mcp-unknown-keys-{}.tmp", std::process::id()));
    let _ = fs::remove_file(&temporary);
    let written = private_file(&temporary)
        .and_then(|file| fill(file, &temporary, text.as_bytes(), config))
        .and_then(|()| fs::rename(&temporary, &config.path));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written?;
    if let Some(folder) = config.path.parent() {
        // The rename itself durable; not every file system lets a folder be
        // synced, and the edit is done either way.
        let _ = File::open(folder).and_then(|folder| folder.sync_all());
    }
    Ok(())
}

/// A new file only its owner can read until it gets the permissions it
/// should have: a configuration may hold secrets.
fn private_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Writes `bytes` and gives the file the configuration's permissions and
/// owner. Only root may give a file to someone else: for anyone else the
/// owner is already theirs, and the refusal is no loss.
fn fill(mut file: File, path: &Path, bytes: &[u8], config: &Config) -> io::Result<()> {
    file.write_all(bytes)?;
    let _ = std::os::unix::fs::fchown(&file, Some(config.owner.0), Some(config.owner.1));
    fs::set_permissions(path, config.permissions.clone())?;
    file.sync_all()
}

fn file_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// `YYYYMMDDTHHMMSSZ`: sorts as it reads.
fn utc_stamp(time: SystemTime) -> String {
    let at = Utc::of(time);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year, at.month, at.day, at.hour, at.minute, at.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn stamps_are_utc_dates() {
        let at = |seconds| utc_stamp(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(1_767_225_599), "20251231T235959Z");
        assert_eq!(at(4_107_542_400), "21000301T000000Z");
    }
}
