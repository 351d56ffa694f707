//! `mcp-unknown-keys audit`.

use std::process::ExitCode;

/// The command line of `audit`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `audit`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("mcp-unknown-keys: audit is not built yet");
    ExitCode::from(2)
}
