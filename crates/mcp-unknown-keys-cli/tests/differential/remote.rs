//! The remote doors: the stdio→HTTP bridge (`proxy --url`) and the HTTP
//! reverse proxy (`proxy --listen --upstream`), each in front of a
//! scripted streamable-HTTP server that answers as the recording did.

use std::sync::{Arc, Mutex};

use super::corpus::Session;
use super::doors::{Said, from_log, is_request, replies};
use crate::support::block_on;
use crate::support::remote::{bridge as start_bridge, post};
use crate::support::reverse::Reverse;
use crate::support::scripted::{Reply, Scripted};

/// A streamable-HTTP server that answers each POSTed host message with
/// the server's messages the recording has after it, as the events of one
/// stream (a list change mid-call comes on the call's stream, before its
/// answer, as servers send it); a request the recording leaves unanswered
/// gets a stream that ends without its answer; a notification gets 202.
/// What it could not match is kept, to be told.
struct Script {
    server: Scripted,
    unmatched: Arc<Mutex<Vec<String>>>,
}

impl Script {
    fn start(session: &Session) -> Script {
        let unmatched = Arc::new(Mutex::new(Vec::new()));
        let kept = unmatched.clone();
        let recorded = session.clone();
        let taken = Mutex::new(vec![false; session.messages.len()]);
        let server = Scripted::start(move |seen| match seen.method.as_str() {
            "GET" => Reply::status(405),
            "DELETE" => Reply::status(200),
            _ => {
                let body = seen.text();
                let body = body.trim();
                let Some(replies) = replies(&recorded, body, &mut taken.lock().unwrap()) else {
                    kept.lock().unwrap().push(body.to_owned());
                    return Reply::status(500);
                };
                let reply = if replies.is_empty() && !is_request(body) && !body.starts_with('[') {
                    Reply::status(202)
                } else {
                    let data: Vec<&str> = replies.iter().map(|r| r.text.as_str()).collect();
                    Reply::events(&data)
                };
                reply.header("mcp-session-id", "s1")
            }
        });
        Script { server, unmatched }
    }

    fn check(&self) -> Result<(), String> {
        let unmatched = self.unmatched.lock().unwrap();
        if unmatched.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the server was sent messages the recording does not hold: {unmatched:?}"
            ))
        }
    }
}

/// `proxy --url URL OPTIONS`: the host's messages on its stdin, as the
/// stdio proxy's. What it said, and its `--log`.
pub fn bridge(session: &Session) -> Result<(Said, String), String> {
    let script = Script::start(session);
    let options = session.options.args();
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let mut proxy = start_bridge(&script.server.url(), &options);
    let played = super::doors::play(&mut proxy, session, true);
    let finished = proxy.finish();
    script.check()?;
    played?;
    if !finished.status.success() {
        return Err(format!(
            "the bridge exited with {}: {}",
            finished.status, finished.stderr
        ));
    }
    Ok((from_log(&finished.log, &finished.stderr)?, finished.log))
}

/// `proxy --listen 127.0.0.1:0 --upstream URL OPTIONS`: each host message
/// POSTed in one session (`Mcp-Session-Id: s1`), once the answer to the
/// one before it has been read whole; the proxy stopped at the end, which
/// ends the session (its unanswered calls, its summary). What it said, and
/// its `--log`.
pub fn reverse(session: &Session) -> Result<(Said, String), String> {
    let script = Script::start(session);
    let options = session.options.args();
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let proxy = Reverse::start(&script.server.url(), &options);
    let mut played = Ok(());
    for (at, recorded) in session.messages.iter().enumerate() {
        if recorded.from != super::corpus::Side::Host {
            continue;
        }
        let answer = block_on(post(&proxy.url(), &[("mcp-session-id", "s1")], &recorded.text));
        let got: Vec<String> = answer
            .messages
            .iter()
            .map(|m| String::from_utf8_lossy(m).into_owned())
            .collect();
        let wanted: Vec<&str> = session.replies_to(at).iter().map(|r| r.text.as_str()).collect();
        if got != wanted && played.is_ok() {
            played = Err(format!("{} was answered {got:?}, not {wanted:?}", recorded.text));
        }
    }
    let (stderr, lines) = proxy.stop_with_log();
    script.check()?;
    played?;
    let log: String = lines.iter().map(|l| format!("{l}\n")).collect();
    Ok((from_log(&log, &stderr)?, log))
}
