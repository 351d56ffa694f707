//! The catalogue: which keys each listed tool declares, read from its
//! schema.
//!
//! - `table`: the key table, looked up once per key of every audited call;
//! - `lookup`: the tools by name, in a key table of their names, looked up
//!   once per audited call;
//! - `schema`: the reading of a schema, across combinators and local
//!   references (`reference`), into shapes;
//! - `shape`: the shapes (an object's declared keys, an array's items)
//!   that nested values are audited against, a graph for recursive schemas;
//! - `pattern`: `patternProperties` patterns, matched in linear time
//!   wherever ECMA-262 allows;
//! - `note`: what could not be read.

pub(crate) mod index;
pub(crate) mod listed;
mod lookup;
pub(crate) mod note;
mod pattern;
mod reference;
mod schema;
pub(crate) mod shape;
mod table;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde_json::Value;

pub(crate) use index::{CatalogIndex, Lazy, ToolIndex};
pub use listed::ListedTools;
pub use note::{Note, Problem};
pub(crate) use shape::{Object, Shape};

use crate::limits::{MAX_LISTING_WORK, MAX_SCHEMA_WORK};
use crate::wire::ToolDeclaration;
use lookup::ToolLookup;

/// The tools of one listing, each with the keys its schema declares.
///
/// Built from OpenAI function declarations ([`Catalog::from_declarations`]),
/// from MCP tools ([`Catalog::from_mcp_tools`]), from either
/// ([`Catalog::extend_tools`]), or page by page with
/// [`Listing`](super::Listing); all follow the same rules for what is kept:
///
/// - a tool is kept whatever its schema: one given no schema, a schema
///   that is not an object, or one whose `properties` is present but not an
///   object, declares nothing, so its calls are counted as
///   [`Skip::DeclaresNothing`](super::Skip::DeclaresNothing) (it is
///   listed), never as an unlisted tool; a schema present but unreadable is
///   said in a [`Note`] ([`Problem::UnreadableSchema`]);
/// - when a listing repeats a name, the last declaration wins.
///
/// and for what a kept schema declares ([`Declared`]), read once per
/// listing:
///
/// - its `properties`, with those of every `allOf`, `anyOf` and `oneOf`
///   branch, of `if`, `then` and `else`, and of `dependentSchemas` (and the
///   schema form of `dependencies`), following local references (`$ref`,
///   `$dynamicRef` and `$recursiveRef` to `#`, a JSON pointer such as
///   `#/$defs/paging` with its `~0`, `~1` and `%XX` escapes, or an anchor);
/// - a key matching a `patternProperties` pattern (an ECMA-262 regular
///   expression, not anchored unless it says `^`, matched in time linear
///   in the key unless it uses lookaround, a backreference or a Unicode
///   property class) is declared too;
/// - whatever `additionalProperties` says, a key outside that set is
///   reported; but a schema that declares no property and no pattern is
///   audited only when it is closed (`additionalProperties: false` or
///   `unevaluatedProperties: false`, on the schema itself or through
///   `allOf` or a reference), so every key is undeclared; an open one
///   declares nothing: listed by [`Catalog::tool_names`], never audited;
/// - a declared key whose schema is itself an object schema that audits
///   (as above), or an array whose `items` is one, makes the keys inside
///   its value audited too, as paths (`options.recursve`,
///   `entities[].age`), to any depth of a recursive schema;
/// - a schema that cannot be read whole (a `$ref` to another document,
///   which is never fetched, or a local one pointing at nothing) leaves the
///   object it stands for unaudited: the whole tool when it is the
///   arguments' own, declaring nothing then. So do the bounds
///   [`MAX_SUBSCHEMAS`](crate::limits::MAX_SUBSCHEMAS), [`MAX_COMPOSITION_DEPTH`](crate::limits::MAX_COMPOSITION_DEPTH) and [`MAX_SHAPES`](crate::limits::MAX_SHAPES): met
///   reading the arguments' own keys, the tool is not audited; met later,
///   the nested values not read are not. A pattern that does not compile
///   matches no key. Each is kept as a [`Note`] ([`Catalog::notes`]) for the
///   doors to say once.
///
/// ```
/// use mcp_unknown_keys::audit::Catalog;
/// use serde_json::json;
///
/// let catalog = Catalog::from_mcp_tools(&[json!({
///     "name": "fs_read",
///     "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}},
/// })]);
/// let fs_read = catalog.get("fs_read").unwrap();
/// assert!(fs_read.declares("offset"));
/// assert_eq!(fs_read.keys().collect::<Vec<_>>(), ["offset", "path"]);
/// ```
///
/// A catalogue is either a listing (possibly of no tools) or
/// [`Catalog::none`], which stands for "no listing seen yet": a call met
/// then is unaudited as [`Skip::NoCatalogue`](super::Skip::NoCatalogue),
/// not as an unlisted tool.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Each tool's declaration, shared: a listing handed out page by page
    /// ([`Listing`](super::Listing)) copies a pointer per tool, never a
    /// declaration.
    tools: HashMap<Arc<str>, Arc<Declared>, BuildHasherDefault<NameHasher>>,
    /// Whether this is a listing; false for [`Catalog::none`] (the default).
    listed: bool,
    /// The work spent reading this listing's schemas, against
    /// [`MAX_LISTING_WORK`].
    work: usize,
    /// Which tool declares each key, for the diagnosis of warnings: built on
    /// the first warning that needs it, dropped when a tool is inserted.
    diagnosis: Lazy<CatalogIndex>,
    /// The tools by name for [`Catalog::get`], on the path of every call:
    /// built once the catalogue is whole (by `from_mcp_tools`,
    /// `from_declarations`, or when an auditor installs it), dropped when a
    /// tool is inserted. Until then `get` reads `tools`, so that no call
    /// builds it (a clean call allocates nothing).
    lookup: Lazy<ToolLookup>,
}

/// A small, fast hasher for tool names, read eight bytes at a time.
///
/// The catalogue is looked up once per audited call, so SipHash's
/// flood-resistance would cost more than the whole key check. Its keys are
/// the names a server published, not text a model chose, and a lookup of a
/// model-written name costs one probe whatever the name.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = super::hash::fold_words(self.0, bytes);
    }

    fn finish(&self) -> u64 {
        // The table picks buckets by the low bits: fold the high half of a
        // product in, so that names differing only in one word's high bytes
        // (`sensor_000001_…`, `sensor_000002_…`) spread too.
        let product = u128::from(self.0) * 0x9e37_79b9_7f4a_7c15;
        (product as u64) ^ ((product >> 64) as u64)
    }
}

/// What one tool declares: the keys of its arguments, read from its schema
/// (see [`Catalog`] for what is read), with the shapes of nested values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// The arguments' own object: the top-level keys, on the hot path of
    /// every audit, kept here rather than behind an index.
    root: Object,
    /// Every shape the arguments are read against, the arguments' own
    /// first; empty when no declared key's value has a shape of its own, so
    /// such a tool's calls are scanned as before nested keys were read.
    shapes: Box<[Shape]>,
    /// Only the properties with a `default`, sorted by key: read when a
    /// warning is diagnosed, never by [`Declared::declares`].
    defaults: Box<[(Box<str>, Value)]>,
    /// What could not be read.
    notes: Box<[Note]>,
    /// The arguments' own keys were read in part only (a bound was met):
    /// the keys read are kept, and the tool is not audited.
    partial: bool,
    /// No schema was read: the listing gave none, or one that is not an
    /// object schema.
    unread: bool,
    /// The keys indexed for the diagnosis of warnings: built when an
    /// auditor takes the listing (or on the first warning that needs it),
    /// never by [`Declared::declares`].
    diagnosis: Lazy<ToolIndex>,
}

impl Declared {
    /// Reads what a JSON schema declares, or `None` when the schema cannot
    /// be read at all (not an object, or `properties` not an object). A
    /// schema that cannot be read whole declares nothing, with
    /// [notes](Declared::notes) saying why.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Declared;
    /// use serde_json::json;
    ///
    /// let declared = Declared::from_schema(&json!({
    ///     "properties": {"query": {}},
    ///     "allOf": [{"$ref": "#/$defs/paging"}],
    ///     "patternProperties": {"^x-": {}},
    ///     "$defs": {"paging": {"properties": {"limit": {}, "cursor": {}}}},
    /// }))
    /// .unwrap();
    /// assert_eq!(declared.keys().collect::<Vec<_>>(), ["cursor", "limit", "query"]);
    /// assert!(declared.declares("x-trace") && !declared.declares("offset"));
    /// ```
    pub fn from_schema(schema: &Value) -> Option<Declared> {
        Declared::read(schema, MAX_SCHEMA_WORK).map(|(declared, _)| declared)
    }

    /// [`Declared::from_schema`], spending at most `budget` work; with the
    /// work spent.
    fn read(schema: &Value, budget: usize) -> Option<(Declared, usize)> {
        let read = schema::read(schema, budget)?;
        let declared = Declared {
            root: read.root,
            shapes: read.shapes.into(),
            defaults: {
                let mut defaults = read.defaults;
                defaults.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                defaults.into()
            },
            notes: read.notes.into(),
            partial: !read.complete,
            unread: false,
            diagnosis: Lazy::default(),
        };
        Some((declared, read.work))
    }

    /// What a schema that cannot be read at all declares: nothing, with a
    /// note saying so.
    fn unreadable() -> Declared {
        Declared {
            notes: Box::new([Note::new("", Problem::UnreadableSchema)]),
            ..Declared::unread()
        }
    }

    /// What a tool whose schema nests too deep to build declares:
    /// nothing, with a note saying so.
    fn too_deep() -> Declared {
        Declared {
            notes: Box::new([Note::too_deep()]),
            ..Declared::unread()
        }
    }

    /// What a tool listed without a schema declares: nothing.
    fn unread() -> Declared {
        Declared {
            unread: true,
            ..Declared::default()
        }
    }

    /// Whether a schema was read for the tool: false when it was listed
    /// with none, or with one that is not an object schema (it declares
    /// nothing then).
    pub fn has_schema(&self) -> bool {
        !self.unread
    }

    /// Whether `key` is a declared top-level key: a property, or a key
    /// matching a `patternProperties` pattern.
    #[inline(always)]
    pub fn declares(&self, key: &str) -> bool {
        self.root.declares(key)
    }

    /// Whether the tool declared no property at all (it may still declare
    /// keys by pattern, or be closed: see [`Declared::is_audited`]).
    pub fn is_empty(&self) -> bool {
        self.root.table.keys().is_empty()
    }

    /// Whether calls to the tool are audited: it declares a property or a
    /// pattern, or its schema is closed (`additionalProperties: false` or
    /// `unevaluatedProperties: false`), and it was read whole. An open
    /// schema declaring nothing is not: every key would be equally
    /// undeclared. Nor is one whose arguments' own keys could not all be
    /// read within the bounds (see [`Catalog`]): a key it did not read
    /// would be said undeclared.
    pub fn is_audited(&self) -> bool {
        !self.partial && self.root.audits()
    }

    /// Whether the schema allows no key but those it declares.
    pub fn is_closed(&self) -> bool {
        self.root.closed
    }

    /// Whether some declared key's value is an object (or an array of
    /// objects) whose own keys are audited too.
    pub fn has_nested(&self) -> bool {
        !self.shapes.is_empty()
    }

    /// The declared keys, sorted by code point.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.root.table.keys().iter().map(|k| &**k)
    }

    /// The top-level keys the schema requires (`required`, on the schema
    /// itself and through `allOf` and references) that it declares, sorted.
    /// A required key no property declares is not checked: see
    /// [`Auditor::check_required`](super::Auditor::check_required).
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Declared;
    /// use serde_json::json;
    ///
    /// let declared = Declared::from_schema(&json!({
    ///     "properties": {"path": {}, "offset": {}, "mode": {}},
    ///     "required": ["path", "ghost"],
    ///     "allOf": [{"required": ["offset"]}],
    ///     "anyOf": [{"required": ["mode"]}],
    /// }))
    /// .unwrap();
    /// assert_eq!(declared.required_keys().collect::<Vec<_>>(), ["offset", "path"]);
    /// ```
    pub fn required_keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.root.required_keys()
    }

    /// The `patternProperties` patterns that compiled, sorted.
    pub fn patterns(&self) -> impl ExactSizeIterator<Item = &str> {
        self.root.patterns.iter().map(|pattern| &*pattern.source)
    }

    /// What could not be read in the schema.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The `default` the schema gives property `key`, if it gives one.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Declared;
    /// use serde_json::json;
    ///
    /// let declared = Declared::from_schema(&json!({
    ///     "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "default": 0}},
    /// }))
    /// .unwrap();
    /// assert_eq!(declared.default_of("offset"), Some(&json!(0)));
    /// assert_eq!(declared.default_of("path"), None);
    /// ```
    pub fn default_of(&self, key: &str) -> Option<&Value> {
        let found = self
            .defaults
            .binary_search_by(|(declared, _)| (**declared).cmp(key));
        found.ok().map(|at| &self.defaults[at].1)
    }

    /// The diagnosis's index of these keys, built on first use.
    pub(crate) fn diagnosis_index(&self) -> &ToolIndex {
        self.diagnosis.get_or_init(|| ToolIndex::new(self.keys()))
    }

    /// The arguments' own object.
    pub(crate) fn root(&self) -> &Object {
        &self.root
    }

    /// Every shape, by id; empty when nothing nested is audited.
    pub(crate) fn shapes(&self) -> &[Shape] {
        &self.shapes
    }
}

impl Catalog {
    /// An empty listing: a listing of no tools, to which tools are added.
    pub fn new() -> Catalog {
        Catalog {
            listed: true,
            ..Catalog::default()
        }
    }

    /// No listing at all: what an auditor holds before the first listing
    /// and after the server's tools changed. Also [`Catalog::default`].
    pub fn none() -> Catalog {
        Catalog::default()
    }

    /// Whether this is a listing, even of no tools; false for
    /// [`Catalog::none`].
    pub fn is_listed(&self) -> bool {
        self.listed
    }

    /// Reads OpenAI function declarations (`function.name`,
    /// `function.parameters`), by the rules of every other form
    /// ([`Catalog::extend_tools`]). Declarations without a name are passed
    /// over.
    pub fn from_declarations<'a>(declarations: impl IntoIterator<Item = &'a ToolDeclaration>) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.extend_tools(declarations.into_iter().map(ToolDeclaration::as_value));
        catalog.index_tools_by_name();
        catalog
    }

    /// Reads MCP tools (`name`, `inputSchema`), as a `tools/list` result
    /// carries them. Tools without a name are passed over.
    pub fn from_mcp_tools<'a>(tools: impl IntoIterator<Item = &'a Value>) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.extend_mcp_tools(tools);
        catalog.index_tools_by_name();
        catalog
    }

    /// Adds MCP tools to this catalogue, as a further page of one listing.
    pub fn extend_mcp_tools<'a>(&mut self, tools: impl IntoIterator<Item = &'a Value>) {
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                self.insert(name, tool.get("inputSchema"));
            }
        }
    }

    /// Adds tools to this catalogue, in order, in every form a listing or a
    /// model API request writes them: MCP tools (`name`, `inputSchema`),
    /// OpenAI Chat declarations (`function.name`, `function.parameters`),
    /// Responses and OpenTelemetry ones (`name`, `parameters`), Anthropic
    /// (`name`, `input_schema`), Gemini groups (`functionDeclarations`) and
    /// Bedrock (`toolSpec.inputSchema.json`); see
    /// [`declarations`](super::declarations()).
    pub fn extend_tools<'a>(&mut self, tools: impl IntoIterator<Item = &'a Value>) {
        for tool in tools {
            for (name, schema) in super::declarations(tool) {
                self.insert(name, schema);
            }
        }
    }

    /// Adds the tools of a listing read tool by tool, as
    /// [`Catalog::extend_tools`] does; a tool whose schema nested too deep
    /// to build ([`ListedTools::unreadable`]) is listed declaring nothing,
    /// with a note saying so ([`Problem::TooDeep`]), unless a later
    /// declaration of its name was read. A tool whose name could not be
    /// read either is not listed: no call can name it.
    pub fn extend_listed(&mut self, listed: &ListedTools) {
        self.extend_tools(&listed.tools);
        for name in &listed.unreadable {
            if self
                .get_unindexed(name)
                .is_some_and(|declared| !declared.has_schema())
            {
                self.diagnosis = Lazy::default();
                self.lookup = Lazy::default();
                self.tools
                    .insert(name.as_str().into(), Arc::new(Declared::too_deep()));
            }
        }
    }

    /// Records one tool's schema; the last record of a name wins, even one
    /// that cannot be read (which leaves the tool declaring nothing: it is
    /// listed all the same).
    pub fn insert(&mut self, name: &str, schema: Option<&Value>) {
        self.diagnosis = Lazy::default();
        self.lookup = Lazy::default();
        let budget = MAX_SCHEMA_WORK.min(MAX_LISTING_WORK - self.work);
        let declared = match schema.map(|schema| Declared::read(schema, budget)) {
            Some(Some((declared, work))) => {
                self.work += work;
                declared
            }
            Some(None) => Declared::unreadable(),
            None => Declared::unread(),
        };
        self.tools.insert(name.into(), Arc::new(declared));
    }

    /// The declaration of a listed tool.
    #[inline]
    pub fn get(&self, tool: &str) -> Option<&Declared> {
        match self.lookup.get() {
            Some(lookup) => lookup.get(tool),
            None => self.get_unindexed(tool),
        }
    }

    /// [`Catalog::get`] before the lookup is built: out of line, off the
    /// path of calls against an installed catalogue.
    #[cold]
    #[inline(never)]
    fn get_unindexed(&self, tool: &str) -> Option<&Declared> {
        self.tools.get(tool).map(|declared| &**declared)
    }

    /// Builds the lookup of tools by name, once the catalogue is whole.
    fn index_tools_by_name(&self) {
        self.lookup.get_or_init(|| ToolLookup::new(&self.tools));
    }

    /// How many tools are kept.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is kept.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The names of the tools kept, sorted by code point.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.keys().map(|name| name.to_string()).collect();
        names.sort_unstable();
        names
    }

    /// The names of the tools whose declarations were read, sorted by code
    /// point: the specification's `audited-tools`, "the set the last
    /// catalogue listing left behind". A tool is among them when its schema
    /// is an object whose `properties` is an object, absent or `null`
    /// ([`Declared::has_schema`]), even when it declares nothing (its calls
    /// are then counted as
    /// [`Skip::DeclaresNothing`](super::Skip::DeclaresNothing)); a tool
    /// listed with no schema, with one that is not an object, or with a
    /// `properties` of another type is listed ([`Catalog::tool_names`]) but
    /// not among them.
    pub fn audited_tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .iter()
            .filter(|(_, declared)| declared.has_schema())
            .map(|(name, _)| name.to_owned())
            .collect();
        names.sort_unstable();
        names
    }

    /// The tools kept, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Declared)> {
        self.tools.iter().map(|(name, declared)| (&**name, &**declared))
    }

    /// Builds each tool's index for the diagnosis of warnings, if it was
    /// not built before (a declaration shared with an earlier page keeps
    /// its own): off the path of calls.
    pub(crate) fn index_tools_for_diagnosis(&self) {
        // And the lookup of tools by name.
        self.index_tools_by_name();
        for declared in self.tools.values() {
            declared.diagnosis_index();
        }
    }

    /// The diagnosis's index of which tool declares each key, built on
    /// first use.
    pub(crate) fn diagnosis_index(&self) -> &CatalogIndex {
        self.diagnosis.get_or_init(|| CatalogIndex::new(self))
    }

    /// What could not be read in the tools' schemas, each with its tool,
    /// sorted by tool: for a door to say once (an
    /// [`Auditor`](super::Auditor) does, through its sink, on
    /// [`replace_catalog`](super::Auditor::replace_catalog)).
    pub fn notes(&self) -> Vec<(&str, &Note)> {
        let mut notes: Vec<(&str, &Note)> = self
            .iter()
            .flat_map(|(tool, declared)| declared.notes().iter().map(move |note| (tool, note)))
            .collect();
        notes.sort_by(|a, b| a.0.cmp(b.0));
        notes
    }
}
