//! `mcp-unknown-keys audit`: replays recorded calls offline through one
//! auditor, so the rules hold exactly as in the layer and the proxy.
//!
//! The input is JSON Lines, from the files named or from stdin. Each line is
//! recognised by its shape ([`shapes`]): a catalogue (replacing the current
//! one), OpenAI calls alone or in batches or in a chat message, a JSON-RPC
//! `tools/call` request, a Claude Code transcript line, a Codex rollout line,
//! or a warning the proxy logged. The replay ([`replay`]) audits each call
//! against the catalogue of that moment and prints each warning as it is
//! raised (`--format jsonl`), or counts everything for a readable report
//! (`--format text`, [`report`]).
//!
//! Decisions a recording leaves open, made here:
//!
//! - **Paginated listings.** A `tools/list` response (`result.tools`)
//!   replaces the catalogue, unless the previous listing was a page with a
//!   `nextCursor`: it then extends it, as a further page of the same listing.
//!   A response with an `error` keeps the catalogue; the list-changed
//!   notification drops it until the next listing, as in the proxy.
//! - **The proxy's `--log`.** A logged warning is said again through the
//!   auditor, against the declaration it records: a pair repeated across
//!   logs (one proxy run after another) is said once, `--allow` applies, and
//!   the text report counts each logged warning as one call carrying its
//!   keys (the log holds first occurrences only).
//! - **Lines.** Blank lines are passed over uncounted; a line that is not
//!   JSON (or not UTF-8) is counted as unreadable and named on stderr, with
//!   its file and line number; JSON of no known shape is counted as skipped.
//!
//! Memory holds one line, the catalogue and the distinct (tool, key) pairs:
//! never the input.

mod catalogue;
mod input;
mod replay;
mod report;
mod shapes;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use input::Input;
use replay::Replay;
use shapes::Read;

/// The command line of `audit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The catalogue to start from: a JSON array of tools (OpenAI function
    /// declarations or MCP tools), an object with a `tools` array, or a
    /// `tools/list` response. Without it, catalogues come from the input.
    #[arg(long, value_name = "CATALOGUE")]
    tools: Option<PathBuf>,
    /// A key tolerated on every tool, besides `reason` (repeatable): for keys
    /// a host or middleware injects.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// `jsonl`: each warning as a JSON line, as it is raised. `text`: a
    /// readable report with counts, at the end.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Exit with status 1 when any warning was raised, for a CI gate.
    #[arg(long)]
    fail_on_warning: bool,
    /// JSON Lines files to audit, in order (`-` is stdin). Without any, stdin.
    #[arg(value_name = "INPUT")]
    inputs: Vec<PathBuf>,
}

/// How the findings are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// One JSON line per warning.
    Jsonl,
    /// A readable report with counts.
    Text,
}

/// Runs `audit`: 0, or 1 with `--fail-on-warning` when a warning was raised;
/// 2 for a usage error, an unreadable catalogue or input.
pub fn run(args: Args) -> ExitCode {
    match audit(&args) {
        Ok(warnings) if warnings > 0 && args.fail_on_warning => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("mcp-unknown-keys audit: {message}");
            ExitCode::from(2)
        }
        // The reader of stdout went away (`| head`): nothing more to say,
        // but a gate still learns whether a warning was raised.
        Err(Failure::Closed { warned }) if warned && args.fail_on_warning => ExitCode::from(1),
        Err(Failure::Closed { .. }) => ExitCode::SUCCESS,
    }
}

enum Failure {
    /// A usage error, or a catalogue or input that cannot be read: the
    /// message says which and why.
    Usage(String),
    /// Stdout was closed by its reader.
    Closed { warned: bool },
}

fn output_error(error: io::Error, warned: bool) -> Failure {
    if error.kind() == io::ErrorKind::BrokenPipe {
        Failure::Closed { warned }
    } else {
        Failure::Usage(format!("cannot write the output: {error}"))
    }
}

/// Audits every input and returns how many warnings were raised.
fn audit(args: &Args) -> Result<u64, Failure> {
    let catalog = args
        .tools
        .as_deref()
        .map(catalogue::read_file)
        .transpose()
        .map_err(Failure::Usage)?;
    // Every input is opened first, so a misspelt name fails before any output.
    let inputs = if args.inputs.is_empty() {
        vec![Input::stdin()]
    } else {
        args.inputs
            .iter()
            .map(|path| Input::open(path))
            .collect::<Result<_, _>>()
            .map_err(Failure::Usage)?
    };
    let stdout = io::stdout().lock();
    let jsonl = (args.format == Format::Jsonl).then_some(stdout);
    let mut replay = Replay::new(catalog, &args.allow, jsonl);
    for input in inputs {
        replay_input(input, &mut replay)?;
    }
    if args.format == Format::Text {
        let mut out = io::stdout().lock();
        report::write_text(&replay.tally, &mut out)
            .and_then(|()| out.flush())
            .map_err(|e| output_error(e, replay.tally.warnings > 0))?;
    }
    Ok(replay.tally.warnings)
}

fn replay_input<W: Write>(input: Input, replay: &mut Replay<W>) -> Result<(), Failure> {
    let name = input.name.clone();
    let read = input.for_each_line(|line, number, progress| {
        let read = match std::str::from_utf8(line) {
            Ok(line) => shapes::read_line(line, replay),
            Err(_) => Read::Unreadable,
        };
        let tally = &mut replay.tally;
        match read {
            Read::Blank => return,
            Read::Used => {}
            Read::Skipped => tally.skipped_lines += 1,
            Read::Unreadable => {
                tally.unreadable_lines += 1;
                progress.clear();
                eprintln!("mcp-unknown-keys audit: {name}:{number}: not JSON, counted as unreadable");
            }
        }
        tally.lines += 1;
    });
    read.map_err(|e| Failure::Usage(format!("cannot read the input {name}: {e}")))?;
    match replay.take_write_error() {
        Some(error) => Err(output_error(error, replay.tally.warnings > 0)),
        None => Ok(()),
    }
}
