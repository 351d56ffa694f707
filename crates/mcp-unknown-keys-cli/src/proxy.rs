//! `mcp-unknown-keys proxy`.

use std::process::ExitCode;

/// The command line of `proxy`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `proxy`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("mcp-unknown-keys: proxy is not built yet");
    ExitCode::from(2)
}
