//! The example server's files: everything goes through one directory handle
//! on the root, so no path, symbolic link or race leads outside it.
//!
//! Paths are first read as text (relative to the root, or absolute under
//! it; `..` may not climb above it), for a clear refusal. Then every open
//! goes through the root's handle with `cap-std`, which resolves each
//! component beneath it (`openat2` with `RESOLVE_BENEATH` where Linux has
//! it, one `O_NOFOLLOW` step at a time elsewhere): a symbolic link that
//! leads out, even one swapped in while the call runs, is refused, never
//! followed, and a file that does not exist yet is created inside or not at
//! all.

use std::io::{self, ErrorKind, Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions, OpenOptionsExt};

/// The most bytes `read` takes from one file; the answer says when the file
/// is longer.
pub(super) const MAX_READ_BYTES: u64 = 1024 * 1024;

/// The directory the tools are confined to.
pub(super) struct Root {
    dir: Dir,
    /// Its canonical path: for absolute paths given, and for messages.
    path: PathBuf,
}

/// A file's text as `read` takes it.
pub(super) struct Text {
    pub text: String,
    /// The file's size when it is longer than [`MAX_READ_BYTES`].
    pub cut_from: Option<u64>,
}

/// Why a tool could not do what it was asked, in words for the model.
pub(super) type Problem = String;

impl Root {
    /// Opens the root directory.
    pub(super) fn open(path: &Path) -> Result<Root, String> {
        let path = path
            .canonicalize()
            .map_err(|error| format!("root {}: {error}", path.display()))?;
        let dir = Dir::open_ambient_dir(&path, ambient_authority())
            .map_err(|error| format!("root {}: {error}", path.display()))?;
        Ok(Root { dir, path })
    }

    /// The root's canonical path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The path under the root that `path` names, relative to the root
    /// (`.` for the root itself), or a refusal when it climbs out of it.
    pub(super) fn relative(&self, path: &str) -> Result<PathBuf, Problem> {
        let relative = match Path::new(path) {
            absolute if absolute.is_absolute() => {
                absolute.strip_prefix(&self.path).map_err(|_| outside(path))?
            }
            relative => relative,
        };
        let mut resolved = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::CurDir => {}
                Component::Normal(part) => resolved.push(part),
                Component::ParentDir => {
                    if !resolved.pop() {
                        return Err(outside(path));
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside(path)),
            }
        }
        if resolved.as_os_str().is_empty() {
            resolved.push(".");
        }
        Ok(resolved)
    }

    /// A regular file's text, at most [`MAX_READ_BYTES`] of it. Anything
    /// else (a directory, a FIFO, a device) is refused before a byte is
    /// read: opening does not wait for a FIFO's writer.
    pub(super) fn read(&self, path: &str) -> Result<Text, Problem> {
        let relative = self.relative(path)?;
        let file = self
            .dir
            .open_with(
                &relative,
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY),
            )
            .map_err(|error| self.problem(path, &relative, error))?;
        let size = regular(&file, path)?;
        let mut bytes = Vec::new();
        file.take(MAX_READ_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|error| self.problem(path, &relative, error))?;
        let cut_from = (size > MAX_READ_BYTES).then_some(size);
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            // A cut may split a character: keep the whole ones before it.
            Err(error) if cut_from.is_some() && error.utf8_error().error_len().is_none() => {
                let valid = error.utf8_error().valid_up_to();
                let mut bytes = error.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).expect("valid up to here")
            }
            Err(_) => return Err(format!("{}: not UTF-8 text", self.shown(&relative))),
        };
        Ok(Text { text, cut_from })
    }

    /// Writes a regular file, creating it and its directories; refuses to
    /// write anything else.
    pub(super) fn write(&self, path: &str, content: &str) -> Result<PathBuf, Problem> {
        let relative = self.relative(path)?;
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.dir
                .create_dir_all(parent)
                .map_err(|error| self.problem(path, parent, error))?;
        }
        let mut file = self
            .dir
            .open_with(
                &relative,
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY),
            )
            .map_err(|error| self.problem(path, &relative, error))?;
        regular(&file, path)?;
        file.set_len(0)
            .and_then(|()| file.write_all(content.as_bytes()))
            .map_err(|error| self.problem(path, &relative, error))?;
        Ok(relative)
    }

    /// A directory's entries, sorted, each with whether it is a directory.
    pub(super) fn list(&self, path: &str) -> Result<Vec<(String, bool)>, Problem> {
        let relative = self.relative(path)?;
        let entries = self
            .dir
            .read_dir(&relative)
            .map_err(|error| self.problem(path, &relative, error))?;
        let mut entries: Vec<(String, bool)> = entries
            .filter_map(Result::ok)
            .map(|entry| {
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                (entry.file_name().to_string_lossy().into_owned(), is_dir)
            })
            .collect();
        entries.sort();
        Ok(entries)
    }

    /// A path relative to the root, as the answers show it.
    pub(super) fn shown(&self, relative: &Path) -> String {
        relative.display().to_string()
    }

    /// An I/O error in words: a path that leads out is a refusal, whatever
    /// error the attempt met first (creating a directory where a link out
    /// stands says "file exists").
    fn problem(&self, path: &str, relative: &Path, error: io::Error) -> Problem {
        if is_escape(&error) || self.dir.metadata(relative).is_err_and(|e| is_escape(&e)) {
            return outside(path);
        }
        format!("{}: {error}", self.shown(relative))
    }
}

/// Whether `cap-std` refused a path for leading outside the root.
fn is_escape(error: &io::Error) -> bool {
    error.kind() == ErrorKind::PermissionDenied && error.to_string().contains("outside")
}

/// The size of a regular file, or a refusal for anything else.
fn regular(file: &File, path: &str) -> Result<u64, Problem> {
    let metadata = file.metadata().map_err(|error| format!("{path}: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("refused: {path:?} is not a regular file"));
    }
    Ok(metadata.len())
}

fn outside(path: &str) -> Problem {
    format!("refused: {path:?} is outside the root")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_read_relative_to_the_root_and_may_not_climb_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let absolute = root.path().join("a/b.txt");
        for (given, expected) in [
            ("a/b.txt", "a/b.txt"),
            ("./a/../a/b.txt", "a/b.txt"),
            (".", "."),
            ("", "."),
            (absolute.to_str().unwrap(), "a/b.txt"),
        ] {
            assert_eq!(root.relative(given).unwrap(), Path::new(expected), "{given}");
        }
        for given in ["..", "a/../..", "/etc/passwd"] {
            assert!(
                root.relative(given).unwrap_err().contains("outside the root"),
                "{given}"
            );
        }
    }
}
