//! Audits log files for arguments their tools never declared, and prints a
//! short report.
//!
//! ```sh
//! cargo run -p mcp-unknown-keys-logs --example audit_logs -- [--tools [SERVER=]CATALOGUE]... LOG...
//! ```
//!
//! Without a log, it audits a small recorded session of its own: a
//! `tools/list` exchange and three calls, one carrying a truncated key.

use std::process::ExitCode;

use mcp_unknown_keys_logs::{Audit, Input, Notice, Observer, Options, Tools};

/// A recorded MCP session: both sides of the JSON-RPC traffic.
const SESSION: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}
{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","default":0}}}}]}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"src/app.rs","ffset":12}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"src/lib.rs"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fs_write","arguments":{"path":"out.txt"}}}
"#;

/// Prints notices on stderr as they come.
struct Stderr;

impl Observer for Stderr {
    fn notice(&mut self, notice: &Notice) {
        eprintln!("note: {notice}");
    }
}

fn main() -> ExitCode {
    let mut options = Options::default();
    let mut logs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg != "--tools" {
            logs.push(arg);
            continue;
        }
        let Some(spec) = args.next() else {
            eprintln!("--tools needs a catalogue file");
            return ExitCode::from(2);
        };
        options.tools.push(Tools::from_arg(&spec));
    }
    match run(&options, &logs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(2)
        }
    }
}

fn run(options: &Options, logs: &[String]) -> Result<(), mcp_unknown_keys_logs::Error> {
    let mut audit = Audit::with_observer(options, Stderr)?;
    if logs.is_empty() {
        audit.read(Input::from_reader("the example session", SESSION.as_bytes())?)?;
    }
    for log in logs {
        audit.read_file(log)?;
    }
    let report = audit.finish();
    for warning in &report.warnings {
        println!("{warning}");
    }
    println!("coverage: {}", report.coverage);
    for pair in report.pairs() {
        let calls = if pair.calls == 1 { "call" } else { "calls" };
        println!(
            "  {} `{}`: {} {calls}, first {}",
            pair.tool, pair.key, pair.calls, pair.first_id
        );
    }
    Ok(())
}
