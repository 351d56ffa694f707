//! `mcp-unknown-keys demo`.

use std::process::ExitCode;

/// The command line of `demo`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `demo`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("mcp-unknown-keys: demo is not built yet");
    ExitCode::from(2)
}
