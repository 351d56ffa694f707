//! `mcp-unknown-keys demo`: the specification's incident, end to end.
//!
//! It starts the example server as a real MCP server over stdio, builds the
//! specification's stack over it — `Policy(UnknownKeys(Reasons(Registry)))`
//! — and plays a scripted model turn with the two mangled calls of the
//! specification, a call with a `reason`, a call the policy asks a (scripted)
//! human about, and a repeat of a mangled call. It prints what the model
//! sent, what the server received, the warnings and the results.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::{Printable, Warning};
use mcp_unknown_keys::reasons::Reason;
use mcp_unknown_keys::{
    BoxError, McpServer, Provider, ReasonsLayer, Registry, ToolCall, ToolDeclaration, ToolResult,
    UnknownKeysLayer,
};
use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, Question, default_rules};
use serde_json::{Value, json};
use tower_layer::Layer;

/// `println!`, except that a reader gone away (`demo | head`) ends the
/// demo quietly, as a pipe's writer should, rather than with a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        say_line(format_args!($($arg)*))
    };
}

fn say_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if let Err(error) = writeln!(std::io::stdout().lock(), "{line}")
        && error.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

/// The command line of `demo`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Never colour the output, even on a terminal.
    #[arg(long)]
    no_color: bool,
}

/// Runs `demo`.
pub(crate) fn run(args: Args) -> ExitCode {
    let style = Style::new(!args.no_color && std::io::stdout().is_terminal());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let outcome = runtime
        .map_err(BoxError::from)
        .and_then(|runtime| runtime.block_on(demo(style)));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-unknown-keys demo: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What the host around the stack saw, in order.
#[derive(Clone, Default)]
struct Host {
    notes: Arc<Mutex<Vec<Note>>>,
}

enum Note {
    Warning(Warning),
    Question(Question),
    Reason(String),
    Received(ToolCall),
}

impl Host {
    fn note(&self, note: Note) {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).push(note);
    }

    fn take(&self) -> Vec<Note> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

async fn demo(style: Style) -> Result<(), BoxError> {
    let host = Host::default();
    let executable = std::env::current_exe()?;
    let server = McpServer::stdio(executable)
        .arg("example-server")
        .name("example-server")
        .forward_stderr(false)
        .connect()
        .await?;
    let registry = Registry::new();
    registry.add(
        Wiretap {
            inner: server.clone(),
            host: host.clone(),
        },
        "fs",
    )?;
    let stack = build_stack(registry, &host);

    say!("{}", style.bold("mcp-unknown-keys demo"));
    say!("The specification's stack, Policy(UnknownKeys(Reasons(Registry))), over the example MCP server.");

    section(
        &style,
        "The catalogue the model is shown (Reasons adds `reason` to every tool)",
    );
    let catalogue = stack.tools_for_llm().await?;
    for declaration in &catalogue {
        say!(
            "  {:<10} {}",
            declaration.name().unwrap_or("?"),
            declared_keys(declaration).join(", ")
        );
    }

    section(&style, "The model's turn");
    play(&stack, &host, &style, first_turn()).await?;

    section(
        &style,
        "The model repeats its mangled read: said once, so nothing new to say",
    );
    play(&stack, &host, &style, second_turn()).await?;

    server.close().await;
    section(&style, "What happened");
    say!("  Every call ran exactly as the model sent it, and the server reported no error. But the read");
    say!("  started at line 0, not 12 (the server dropped `ffset`), and the task ran on a prompt cut to");
    say!("  \"Investigate the\". Only the warnings above say so; each was said once.");
    Ok(())
}

/// `Policy(UnknownKeys(Reasons(registry)))`, each layer reporting to the host.
fn build_stack(registry: Registry, host: &Host) -> impl Provider {
    let (on_warn, on_reason, on_ask) = (host.clone(), host.clone(), host.clone());
    let reasons = ReasonsLayer::new()
        .on_reason(move |reason: &Reason| {
            on_reason.note(Note::Reason(format!("{}: {}", reason.tool, reason.reason)))
        })
        .layer(registry);
    let audited = UnknownKeysLayer::new()
        .on_warn(move |warning: &Warning| on_warn.note(Note::Warning(warning.clone())))
        .layer(reasons);
    PolicyLayer::new(default_rules())
        .on_ask(move |question: &Question| {
            on_ask.note(Note::Question(question.clone()));
            Answer::AllowOnce // the scripted human
        })
        .layer(audited)
}

/// The specification's incidents, a call with a reason, and a write the
/// policy asks about.
fn first_turn() -> Vec<ToolCall> {
    vec![
        ToolCall::new(
            "call_1",
            "fs_read",
            r#"{"path":"src/app.rs","ffset":12,"the rest":"…"}"#,
        ),
        ToolCall::new(
            "call_2",
            "fs_task",
            r#"{"prompt":"Investigate the","nvestigate":"failing build","the rest":"and report back"}"#,
        ),
        ToolCall::new(
            "call_3",
            "fs_list",
            r#"{"path":".","reason":"to see what the project holds"}"#,
        ),
        ToolCall::new(
            "call_4",
            "fs_write",
            json!({"path": "notes.txt", "content": "checked src/app.rs", "reason": "to record the finding"}),
        ),
    ]
}

fn second_turn() -> Vec<ToolCall> {
    vec![ToolCall::new(
        "call_5",
        "fs_read",
        r#"{"path":"src/app.rs","ffset":40}"#,
    )]
}

async fn play(
    stack: &impl Provider,
    host: &Host,
    style: &Style,
    calls: Vec<ToolCall>,
) -> Result<(), BoxError> {
    say!("  {}", style.dim("what the model sent:"));
    for call in &calls {
        say!(
            "    {} {} {}",
            call.id_text(),
            call.name().unwrap_or("?"),
            call.arguments_text()
        );
    }
    let results = stack.execute_tool_calls(calls).await?;
    let notes = host.take();
    print_notes(style, &notes);
    say!("  {}", style.dim("results:"));
    for result in &results {
        let status = if result.is_error {
            style.red("error")
        } else {
            style.green("ok")
        };
        say!(
            "    {} {status}: {}",
            result.tool_call_id,
            first_line(&result.content)
        );
    }
    std::io::stdout().flush()?;
    Ok(())
}

fn print_notes(style: &Style, notes: &[Note]) {
    for note in notes {
        if let Note::Question(question) = note {
            say!("  {} {question}", style.dim("policy asks:"));
            say!("  {} allow once", style.dim("human answers:"));
        }
    }
    let reasons: Vec<&String> = notes
        .iter()
        .filter_map(|n| if let Note::Reason(r) = n { Some(r) } else { None })
        .collect();
    for reason in reasons {
        say!("  {} {reason}", style.dim("reason given:"));
    }
    let warnings: Vec<&Warning> = notes
        .iter()
        .filter_map(|n| if let Note::Warning(w) = n { Some(w) } else { None })
        .collect();
    if warnings.is_empty() {
        say!("  {}", style.dim("warnings: none"));
    } else {
        say!("  {}", style.dim("warnings (each pair said once):"));
        for warning in warnings {
            say!("    {} {warning}", style.yellow("mcp-unknown-keys:"));
        }
    }
    say!("  {}", style.dim("what the server received:"));
    for note in notes {
        if let Note::Received(call) = note {
            say!("    {} {}", call.name().unwrap_or("?"), call.arguments_text());
        }
    }
}

/// Sits between the registry and the server and notes each call the server
/// is about to receive (after `Reasons` stripped `reason`, after the registry
/// removed the prefix).
struct Wiretap<P> {
    inner: P,
    host: Host,
}

impl<P: Provider> Provider for Wiretap<P> {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        self.inner.tools_for_llm().await
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        for call in &calls {
            self.host.note(Note::Received(call.clone()));
        }
        self.inner.execute_tool_calls(calls).await
    }
}

fn declared_keys(declaration: &ToolDeclaration) -> Vec<String> {
    let properties = declaration
        .parameters()
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object);
    properties
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    Printable(line).to_string()
}

fn section(style: &Style, title: &str) {
    say!("");
    say!("{}", style.bold(title));
}

/// ANSI colour, only when stdout is a terminal.
#[derive(Clone, Copy)]
struct Style {
    colour: bool,
}

impl Style {
    fn new(colour: bool) -> Style {
        Style { colour }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    fn red(&self, text: &str) -> String {
        self.paint("31", text)
    }

    fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }

    fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }
}
