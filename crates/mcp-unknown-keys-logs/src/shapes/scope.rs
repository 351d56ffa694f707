//! A record's calls, held until the whole record is read: the tools a
//! record declares apply to the calls of that record, whichever member
//! comes first (a logged exchange may put its `response` before its
//! `request`), and to no other record's.

use mcp_unknown_keys::jsonrpc::Id;
use serde_json::Value;

use super::Found;

/// One call found in a record still being read, kept until the record ends.
#[derive(Debug)]
pub(super) struct Pending {
    tool: String,
    server: Option<String>,
    arguments: Option<String>,
    id: Option<Value>,
    rpc_id: Option<Id>,
    as_listed: bool,
    model: Option<String>,
    truncated: bool,
}

impl Pending {
    /// The call, kept.
    pub(super) fn keep(found: &Found<'_>) -> Pending {
        Pending {
            tool: found.tool.to_owned(),
            server: found.server.map(str::to_owned),
            arguments: found.arguments.map(str::to_owned),
            id: found.id.cloned(),
            rpc_id: found.rpc_id.cloned(),
            as_listed: found.as_listed,
            model: found.model.map(str::to_owned),
            truncated: found.truncated,
        }
    }

    /// The call, as it was found.
    pub(super) fn found(&self) -> Found<'_> {
        Found {
            tool: &self.tool,
            server: self.server.as_deref(),
            arguments: self.arguments.as_deref(),
            id: self.id.as_ref(),
            rpc_id: self.rpc_id.as_ref(),
            as_listed: self.as_listed,
            model: self.model.as_deref(),
            truncated: self.truncated,
        }
    }
}
