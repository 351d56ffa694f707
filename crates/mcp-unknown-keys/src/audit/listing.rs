//! A listing that comes in pages: the catalogue it makes, once it is whole.

use serde_json::Value;

use super::Catalog;

/// Assembles the catalogue of a `tools/list` listing from its pages.
///
/// A page answering a request without a cursor opens a new listing; a page
/// answering a request with one extends the listing being assembled. The
/// catalogue is handed out only when the last page (one without
/// `nextCursor`) arrives, so calls made meanwhile are still audited against
/// the previous catalogue, whole. The proxy and the `audit` command both
/// assemble listings through it.
///
/// ```
/// use mcp_unknown_keys::audit::Listing;
/// use serde_json::json;
///
/// let mut listing = Listing::default();
/// let page_1 = [json!({"name": "read", "inputSchema": {"properties": {"path": {}}}})];
/// let page_2 = [json!({"name": "write", "inputSchema": {"properties": {"path": {}}}})];
/// assert!(listing.page(&page_1, true, true).is_none()); // more to come
/// let catalog = listing.page(&page_2, false, false).expect("the last page");
/// assert_eq!(catalog.tool_names(), ["read", "write"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Listing {
    assembling: Option<Catalog>,
}

impl Listing {
    /// Takes one page of `tools` (MCP tools or OpenAI declarations).
    /// `first`: it answers a request without a cursor, so it opens a new
    /// listing. `more`: it carries a `nextCursor`. Returns the whole
    /// catalogue when this page ends the listing; a further page of a
    /// listing that was never opened (or was abandoned) is passed over.
    pub fn page<'a>(
        &mut self,
        tools: impl IntoIterator<Item = &'a Value>,
        first: bool,
        more: bool,
    ) -> Option<Catalog> {
        if first {
            self.assembling = Some(Catalog::new());
        }
        self.assembling.as_mut()?.extend_tools(tools);
        if more { None } else { self.assembling.take() }
    }

    /// Gives up the listing being assembled: an error answered one of its
    /// pages, or the server's tools changed under it.
    pub fn abandon(&mut self) {
        self.assembling = None;
    }

    /// Whether a listing is open, waiting for further pages.
    pub fn is_assembling(&self) -> bool {
        self.assembling.is_some()
    }
}
