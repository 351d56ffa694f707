//! Each door a recorded session is played through, and what it said:
//! the library's `Session` in-process, the stdio proxy, the stdio→HTTP
//! bridge, the HTTP reverse proxy, and `audit` of a recording or a log.

use std::io::Write;
use std::time::{Duration, Instant};

use mcp_unknown_keys::audit::{Auditor, Coverage, Judged, Warning};
use mcp_unknown_keys::session::{Session as Core, Side as CoreSide};
use serde_json::Value;
use support::library::Fed;

use super::corpus::{Recorded, Session, Side};
use crate::support;

/// What a door said of a session.
///
/// Warnings and verdicts are read into the core's types, which keep the
/// fields every door writes (tool, keys, id, hints, missing keys, paths)
/// and drop the ones a door adds of its own: the proxies' attribution
/// (`ts`, `server`, `session`, `upstream_session`) differs by run and by
/// transport, not by what was found.
#[derive(Debug, PartialEq)]
pub struct Said {
    pub warnings: Vec<Warning>,
    pub verdicts: Vec<Judged>,
    pub coverage: Coverage,
    /// The pairs counted per call: the proxies' summary and the library
    /// give them; `audit`'s JSON lines do not.
    pub findings: Option<Value>,
    /// The warning lines on stderr: the proxies say them there.
    pub stderr_warnings: Option<Vec<String>>,
}

/// How long a door may take to pass on one recorded message: a message it
/// never passes on is a mismatch, not a hang.
const PATIENCE: Duration = Duration::from_secs(10);

/// The library's `Session`, each message read by the core's reader, as
/// every door reads it; what each step says, and the verdicts at the end.
pub fn library(session: &Session) -> Said {
    let auditor = Auditor::new()
        .with_sink(())
        .allow_all(session.options.allow.iter().cloned())
        .top_level_only(session.options.top_level_only);
    let messages = session.messages.iter().map(|recorded| {
        let from = match recorded.from {
            Side::Host => CoreSide::Host,
            Side::Server => CoreSide::Server,
        };
        (from, recorded.text.as_str())
    });
    let Fed {
        session: core,
        warnings,
        verdicts,
    } = support::library::feed(&auditor, messages);
    Said {
        warnings,
        verdicts,
        coverage: core.coverage().clone(),
        findings: Some(logged_findings(&core)),
        stderr_warnings: None,
    }
}

/// The session's findings as a proxy's summary lists them: each pair with
/// the verdicts of the calls that carried it (the summary's form of the
/// core's `Findings` and `Verdicts`: the declared keys go in a map of
/// their own there, and no cause is written as none).
fn logged_findings(core: &Core) -> Value {
    let findings = core.findings().iter().map(|finding| {
        let mut logged = serde_json::to_value(&finding).unwrap();
        let members = logged.as_object_mut().unwrap();
        members.remove("declared_keys");
        if members["cause"].is_null() {
            members.remove("cause");
        }
        if let Some(counts) = core.verdicts().tally().of_finding(&finding) {
            members.insert("verdicts".into(), serde_json::to_value(counts).unwrap());
        }
        logged
    });
    Value::Array(findings.collect())
}

/// Plays the session's stdio script: the host's messages in order, each
/// sent once the server's messages before it have come back, so that the
/// door sees both sides in the recorded order. `door_answers` is for the
/// bridge: a request whose answer's stream ends without it is answered by
/// the door, in the server's place (HTTP has no later for it); that line
/// is awaited too, so that it comes where the recording's silence is.
pub fn play(proxy: &mut support::Session, session: &Session, door_answers: bool) -> Result<(), String> {
    for (at, recorded) in session.messages.iter().enumerate() {
        if recorded.from != Side::Host {
            continue;
        }
        proxy.send(&recorded.text);
        let replies = session.replies_to(at);
        for reply in &replies {
            await_line(proxy, |line| line == reply.text)
                .map_err(|got| format!("{:?} never came back (got {got:?})", reply.text))?;
        }
        if door_answers && replies.is_empty() && is_request(&recorded.text) {
            await_line(proxy, |_| true)
                .map_err(|_| format!("no answer in the server's place to {}", recorded.text))?;
        }
    }
    Ok(())
}

/// Whether a message is one request (a method and an id): what wants an
/// answer.
pub fn is_request(text: &str) -> bool {
    let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null())
}

/// Waits for the next stdout line that `wanted` accepts; the lines passed
/// over, if it never comes.
fn await_line(proxy: &mut support::Session, wanted: impl Fn(&str) -> bool) -> Result<(), Vec<String>> {
    let deadline = Instant::now() + PATIENCE;
    let mut passed = Vec::new();
    while Instant::now() < deadline {
        let Some(line) = proxy.try_recv(deadline - Instant::now()) else {
            break;
        };
        let line = String::from_utf8_lossy(&line).trim_end().to_owned();
        if wanted(&line) {
            return Ok(());
        }
        passed.push(line);
    }
    Err(passed)
}

/// The stdio server that answers as recorded: for each host message it
/// reads a line from stdin, for each server message it writes the line;
/// then it reads stdin to its end. POSIX sh, so the test needs nothing
/// installed to run it.
const SCRIPTED_SERVER: &str = r#"
while IFS= read -r entry <&3; do
  case "$entry" in
    H) IFS= read -r _ || exit 0 ;;
    S\ *) printf '%s\n' "${entry#S }" ;;
  esac
done 3<"$1"
cat >/dev/null
"#;

/// `proxy OPTIONS -- sh SCRIPT`: the stdio proxy in front of the scripted
/// server. What it said, and its `--log` (for `audit` of the log).
pub fn stdio(session: &Session) -> Result<(Said, String), String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.script");
    let lines: String = session
        .messages
        .iter()
        .map(|m| match m.from {
            Side::Host => "H\n".to_owned(),
            Side::Server => format!("S {}\n", m.text),
        })
        .collect();
    std::fs::write(&script, lines).unwrap();
    let options = session.options.args();
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let script = script.to_str().unwrap();
    let mut proxy = support::Session::start(&options, &["sh", "-c", SCRIPTED_SERVER, "sh", script]);
    play(&mut proxy, session, false)?;
    let finished = proxy.finish();
    if !finished.status.success() {
        return Err(format!(
            "the proxy exited with {}: {}",
            finished.status, finished.stderr
        ));
    }
    let said = from_log(&finished.log, &finished.stderr)?;
    Ok((said, finished.log))
}

/// What a proxy's `--log` and stderr say: its warning and verdict lines,
/// and the summary that ends the session.
pub fn from_log(log: &str, stderr: &str) -> Result<Said, String> {
    let mut said = Said {
        warnings: Vec::new(),
        verdicts: Vec::new(),
        coverage: Coverage::default(),
        findings: None,
        stderr_warnings: Some(warning_lines(stderr)),
    };
    let mut summaries = 0;
    for line in log.lines() {
        let line: Value = serde_json::from_str(line).map_err(|e| format!("a log line is not JSON: {e}"))?;
        if let Some(summary) = line.get("summary") {
            summaries += 1;
            said.coverage = serde_json::from_value(summary["coverage"].clone()).map_err(|e| e.to_string())?;
            said.findings = Some(summary["findings"].clone());
        } else if line.get("verdict").is_some() {
            said.verdicts
                .push(serde_json::from_value(line).map_err(|e| e.to_string())?);
        } else if line.get("note").is_none() {
            said.warnings
                .push(serde_json::from_value(line).map_err(|e| e.to_string())?);
        }
    }
    if summaries != 1 {
        return Err(format!("{summaries} summaries in the log: {log}"));
    }
    Ok(said)
}

/// The stderr lines that are warnings (not the summary, notes or notices).
fn warning_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("mcp-unknown-keys: ") && l.contains(" was called with "))
        .map(str::to_owned)
        .collect()
}

/// `mcp-unknown-keys audit OPTIONS FILE` of `text`, written to a file:
/// its warning and verdict lines, and the coverage line that ends them.
pub fn audit(text: &str, options: &[String]) -> Result<Said, String> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    let output = std::process::Command::new(support::binary())
        .arg("audit")
        .args(options)
        .arg(file.path())
        .output()
        .unwrap();
    if !output.status.success() {
        return Err(format!(
            "audit exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut said = Said {
        warnings: Vec::new(),
        verdicts: Vec::new(),
        coverage: Coverage::default(),
        findings: None,
        stderr_warnings: None,
    };
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{e}: {l}")))
        .collect::<Result<_, _>>()?;
    let last = lines.pop().ok_or("audit printed nothing")?;
    said.coverage = serde_json::from_value(last["coverage"].clone()).map_err(|e| format!("{e}: {last}"))?;
    for line in lines {
        if line.get("verdict").is_some() {
            said.verdicts
                .push(serde_json::from_value(line).map_err(|e| e.to_string())?);
        } else {
            said.warnings
                .push(serde_json::from_value(line).map_err(|e| e.to_string())?);
        }
    }
    Ok(said)
}

/// The server's messages, as the recording has them: each host message
/// matched to the recorded one of the same text not matched yet.
pub fn replies(session: &Session, body: &str, taken: &mut [bool]) -> Option<Vec<Recorded>> {
    let at = session
        .messages
        .iter()
        .enumerate()
        .position(|(n, m)| m.from == Side::Host && !taken[n] && m.text == body)?;
    taken[at] = true;
    Some(session.replies_to(at).into_iter().cloned().collect())
}
