//! `wrap --claude-code-hook` and `unwrap` on Claude Code's settings: the
//! `PostToolUse` hook added to the settings of each Claude Code file's
//! scope, the servers given the `--state-dir` it reads, and both taken out
//! again, every other byte kept. Real files under a home and a project the
//! test makes.

use crate::hook_claude_code;
use crate::support;
use crate::wrap_support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::{Session, list_request};
use wrap_support::{backups, command, fixture, succeeded, text};

/// A home holding Claude Code's user file, and a project (the working
/// directory), under one scratch folder.
struct Machine {
    _root: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Machine {
    fn new() -> Machine {
        let root = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(root.path()).unwrap().join("home");
        let project = home.parent().unwrap().join("project");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&project).unwrap();
        fs::write(home.join(".claude.json"), fixture("claude-code-user.json")).unwrap();
        Machine {
            _root: root,
            home,
            project,
        }
    }

    /// Runs the binary with this home and project, `vars` set besides.
    fn run(&self, args: &[&str], vars: &[(&str, &Path)]) -> Output {
        let mut command = command(args);
        command.env("HOME", &self.home).current_dir(&self.project);
        for (name, value) in vars {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    fn wrap(&self, extra: &[&str]) -> Output {
        let mut args = WRAP_WITH_HOOK.to_vec();
        args.extend(extra);
        self.run(&args, &[])
    }

    fn unwrap(&self) -> Output {
        self.run(&["unwrap", "--host", "claude-code"], &[])
    }

    fn settings(&self) -> PathBuf {
        self.home.join(".claude").join("settings.json")
    }

    fn state_dir(&self) -> String {
        self.home
            .join(".local/state/mcp-unknown-keys")
            .to_string_lossy()
            .into_owned()
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&text(path)).unwrap()
}

/// `wrap` of Claude Code's files with the hook, the proxy's program as
/// named (not this build's path).
const WRAP_WITH_HOOK: [&str; 6] = [
    "wrap",
    "--host",
    "claude-code",
    "--command",
    "mcp-unknown-keys",
    "--claude-code-hook",
];

/// The hook entry wrap writes, reading `state_dir`: one shell line, as
/// every Claude Code runs it.
fn wraps_hook(state_dir: &str) -> Value {
    json!({
        "matcher": "mcp__.*",
        "hooks": [{
            "type": "command",
            "command": format!("mcp-unknown-keys hook claude-code --state-dir {}", sh_quoted(state_dir)),
            "timeout": 10
        }]
    })
}

/// `word` quoted for `sh` when it needs to be, as wrap quotes it.
fn sh_quoted(word: &str) -> String {
    if word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./=:@%+,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Each wrapped server's `--state-dir`, by name.
fn state_dirs(config: &Value) -> Vec<(String, Option<String>)> {
    let mut servers: Vec<(&String, &Value)> = config["mcpServers"].as_object().unwrap().iter().collect();
    servers.extend(
        config["projects"]["/home/me/app"]["mcpServers"]
            .as_object()
            .unwrap(),
    );
    servers
        .into_iter()
        .map(|(name, entry)| {
            let args: Vec<&str> = entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let dir = args
                .iter()
                .position(|a| *a == "--state-dir")
                .map(|i| args[i + 1].to_owned());
            (name.clone(), dir)
        })
        .collect()
}

#[test]
fn the_hook_goes_in_the_user_settings_and_the_servers_keep_state_where_it_reads() {
    let machine = Machine::new();
    let report = succeeded(&machine.wrap(&[]));
    let settings = machine.settings();
    assert!(
        report.contains(&format!(
            "{} (claude-code settings)\n  claude-code hook: installed (PostToolUse mcp__.*)\n  created\n",
            settings.display()
        )),
        "{report}"
    );
    assert_eq!(
        json(&settings),
        json!({"hooks": {"PostToolUse": [wraps_hook(&machine.state_dir())]}})
    );
    let dirs = state_dirs(&json(&machine.home.join(".claude.json")));
    assert_eq!(dirs.len(), 3);
    for (name, dir) in dirs {
        assert_eq!(dir.as_deref(), Some(machine.state_dir().as_str()), "{name}");
    }
}

#[test]
fn the_state_directory_follows_the_environment_wrap_runs_in() {
    let machine = Machine::new();
    let config_dir = machine.home.join("claude-config");
    fs::create_dir_all(&config_dir).unwrap();
    fs::rename(machine.home.join(".claude.json"), config_dir.join(".claude.json")).unwrap();
    let xdg = machine.home.join("xdg-state");
    let args = WRAP_WITH_HOOK;
    succeeded(&machine.run(
        &args,
        &[("CLAUDE_CONFIG_DIR", &config_dir), ("XDG_STATE_HOME", &xdg)],
    ));
    let dir = xdg.join("mcp-unknown-keys").to_string_lossy().into_owned();
    assert_eq!(
        json(&config_dir.join("settings.json")),
        json!({"hooks": {"PostToolUse": [wraps_hook(&dir)]}})
    );
    assert!(
        !machine.settings().exists(),
        "CLAUDE_CONFIG_DIR holds the settings"
    );
    for (name, found) in state_dirs(&json(&config_dir.join(".claude.json"))) {
        assert_eq!(found.as_deref(), Some(dir.as_str()), "{name}");
    }
}

/// The proxy as the wrapped entry runs it keeps the listing where the hook,
/// as the settings run it, reads: the hook tells the model of the key.
#[test]
fn the_wrapped_proxy_and_the_installed_hook_meet() {
    let machine = Machine::new();
    let mcp = machine.project.join(".mcp.json");
    fs::write(&mcp, r#"{"mcpServers": {"files": {"command": "cat"}}}"#).unwrap();
    let binary = support::binary();
    let args = [
        "wrap",
        "--host",
        "claude-code",
        "--command",
        &binary,
        "--claude-code-hook",
    ];
    succeeded(&machine.run(&args, &[]));
    let entry = &json(&mcp)["mcpServers"]["files"];
    assert_eq!(entry["command"], binary.as_str());
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // The entry's own arguments, started as the tests start a proxy.
    let end = args.iter().position(|a| *a == "--").unwrap();
    assert_eq!(args[0], "proxy");
    let mut options = vec!["--quiet"];
    options.extend(&args[1..end]);
    let mut proxy = Session::start(&options, &args[end + 1..]);
    proxy.echo(&list_request("1", None));
    proxy.echo(hook_claude_code::LISTING);
    let catalog = Path::new(&machine.state_dir()).join("catalogs/files.json");
    hook_claude_code::wait_for(&catalog, true);

    let settings = json(&machine.project.join(".claude/settings.json"));
    let handler = &settings["hooks"]["PostToolUse"][0]["hooks"][0];
    // As Claude Code runs a command hook: its line, by the shell.
    let mut hook = std::process::Command::new("sh");
    hook.arg("-c").arg(handler["command"].as_str().unwrap());
    // Claude Code's environment need not be wrap's: the directory is named.
    hook.env("HOME", machine.home.join("elsewhere"));
    let input = hook_claude_code::fixture("post_tool_use_mcp.json");
    let (code, stdout, _) = hook_claude_code::run(hook, &input);
    assert_eq!(code, Some(0));
    let expected: Value = serde_json::from_str(&hook_claude_code::fixture("expected_output.json")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap(), expected);
    proxy.finish();
}

#[test]
fn a_projects_servers_get_the_hook_in_the_projects_settings() {
    let machine = Machine::new();
    fs::remove_file(machine.home.join(".claude.json")).unwrap();
    let mcp = machine.project.join(".mcp.json");
    fs::write(&mcp, fixture("claude-code-project.json")).unwrap();
    succeeded(&machine.wrap(&[]));
    let settings = machine.project.join(".claude").join("settings.json");
    assert_eq!(
        json(&settings),
        json!({"hooks": {"PostToolUse": [wraps_hook(&machine.state_dir())]}})
    );
    assert!(
        !machine.settings().exists(),
        "the user's settings are not touched"
    );
    succeeded(&machine.unwrap());
    assert_eq!(text(&mcp), fixture("claude-code-project.json"));
    assert_eq!(text(&settings), "{}\n");
}

#[test]
fn wrapping_twice_installs_the_hook_once() {
    let machine = Machine::new();
    succeeded(&machine.wrap(&[]));
    let settings = text(&machine.settings());
    let config = text(&machine.home.join(".claude.json"));
    let report = succeeded(&machine.wrap(&[]));
    assert!(
        report.contains("claude-code hook: already installed\n  nothing to change\n"),
        "{report}"
    );
    assert_eq!(text(&machine.settings()), settings);
    assert_eq!(text(&machine.home.join(".claude.json")), config);
}

#[test]
fn servers_wrapped_before_get_the_state_directory_when_the_hook_comes() {
    let machine = Machine::new();
    let plain = ["wrap", "--host", "claude-code", "--command", "mcp-unknown-keys"];
    succeeded(&machine.run(&plain, &[]));
    assert!(!machine.settings().exists(), "no hook unless asked for");
    let report = succeeded(&machine.wrap(&[]));
    assert!(
        report.contains("memory: already wrapped; --state-dir added, for the Claude Code hook"),
        "{report}"
    );
    for (name, dir) in state_dirs(&json(&machine.home.join(".claude.json"))) {
        assert_eq!(dir.as_deref(), Some(machine.state_dir().as_str()), "{name}");
    }
    succeeded(&machine.unwrap());
    assert_eq!(
        text(&machine.home.join(".claude.json")),
        fixture("claude-code-user.json")
    );
}

#[test]
fn a_dry_run_shows_the_hook_and_writes_nothing() {
    let machine = Machine::new();
    let output = machine.wrap(&["--dry-run"]);
    let report = succeeded(&output);
    let diff = String::from_utf8(output.stdout).unwrap();
    assert!(!machine.settings().exists(), "{report}");
    assert_eq!(
        text(&machine.home.join(".claude.json")),
        fixture("claude-code-user.json")
    );
    assert!(
        diff.contains(&format!("+++ {}", machine.settings().display())),
        "{diff}"
    );
    assert!(diff.contains("+        \"matcher\": \"mcp__.*\","), "{diff}");
    assert!(
        diff.contains(&format!("\"--state-dir\", \"{}\"", machine.state_dir())),
        "{diff}"
    );
    assert!(
        report.contains(&format!(
            "will keep state in {}, where the hook reads it",
            machine.state_dir()
        )),
        "{report}"
    );

    // An existing file's secrets stay out of the diff.
    let secret = "sk-ant-0123456789";
    let settings =
        format!("{{\n  \"env\": {{\"ANTHROPIC_API_KEY\": \"{secret}\", \"OTHER\": \"{secret}\"}}\n}}\n");
    fs::create_dir_all(machine.settings().parent().unwrap()).unwrap();
    fs::write(machine.settings(), &settings).unwrap();
    let output = machine.wrap(&["--dry-run"]);
    succeeded(&output);
    let diff = String::from_utf8(output.stdout).unwrap();
    assert!(diff.contains("\"PostToolUse\""), "{diff}");
    assert!(!diff.contains(secret), "{diff}");
    assert_eq!(text(&machine.settings()), settings);
    assert!(backups(machine.settings().parent().unwrap()).is_empty());
}

#[test]
fn unwrap_takes_out_the_hook_and_leaves_every_other_setting_and_hook() {
    let machine = Machine::new();
    let original = r#"{
  // the user's own
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "check-bash"}]}
    ],
    "PostToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [{"type": "command", "command": "prettier --write"}]
      }
    ]
  }
}
"#;
    fs::create_dir_all(machine.settings().parent().unwrap()).unwrap();
    fs::write(machine.settings(), original).unwrap();
    let report = succeeded(&machine.wrap(&[]));
    assert!(report.contains("claude-code hook: installed"), "{report}");
    let wrapped = text(&machine.settings());
    assert!(wrapped.starts_with(&original[..original.rfind("      }\n    ]").unwrap()]));
    assert!(wrapped.contains("  // the user's own\n"), "{wrapped}");
    let parsed: Value = without_comments(&wrapped);
    assert_eq!(
        parsed["hooks"]["PostToolUse"][1],
        wraps_hook(&machine.state_dir())
    );
    assert_eq!(parsed["hooks"]["PostToolUse"][0]["matcher"], "Write|Edit");
    assert_eq!(backups(machine.settings().parent().unwrap()).len(), 1);

    let report = succeeded(&machine.unwrap());
    assert!(report.contains("claude-code hook: removed"), "{report}");
    assert_eq!(text(&machine.settings()), original);
    assert_eq!(
        text(&machine.home.join(".claude.json")),
        fixture("claude-code-user.json")
    );

    // Nothing of wrap's left: unwrap again says nothing of the settings.
    let report = succeeded(&machine.unwrap());
    assert!(!report.contains("claude-code settings"), "{report}");
    assert_eq!(text(&machine.settings()), original);
}

#[test]
fn a_partial_unwrap_leaves_the_hook() {
    let machine = Machine::new();
    succeeded(&machine.wrap(&[]));
    let settings = text(&machine.settings());
    succeeded(&machine.run(&["unwrap", "--host", "claude-code", "--server", "memory"], &[]));
    assert_eq!(
        text(&machine.settings()),
        settings,
        "the other servers still need it"
    );
}

#[test]
fn malformed_settings_are_a_clear_error_and_lose_nothing() {
    let machine = Machine::new();
    let broken = "{\n  \"model\": \"opus\",\n  \"hooks\": {\"PostToolUse\": [\n}\n";
    fs::create_dir_all(machine.settings().parent().unwrap()).unwrap();
    fs::write(machine.settings(), broken).unwrap();
    for output in [machine.wrap(&[]), machine.unwrap()] {
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "mcp-unknown-keys: {} (claude-code settings): line 4, column 1:",
                machine.settings().display()
            )),
            "{stderr}"
        );
        assert!(stderr.contains("left as it is, the hook not changed"), "{stderr}");
        assert_eq!(text(&machine.settings()), broken);
        assert!(backups(machine.settings().parent().unwrap()).is_empty());
    }
    let hooks_not_an_object = "{\"hooks\": [\"x\"]}";
    fs::write(machine.settings(), hooks_not_an_object).unwrap();
    let stderr = String::from_utf8_lossy(&machine.wrap(&[]).stderr).into_owned();
    assert!(
        stderr.contains("hooks should be an object, not an array"),
        "{stderr}"
    );
    assert_eq!(text(&machine.settings()), hooks_not_an_object);
}

/// The settings as JSON, their comments taken out (serde_json reads none).
fn without_comments(text: &str) -> Value {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect();
    serde_json::from_str(&lines.join("\n")).unwrap()
}
