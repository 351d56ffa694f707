//! What the tests share.

use mcp_unknown_keys_logs::{Audit, Input, Options, Report};
use serde_json::Value;

/// The report of `lines`, one JSON line each, read as the input `name`.
pub fn audited_as(name: &str, lines: &[Value], options: &Options) -> Report {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut audit = Audit::new(options).unwrap();
    audit
        .read(Input::from_reader(name, std::io::Cursor::new(text.into_bytes())).unwrap())
        .unwrap();
    audit.finish()
}

/// The report of `lines`, one JSON line each.
pub fn audited(lines: &[Value], options: &Options) -> Report {
    audited_as("log", lines, options)
}
