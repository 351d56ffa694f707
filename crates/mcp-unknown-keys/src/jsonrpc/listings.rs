//! Listings as they travel: a response that answers a `tools/list` request,
//! and the requests still awaiting theirs.

use std::collections::VecDeque;

use serde_json::value::RawValue;

use super::{Id, absent, members};
use crate::audit::catalog::listed::ListedTools;
use crate::limits::{MAX_AWAITED_LISTINGS, MAX_RESPONSES_AWAITING};

/// Reads a listing in any form a host hands one as JSON text: an array of
/// tools, an object holding one under `tools` or `result.tools` (a
/// `tools/list` result or response; the last member of a name wins, as
/// everywhere), or one declaration on its own. Read tool by tool
/// ([`ListedTools::read`]): a schema nesting too deep loses its tool only.
/// `Ok(None)` for JSON that is none of these; the parser's error for text
/// that is not JSON. The Python and Node packages read listings with it.
///
/// ```
/// use mcp_unknown_keys::jsonrpc::read_listing;
///
/// let response = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read","inputSchema":{}}]}}"#;
/// assert_eq!(read_listing(response).unwrap().unwrap().tools[0]["name"], "read");
/// let lone = r#"{"name":"read","inputSchema":{"properties":{"path":{}}}}"#;
/// assert_eq!(read_listing(lone).unwrap().unwrap().tools.len(), 1);
/// assert_eq!(read_listing(r#"{"content":[]}"#).unwrap(), None);
/// assert!(read_listing("not JSON").is_err());
/// ```
pub fn read_listing(text: &str) -> Result<Option<ListedTools>, serde_json::Error> {
    if let Some(array) = tools_array(text) {
        return Ok(ListedTools::read(array));
    }
    serde_json::from_str(text).map(ListedTools::declaration)
}

/// The text of a listing's tools: the text itself when it is an array, or
/// its `tools` member, or its `result`'s; `None` when there is none.
fn tools_array(text: &str) -> Option<&str> {
    if text.trim_start().starts_with('[') {
        return Some(text);
    }
    let present = |member: &&RawValue| !absent(Some(member));
    let [tools, result] = members(text, ["tools", "result"])?;
    let tools = match tools.filter(present) {
        Some(tools) => tools,
        None => members(result?.get(), ["tools"])?[0].filter(present)?,
    };
    Some(tools.get())
}

/// One page of a `tools/list` listing: the `result` of the response.
///
/// ```
/// use mcp_unknown_keys::jsonrpc::ListingPage;
///
/// let page = ListingPage::read(r#"{"tools":[{"name":"read","inputSchema":{}}],"nextCursor":"2"}"#).unwrap();
/// assert_eq!(page.tools.tools[0]["name"], "read");
/// assert!(page.more);
/// assert_eq!(ListingPage::read(r#"{"content":[]}"#), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ListingPage {
    /// The page's tools, each read on its own ([`ListedTools::read`]).
    pub tools: ListedTools,
    /// It carries a `nextCursor`: more pages follow.
    pub more: bool,
}

impl ListingPage {
    /// Reads a response's `result` as a page; `None` when it is no listing
    /// (not an object, or without a `tools` array).
    pub fn read(result: &str) -> Option<ListingPage> {
        let [tools, next] = members(result, ["tools", "nextCursor"])?;
        Some(ListingPage {
            tools: ListedTools::read(tools?.get())?,
            more: !absent(next),
        })
    }
}

/// The `tools/list` requests awaiting their response, matched by id as the
/// ids compare ([`Id`]), oldest first; at most [`MAX_AWAITED_LISTINGS`], each
/// forgotten after [`MAX_RESPONSES_AWAITING`] other responses.
///
/// Only a response that answers an awaited request is a listing: a response
/// with the same `result` shape answering anything else is not. Every door
/// matches listings through the session ([`Session`](crate::session::Session)),
/// which holds these.
#[derive(Clone, Debug, Default)]
pub(crate) struct AwaitedListings {
    awaited: VecDeque<Awaited>,
    /// The responses read so far.
    responses: u64,
}

#[derive(Clone, Debug)]
struct Awaited {
    id: Id,
    /// It has no cursor: its response opens a listing.
    first: bool,
    /// The responses read before it was sent.
    since: u64,
}

impl AwaitedListings {
    /// A `tools/list` request was sent; `first` when it has no cursor. A
    /// request awaited under the same id is replaced, and the oldest is
    /// forgotten when [`MAX_AWAITED_LISTINGS`] are awaited.
    pub(crate) fn request(&mut self, id: Id, first: bool) {
        self.cancel(&id);
        if self.awaited.len() == MAX_AWAITED_LISTINGS {
            self.awaited.pop_front();
        }
        let since = self.responses;
        self.awaited.push_back(Awaited { id, first, since });
    }

    /// The request `id` was cancelled: its response is no longer awaited.
    /// Whether it was.
    pub(crate) fn cancel(&mut self, id: &Id) -> bool {
        self.take(id).is_some()
    }

    /// A response to `id` came: `Some(first)` when it answers an awaited
    /// listing request (`first`: it opens a new listing), `None` when it
    /// answers anything else. Requests left unanswered for too long are
    /// forgotten.
    pub(crate) fn answer(&mut self, id: &Id) -> Option<bool> {
        self.responses += 1;
        let answered = self.take(id);
        while let Some(oldest) = self.awaited.front()
            && self.responses - oldest.since > MAX_RESPONSES_AWAITING
        {
            self.awaited.pop_front();
        }
        answered
    }

    /// How many requests are awaited.
    pub(crate) fn len(&self) -> usize {
        self.awaited.len()
    }

    fn take(&mut self, id: &Id) -> Option<bool> {
        let at = self.awaited.iter().position(|awaited| awaited.id == *id)?;
        self.awaited.remove(at).map(|awaited| awaited.first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(n: u64) -> Id {
        Id::read(&serde_json::value::RawValue::from_string(n.to_string()).unwrap()).unwrap()
    }

    #[test]
    fn a_repeated_id_replaces_the_request_awaited_under_it() {
        let mut awaited = AwaitedListings::default();
        awaited.request(number(1), true);
        awaited.request(number(1), false);
        assert_eq!(awaited.len(), 1);
        assert_eq!(awaited.answer(&number(1)), Some(false));
        assert_eq!(awaited.answer(&number(1)), None);
    }

    #[test]
    fn the_oldest_request_is_forgotten_past_the_bounds() {
        let mut awaited = AwaitedListings::default();
        for n in 0..=MAX_AWAITED_LISTINGS as u64 {
            awaited.request(number(n), true);
        }
        assert_eq!(awaited.len(), MAX_AWAITED_LISTINGS);
        assert_eq!(awaited.answer(&number(0)), None);
        let mut awaited = AwaitedListings::default();
        awaited.request(number(0), true);
        for n in 1..=MAX_RESPONSES_AWAITING {
            assert_eq!(awaited.answer(&number(n)), None);
        }
        assert_eq!(awaited.len(), 1, "answered by the very next response still");
        assert_eq!(awaited.answer(&number(9_999)), None);
        assert_eq!(awaited.len(), 0);
    }

    #[test]
    fn only_the_response_with_the_request_s_id_answers_it() {
        let mut awaited = AwaitedListings::default();
        awaited.request(Id::Text("a".into()), true);
        assert_eq!(awaited.answer(&Id::Text("b".into())), None);
        assert_eq!(awaited.answer(&Id::Text("a".into())), Some(true));
        assert_eq!(awaited.len(), 0);
    }

    #[test]
    fn a_cancelled_request_is_not_awaited() {
        let mut awaited = AwaitedListings::default();
        awaited.request(number(3), true);
        assert!(awaited.cancel(&number(3)));
        assert!(!awaited.cancel(&number(3)));
        assert_eq!(awaited.answer(&number(3)), None);
    }
}
