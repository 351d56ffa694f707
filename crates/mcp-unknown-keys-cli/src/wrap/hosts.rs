//! The hosts, where each keeps its MCP configuration on Linux, macOS and
//! Windows, and how each lists its servers.
//!
//! Discovery is a pure function of an [`Environment`] (platform, home,
//! working directory and the variables that move configurations), so the
//! tests resolve every platform's paths from a home they make up.

use std::path::{Path, PathBuf};

use super::document::MapPath;
use super::entry::Dialect;

/// An MCP host whose configuration `wrap` edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Host {
    /// Claude Desktop: `claude_desktop_config.json`, `mcpServers`.
    ClaudeDesktop,
    /// Claude Code: `~/.claude.json` (user scope, and each project's local
    /// scope under `projects`) and the project's `.mcp.json`.
    ClaudeCode,
    /// Cursor: `~/.cursor/mcp.json` and the project's `.cursor/mcp.json`.
    Cursor,
    /// VS Code: the user profile's `mcp.json` and the workspace's
    /// `.vscode/mcp.json`, `servers`, JSONC.
    Vscode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`.
    Windsurf,
}

/// Every place a configuration of unknown origin may list servers.
pub const ANY_MAPS: &[MapPath] = &[
    &["mcpServers"],
    &["servers"],
    &["projects", "*", "mcpServers"],
    &["mcp", "servers"],
];

impl Host {
    /// Every host, in the order they are reported.
    pub const ALL: [Host; 5] = [
        Host::ClaudeDesktop,
        Host::ClaudeCode,
        Host::Cursor,
        Host::Vscode,
        Host::Windsurf,
    ];

    /// The name `--host` takes.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::Vscode => "vscode",
            Host::Windsurf => "windsurf",
        }
    }

    /// Where its files list servers.
    pub fn maps(self) -> &'static [MapPath] {
        match self {
            Host::ClaudeCode => &[&["mcpServers"], &["projects", "*", "mcpServers"]],
            // `mcp.servers` is where VS Code's settings.json kept them before
            // mcp.json, for `--config settings.json`.
            Host::Vscode => &[&["servers"], &["mcp", "servers"]],
            Host::ClaudeDesktop | Host::Cursor | Host::Windsurf => &[&["mcpServers"]],
        }
    }

    /// How it spells what differs between hosts.
    pub fn dialect(self) -> Dialect {
        Dialect {
            url_key: match self {
                Host::Windsurf => "serverUrl",
                _ => "url",
            },
        }
    }

    /// The host a file belongs to, told by its name and folder.
    pub fn of_path(path: &Path) -> Option<Host> {
        let name = path.file_name()?.to_str()?;
        let folder = path.parent().and_then(Path::file_name).and_then(|f| f.to_str());
        match (name, folder) {
            ("claude_desktop_config.json", _) => Some(Host::ClaudeDesktop),
            (".claude.json" | ".mcp.json", _) => Some(Host::ClaudeCode),
            ("mcp_config.json", _) => Some(Host::Windsurf),
            ("mcp.json", Some(".cursor")) => Some(Host::Cursor),
            ("mcp.json", Some(".vscode" | "User")) => Some(Host::Vscode),
            _ => None,
        }
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
    let home = &env.home;
    let project = &env.cwd;
    match host {
        Host::ClaudeDesktop => vec![
            env.config_root()
                .join("Claude")
                .join("claude_desktop_config.json"),
        ],
        Host::ClaudeCode => vec![
            env.claude_config_dir
                .as_ref()
                .unwrap_or(home)
                .join(".claude.json"),
            project.join(".mcp.json"),
        ],
        Host::Cursor => vec![
            home.join(".cursor").join("mcp.json"),
            project.join(".cursor").join("mcp.json"),
        ],
        Host::Vscode => vec![
            env.config_root().join("Code").join("User").join("mcp.json"),
            env.config_root()
                .join("Code - Insiders")
                .join("User")
                .join("mcp.json"),
            project.join(".vscode").join("mcp.json"),
        ],
        Host::Windsurf => vec![home.join(".codeium").join("windsurf").join("mcp_config.json")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        discover(&Host::ALL, env)
            .into_iter()
            .map(|file| (file.host, file.path.to_string_lossy().replace('\\', "/")))
            .collect()
    }

    fn project_files() -> Vec<(Option<Host>, String)> {
        vec![
            (Some(Host::ClaudeCode), "/work/app/.mcp.json".to_owned()),
            (Some(Host::Cursor), "/work/app/.cursor/mcp.json".to_owned()),
            (Some(Host::Vscode), "/work/app/.vscode/mcp.json".to_owned()),
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
                    Host::ClaudeDesktop,
                    "/home/me/.config/Claude/claude_desktop_config.json"
                ),
                (Host::ClaudeCode, "/home/me/.claude.json"),
                (Host::Cursor, "/home/me/.cursor/mcp.json"),
                (Host::Vscode, "/home/me/.config/Code/User/mcp.json"),
                (Host::Vscode, "/home/me/.config/Code - Insiders/User/mcp.json"),
                (Host::Windsurf, "/home/me/.codeium/windsurf/mcp_config.json"),
            ])
        );
        env.xdg_config_home = Some(PathBuf::from("/xdg"));
        env.claude_config_dir = Some(PathBuf::from("/claude"));
        let files = found(&env);
        assert!(files.contains(&(
            Some(Host::ClaudeDesktop),
            "/xdg/Claude/claude_desktop_config.json".into()
        )));
        assert!(files.contains(&(Some(Host::Vscode), "/xdg/Code/User/mcp.json".into())));
        assert!(files.contains(&(Some(Host::ClaudeCode), "/claude/.claude.json".into())));
    }

    #[test]
    fn macos_uses_application_support() {
        assert_eq!(
            sorted(found(&environment(Platform::MacOs))),
            expect(&[
                (
                    Host::ClaudeDesktop,
                    "/home/me/Library/Application Support/Claude/claude_desktop_config.json"
                ),
                (Host::ClaudeCode, "/home/me/.claude.json"),
                (Host::Cursor, "/home/me/.cursor/mcp.json"),
                (
                    Host::Vscode,
                    "/home/me/Library/Application Support/Code/User/mcp.json"
                ),
                (
                    Host::Vscode,
                    "/home/me/Library/Application Support/Code - Insiders/User/mcp.json"
                ),
                (Host::Windsurf, "/home/me/.codeium/windsurf/mcp_config.json"),
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
                    Host::ClaudeDesktop,
                    "/home/me/AppData/Roaming/Claude/claude_desktop_config.json"
                ),
                (Host::ClaudeCode, "/home/me/.claude.json"),
                (Host::Cursor, "/home/me/.cursor/mcp.json"),
                (Host::Vscode, "/home/me/AppData/Roaming/Code/User/mcp.json"),
                (
                    Host::Vscode,
                    "/home/me/AppData/Roaming/Code - Insiders/User/mcp.json"
                ),
                (Host::Windsurf, "/home/me/.codeium/windsurf/mcp_config.json"),
            ])
        );
        env.appdata = Some(PathBuf::from("/roaming"));
        assert!(found(&env).contains(&(
            Some(Host::ClaudeDesktop),
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
    fn a_file_names_its_host() {
        let cases = [
            ("/x/claude_desktop_config.json", Some(Host::ClaudeDesktop)),
            ("/home/me/.claude.json", Some(Host::ClaudeCode)),
            ("/app/.mcp.json", Some(Host::ClaudeCode)),
            ("/app/.cursor/mcp.json", Some(Host::Cursor)),
            ("/app/.vscode/mcp.json", Some(Host::Vscode)),
            ("/c/Code/User/mcp.json", Some(Host::Vscode)),
            ("/w/mcp_config.json", Some(Host::Windsurf)),
            ("/app/mcp.json", None),
        ];
        for (path, host) in cases {
            assert_eq!(Host::of_path(Path::new(path)), host, "{path}");
        }
    }
}
