//! `mcp-unknown-keys hook claude-code`: a Claude Code `PostToolUse` hook
//! that tells the model, beside the tool's result, which keys of its MCP
//! call the tool never declared, and what they probably meant.
//!
//! The hook sees the call (`tool_input`, exactly as the model wrote it) but
//! no schema: it audits the call against the catalogue the proxy for that
//! server last saw, which `proxy --state-dir DIR` keeps in
//! `DIR/catalogs/NAME.json` (`mcp_unknown_keys_proxy::state`). It says each
//! (tool, key) once per Claude Code session, remembered in
//! `DIR/hook/sessions/` ([`said`]).
//!
//! A hook must never get in the way: on any error, an unknown tool, a
//! server whose catalogue is not kept, or nothing new to say, it exits 0 and
//! prints nothing.

mod claude_code;
mod said;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use mcp_unknown_keys_proxy::state::STATE_DIR_VAR;

/// The command line of `hook`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    host: Host,
}

/// The hosts whose hooks this command speaks.
#[derive(Subcommand, Debug)]
enum Host {
    /// A Claude Code `PostToolUse` hook: reads the hook's JSON input on
    /// stdin and, when the MCP call carried keys its tool never declared,
    /// prints `hookSpecificOutput.additionalContext` naming them.
    ClaudeCode(StateArgs),
}

/// Where the state is.
#[derive(clap::Args, Debug)]
struct StateArgs {
    /// The directory `proxy --state-dir` writes to (default:
    /// $MCP_UNKNOWN_KEYS_STATE_DIR, else $XDG_STATE_HOME/mcp-unknown-keys,
    /// else ~/.local/state/mcp-unknown-keys).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

/// Runs `hook`: always exits 0.
pub(crate) fn run(args: Args) -> ExitCode {
    match args.host {
        Host::ClaudeCode(state) => {
            if let Some(dir) = state.state_dir.or_else(default_state_dir) {
                claude_code::run(&dir);
            }
        }
    }
    ExitCode::SUCCESS
}

/// The state directory when `--state-dir` does not give one:
/// `$MCP_UNKNOWN_KEYS_STATE_DIR`, `$XDG_STATE_HOME/mcp-unknown-keys`, or
/// `~/.local/state/mcp-unknown-keys`.
pub(crate) fn default_state_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = var(STATE_DIR_VAR) {
        return Some(dir.into());
    }
    if let Some(state) = var("XDG_STATE_HOME") {
        return Some(PathBuf::from(state).join("mcp-unknown-keys"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".local/state/mcp-unknown-keys"))
}
