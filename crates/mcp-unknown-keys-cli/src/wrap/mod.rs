//! `mcp-unknown-keys wrap` and `unwrap`: put the proxy in front of every
//! MCP server a host is configured with, and take it out again.
//!
//! - [`hosts`] knows where each host keeps its configuration, per platform;
//! - [`jsonc`] reads JSON with comments and keeps every value's position;
//! - [`entry`] decides what becomes of one server entry, as text edits;
//! - [`headers`] keeps a remote server's header values off the command line,
//!   and [`url`] the secret parts of its URL;
//! - [`document`] applies that to every server of one file;
//! - [`edit`] and [`diff`] make the edits and show them;
//! - [`file`] writes safely: backup, then atomic replace;
//! - this module is the command line and the report.
//!
//! A file is edited as text, never re-serialised: comments, whitespace and
//! key order stay as they were. A file the tool cannot read is left alone
//! with an error naming it and the position; the others are still done.

mod diff;
mod document;
mod edit;
mod entry;
mod file;
mod headers;
mod hosts;
mod jsonc;
mod url;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use document::{Action, Outcome, Plan, What};
use hosts::{ConfigFile, Environment, Host};

/// Which files, which servers, and whether to write.
#[derive(clap::Args, Debug)]
pub struct Selection {
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
    clap::builder::PossibleValuesParser::new(hosts::HOSTS.iter().map(|host| host.name).chain([ALL_HOSTS]))
}

impl Selection {
    /// The host `--host` names, unless it is `all`.
    fn chosen(&self) -> Option<Host> {
        Host::named(&self.host)
    }

    /// The hosts whose files to find.
    fn hosts(&self) -> Vec<Host> {
        self.chosen().map_or_else(Host::all, |host| vec![host])
    }
}

/// The command line of `wrap`.
#[derive(clap::Args, Debug)]
pub struct WrapArgs {
    #[command(flatten)]
    selection: Selection,
    /// Give each server `--log DIR/NAME.jsonl` (DIR is created).
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// The proxy's program as hosts will run it. Default: the absolute path
    /// of this binary, which works where a host does not see your shell's
    /// PATH; `--command mcp-unknown-keys` looks it up on PATH (for a
    /// project file the whole team shares).
    #[arg(long, value_name = "PROGRAM")]
    command: Option<String>,
}

/// The command line of `unwrap`.
#[derive(clap::Args, Debug)]
pub struct UnwrapArgs {
    #[command(flatten)]
    selection: Selection,
}

/// Runs `wrap`: exits 0 when every file found was done, 2 when one could
/// not be read or written (the others are still done).
pub fn run_wrap(args: WrapArgs) -> ExitCode {
    let program = match args.command {
        Some(program) => program,
        None => match this_binary() {
            Ok(program) => program,
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
    run(&args.selection, &Mode::Wrap { program, log_dir })
}

/// Runs `unwrap`; exits as `wrap` does.
pub fn run_unwrap(args: UnwrapArgs) -> ExitCode {
    run(&args.selection, &Mode::Unwrap)
}

/// Which command runs, with what it needs for every file.
enum Mode {
    Wrap {
        program: String,
        log_dir: Option<PathBuf>,
    },
    Unwrap,
}

fn run(selection: &Selection, mode: &Mode) -> ExitCode {
    let files = match targets(selection) {
        Ok(files) => files,
        Err(message) => return usage_error(&message),
    };
    let mut failed = false;
    for target in &files {
        let label = match target.host {
            Some(host) => format!("{} ({})", target.path.display(), host.name()),
            None => target.path.display().to_string(),
        };
        match process(target, selection, mode) {
            Ok(report) => eprint!("{label}\n{report}"),
            Err(message) => {
                eprintln!("mcp-unknown-keys: {label}: {message}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The files to edit: those named, or those the hosts have.
fn targets(selection: &Selection) -> Result<Vec<ConfigFile>, String> {
    let chosen = selection.chosen();
    if !selection.configs.is_empty() {
        return Ok(selection
            .configs
            .iter()
            .map(|path| ConfigFile {
                host: chosen.or_else(|| Host::of_path(path)),
                path: path.clone(),
            })
            .collect());
    }
    let environment = Environment::current()?;
    let candidates = hosts::discover(&selection.hosts(), &environment);
    let existing: Vec<ConfigFile> = candidates
        .iter()
        .filter(|file| file.path.is_file())
        .cloned()
        .collect();
    if existing.is_empty() {
        let looked: Vec<String> = candidates
            .iter()
            .map(|f| format!("  {}", f.path.display()))
            .collect();
        eprintln!("no MCP configuration found; looked for:\n{}", looked.join("\n"));
    }
    Ok(existing)
}

/// Plans one file and, unless this is a dry run, writes it; returns the
/// report's lines.
fn process(target: &ConfigFile, selection: &Selection, mode: &Mode) -> Result<String, String> {
    let config = file::read(&target.path)?;
    let backups;
    let action = match mode {
        Mode::Wrap { program, log_dir } => Action::Wrap {
            program,
            log_dir: log_dir.as_deref(),
        },
        Mode::Unwrap => {
            backups = file::backups(&config);
            Action::Unwrap { backups: &backups }
        }
    };
    let plan = document::plan(
        &config.text,
        target.maps(),
        target.dialect(),
        &action,
        &selection.servers,
    )
    .map_err(|fault| {
        let (line, column) = jsonc::position(&config.text, fault.offset);
        format!("line {line}, column {column}: {fault}; left as it is")
    })?;
    let mut report = servers_report(&plan);
    let new_text = edit::apply(&config.text, &plan.edits);
    if new_text == config.text {
        report.push_str("  nothing to change\n");
    } else if selection.dry_run {
        print!(
            "{}",
            diff::unified(&config.path.display().to_string(), &config.text, &plan.edits)
        );
        report.push_str("  dry run: nothing written\n");
        if let Err(refusal) = file::writable(&config) {
            report.push_str(&format!("  without --dry-run, refused: {refusal}\n"));
        }
    } else {
        let backup = file::write(&config, &new_text)?;
        report.push_str(&format!("  backup: {}\n", backup.display()));
    }
    Ok(report)
}

fn servers_report(plan: &Plan) -> String {
    if plan.servers.is_empty() {
        return "  no servers\n".to_owned();
    }
    plan.servers
        .iter()
        .map(|Outcome { place, what }| {
            let what = match what {
                What::Wrapped => "wrapped".to_owned(),
                What::AlreadyWrapped => "already wrapped".to_owned(),
                What::NotWrapped => "not wrapped".to_owned(),
                What::Restored => "unwrapped (restored from its backup)".to_owned(),
                What::Rebuilt => "unwrapped (rebuilt from the proxy's arguments)".to_owned(),
                What::Skipped(reason) => format!("skipped: {reason}"),
            };
            format!("  {place}: {what}\n")
        })
        .collect()
}

/// This binary's absolute path, for hosts to run.
fn this_binary() -> Result<String, String> {
    let path = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot tell where this binary is ({e}); name it with --command"))?;
    path.into_os_string().into_string().map_err(|path| {
        format!(
            "{} is not UTF-8; name the binary with --command",
            Path::new(&path).display()
        )
    })
}

fn absolute(path: PathBuf) -> Result<PathBuf, String> {
    std::path::absolute(&path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("mcp-unknown-keys: {message}");
    ExitCode::from(2)
}
