//! `mcp-unknown-keys example_server`.

use std::process::ExitCode;

/// The command line of `example_server`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `example_server`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("mcp-unknown-keys: example_server is not built yet");
    ExitCode::from(2)
}
