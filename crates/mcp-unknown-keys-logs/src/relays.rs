//! An MCP gateway's log acted on: each server the gateway relayed to is a
//! session of its own, whose listings are its catalogue (bound to it, as
//! `--tools SERVER=FILE` is) and whose calls are judged by their answers.
//!
//! The log pairs nothing: the gateway keeps no id on the requests it logs,
//! and the same placeholder id (`1`) on most responses, because it sends
//! each request and waits for its answer before the next. So a response
//! answers the oldest request still unanswered of the same server, or,
//! where both carry ids (as hand-written logs do), the one with its id.

use mcp_unknown_keys::audit::{Answer, Catalog, ListedTools};
use mcp_unknown_keys::jsonrpc::{Id, Message, Raw};
use mcp_unknown_keys::session::Side;
use serde_json::value::RawValue;

use crate::audit::{Audit, Shelf};
use crate::gateway::{MAX_RELAYED_SERVERS, Request, Sent};
use crate::names::Bound;
use crate::observe::Observer;
use crate::shapes::{Found, Relayed, RelayedMessage};

impl<O: Observer> Audit<O> {
    /// Acts on one message a gateway relayed: a call is audited against
    /// its server's listing (or `--tools`), a listing's response becomes
    /// that server's catalogue, and a call's response judges it.
    pub(crate) fn relay(&mut self, relayed: Relayed<'_>) {
        let Relayed { server, id, message } = relayed;
        match message {
            RelayedMessage::ListTools { first } => self.sent(server, id, Request::Listing { first }),
            RelayedMessage::OtherRequest => self.sent(server, id, Request::Other),
            RelayedMessage::Call { name, arguments } => {
                let key = self.relays.server(server).map(|sent_to| {
                    sent_to.calls += 1;
                    Id::Text(format!("{server}\u{0}{}", sent_to.calls))
                });
                if let Some(key) = &key {
                    self.sent(server, id.clone(), Request::Call(key.clone()));
                }
                let id = id.as_ref().map(Id::to_value);
                self.call(Found {
                    tool: &name,
                    server: Some(server),
                    arguments: arguments.as_deref(),
                    id: id.as_ref(),
                    rpc_id: key.as_ref(),
                    as_listed: false,
                    model: None,
                    truncated: false,
                });
            }
            RelayedMessage::Response { tools, answer } => {
                match self.relays.answered(server, id.as_ref()).map(|sent| sent.what) {
                    Some(Request::Listing { first }) => {
                        if let Some(tools) = tools {
                            self.listed_by(server, &tools, first);
                        }
                    }
                    Some(Request::Call(key)) => self.answer(key, answer),
                    Some(Request::Other) | None => {}
                }
            }
            // The call it answers stays awaited: `unanswered` when the
            // input ends.
            RelayedMessage::Failed => {
                self.relays.answered(server, id.as_ref());
            }
        }
    }

    fn sent(&mut self, server: &str, id: Option<Id>, what: Request) {
        if let Some(sent_to) = self.relays.server(server) {
            sent_to.send(Sent { id, what });
        }
    }

    /// A call's answer, handed to the session that awaits it as a response
    /// with only what judges it: whether it is an error.
    fn answer(&mut self, key: Id, answer: Answer) {
        let result = match answer {
            Answer::Result { is_error: true } => Some(r#"{"isError":true}"#),
            Answer::Result { is_error: false } => Some("{}"),
            Answer::Error => None,
            Answer::InputRequired => Some(r#"{"resultType":"input_required"}"#),
            // A gateway log keeps no task request to follow it by.
            Answer::Task { .. } => Some(r#"{"resultType":"task"}"#),
        };
        let result = result.and_then(|text| serde_json::from_str::<&'static RawValue>(text).ok());
        let message = Message::Response {
            id: key,
            result: result.map(Raw),
        };
        let step = self.session.read(&self.unbound, Side::Server, message);
        self.judged(step.verdicts);
    }

    /// `server` listed `tools`: its catalogue from there on (a further page
    /// adds to it), bound to it as `--tools SERVER=FILE` binds one.
    fn listed_by(&mut self, server: &str, tools: &str, first: bool) {
        let Some(listed) = ListedTools::read(tools) else {
            return;
        };
        let at = match self.bound.iter().position(|shelf| shelf.server == server) {
            Some(at) => at,
            None if self.bound.len() < MAX_RELAYED_SERVERS => {
                self.bound.push(Bound {
                    server: server.to_owned(),
                    with: Shelf {
                        auditor: self.new_auditor(),
                        catalog: Catalog::new(),
                    },
                });
                self.bound.len() - 1
            }
            None => return,
        };
        let shelf = &mut self.bound[at].with;
        if first {
            shelf.catalog = Catalog::new();
        }
        // A tool too deep to read is listed declaring nothing, with a note.
        shelf.catalog.extend_listed(&listed);
        let Bound { server, with } = &self.bound[at];
        self.report.listed(&with.catalog, Some(server));
        with.auditor.say_notes(&with.catalog);
        self.say_notes(Some(at));
    }
}
