//! `mcp-unknown-keys`: see the arguments a model's tool calls carry that the
//! tools never declared.

#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod audit_cmd;
mod demo;
mod example_server;
mod hook_cmd;
mod proxy_cmd;
mod wrap_cmd;

/// See the arguments a model's tool calls carry that the tools never declared.
#[derive(Parser, Debug)]
#[command(name = "mcp-unknown-keys", version = env!("MCP_UNKNOWN_KEYS_VERSION"), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Put the proxy in front of every MCP server in your hosts'
    /// configurations (Claude Desktop, Claude Code, Cursor, VS Code,
    /// Windsurf).
    Wrap(wrap_cmd::WrapArgs),
    /// Take the proxy out again, restoring each entry as it was.
    Unwrap(wrap_cmd::UnwrapArgs),
    /// Run an MCP server over stdio and stand in its place, byte-exact,
    /// reporting undeclared keys on stderr.
    Proxy(proxy_cmd::Args),
    /// Replay recorded tool calls and transcripts (JSON Lines) offline.
    Audit(audit_cmd::Args),
    /// Run the specification's incident end to end on the example server.
    Demo(demo::Args),
    /// The example MCP server over stdio: small filesystem tools.
    ExampleServer(example_server::Args),
    /// A host's hook: tell the model which keys of its MCP call the tool
    /// never declared (`hook claude-code`, a Claude Code PostToolUse hook).
    Hook(hook_cmd::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Proxy(args) => proxy_cmd::run_proxy(args),
        Command::Audit(args) => audit_cmd::run(args),
        Command::Demo(args) => demo::run(args),
        Command::ExampleServer(args) => example_server::run(args),
        Command::Wrap(args) => wrap_cmd::run_wrap(args),
        Command::Unwrap(args) => wrap_cmd::run_unwrap(args),
        Command::Hook(args) => hook_cmd::run(args),
    }
}
