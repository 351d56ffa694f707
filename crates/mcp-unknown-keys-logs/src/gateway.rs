//! The requests an MCP gateway's log has relayed and not yet seen
//! answered, per server: the state `relays.rs` pairs answers with. Data
//! only, so that the audit can hold it without importing what acts on it.

use std::collections::{HashMap, VecDeque};

use mcp_unknown_keys::jsonrpc::Id;
use mcp_unknown_keys::limits::MAX_AWAITED;

/// The most servers one input's gateway log is followed for: the requests
/// of a server past it are paired with nothing, and its listings made into
/// no catalogue (its calls are still counted), so a hostile log naming a
/// new server on every line holds no more.
pub(crate) const MAX_RELAYED_SERVERS: usize = 1_000;

/// The requests each server has not answered yet, in one input.
#[derive(Debug, Default)]
pub(crate) struct Relays {
    pub(crate) servers: HashMap<String, Server>,
}

#[derive(Debug, Default)]
pub(crate) struct Server {
    pub(crate) unanswered: VecDeque<Sent>,
    /// How many calls were sent to it: what its calls' keys are made of.
    pub(crate) calls: u64,
}

/// A request sent, awaiting its response.
#[derive(Debug)]
pub(crate) struct Sent {
    pub(crate) id: Option<Id>,
    pub(crate) what: Request,
}

#[derive(Debug)]
pub(crate) enum Request {
    Listing {
        first: bool,
    },
    /// A call, under the key the input's session awaits its answer by.
    Call(Id),
    Other,
}

impl Relays {
    /// The server named `name`, unless it would be one too many.
    pub(crate) fn server(&mut self, name: &str) -> Option<&mut Server> {
        if !self.servers.contains_key(name) && self.servers.len() >= MAX_RELAYED_SERVERS {
            return None;
        }
        Some(self.servers.entry(name.to_owned()).or_default())
    }

    /// The request a response with `id` from `server` answers.
    pub(crate) fn answered(&mut self, server: &str, id: Option<&Id>) -> Option<Sent> {
        let unanswered = &mut self.servers.get_mut(server)?.unanswered;
        let by_id = id.and_then(|id| unanswered.iter().position(|sent| sent.id.as_ref() == Some(id)));
        match by_id {
            Some(at) => unanswered.remove(at),
            None => unanswered.pop_front(),
        }
    }
}

impl Server {
    pub(crate) fn send(&mut self, sent: Sent) {
        // Beyond the calls a session awaits at once, the oldest is given
        // up: the session judges it `unanswered` already.
        if self.unanswered.len() >= MAX_AWAITED {
            self.unanswered.pop_front();
        }
        self.unanswered.push_back(sent);
    }
}
