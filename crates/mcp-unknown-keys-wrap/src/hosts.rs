//! The hosts, where each keeps its MCP configuration on Linux, macOS and
//! Windows, and how each lists its servers.
//!
//! Every host is one entry of [`HOSTS`]: its `--host` name, where its files
//! list servers, how it names a remote server's address, the file names
//! that are its, and where its files are. Adding a host is adding an entry.
//!
//! Discovery is a pure function of an [`Environment`] (platform, home,
//! working directory and the variables that move configurations), so the
//! tests resolve every platform's paths from a home they make up.

use std::path::{Path, PathBuf};

use super::document::MapPath;
use super::entry::Dialect;

/// What wrap knows of one MCP host.
pub struct HostDef {
    /// The name `--host` takes and reports show.
    pub name: &'static str,
    /// Where its files list servers.
    pub maps: &'static [MapPath],
    /// The key of a remote server's address in its entries.
    pub url_key: &'static str,
    /// The files that are its: a file name, and the names its folder may
    /// have when the file name alone does not tell (empty: any folder).
    pub files: &'static [(&'static str, &'static [&'static str])],
    /// Where its files are, user files first, then the project's.
    pub paths: fn(&Environment) -> Vec<PathBuf>,
    /// For a host that runs the Claude Code hook: the settings file that
    /// holds it for the servers of one of its files.
    pub hook_settings: Option<fn(&Path, &Environment) -> PathBuf>,
}

/// Every host `wrap` edits, in the order they are reported.
pub const HOSTS: &[HostDef] = &[
    HostDef {
        name: "claude-desktop",
        maps: &[&["mcpServers"]],
        url_key: "url",
        files: &[("claude_desktop_config.json", &[])],
        paths: |env| {
            vec![
                env.config_root()
                    .join("Claude")
                    .join("claude_desktop_config.json"),
            ]
        },
        hook_settings: None,
    },
    // `~/.claude.json` holds the user scope and each project's local scope
    // (under `projects`); the project's `.mcp.json` its shared scope.
    HostDef {
        name: "claude-code",
        maps: &[&["mcpServers"], &["projects", "*", "mcpServers"]],
        url_key: "url",
        files: &[(".claude.json", &[]), (".mcp.json", &[])],
        paths: |env| {
            vec![
                env.claude_config_dir
                    .as_ref()
                    .unwrap_or(&env.home)
                    .join(".claude.json"),
                env.cwd.join(".mcp.json"),
            ]
        },
        // A project's `.mcp.json`: that project's shared settings, beside
        // it; `.claude.json` (user and local scopes): the user's settings,
        // in `$CLAUDE_CONFIG_DIR` when set, as `.claude.json` is.
        hook_settings: Some(|file, env| match file.file_name() {
            Some(name) if name == ".mcp.json" => file
                .parent()
                .unwrap_or(Path::new(""))
                .join(".claude")
                .join("settings.json"),
            _ => env
                .claude_config_dir
                .clone()
                .unwrap_or_else(|| env.home.join(".claude"))
                .join("settings.json"),
        }),
    },
    HostDef {
        name: "cursor",
        maps: &[&["mcpServers"]],
        url_key: "url",
        files: &[("mcp.json", &[".cursor"])],
        paths: |env| {
            vec![
                env.home.join(".cursor").join("mcp.json"),
                env.cwd.join(".cursor").join("mcp.json"),
            ]
        },
        hook_settings: None,
    },
    // JSONC. `mcp.servers` is where VS Code's settings.json kept servers
    // before mcp.json, for `--config settings.json`.
    HostDef {
        name: "vscode",
        maps: &[&["servers"], &["mcp", "servers"]],
        url_key: "url",
        files: &[("mcp.json", &[".vscode", "User"])],
        paths: |env| {
            vec![
                env.config_root().join("Code").join("User").join("mcp.json"),
                env.config_root()
                    .join("Code - Insiders")
                    .join("User")
                    .join("mcp.json"),
                env.cwd.join(".vscode").join("mcp.json"),
            ]
        },
        hook_settings: None,
    },
    HostDef {
        name: "windsurf",
        maps: &[&["mcpServers"]],
        url_key: "serverUrl",
        files: &[("mcp_config.json", &[])],
        paths: |env| vec![env.home.join(".codeium").join("windsurf").join("mcp_config.json")],
        hook_settings: None,
    },
];

/// Every place a configuration of unknown origin may list servers.
pub const ANY_MAPS: &[MapPath] = &[
    &["mcpServers"],
    &["servers"],
    &["projects", "*", "mcpServers"],
    &["mcp", "servers"],
];

/// An MCP host whose configuration `wrap` edits: an entry of [`HOSTS`].
/// Hosts compare and sort in the table's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Host(usize);

impl Host {
    /// Every host, in the order they are reported.
    pub fn all() -> Vec<Host> {
        (0..HOSTS.len()).map(Host).collect()
    }

    /// The host `--host NAME` names.
    pub fn named(name: &str) -> Option<Host> {
        HOSTS.iter().position(|host| host.name == name).map(Host)
    }

    fn def(self) -> &'static HostDef {
        &HOSTS[self.0]
    }

    /// The name `--host` takes.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Where its files list servers.
    pub fn maps(self) -> &'static [MapPath] {
        self.def().maps
    }

    /// How it spells what differs between hosts.
    pub fn dialect(self) -> Dialect {
        Dialect {
            url_key: self.def().url_key,
        }
    }

    /// The host a file belongs to, told by its name and folder.
    pub fn of_path(path: &Path) -> Option<Host> {
        let name = path.file_name()?.to_str()?;
        let folder = path.parent().and_then(Path::file_name).and_then(|f| f.to_str());
        let is = |def: &HostDef| {
            def.files.iter().any(|(file, folders)| {
                *file == name && (folders.is_empty() || folder.is_some_and(|f| folders.contains(&f)))
            })
        };
        HOSTS.iter().position(is).map(Host)
    }
}

/// An operating system's layout of configuration folders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// XDG: `$XDG_CONFIG_HOME`, else `~/.config`.
    Linux,
    /// `~/Library/Application Support`.
    MacOs,
    /// `%APPDATA%`, else `~\AppData\Roaming`.
    Windows,
}

/// What discovery reads from the machine, gathered in one place.
#[derive(Clone, Debug)]
pub struct Environment {
    /// The operating system.
    pub platform: Platform,
    /// The user's home directory.
    pub home: PathBuf,
    /// The working directory: the project whose files are found.
    pub cwd: PathBuf,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (Linux).
    pub xdg_config_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, where Claude Code then keeps `.claude.json`.
    pub claude_config_dir: Option<PathBuf>,
}

impl Environment {
    /// This machine's.
    pub fn current() -> Result<Environment, String> {
        let platform = if cfg!(target_os = "macos") {
            Platform::MacOs
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        };
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = match platform {
            Platform::Windows => var("USERPROFILE").or_else(|| var("HOME")),
            _ => var("HOME"),
        }
        .ok_or("cannot tell the home directory (HOME is not set); name the file with --config")?;
        let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
        Ok(Environment {
            platform,
            home,
            cwd,
            appdata: var("APPDATA"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
        })
    }

    /// Where applications keep per-user settings on this platform.
    fn config_root(&self) -> PathBuf {
        match self.platform {
            Platform::Linux => self
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
            Platform::MacOs => self.home.join("Library").join("Application Support"),
            Platform::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData").join("Roaming")),
        }
    }
}

/// A configuration file and the host it belongs to (`None`: unknown, every
/// place servers may be listed is read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigFile {
    /// Whose it is.
    pub host: Option<Host>,
    /// Where it is.
    pub path: PathBuf,
}

impl ConfigFile {
    /// Where its servers are listed.
    pub fn maps(&self) -> &'static [MapPath] {
        self.host.map_or(ANY_MAPS, Host::maps)
    }

    /// How its host spells what differs.
    pub fn dialect(&self) -> Dialect {
        self.host.map_or(Dialect { url_key: "url" }, Host::dialect)
    }

    /// Whether its host runs the Claude Code hook.
    pub fn has_hook(&self) -> bool {
        self.host.is_some_and(|host| host.def().hook_settings.is_some())
    }

    /// The settings file that holds the Claude Code hook for its servers,
    /// when its host runs one.
    pub fn hook_settings(&self, env: &Environment) -> Option<PathBuf> {
        let settings = self.host?.def().hook_settings?;
        Some(settings(&self.path, env))
    }
}

/// Every file `hosts` may keep their servers in, user files first, then
/// the working directory's project files; each path once. Whether a file
/// exists is for the caller to see.
pub fn discover(hosts: &[Host], env: &Environment) -> Vec<ConfigFile> {
    let mut files: Vec<ConfigFile> = Vec::new();
    for &host in hosts {
        for path in paths(host, env) {
            if !files.iter().any(|file| file.path == path) {
                files.push(ConfigFile {
                    host: Some(host),
                    path,
                });
            }
        }
    }
    files
}

fn paths(host: Host, env: &Environment) -> Vec<PathBuf> {
    (host.def().paths)(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str) -> Host {
        Host::named(name).unwrap()
    }

    #[test]
    fn every_host_has_a_name_of_its_own() {
        let names: Vec<&str> = Host::all().into_iter().map(Host::name).collect();
        assert_eq!(
            names,
            ["claude-desktop", "claude-code", "cursor", "vscode", "windsurf"]
        );
        assert_eq!(Host::named("all"), None, "`all` is --host's own");
    }

    fn environment(platform: Platform) -> Environment {
        Environment {
            platform,
            home: PathBuf::from("/home/me"),
            cwd: PathBuf::from("/work/app"),
            appdata: None,
            xdg_config_home: None,
            claude_config_dir: None,
        }
    }

    fn found(env: &Environment) -> Vec<(Option<Host>, String)> {
        discover(&Host::all(), env)
            .into_iter()
            .map(|file| (file.host, file.path.to_string_lossy().replace('\\', "/")))
            .collect()
    }

    fn project_files() -> Vec<(Option<Host>, String)> {
        vec![
            (Some(host("claude-code")), "/work/app/.mcp.json".to_owned()),
            (Some(host("cursor")), "/work/app/.cursor/mcp.json".to_owned()),
            (Some(host("vscode")), "/work/app/.vscode/mcp.json".to_owned()),
        ]
    }

    fn expect(user: &[(Host, &str)]) -> Vec<(Option<Host>, String)> {
        let mut all: Vec<_> = user.iter().map(|(h, p)| (Some(*h), (*p).to_owned())).collect();
        all.extend(project_files());
        all.sort();
        all
    }

    fn sorted(mut files: Vec<(Option<Host>, String)>) -> Vec<(Option<Host>, String)> {
        files.sort();
        files
    }

    #[test]
    fn linux_follows_xdg() {
        let mut env = environment(Platform::Linux);
        assert_eq!(
            sorted(found(&env)),
            expect(&[
                (
                    host("claude-desktop"),
                    "/home/me/.config/Claude/claude_desktop_config.json"
                ),
                (host("claude-code"), "/home/me/.claude.json"),
                (host("cursor"), "/home/me/.cursor/mcp.json"),
                (host("vscode"), "/home/me/.config/Code/User/mcp.json"),
                (host("vscode"), "/home/me/.config/Code - Insiders/User/mcp.json"),
                (host("windsurf"), "/home/me/.codeium/windsurf/mcp_config.json"),
            ])
        );
        env.xdg_config_home = Some(PathBuf::from("/xdg"));
        env.claude_config_dir = Some(PathBuf::from("/claude"));
        let files = found(&env);
        assert!(files.contains(&(
            Some(host("claude-desktop")),
            "/xdg/Claude/claude_desktop_config.json".into()
        )));
        assert!(files.contains(&(Some(host("vscode")), "/xdg/Code/User/mcp.json".into())));
        assert!(files.contains(&(Some(host("claude-code")), "/claude/.claude.json".into())));
    }

    #[test]
    fn macos_uses_application_support() {
        assert_eq!(
            sorted(found(&environment(Platform::MacOs))),
            expect(&[
                (
                    host("claude-desktop"),
                    "/home/me/Library/Application Support/Claude/claude_desktop_config.json"
                ),
                (host("claude-code"), "/home/me/.claude.json"),
                (host("cursor"), "/home/me/.cursor/mcp.json"),
                (
                    host("vscode"),
                    "/home/me/Library/Application Support/Code/User/mcp.json"
                ),
                (
                    host("vscode"),
                    "/home/me/Library/Application Support/Code - Insiders/User/mcp.json"
                ),
                (host("windsurf"), "/home/me/.codeium/windsurf/mcp_config.json"),
            ])
        );
    }

    #[test]
    fn windows_uses_appdata() {
        let mut env = environment(Platform::Windows);
        assert_eq!(
            sorted(found(&env)),
            expect(&[
                (
                    host("claude-desktop"),
                    "/home/me/AppData/Roaming/Claude/claude_desktop_config.json"
                ),
                (host("claude-code"), "/home/me/.claude.json"),
                (host("cursor"), "/home/me/.cursor/mcp.json"),
                (host("vscode"), "/home/me/AppData/Roaming/Code/User/mcp.json"),
                (
                    host("vscode"),
                    "/home/me/AppData/Roaming/Code - Insiders/User/mcp.json"
                ),
                (host("windsurf"), "/home/me/.codeium/windsurf/mcp_config.json"),
            ])
        );
        env.appdata = Some(PathBuf::from("/roaming"));
        assert!(found(&env).contains(&(
            Some(host("claude-desktop")),
            "/roaming/Claude/claude_desktop_config.json".into()
        )));
    }

    #[test]
    fn a_project_in_the_home_is_found_once() {
        let mut env = environment(Platform::Linux);
        env.cwd = env.home.clone();
        let files = found(&env);
        let cursor: Vec<_> = files
            .iter()
            .filter(|(_, p)| p == "/home/me/.cursor/mcp.json")
            .collect();
        assert_eq!(cursor.len(), 1);
    }

    #[test]
    fn claude_code_keeps_its_hook_in_the_settings_of_its_files_scope() {
        let mut env = environment(Platform::Linux);
        let file = |host_name: &str, path: &str| ConfigFile {
            host: Some(host(host_name)),
            path: PathBuf::from(path),
        };
        let user = file("claude-code", "/home/me/.claude.json");
        let project = file("claude-code", "/srv/app/.mcp.json");
        assert_eq!(
            user.hook_settings(&env),
            Some(PathBuf::from("/home/me/.claude/settings.json"))
        );
        assert_eq!(
            project.hook_settings(&env),
            Some(PathBuf::from("/srv/app/.claude/settings.json"))
        );
        env.claude_config_dir = Some(PathBuf::from("/cfg"));
        assert_eq!(
            user.hook_settings(&env),
            Some(PathBuf::from("/cfg/settings.json"))
        );
        assert_eq!(
            file("cursor", "/home/me/.cursor/mcp.json").hook_settings(&env),
            None
        );
        assert!(user.has_hook() && !file("vscode", "/a/.vscode/mcp.json").has_hook());
    }

    #[test]
    fn a_file_names_its_host() {
        let cases = [
            ("/x/claude_desktop_config.json", Some(host("claude-desktop"))),
            ("/home/me/.claude.json", Some(host("claude-code"))),
            ("/app/.mcp.json", Some(host("claude-code"))),
            ("/app/.cursor/mcp.json", Some(host("cursor"))),
            ("/app/.vscode/mcp.json", Some(host("vscode"))),
            ("/c/Code/User/mcp.json", Some(host("vscode"))),
            ("/w/mcp_config.json", Some(host("windsurf"))),
            ("/app/mcp.json", None),
        ];
        for (path, host) in cases {
            assert_eq!(Host::of_path(Path::new(path)), host, "{path}");
        }
    }
}
