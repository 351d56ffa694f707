//! `mcp-unknown-keys audit`: replays recorded tool calls offline through the
//! same auditor as the layer and the proxy, and accounts for every call it
//! finds.
//!
//! The inputs are the logs teams keep, in the shapes of [`shapes::table`]:
//! transcripts (Claude Code, Codex, Gemini CLI), model API request and
//! response bodies (OpenAI Chat Completions and Responses, Anthropic
//! Messages, Gemini, Bedrock Converse), their streams, framework records
//! (LangChain, Vercel AI SDK), OpenTelemetry GenAI spans, MCP JSON-RPC
//! traffic and a proxy's `--log`. [`input`] reads them as they are kept
//! (JSON Lines or one document, plain or compressed), the [`replay`]
//! audits each call against the catalogue of that moment, matching a
//! host's tool names ([`names`]), and every call is counted, audited or
//! unaudited for a named reason: `--format jsonl` ends with a
//! `{"coverage":…}` line, the text report ([`report`]) opens with it.
//!
//! Decisions a recording leaves open, made here:
//!
//! - **Paginated listings.** A `tools/list` response (`result.tools`)
//!   replaces the catalogue, unless the previous listing was a page with a
//!   `nextCursor`: it then extends it, as a further page of the same listing.
//!   A response with an `error` keeps the catalogue; the list-changed
//!   notification drops it until the next listing, as in the proxy.
//! - **Request bodies.** A record with its own `tools` (a request body, a
//!   catalogue line) is a catalogue from there on; its calls meet it.
//! - **Repeated history.** A call read before in the same input (same id,
//!   name and arguments) is not counted again.
//! - **The proxy's `--log`.** A logged warning is said again through the
//!   auditor, so a pair repeated across logs is said once and `--allow`
//!   applies; calls are counted from the log's summary when it has one.
//!
//! Memory holds one line, the catalogues, the distinct (tool, key) pairs
//! and bounded fingerprints of the calls read: never the input (a file that
//! is one JSON document costs its size).

mod catalogue;
mod input;
mod logged;
mod names;
mod replay;
mod report;
mod shapes;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use input::{Input, Record};
use replay::Replay;
use shapes::{Read, Reader};

/// The most unreadable lines named on stderr per input; the rest are
/// counted, and their number said once.
const NAMED_UNREADABLE_LINES: u64 = 10;

/// The command line of `audit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A catalogue of the tools' schemas (repeatable; files merge, a later
    /// one winning a name clash): in any declaration form (MCP, OpenAI,
    /// Anthropic, Gemini, Bedrock), as a JSON array of tools, an object with
    /// a `tools` array, a `tools/list` response, a request body, or JSON
    /// Lines of these. `SERVER=FILE` binds it to one server, whose tools a
    /// host calls `mcp__SERVER__TOOL`. Without it, catalogues come from the
    /// input.
    #[arg(long = "tools", value_name = "[SERVER=]CATALOGUE")]
    tools: Vec<String>,
    /// A key tolerated on every tool, besides `reason` (repeatable): for keys
    /// a host or middleware injects.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// `jsonl`: each warning as a JSON line, as it is raised, then one
    /// `{"coverage":…}` line. `text`: a readable report, opening with the
    /// coverage, at the end.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Exit with status 1 when any warning was raised, for a CI gate.
    #[arg(long)]
    fail_on_warning: bool,
    /// Exit with status 1 when any call went unaudited (no catalogue, an
    /// unlisted tool, a tool declaring nothing, unreadable arguments).
    #[arg(long)]
    fail_on_unaudited: bool,
    /// Files to audit, in order (`-` is stdin): JSON Lines or JSON, plain,
    /// gzip or zstd. Without any, stdin.
    #[arg(value_name = "INPUT")]
    inputs: Vec<PathBuf>,
}

/// How the findings are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// One JSON line per warning, then the coverage line.
    Jsonl,
    /// A readable report: coverage, findings, totals.
    Text,
}

/// Runs `audit`: 0; 1 with `--fail-on-warning` when a warning was raised or
/// with `--fail-on-unaudited` when a call went unaudited; 2 for a usage
/// error, an unreadable catalogue or input.
pub fn run(args: Args) -> ExitCode {
    match audit(&args) {
        Ok(outcome) if outcome.fails(&args) => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("mcp-unknown-keys audit: {message}");
            ExitCode::from(2)
        }
        // The reader of stdout went away (`| head`): nothing more to say,
        // but a gate still learns what was found.
        Err(Failure::Closed(outcome)) if outcome.fails(&args) => ExitCode::from(1),
        Err(Failure::Closed(_)) => ExitCode::SUCCESS,
    }
}

/// What a gate decides on.
#[derive(Clone, Copy, Debug, Default)]
struct Outcome {
    warnings: u64,
    unaudited: u64,
}

impl Outcome {
    fn of(tally: &report::Tally) -> Outcome {
        Outcome {
            warnings: tally.warnings,
            unaudited: tally.coverage.unaudited_calls(),
        }
    }

    fn fails(self, args: &Args) -> bool {
        (args.fail_on_warning && self.warnings > 0) || (args.fail_on_unaudited && self.unaudited > 0)
    }
}

enum Failure {
    /// A usage error, or a catalogue or input that cannot be read: the
    /// message says which and why.
    Usage(String),
    /// Stdout was closed by its reader.
    Closed(Outcome),
}

fn output_error(error: io::Error, outcome: Outcome) -> Failure {
    if error.kind() == io::ErrorKind::BrokenPipe {
        Failure::Closed(outcome)
    } else {
        Failure::Usage(format!("cannot write the output: {error}"))
    }
}

/// Audits every input; what the gates decide on.
fn audit(args: &Args) -> Result<Outcome, Failure> {
    let catalogues = catalogue::read_all(&args.tools).map_err(Failure::Usage)?;
    // Every input is opened first, so a misspelt name fails before any output.
    let inputs = if args.inputs.is_empty() {
        vec![Input::stdin().map_err(Failure::Usage)?]
    } else {
        args.inputs
            .iter()
            .map(|path| Input::open(path))
            .collect::<Result<_, _>>()
            .map_err(Failure::Usage)?
    };
    let stdout = io::stdout().lock();
    let jsonl = (args.format == Format::Jsonl).then_some(stdout);
    let mut replay = Replay::new(catalogues, &args.allow, jsonl);
    for input in inputs {
        replay_input(input, &mut replay)?;
    }
    let outcome = Outcome::of(&replay.tally);
    let mut out = io::stdout().lock();
    let written = match args.format {
        Format::Jsonl => writeln!(out, "{}", replay.tally.coverage.to_json_line()),
        Format::Text => report::write_text(&replay.tally, &mut out),
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| output_error(e, outcome))?;
    Ok(outcome)
}

fn replay_input<W: Write>(input: Input, replay: &mut Replay<W>) -> Result<(), Failure> {
    let name = input.name.clone();
    let mut reader = Reader::default();
    let mut named = 0;
    let read = input.read(|record, progress| {
        let (read, number) = match record {
            Record::Line { bytes, number } => match std::str::from_utf8(bytes) {
                Ok(line) => (Ok(reader.read_line(line, replay)), number),
                Err(_) => (Err("not UTF-8"), number),
            },
            Record::Document { text } => (Ok(reader.read_document(text, replay)), 0),
        };
        let tally = &mut replay.tally;
        let why = match read {
            Ok(Read::Blank) => return,
            Ok(Read::Used) => None,
            Ok(Read::Nothing) => {
                tally.idle_lines += 1;
                None
            }
            Ok(Read::Unreadable) => Some("not JSON"),
            Err(why) => Some(why),
        };
        tally.lines += 1;
        let Some(why) = why else {
            return;
        };
        match why {
            "not UTF-8" => tally.not_utf8_lines += 1,
            _ => tally.not_json_lines += 1,
        }
        named += 1;
        if named <= NAMED_UNREADABLE_LINES {
            progress.clear();
            eprintln!("mcp-unknown-keys audit: {name}:{number}: {why}, counted as unreadable");
        }
    });
    read.map_err(|e| Failure::Usage(format!("cannot read the input {name}: {e}")))?;
    reader.finish(replay);
    replay.end_of_input();
    if named > NAMED_UNREADABLE_LINES {
        eprintln!(
            "mcp-unknown-keys audit: {name}: {} more unreadable line(s), counted but not named",
            named - NAMED_UNREADABLE_LINES
        );
    }
    match replay.take_write_error() {
        Some(error) => Err(output_error(error, Outcome::of(&replay.tally))),
        None => Ok(()),
    }
}
