//! `wrap` and `unwrap`: put the mcp-unknown-keys proxy in front of every
//! MCP server a host is configured with, and take it out again.
//!
//! - [`hosts`] knows where each host keeps its configuration, per platform
//!   (one [`HostDef`](hosts::HostDef) entry per host in its `HOSTS` table);
//! - [`jsonc`] reads JSON with comments and keeps every value's position;
//! - `entry` decides what becomes of one server entry, as text edits;
//! - `headers` keeps a remote server's header values off the command line,
//!   and `url` the secret parts of its URL;
//! - `document` applies that to every server of one file;
//! - `edit` and `diff` make the edits and show them, and `redact` what a
//!   diff may show of a configuration: no secret;
//! - `file` writes safely: backup, then atomic replace;
//! - [`hook`] adds the Claude Code hook to a settings file, and takes it
//!   out;
//! - [`launch`] tells how hosts should start the proxy, from where this
//!   binary was installed;
//! - this module finds the files ([`targets`]) and does one ([`process`]),
//!   and the hook's settings files ([`hook_settings`], [`process_hook`]).
//!
//! A file is edited as text, never re-serialised: comments, whitespace and
//! key order stay as they were. A file the tool cannot read is left alone
//! with an error naming it and the position; the others are still done.
//! The command line is the CLI's; nothing here prints.

#![forbid(unsafe_code)]
#![warn(unreachable_pub)]
#![warn(missing_docs)]

mod diff;
mod document;
mod edit;
mod entry;
mod file;
mod headers;
pub mod hook;
pub mod hosts;
pub mod jsonc;
pub mod launch;
mod redact;
mod url;

use std::path::{Path, PathBuf};

use document::{Action, Outcome, Plan, What};
use hosts::{ConfigFile, Environment, Host};
use std::collections::BTreeSet;

/// Which command runs, with what it needs for every file.
#[derive(Debug)]
pub enum Mode {
    /// Put the proxy in front of each server.
    Wrap {
        /// The proxy's program as hosts will run it.
        program: String,
        /// The program's arguments before `proxy` (a launcher's).
        program_args: Vec<String>,
        /// Give each server `--log DIR/NAME.jsonl`.
        log_dir: Option<PathBuf>,
        /// Install the Claude Code hook reading this state directory, and
        /// give Claude Code's servers `--state-dir` it.
        state_dir: Option<PathBuf>,
    },
    /// Take the proxy out again.
    Unwrap,
}

/// The files a run edits.
#[derive(Debug)]
pub struct Targets {
    /// The files to edit.
    pub files: Vec<ConfigFile>,
    /// Where the hosts' files were looked for, when none was found.
    pub looked: Vec<PathBuf>,
}

/// The files to edit: `configs` when named (each file's host told by
/// `host`, else by its name), else every existing file of `hosts`.
pub fn targets(configs: &[PathBuf], host: Option<Host>, hosts: &[Host]) -> Result<Targets, String> {
    if !configs.is_empty() {
        let files = configs
            .iter()
            .map(|path| ConfigFile {
                host: host.or_else(|| Host::of_path(path)),
                path: path.clone(),
            })
            .collect();
        return Ok(Targets {
            files,
            looked: Vec::new(),
        });
    }
    let environment = Environment::current()?;
    let candidates = hosts::discover(hosts, &environment);
    let files: Vec<ConfigFile> = candidates
        .iter()
        .filter(|file| file.path.is_file())
        .cloned()
        .collect();
    let looked = if files.is_empty() {
        candidates.into_iter().map(|file| file.path).collect()
    } else {
        Vec::new()
    };
    Ok(Targets { files, looked })
}

/// What became of one file.
#[derive(Debug)]
pub struct Done {
    /// The report's lines: one per server, then the backup or why nothing
    /// was written.
    pub report: String,
    /// On a dry run that would change the file: the unified diff.
    pub diff: Option<String>,
}

/// Plans one file and, unless `dry_run`, writes it (a backup first), for
/// the servers named in `servers` (all when empty).
pub fn process(target: &ConfigFile, mode: &Mode, servers: &[String], dry_run: bool) -> Result<Done, String> {
    let config = file::read(&target.path)?;
    let backups;
    let action = match mode {
        Mode::Wrap {
            program,
            program_args,
            log_dir,
            state_dir,
        } => Action::Wrap {
            program,
            program_args,
            log_dir: log_dir.as_deref(),
            state_dir: state_dir.as_deref().filter(|_| target.has_hook()),
        },
        Mode::Unwrap => {
            backups = file::backups(&config);
            Action::Unwrap { backups: &backups }
        }
    };
    let plan =
        document::plan(&config.text, target.maps(), target.dialect(), &action, servers).map_err(|fault| {
            let (line, column) = jsonc::position(&config.text, fault.offset);
            format!("line {line}, column {column}: {fault}; left as it is")
        })?;
    let mut report = servers_report(&plan);
    let mut diff = None;
    let new_text = edit::apply(&config.text, &plan.edits);
    if new_text == config.text {
        report.push_str("  nothing to change\n");
    } else if dry_run {
        diff = Some(dry_run_diff(target, &config.text, &new_text, &plan.edits));
        report.push_str("  dry run: nothing written\n");
        if let Err(refusal) = file::writable(&config) {
            report.push_str(&format!("  without --dry-run, refused: {refusal}\n"));
        }
    } else {
        let backup = file::write(&config, &new_text)?;
        report.push_str(&format!("  backup: {}\n", backup.display()));
    }
    Ok(Done { report, diff })
}

/// The settings files that hold the Claude Code hook for `files` (those of
/// a host that runs it), each once, in order.
pub fn hook_settings(files: &[&ConfigFile]) -> Result<Vec<PathBuf>, String> {
    if !files.iter().any(|file| file.has_hook()) {
        return Ok(Vec::new());
    }
    let environment = Environment::current()?;
    let mut seen = BTreeSet::new();
    Ok(files
        .iter()
        .filter_map(|file| file.hook_settings(&environment))
        .filter(|path| seen.insert(path.clone()))
        .collect())
}

/// Adds the Claude Code hook to the settings file at `path` (`Mode::Wrap`
/// with a state directory; the file is created when missing), or takes
/// wrap's out (`Mode::Unwrap`); unless `dry_run`, writes it, a backup
/// first. `None`: nothing to do or say (no hook asked for, or none to
/// take out).
pub fn process_hook(path: &Path, mode: &Mode, dry_run: bool) -> Result<Option<Done>, String> {
    let config = file::read_if_present(path)?;
    let text = config.as_ref().map_or("", |config| config.text.as_str());
    let plan = match mode {
        Mode::Wrap {
            program,
            program_args,
            state_dir: Some(state_dir),
            ..
        } => hook::install(
            text,
            &hook::Hook {
                program: program.clone(),
                program_args: program_args.clone(),
                state_dir: state_dir.to_string_lossy().into_owned(),
            },
        ),
        Mode::Wrap { state_dir: None, .. } => return Ok(None),
        Mode::Unwrap => hook::remove(text),
    }
    .map_err(|fault| {
        let (line, column) = jsonc::position(text, fault.offset);
        format!("line {line}, column {column}: {fault}; left as it is, the hook not changed")
    })?;
    let mut report = match plan.change {
        hook::Change::Installed => format!(
            "  claude-code hook: installed ({} {})\n",
            hook::EVENT,
            hook::MATCHER
        ),
        hook::Change::AlreadyInstalled => "  claude-code hook: already installed\n".to_owned(),
        hook::Change::Removed(_) => "  claude-code hook: removed\n".to_owned(),
        hook::Change::NotInstalled => return Ok(None),
    };
    let new_text = edit::apply(text, &plan.edits);
    let mut diff = None;
    if new_text == text {
        report.push_str("  nothing to change\n");
    } else if dry_run {
        let label = path.display().to_string();
        diff = Some(
            match (redact::shown_settings(text), redact::shown_settings(&new_text)) {
                (Some(old), Some(new)) => {
                    diff::unified(&label, text, &plan.edits, &diff::Shown { old: &old, new: &new })
                }
                _ => format!(
                    "--- {label}\n+++ {label}\n(the change cannot be shown without the values it holds)\n"
                ),
            },
        );
        report.push_str("  dry run: nothing written\n");
    } else {
        match &config {
            Some(config) => {
                let backup = file::write(config, &new_text)?;
                report.push_str(&format!("  backup: {}\n", backup.display()));
            }
            None => {
                file::create(path, &new_text)?;
                report.push_str("  created\n");
            }
        }
    }
    Ok(Some(Done { report, diff }))
}

/// The diff a dry run prints, every value that may be a secret shown as
/// the variable that holds it (or `***`): a terminal, a CI log or a pasted
/// issue is no place for the keys a configuration holds.
fn dry_run_diff(target: &ConfigFile, text: &str, new_text: &str, edits: &[edit::Edit]) -> String {
    let label = target.path.display().to_string();
    match (
        redact::shown(text, target.maps()),
        redact::shown(new_text, target.maps()),
    ) {
        (Some(old), Some(new)) => diff::unified(&label, text, edits, &diff::Shown { old: &old, new: &new }),
        // Never so: both texts were just read. Better no diff than a secret.
        _ => format!("--- {label}\n+++ {label}\n(the change cannot be shown without the values it holds)\n"),
    }
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
                What::StateDirAdded => {
                    "already wrapped; --state-dir added, for the Claude Code hook".to_owned()
                }
                What::NotWrapped => "not wrapped".to_owned(),
                What::Restored => "unwrapped (restored from its backup)".to_owned(),
                What::Rebuilt => "unwrapped (rebuilt from the proxy's arguments)".to_owned(),
                What::Skipped(reason) => format!("skipped: {reason}"),
            };
            format!("  {place}: {what}\n")
        })
        .collect()
}

/// How hosts should start this binary as the proxy: see [`launch`].
pub fn this_launch() -> Result<launch::Launch, String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot tell where this binary is ({e}); name it with --command"))?;
    if exe.to_str().is_none() {
        return Err(format!(
            "{} is not UTF-8; name the binary with --command",
            exe.display()
        ));
    }
    let path = std::env::var_os("PATH");
    let uv_cache_dir = std::env::var_os("UV_CACHE_DIR").map(PathBuf::from);
    let real_path = |path: &Path| std::fs::canonicalize(path).ok().filter(|real| real.is_file());
    let around = launch::Surroundings {
        path: path.as_deref(),
        uv_cache_dir: uv_cache_dir.as_deref(),
        version: env!("CARGO_PKG_VERSION"),
        real_path: &real_path,
    };
    Ok(launch::launch(&exe, &around))
}
