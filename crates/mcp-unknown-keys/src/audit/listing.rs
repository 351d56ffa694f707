//! A listing that comes in pages.

use serde_json::Value;

use super::catalog::Catalog;
use super::catalog::listed::ListedTools;

/// Assembles the catalogue of a `tools/list` listing from its pages.
///
/// A page answering a request without a cursor opens a new listing; a page
/// answering a request with one extends the listing being assembled. The
/// catalogue is handed out after every page: calls are audited against
/// what has been listed so far (a client that fetches only the first page
/// still has its calls to those tools audited), a later page adds to it,
/// and a fresh first page starts a new catalogue. The proxy and the `audit`
/// command both assemble listings through it.
///
/// ```
/// use mcp_unknown_keys::audit::Listing;
/// use serde_json::json;
///
/// let mut listing = Listing::default();
/// let page_1 = [json!({"name": "read", "inputSchema": {"properties": {"path": {}}}})];
/// let page_2 = [json!({"name": "write", "inputSchema": {"properties": {"path": {}}}})];
/// let so_far = listing.page(&page_1, true, true).expect("the first page");
/// assert_eq!(so_far.tool_names(), ["read"]);
/// let whole = listing.page(&page_2, false, false).expect("the last page");
/// assert_eq!(whole.tool_names(), ["read", "write"]);
/// // A further page of a listing already complete is passed over.
/// assert!(listing.page(&page_2, false, false).is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Listing {
    assembling: Option<Catalog>,
}

impl Listing {
    /// Takes one page of `tools` (MCP tools or OpenAI declarations) and
    /// returns the catalogue to audit against from now on: the pages of the
    /// listing so far. `first`: it answers a request without a cursor, so it
    /// opens a new listing. `more`: it carries a `nextCursor`.
    ///
    /// Returns `None`, and the catalogue in use stays, for a further page
    /// of a listing that was never opened, was abandoned, or had already
    /// ended. Each schema is read once, on its page; each page but the last
    /// hands out the listing so far, which shares every declaration read
    /// before (one pointer copied per tool, never a declaration).
    pub fn page<'a>(
        &mut self,
        tools: impl IntoIterator<Item = &'a Value>,
        first: bool,
        more: bool,
    ) -> Option<Catalog> {
        self.add_page(first, more, |catalog| catalog.extend_tools(tools))
    }

    /// [`Listing::page`] for a page read tool by tool: a tool whose schema
    /// nested too deep to build is listed declaring nothing, with a note
    /// ([`Catalog::extend_listed`]).
    pub fn page_listed(&mut self, listed: &ListedTools, first: bool, more: bool) -> Option<Catalog> {
        self.add_page(first, more, |catalog| catalog.extend_listed(listed))
    }

    /// Opens a listing on a first page, adds a page with `add`, and hands
    /// out the listing so far (see [`Listing::page`]).
    fn add_page(&mut self, first: bool, more: bool, add: impl FnOnce(&mut Catalog)) -> Option<Catalog> {
        if first {
            self.assembling = Some(Catalog::new());
        }
        add(self.assembling.as_mut()?);
        if more {
            Some(self.assembling.clone()?)
        } else {
            self.assembling.take()
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, key: &str) -> Value {
        json!({"name": name, "inputSchema": {"properties": {key: {}}}})
    }

    #[test]
    fn each_page_hands_out_the_listing_so_far_and_a_first_page_starts_afresh() {
        let mut listing = Listing::default();
        let first = listing.page(&[tool("a", "x")], true, true).unwrap();
        assert_eq!(first.tool_names(), ["a"]);
        assert!(listing.is_assembling());
        let fresh = listing.page(&[tool("b", "y")], true, true).unwrap();
        assert_eq!(
            fresh.tool_names(),
            ["b"],
            "a fresh first page forgets the old pages"
        );
        let last = listing.page(&[tool("c", "z")], false, false).unwrap();
        assert_eq!(last.tool_names(), ["b", "c"]);
        assert!(!listing.is_assembling());
    }

    #[test]
    fn each_page_shares_the_declarations_of_the_pages_before() {
        // A wide schema: copying it page after page made a listing of many
        // pages cost its size times its pages.
        let wide: serde_json::Map<String, Value> = (0..1_000).map(|i| (format!("k{i}"), json!({}))).collect();
        let mut listing = Listing::default();
        let first = listing
            .page(
                &[json!({"name": "a", "inputSchema": {"properties": wide}})],
                true,
                true,
            )
            .unwrap();
        let mut catalogs = vec![first];
        for page in 1..200 {
            let tool = tool(&format!("t{page}"), "x");
            catalogs.push(listing.page(&[tool], false, page < 199).unwrap());
        }
        let declared = |catalog: &Catalog| catalog.get("a").unwrap() as *const _;
        let first = declared(&catalogs[0]);
        assert!(
            catalogs
                .iter()
                .all(|catalog| std::ptr::eq(declared(catalog), first)),
            "every page hands out the one declaration read on the first"
        );
        assert_eq!(catalogs[199].len(), 200);
    }

    #[test]
    fn a_page_of_no_listing_is_passed_over() {
        let mut listing = Listing::default();
        assert!(listing.page(&[tool("a", "x")], false, true).is_none());
        listing.page(&[tool("a", "x")], true, true).unwrap();
        listing.abandon();
        assert!(listing.page(&[tool("b", "x")], false, false).is_none());
    }

    #[test]
    fn a_tool_that_nests_too_deep_stays_listed_declaring_nothing_and_is_named() {
        let deep = format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300));
        let array = format!(
            r#"[{{"name":"before","inputSchema":{{"properties":{{"p":{{}}}}}}}},{{"inputSchema":{deep},"name":"deep"}},{{"inputSchema":{deep}}},{{"name":"after","inputSchema":{{"properties":{{"q":{{}}}}}}}}]"#
        );
        let listed = ListedTools::read(&array).unwrap();
        let names: Vec<&str> = listed.tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["before", "deep", "after"]);
        assert_eq!(listed.unreadable, ["deep", "#2"]);
        // Listed, declaring nothing: its calls count as declares_nothing.
        let mut catalog = Catalog::new();
        catalog.extend_tools(&listed.tools);
        let declared = catalog.get("deep").expect("listed");
        assert!(!declared.is_audited());
    }

    #[test]
    fn text_that_is_not_an_array_is_no_listing() {
        assert_eq!(ListedTools::read(r#"{"name":"a"}"#), None);
        assert_eq!(ListedTools::read("[1,"), None);
        assert_eq!(ListedTools::read("[]"), Some(ListedTools::default()));
    }
}
