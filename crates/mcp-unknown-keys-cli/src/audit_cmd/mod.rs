//! `mcp-unknown-keys audit`: replays recorded tool calls offline through the
//! same auditor as the layer and the proxy, and accounts for every call it
//! finds.
//!
//! The reading is the library `mcp-unknown-keys-logs` ([`Audit`]): the
//! shapes of the logs teams keep, files as they are kept, the decisions a
//! recording leaves open. This is its command line: the arguments, the
//! output formats (each warning as a JSON line as it is raised, then a
//! `{"coverage":…}` line; or the text report, which opens with the
//! coverage; or the HTML page: the log reader's `render`), the rates `--by` asks for, notices on
//! stderr, and the exit codes.

mod progress;

use std::io::{self, StdoutLock, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_unknown_keys::audit::{Judged, Warning};
use mcp_unknown_keys_logs::{
    Audit, Dimension, Error, Input, Notice, Observer, Options, Progress, Report, Tools, render,
};

use mcp_unknown_keys_logs::strict::StrictPreview;
use progress::ProgressBar;

/// The command line of `audit`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
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
    /// a host or middleware injects. A path such as `entities[].id`
    /// tolerates a nested key.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// Audit top-level keys only: keys nested inside declared objects are
    /// neither read nor reported.
    #[arg(long)]
    top_level_only: bool,
    /// Do not report the keys a tool's schema lists in `required` that a
    /// call lacks (nor audit a call with no arguments as emptied): the
    /// first version's behaviour.
    #[arg(long)]
    no_missing: bool,
    /// `jsonl`: each warning as a JSON line, as it is raised, and each
    /// verdict (what a server did with a call that carried undeclared keys,
    /// in a recording of JSON-RPC traffic) as the proxy logs it, then one
    /// `{"coverage":…}` line. `text`: a readable report, opening with the
    /// coverage, at the end. `html`: one self-contained page (coverage,
    /// rates by model and by tool, the undeclared keys and every warning).
    /// `markdown`: a short report for a CI step summary. `sarif`: SARIF
    /// 2.1.0 for code scanning, a result per undeclared pair at its first
    /// call's file and line. `junit`: JUnit XML, a test case per tool
    /// (docs/ci.md).
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Group the calls by `model`, `tool`, `key`, `cause` or `file`
    /// (repeatable: `--by model --by tool` groups by each pair), each
    /// group with its rate of calls carrying undeclared keys per 1000
    /// audited: a JSON line per group before the coverage line, or a table
    /// in the text and html reports.
    #[arg(long = "by", value_name = "DIMENSION", value_parser = clap::builder::ValueParser::new(parse_dimension))]
    by: Vec<Dimension>,
    /// Instead of the report, what a server that rejects undeclared keys
    /// would have refused in these logs: per server and tool, the calls and
    /// their rate, split into calls carrying keys the model wrote and calls
    /// carrying only keys a host added, with what the server did with them
    /// where the logs hold its answers; then what to adopt before going
    /// strict (the host keys to allow, an alias map of misspelt keys).
    /// With `--format jsonl` (one `{"strict_preview":…}` line), `text` or
    /// `html`.
    #[arg(long)]
    strict_preview: bool,
    /// With `--strict-preview`: also write what to adopt to FILE, as JSON:
    /// `{"allow":[…],"aliases":{"TOOL":{"KEY":"DECLARED"}}}`.
    #[arg(long, value_name = "FILE", requires = "strict_preview")]
    adopt: Option<PathBuf>,
    /// Exit with status 1 when any warning was raised, for a CI gate.
    #[arg(long)]
    fail_on_warning: bool,
    /// Exit with status 1 when any call went unaudited (no catalogue, an
    /// unlisted tool, a tool declaring nothing, unreadable arguments), or a
    /// record that may hold calls could not be read whole (nested too deep,
    /// a line too long).
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
    /// One JSON line per warning and per verdict, then the coverage line.
    Jsonl,
    /// A readable report: coverage, findings, totals.
    Text,
    /// One self-contained HTML page.
    Html,
    /// GitHub-flavoured Markdown, for a CI step summary.
    Markdown,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// JUnit XML, a test case per tool.
    Junit,
}

fn parse_dimension(name: &str) -> Result<Dimension, String> {
    name.parse()
}

/// Runs `audit`: 0; 1 with `--fail-on-warning` when a warning was raised or
/// with `--fail-on-unaudited` when a call went unaudited; 2 for a usage
/// error, an unreadable catalogue or input, or an input read only in part
/// (cut short, or failing partway: after the report of what was read).
pub(crate) fn run(args: Args) -> ExitCode {
    match audit(&args) {
        Ok(outcome) if outcome.incomplete_inputs > 0 => ExitCode::from(2),
        Ok(outcome) if outcome.fails(&args) => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("mcp-unknown-keys audit: {message}");
            ExitCode::from(2)
        }
        // The reader of stdout went away (`| head`): nothing more to say,
        // but a gate still learns what was found.
        Err(Failure::Closed(outcome)) if outcome.incomplete_inputs > 0 => ExitCode::from(2),
        Err(Failure::Closed(outcome)) if outcome.fails(&args) => ExitCode::from(1),
        Err(Failure::Closed(_)) => ExitCode::SUCCESS,
    }
}

/// What a gate decides on.
#[derive(Clone, Copy, Debug, Default)]
struct Outcome {
    warnings: u64,
    /// Calls unaudited, and records that may hold calls not read whole.
    unaudited: u64,
    /// Inputs read only in part.
    incomplete_inputs: u64,
}

impl Outcome {
    fn of(report: &Report) -> Outcome {
        Outcome {
            warnings: report.warnings.len() as u64,
            unaudited: report
                .coverage
                .unaudited_calls()
                .saturating_add(report.lines.records_cut()),
            incomplete_inputs: report.incomplete_inputs,
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

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::Usage(error.to_string())
    }
}

fn output_error(error: io::Error, outcome: Outcome) -> Failure {
    if error.kind() == io::ErrorKind::BrokenPipe {
        Failure::Closed(outcome)
    } else {
        Failure::Usage(format!("cannot write the output: {error}"))
    }
}

/// Where the audit says things as they happen: each warning on stdout as a
/// JSON line (with `--format jsonl`), each notice on stderr, and a progress
/// bar for a long file.
struct Terminal {
    jsonl: Option<StdoutLock<'static>>,
    /// The first error writing a warning: nothing more is written then.
    write_error: Option<io::Error>,
    bar: ProgressBar,
}

impl Observer for Terminal {
    fn warning(&mut self, warning: &Warning) {
        self.line(&warning.to_json_line());
    }

    fn verdict(&mut self, judged: &Judged) {
        self.line(&judged.to_json_line());
    }

    fn notice(&mut self, notice: &Notice) {
        self.bar.clear();
        eprintln!("mcp-unknown-keys audit: {notice}");
    }

    fn progress(&mut self, progress: &Progress<'_>) {
        self.bar.update(progress);
    }
}

impl Terminal {
    /// Writes one JSON line with `--format jsonl`, flushed: warnings and
    /// verdicts are rare, and a reader following the output live sees each
    /// one when it is said. The first error stops the output.
    fn line(&mut self, line: &str) {
        let Some(out) = self.jsonl.as_mut() else {
            return;
        };
        if self.write_error.is_some() {
            return;
        }
        let written = writeln!(out, "{line}").and_then(|()| out.flush());
        if let Err(error) = written {
            self.write_error = Some(error);
        }
    }
}

/// The inputs to read, in order: stdin when none is given. Each is checked
/// first, so a misspelt name fails before any output, but opened only when
/// its turn comes (thousands of files never hold thousands of descriptors).
/// Stdin is read once: named twice, it is refused.
fn inputs(args: &Args) -> Result<Vec<PathBuf>, Failure> {
    let stdin = PathBuf::from("-");
    if args.inputs.is_empty() {
        return Ok(vec![stdin]);
    }
    if args.inputs.iter().filter(|path| **path == stdin).count() > 1 {
        return Err(Failure::Usage(
            "stdin (-) is given more than once: it can be read once; give - once".to_owned(),
        ));
    }
    for path in &args.inputs {
        Input::check(path)?;
    }
    Ok(args.inputs.clone())
}

/// Audits every input; what the gates decide on.
fn audit(args: &Args) -> Result<Outcome, Failure> {
    if args.strict_preview && !matches!(args.format, Format::Jsonl | Format::Text | Format::Html) {
        return Err(Failure::Usage(
            "--strict-preview writes jsonl, text or html; not --format markdown, sarif or junit".to_owned(),
        ));
    }
    let mut options = Options::default()
        .top_level_only(args.top_level_only)
        .no_missing(args.no_missing)
        .strict_preview(args.strict_preview);
    options.tools = args.tools.iter().map(|spec| Tools::from_arg(spec)).collect();
    options.allow.clone_from(&args.allow);
    if !args.by.is_empty() {
        options = options.group_by(args.by.iter().copied());
    }
    if args.format == Format::Html {
        options = options.group_by([Dimension::Model]).group_by([Dimension::Tool]);
    }
    if args.format == Format::Junit {
        // Its test cases are the tools, those with calls audited included.
        options = options.group_by([Dimension::Tool]);
    }
    let terminal = Terminal {
        jsonl: (args.format == Format::Jsonl && !args.strict_preview).then(|| io::stdout().lock()),
        write_error: None,
        bar: ProgressBar::default(),
    };
    let inputs = inputs(args)?;
    let mut audit = Audit::with_observer(&options, terminal)?;
    for path in inputs {
        audit.read(Input::open(path)?)?;
        if let Some(error) = audit.observer_mut().write_error.take() {
            return Err(output_error(error, Outcome::of(audit.report())));
        }
    }
    drop(audit.observer_mut().jsonl.take());
    let report = audit.finish();
    let outcome = Outcome::of(&report);
    let mut out = io::stdout().lock();
    if let Some(preview) = report.strict_preview() {
        if let Some(path) = &args.adopt {
            write_adopt(&preview, path)?;
        }
        let written = match args.format {
            Format::Text => render::strict::write_text(&preview, &mut out),
            Format::Html => render::strict::write_html(&preview, &mut out),
            _ => render::strict::write_json(&preview, &mut out),
        };
        written
            .and_then(|()| out.flush())
            .map_err(|e| output_error(e, outcome))?;
        return Ok(outcome);
    }
    let written = match args.format {
        Format::Jsonl => group_lines(&report, &args.by, &mut out)
            .and_then(|()| writeln!(out, "{}", report.coverage.to_json_line())),
        Format::Text => render::text::write(&report, &args.by, &mut out),
        Format::Html => render::html::write(&report, &args.by, &mut out),
        Format::Markdown => render::markdown::write(&report, &args.by, &mut out),
        Format::Sarif => render::sarif::write(&report, &mut out),
        Format::Junit => render::junit::write(&report, &mut out),
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| output_error(e, outcome))?;
    Ok(outcome)
}

/// Writes what to adopt to `path`, whole.
fn write_adopt(preview: &StrictPreview, path: &Path) -> Result<(), Failure> {
    let mut text = Vec::new();
    render::strict::write_adopt(preview, &mut text).expect("writing to memory cannot fail");
    std::fs::write(path, text)
        .map_err(|error| Failure::Usage(format!("cannot write --adopt {}: {error}", path.display())))
}

/// One JSON line per group of `--by`, highest rate first.
fn group_lines(report: &Report, by: &[Dimension], out: &mut impl Write) -> io::Result<()> {
    for group in report.groups(by).unwrap_or_default() {
        let line = serde_json::to_string(&group).map_err(io::Error::other)?;
        writeln!(out, "{line}")?;
    }
    Ok(())
}
