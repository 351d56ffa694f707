//! The tools of a listing in any form a host gives it, read tool by tool.
//!
//! A listing given as values is written as the JSON text `JSON.stringify`
//! makes of it (a listing is the host's or the server's, not the model's:
//! one with no JSON form is an error), then read as the core reads a
//! listing's text. Read tool by tool, as every door reads a listing (the
//! core's [`ListedTools`]), a schema that nests too deep loses that tool
//! only: it stays listed, declaring nothing, and the rest are audited.

use mcp_unknown_keys::audit::ListedTools;
use mcp_unknown_keys::jsonrpc::read_listing;
use napi::{Error, Result, Status};

use crate::js::{Js, Kind};

/// The tools of a listing: an array of tools, a listing holding one under
/// `tools` or `result.tools`, a lone declaration, or the JSON text of any
/// of these.
pub fn listed_tools(tools: Js) -> Result<ListedTools> {
    let text = match tools.kind() {
        Kind::String => tools.text().ok(),
        _ => tools.json_text().map_err(|_| no_json_form())?,
    };
    let text = text.ok_or_else(not_a_listing)?;
    match read_listing(&text) {
        Ok(listed) => listed.ok_or_else(not_a_listing),
        Err(error) => Err(Error::new(Status::InvalidArg, format!("not JSON: {error}"))),
    }
}

/// What a listing with no JSON form is told.
pub fn no_json_form() -> Error {
    Error::new(
        Status::InvalidArg,
        "the value has no JSON form (a cycle, a BigInt, or a getter that throws)",
    )
}

fn not_a_listing() -> Error {
    Error::new(
        Status::InvalidArg,
        "expected an array of tools, a listing with a `tools` array (a tools/list \
         result or response), or the JSON text of one",
    )
}
