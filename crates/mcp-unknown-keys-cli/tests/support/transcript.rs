//! A generated Claude Code transcript, for the constant-memory test and the
//! throughput benchmark: made on the fly, never committed.
//!
//! Its lines are modelled on a real session's: an assistant text line, an
//! assistant `tool_use` line, and a user `tool_result` line carrying a file's
//! contents (most of the bytes, full of escapes), each with the metadata
//! Claude Code writes around them. It opens with a catalogue line; one call
//! in `UNDECLARED_EVERY` carries one of a few undeclared keys.

#![allow(dead_code)]

use std::io::{self, Write};

/// The catalogue the transcript opens with, as one JSON line.
pub const CATALOGUE: &str = concat!(
    r#"{"tools":["#,
    r#"{"name":"Read","inputSchema":{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"]}},"#,
    r#"{"name":"Bash","inputSchema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"},"description":{"type":"string"}},"required":["command"]}},"#,
    r#"{"name":"Grep","inputSchema":{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"}},"required":["pattern"]}}"#,
    r#"]}"#
);

/// One call in this many carries an undeclared key.
pub const UNDECLARED_EVERY: u64 = 50;

/// The undeclared keys the transcript's calls carry, in turn.
pub const UNDECLARED_KEYS: [&str; 3] = ["ffset", "the rest", "timeout_ms"];

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Bytes written.
    pub bytes: u64,
    /// Lines written.
    pub lines: u64,
    /// `tool_use` calls written.
    pub calls: u64,
    /// Calls that carry an undeclared key.
    pub undeclared: u64,
}

/// Writes the catalogue line and then turns of the session until at least
/// `min_bytes` are written.
pub fn write_transcript(out: &mut impl Write, min_bytes: u64) -> io::Result<Written> {
    let mut written = Written::default();
    let mut line = String::with_capacity(16 << 10);
    emit(out, CATALOGUE, &mut written)?;
    let mut turn = 0u64;
    while written.bytes < min_bytes {
        turn += 1;
        line.clear();
        assistant_text(&mut line, turn);
        emit(out, &line, &mut written)?;

        line.clear();
        let undeclared = turn.is_multiple_of(UNDECLARED_EVERY);
        assistant_tool_use(&mut line, turn, undeclared);
        emit(out, &line, &mut written)?;
        written.calls += 1;
        written.undeclared += u64::from(undeclared);

        line.clear();
        user_tool_result(&mut line, turn);
        emit(out, &line, &mut written)?;
    }
    Ok(written)
}

fn emit(out: &mut impl Write, line: &str, written: &mut Written) -> io::Result<()> {
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    written.bytes += line.len() as u64 + 1;
    written.lines += 1;
    Ok(())
}

fn metadata(line: &mut String, turn: u64, kind: &str) {
    use std::fmt::Write;
    let _ = write!(
        line,
        r#""parentUuid":"5b1f0c7e-{turn:04x}-4d2a-9a71-0c2f3e4d5a6b","isSidechain":false,"userType":"external","cwd":"/home/dev/project","sessionId":"0f8e2d1c-7b6a-4c5d-9e8f-1a2b3c4d5e6f","version":"2.0.31","gitBranch":"main","type":"{kind}","uuid":"8c7d6e5f-{turn:04x}-4b3a-8c9d-7e6f5a4b3c2d","timestamp":"2026-11-30T07:{:02}:{:02}.123Z""#,
        turn / 60 % 60,
        turn % 60
    );
}

fn assistant_text(line: &mut String, turn: u64) {
    line.push('{');
    metadata(line, turn, "assistant");
    line.push_str(r#","message":{"id":"msg_01"#);
    line.push_str(&format!("{turn:020}"));
    line.push_str(r#"","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look at the parser first, then run the tests to see which case fails.\n\nI'll read `src/parser.rs` around the tokenizer."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":1234,"cache_read_input_tokens":45678,"output_tokens":89,"service_tier":"standard"}},"requestId":"req_011CV"#);
    line.push_str(&format!("{turn:016}"));
    line.push_str(r#""}"#);
}

fn assistant_tool_use(line: &mut String, turn: u64, undeclared: bool) {
    line.push('{');
    metadata(line, turn, "assistant");
    line.push_str(r#","message":{"id":"msg_02"#);
    line.push_str(&format!("{turn:020}"));
    line.push_str(r#"","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_"#);
    line.push_str(&format!("{turn:020}"));
    let input = match turn % 3 {
        0 => {
            r#""name":"Read","input":{"file_path":"/home/dev/project/src/parser.rs","offset":120,"limit":80"#
        }
        1 => {
            r#""name":"Bash","input":{"command":"cargo test -p parser --test tokenizer -- --nocapture 2>&1 | tail -40","description":"Run the tokenizer tests""#
        }
        _ => r#""name":"Grep","input":{"pattern":"fn tokenize","path":"src","glob":"*.rs""#,
    };
    line.push_str(r#"","#);
    line.push_str(input);
    if undeclared {
        let key = UNDECLARED_KEYS[(turn / UNDECLARED_EVERY) as usize % UNDECLARED_KEYS.len()];
        line.push_str(&format!(r#","{key}":12"#));
    }
    line.push_str(r#"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":321,"cache_read_input_tokens":46912,"output_tokens":112,"service_tier":"standard"}},"requestId":"req_011CW"#);
    line.push_str(&format!("{turn:016}"));
    line.push_str(r#""}"#);
}

fn user_tool_result(line: &mut String, turn: u64) {
    // A file's contents as a tool result carries them: escaped newlines,
    // quotes and tabs, a few KB.
    const SOURCE_LINE: &str = r#"    let token = match chars.peek() { Some('\"') => Token::Quote, Some(c) if c.is_whitespace() => Token::Space, _ => Token::Word },\n"#;
    let lines = 24 + (turn % 17) as usize;
    let content: String = (0..lines)
        .map(|n| format!("{:>6}\\t{SOURCE_LINE}", 120 + n))
        .collect();
    line.push('{');
    metadata(line, turn, "user");
    line.push_str(r#","message":{"role":"user","content":[{"tool_use_id":"toolu_"#);
    line.push_str(&format!("{turn:020}"));
    line.push_str(r#"","type":"tool_result","content":""#);
    line.push_str(&content);
    line.push_str(r#""}]},"toolUseResult":{"type":"text","file":{"filePath":"/home/dev/project/src/parser.rs","content":""#);
    line.push_str(&content);
    line.push_str(r#"","numLines":80,"startLine":120,"totalLines":412}}}"#);
}
