//! `mcp-unknown-keys wrap` and `unwrap`: the command line of the
//! `mcp-unknown-keys-wrap` crate, and the report on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_unknown_keys_wrap::hosts::{ConfigFile, HOSTS, Host};
use mcp_unknown_keys_wrap::launch::Launch;
use mcp_unknown_keys_wrap::{Done, Mode, hook_settings, process, process_hook, targets, this_launch};

use crate::hook_cmd::default_state_dir;

/// Which files, which servers, and whether to write.
#[derive(clap::Args, Debug)]
pub(crate) struct Selection {
    /// The host whose configuration files to find (all: every host's).
    #[arg(long, default_value = ALL_HOSTS, value_parser = host_names())]
    host: String,
    /// Edit FILE rather than finding the hosts' files (repeatable). Its
    /// host is told by its name, or by --host.
    #[arg(long = "config", value_name = "FILE")]
    configs: Vec<PathBuf>,
    /// Only the server named NAME (repeatable).
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
    /// Print what would change as a unified diff, and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `--host`'s value for every host.
const ALL_HOSTS: &str = "all";

/// The values `--host` takes: each host's name, and `all`.
fn host_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(HOSTS.iter().map(|host| host.name).chain([ALL_HOSTS]))
}

/// The command line of `wrap`.
#[derive(clap::Args, Debug)]
pub(crate) struct WrapArgs {
    #[command(flatten)]
    selection: Selection,
    /// Give each server `--log DIR/NAME.jsonl` (DIR is created).
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// The proxy's program as hosts will run it. Default: the absolute path
    /// of this binary (of the command on PATH that runs it, when it came
    /// from a wheel or npm), which works where a host does not see your
    /// shell's PATH; `npx -y`/`uvx mcp-unknown-keys@VERSION` when it runs
    /// from npx's or uv's cache. `--command mcp-unknown-keys` looks it up
    /// on PATH (for a project file the whole team shares).
    #[arg(long, value_name = "PROGRAM")]
    command: Option<String>,
    /// Also install the Claude Code hook (`hook claude-code`, after every
    /// MCP tool) in the settings of each Claude Code file's scope
    /// (~/.claude/settings.json, or the project's .claude/settings.json
    /// for its .mcp.json), and give Claude Code's servers `--state-dir`
    /// where it reads: $MCP_UNKNOWN_KEYS_STATE_DIR, else
    /// $XDG_STATE_HOME/mcp-unknown-keys, else
    /// ~/.local/state/mcp-unknown-keys, as now set. `unwrap` takes it out.
    #[arg(long)]
    claude_code_hook: bool,
}

/// The command line of `unwrap`.
#[derive(clap::Args, Debug)]
pub(crate) struct UnwrapArgs {
    #[command(flatten)]
    selection: Selection,
}

/// Runs `wrap`: exits 0 when every file found was done, 2 when one could
/// not be read or written (the others are still done).
pub(crate) fn run_wrap(args: WrapArgs) -> ExitCode {
    let launch = match args.command {
        Some(program) => Launch {
            program,
            args: Vec::new(),
            why: "--command".to_owned(),
        },
        None => match this_launch() {
            Ok(launch) => launch,
            Err(message) => return usage_error(&message),
        },
    };
    let log_dir = match args.log_dir.map(absolute).transpose() {
        Ok(dir) => dir,
        Err(message) => return usage_error(&message),
    };
    if let Some(dir) = log_dir.as_deref().filter(|_| !args.selection.dry_run)
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return usage_error(&format!("cannot create the log directory {}: {e}", dir.display()));
    }
    let state_dir = match args.claude_code_hook.then(hook_state_dir).transpose() {
        Ok(dir) => dir,
        Err(message) => return usage_error(&message),
    };
    if args.selection.dry_run {
        let form: Vec<&str> = std::iter::once(launch.program.as_str())
            .chain(launch.args.iter().map(String::as_str))
            .collect();
        eprintln!("hosts will run the proxy as: {} ({})", form.join(" "), launch.why);
        if let Some(dir) = &state_dir {
            eprintln!(
                "Claude Code's proxies will keep state in {}, where the hook reads it",
                dir.display()
            );
        }
    }
    let mode = Mode::Wrap {
        program: launch.program,
        program_args: launch.args,
        log_dir,
        state_dir,
    };
    run(&args.selection, &mode)
}

/// The state directory the hook reads by default, as this environment
/// sets it, made absolute: written out in full in the proxies' and the
/// hook's arguments, they agree whatever environment Claude Code has.
fn hook_state_dir() -> Result<PathBuf, String> {
    let dir = default_state_dir()
        .ok_or("cannot tell the hook's state directory (HOME is not set); set MCP_UNKNOWN_KEYS_STATE_DIR")?;
    absolute(dir)
}

/// Runs `unwrap`; exits as `wrap` does.
pub(crate) fn run_unwrap(args: UnwrapArgs) -> ExitCode {
    run(&args.selection, &Mode::Unwrap)
}

fn run(selection: &Selection, mode: &Mode) -> ExitCode {
    let chosen = Host::named(&selection.host);
    let hosts = chosen.map_or_else(Host::all, |host| vec![host]);
    let targets = match targets(&selection.configs, chosen, &hosts) {
        Ok(targets) => targets,
        Err(message) => return usage_error(&message),
    };
    if !targets.looked.is_empty() {
        let looked: Vec<String> = targets
            .looked
            .iter()
            .map(|path| format!("  {}", path.display()))
            .collect();
        eprintln!("no MCP configuration found; looked for:\n{}", looked.join("\n"));
    }
    let mut failed = false;
    let mut done_files = Vec::new();
    for target in &targets.files {
        let label = match target.host {
            Some(host) => format!("{} ({})", target.path.display(), host.name()),
            None => target.path.display().to_string(),
        };
        match process(target, mode, &selection.servers, selection.dry_run) {
            Ok(done) => {
                show(&label, done);
                done_files.push(target);
            }
            Err(message) => {
                eprintln!("mcp-unknown-keys: {label}: {message}");
                failed = true;
            }
        }
    }
    failed |= !run_hook(selection, mode, &done_files);
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints what became of one file: the diff on stdout, the report on
/// stderr.
fn show(label: &str, done: Done) {
    if let Some(diff) = done.diff {
        print!("{diff}");
    }
    eprint!("{label}\n{}", done.report);
}

/// Installs (wrap) or takes out (unwrap) the Claude Code hook in the
/// settings of the Claude Code files done; `false` when one failed. A
/// partial unwrap (`--server`) leaves it: other servers still need it.
fn run_hook(selection: &Selection, mode: &Mode, done: &[&ConfigFile]) -> bool {
    let wanted = match mode {
        Mode::Wrap { state_dir, .. } => state_dir.is_some(),
        Mode::Unwrap => selection.servers.is_empty(),
    };
    if !wanted {
        return true;
    }
    let settings = match hook_settings(done) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("mcp-unknown-keys: the Claude Code hook: {message}");
            return false;
        }
    };
    if settings.is_empty() && matches!(mode, Mode::Wrap { .. }) {
        eprintln!("no Claude Code configuration was wrapped: the Claude Code hook was not installed");
    }
    let mut ok = true;
    for path in settings {
        let label = format!("{} (claude-code settings)", path.display());
        match process_hook(&path, mode, selection.dry_run) {
            Ok(Some(done)) => show(&label, done),
            Ok(None) => {}
            Err(message) => {
                eprintln!("mcp-unknown-keys: {label}: {message}");
                ok = false;
            }
        }
    }
    ok
}

fn absolute(path: PathBuf) -> Result<PathBuf, String> {
    std::path::absolute(&path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("mcp-unknown-keys: {message}");
    ExitCode::from(2)
}
