//! How hosts should start the proxy, told from where this binary runs.
//!
//! A host keeps the command `wrap` writes for as long as the configuration
//! lives, across every upgrade of the tool. The binary's own path is right
//! for `cargo install` (`~/.cargo/bin`) and for a venv's `bin/`, but not
//! when it runs from a package manager's cache: `uvx mcp-unknown-keys` runs
//! it from uv's cache (`…/uv/archive-v0/<hash>/bin/`) and `npx
//! mcp-unknown-keys` from npm's (`…/_npx/<hash>/node_modules/…`), and
//! either may be cleaned away at any time. Nor is a path inside an npm
//! package's folder the command a user knows. So [`launch`] picks, in
//! order:
//!
//! 1. in npx's cache: `npx -y mcp-unknown-keys@VERSION`;
//! 2. in uv's cache: `uvx mcp-unknown-keys@VERSION`;
//! 3. the `mcp-unknown-keys` on `PATH` that runs this binary (a symbolic
//!    link such as uv's `~/.local/bin`, or npm's command, whose shim runs
//!    this binary), as found on `PATH`: that path survives upgrades;
//! 4. in an npm project's `node_modules`: its `.bin/mcp-unknown-keys`;
//! 5. else this binary's own path.
//!
//! The decision is a pure function of the binary's path, the environment
//! and a file-system lookup passed in, so that every case is tested
//! without installing anything.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// The command's name, and the package's on PyPI and npm.
pub const COMMAND: &str = "mcp-unknown-keys";

/// The npm shim's path inside the main package (`bin` in its manifest).
const NPM_SHIM: [&str; 3] = [COMMAND, "bin", "mcp-unknown-keys.js"];

/// How hosts will start the proxy: a program and the arguments that go
/// before `proxy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The program: an absolute path, or a name looked up on `PATH`.
    pub program: String,
    /// What goes between the program and `proxy` (`-y mcp-unknown-keys@0.1.0`
    /// for npx); empty for the binary itself.
    pub args: Vec<String>,
    /// Why this form, for `--dry-run` to say.
    pub why: String,
}

/// What [`launch`] reads besides the binary's path.
pub struct Surroundings<'a> {
    /// `PATH`.
    pub path: Option<&'a OsStr>,
    /// `UV_CACHE_DIR`, where uv keeps its cache when it is set.
    pub uv_cache_dir: Option<&'a Path>,
    /// This binary's version, which a launcher's package is pinned to.
    pub version: &'a str,
    /// The real path of a file (symbolic links followed), or `None` when
    /// there is no such file: `std::fs::canonicalize`, outside tests.
    pub real_path: &'a dyn Fn(&Path) -> Option<PathBuf>,
}

/// How hosts should start the proxy, `exe` being this binary's real path.
pub fn launch(exe: &Path, around: &Surroundings) -> Launch {
    if has_component(exe, "_npx") {
        return Launch {
            program: "npx".to_owned(),
            args: vec!["-y".to_owned(), format!("{COMMAND}@{}", around.version)],
            why: "this binary runs from npx's cache, which npm may clear".to_owned(),
        };
    }
    if in_uv_cache(exe, around.uv_cache_dir) {
        return Launch {
            program: "uvx".to_owned(),
            args: vec![format!("{COMMAND}@{}", around.version)],
            why: "this binary runs from uv's cache, which uv may clear".to_owned(),
        };
    }
    if let Some(command) = on_path(exe, around) {
        return plain(command, "the command on PATH that runs this binary");
    }
    if let Some(shim) = npm_project_command(exe, around) {
        return plain(shim, "the command of the npm project this binary is installed in");
    }
    plain(exe.to_path_buf(), "this binary's path")
}

fn plain(program: PathBuf, why: &str) -> Launch {
    Launch {
        program: program.to_string_lossy().into_owned(),
        args: Vec::new(),
        why: why.to_owned(),
    }
}

fn has_component(path: &Path, name: &str) -> bool {
    path.components().any(|c| c.as_os_str() == name)
}

/// Whether `exe` is in uv's cache: under `UV_CACHE_DIR`, or in one of the
/// cache's versioned buckets (`archive-v0`, `builds-v0`) of a folder named
/// `uv` (`~/.cache/uv`, `%LOCALAPPDATA%\uv\cache` has `cache` between).
fn in_uv_cache(exe: &Path, uv_cache_dir: Option<&Path>) -> bool {
    if uv_cache_dir.is_some_and(|dir| !dir.as_os_str().is_empty() && exe.starts_with(dir)) {
        return true;
    }
    exe.ancestors().any(|dir| {
        let bucket = dir.file_name().and_then(OsStr::to_str).unwrap_or_default();
        let versioned = ["archive-v", "builds-v"].iter().any(|prefix| {
            bucket
                .strip_prefix(prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
        versioned
            && dir.parent().is_some_and(|cache| {
                cache.file_name() == Some(OsStr::new("uv"))
                    || (cache.file_name() == Some(OsStr::new("cache"))
                        && cache.parent().and_then(Path::file_name) == Some(OsStr::new("uv")))
            })
    })
}

/// The first `mcp-unknown-keys` on `PATH` that runs `exe`: the binary
/// itself through links, or the npm shim of the package `exe` belongs to.
fn on_path(exe: &Path, around: &Surroundings) -> Option<PathBuf> {
    let path = around.path?;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .flat_map(|dir| [dir.join(COMMAND), dir.join(format!("{COMMAND}.exe"))])
        .find(|candidate| {
            (around.real_path)(candidate).is_some_and(|real| real == exe || is_npm_shim_of(&real, exe))
        })
}

/// Whether `real` is the main npm package's shim whose platform package
/// holds `exe`: `…/node_modules/mcp-unknown-keys/bin/mcp-unknown-keys.js`,
/// `exe` under the same `node_modules` (a project's, or the global one,
/// where the platform package is nested in the main package's).
fn is_npm_shim_of(real: &Path, exe: &Path) -> bool {
    let mut up = real.components().rev();
    let tail: Vec<Component> = up.by_ref().take(NPM_SHIM.len()).collect();
    let shim = tail
        .iter()
        .rev()
        .map(|c| c.as_os_str())
        .eq(NPM_SHIM.iter().map(OsStr::new));
    let modules = real.ancestors().nth(NPM_SHIM.len());
    shim && modules.is_some_and(|modules| {
        modules.file_name() == Some(OsStr::new("node_modules")) && exe.starts_with(modules)
    })
}

/// `node_modules/.bin/mcp-unknown-keys` of the project whose
/// `node_modules/mcp-unknown-keys-<platform>/` holds `exe`, if it exists.
fn npm_project_command(exe: &Path, around: &Surroundings) -> Option<PathBuf> {
    let package = exe.parent()?;
    let platform_package = package.file_name()?.to_str()?;
    let modules = package.parent()?;
    if !platform_package.starts_with(&format!("{COMMAND}-")) || modules.file_name()? != "node_modules" {
        return None;
    }
    let command = modules.join(".bin").join(COMMAND);
    (around.real_path)(&command).map(|_| command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// `launch` over a file system of `links` (path → real path; a real
    /// file maps to itself).
    fn decide(exe: &str, path: &str, uv_cache_dir: Option<&str>, links: &[(&str, &str)]) -> Launch {
        let links: HashMap<PathBuf, PathBuf> = links
            .iter()
            .map(|(from, to)| (PathBuf::from(from), PathBuf::from(to)))
            .collect();
        let real_path = |p: &Path| links.get(p).cloned();
        let around = Surroundings {
            path: Some(OsStr::new(path)),
            uv_cache_dir: uv_cache_dir.map(Path::new),
            version: "1.2.3",
            real_path: &real_path,
        };
        launch(Path::new(exe), &around)
    }

    fn form(launch: &Launch) -> Vec<&str> {
        std::iter::once(launch.program.as_str())
            .chain(launch.args.iter().map(String::as_str))
            .collect()
    }

    #[test]
    fn npx_cache_becomes_npx_with_the_version_pinned() {
        let exe = "/home/me/.npm/_npx/0123abcd/node_modules/mcp-unknown-keys-linux-x64-gnu/mcp-unknown-keys";
        // npx puts its cache's .bin first on PATH: never written either.
        let shim = "/home/me/.npm/_npx/0123abcd/node_modules/mcp-unknown-keys/bin/mcp-unknown-keys.js";
        let bin = "/home/me/.npm/_npx/0123abcd/node_modules/.bin";
        let launch = decide(
            exe,
            &format!("{bin}:/usr/bin"),
            None,
            &[(&format!("{bin}/mcp-unknown-keys"), shim)],
        );
        assert_eq!(form(&launch), ["npx", "-y", "mcp-unknown-keys@1.2.3"]);
    }

    #[test]
    fn uv_cache_becomes_uvx_with_the_version_pinned() {
        let exe = "/home/me/.cache/uv/archive-v0/EA7JV5tRMNHu/bin/mcp-unknown-keys";
        let bin = "/home/me/.cache/uv/archive-v0/EA7JV5tRMNHu/bin";
        let launch = decide(
            exe,
            &format!("{bin}:/usr/bin"),
            None,
            &[(&format!("{bin}/mcp-unknown-keys"), exe)],
        );
        assert_eq!(form(&launch), ["uvx", "mcp-unknown-keys@1.2.3"]);
        let windows_layout = "/Users/me/AppData/Local/uv/cache/archive-v0/x/Scripts/mcp-unknown-keys";
        assert_eq!(decide(windows_layout, "", None, &[]).program, "uvx");
    }

    #[test]
    fn uv_cache_dir_from_the_environment() {
        let exe = "/tmp/ci-cache/archive-v0/x/bin/mcp-unknown-keys";
        assert_eq!(decide(exe, "/usr/bin", Some("/tmp/ci-cache"), &[]).program, "uvx");
        assert_eq!(
            decide(exe, "/usr/bin", None, &[]).program,
            exe,
            "no uv folder, no UV_CACHE_DIR: a path"
        );
    }

    #[test]
    fn a_folder_merely_named_like_a_bucket_is_not_a_cache() {
        let exe = "/srv/archive-v0/bin/mcp-unknown-keys";
        assert_eq!(decide(exe, "", None, &[]).program, exe);
    }

    #[test]
    fn uv_tool_install_is_the_link_on_path_not_the_tool_venv() {
        let exe = "/home/me/.local/share/uv/tools/mcp-unknown-keys/bin/mcp-unknown-keys";
        let link = "/home/me/.local/bin/mcp-unknown-keys";
        let launch = decide(
            exe,
            "/usr/local/bin:/home/me/.local/bin:/usr/bin",
            None,
            &[(link, exe)],
        );
        assert_eq!(form(&launch), [link]);
    }

    #[test]
    fn another_mcp_unknown_keys_on_path_is_not_taken() {
        let exe = "/home/me/venv/bin/mcp-unknown-keys";
        let other = "/home/me/.cargo/bin/mcp-unknown-keys";
        let launch = decide(exe, "/home/me/.cargo/bin", None, &[(other, other)]);
        assert_eq!(form(&launch), [exe], "a pip venv's bin is stable: its own path");
    }

    #[test]
    fn npm_global_install_is_the_command_on_path() {
        let exe = "/usr/local/lib/node_modules/mcp-unknown-keys/node_modules/mcp-unknown-keys-linux-x64-gnu/mcp-unknown-keys";
        let shim = "/usr/local/lib/node_modules/mcp-unknown-keys/bin/mcp-unknown-keys.js";
        let launch = decide(
            exe,
            "/usr/local/bin:/usr/bin",
            None,
            &[("/usr/local/bin/mcp-unknown-keys", shim)],
        );
        assert_eq!(form(&launch), ["/usr/local/bin/mcp-unknown-keys"]);
    }

    #[test]
    fn another_packages_shim_on_path_is_not_taken() {
        let exe = "/app/node_modules/mcp-unknown-keys-linux-x64-gnu/mcp-unknown-keys";
        let shim = "/usr/local/lib/node_modules/mcp-unknown-keys/bin/mcp-unknown-keys.js";
        let launch = decide(
            exe,
            "/usr/local/bin",
            None,
            &[("/usr/local/bin/mcp-unknown-keys", shim)],
        );
        assert_eq!(form(&launch), [exe], "no .bin in /app: the binary's own path");
    }

    #[test]
    fn npm_project_install_is_its_bin_command() {
        let exe = "/app/node_modules/mcp-unknown-keys-linux-x64-gnu/mcp-unknown-keys";
        let bin = "/app/node_modules/.bin/mcp-unknown-keys";
        let shim = "/app/node_modules/mcp-unknown-keys/bin/mcp-unknown-keys.js";
        assert_eq!(form(&decide(exe, "/usr/bin", None, &[(bin, shim)])), [bin]);
    }

    #[test]
    fn cargo_install_keeps_its_own_path() {
        let exe = "/home/me/.cargo/bin/mcp-unknown-keys";
        assert_eq!(form(&decide(exe, "/usr/bin", None, &[])), [exe]);
        assert_eq!(
            form(&decide(
                exe,
                "relative/dir:/home/me/.cargo/bin",
                None,
                &[(exe, exe)]
            )),
            [exe]
        );
    }
}
