//! The catalogue: which top-level keys each listed tool declares.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::Value;

use super::diagnosis::{CatalogIndex, Lazy, ToolIndex};
use crate::wire::ToolDeclaration;

/// The tools of one listing, each with the property names it declared.
///
/// Built from OpenAI function declarations ([`Catalog::from_declarations`]),
/// from MCP tools ([`Catalog::from_mcp_tools`]), from either
/// ([`Catalog::extend_tools`]), or page by page with
/// [`Listing`](super::Listing); all follow the same rule for what is kept:
///
/// - a schema that is not an object, or whose `properties` is present but
///   not an object, is not kept: there is nothing to check against;
/// - a schema without `properties` (or with none in it) is kept as
///   declaring nothing: listed by [`Catalog::tool_names`], never audited;
/// - when a listing repeats a name, the last declaration wins.
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
    tools: HashMap<Box<str>, Declared, BuildHasherDefault<NameHasher>>,
    /// Whether this is a listing; false for [`Catalog::none`] (the default).
    listed: bool,
    /// Which tool declares each key, for the diagnosis of warnings: built on
    /// the first warning that needs it, dropped when a tool is inserted.
    diagnosis: Lazy<CatalogIndex>,
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
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(SEED);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The property names one tool declared, sorted by code point, and the
/// `default` of those properties that give one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    keys: Box<[Box<str>]>,
    /// The fingerprint of each key, in the same order.
    prints: Box<[Fingerprint]>,
    /// An open-addressing table over `prints`: each slot holds a key's index
    /// plus one, or 0 when empty. At most half full, so a lookup probes one
    /// or two slots whatever the number of keys.
    slots: Box<[u32]>,
    /// Only the properties with a `default`, sorted by key: read when a
    /// warning is diagnosed, never by [`Declared::declares`].
    defaults: Box<[(Box<str>, Value)]>,
    /// The keys indexed for the diagnosis of warnings: built on the first
    /// warning that needs it, never by [`Declared::declares`].
    diagnosis: Lazy<ToolIndex>,
}

/// A key's length with its first and last eight bytes (overlapping, or
/// fewer, for short keys). Two keys of at most 16 bytes are equal exactly
/// when their fingerprints are; longer keys need a comparison as well.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    len: usize,
    head: u64,
    tail: u64,
}

impl Fingerprint {
    #[inline]
    fn of(bytes: &[u8]) -> Fingerprint {
        let len = bytes.len();
        let (head, tail) = if len >= 8 {
            (u64::from_le_bytes(first(bytes)), u64::from_le_bytes(last(bytes)))
        } else if len >= 4 {
            (
                u64::from(u32::from_le_bytes(first(bytes))),
                u64::from(u32::from_le_bytes(last(bytes))),
            )
        } else if len > 0 {
            let spread = [bytes[0], bytes[len / 2], bytes[len - 1], 0];
            (u64::from(u32::from_le_bytes(spread)), 0)
        } else {
            (0, 0)
        };
        Fingerprint { len, head, tail }
    }

    /// Where the fingerprint starts probing in a table of `mask + 1` slots.
    #[inline]
    fn slot(&self, mask: usize) -> usize {
        let mixed =
            (self.head ^ self.tail.rotate_left(29) ^ self.len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 32) as usize & mask
    }

    /// Whether the fingerprint holds every byte of its key.
    #[inline]
    fn is_whole(&self) -> bool {
        self.len <= 16
    }
}

/// The slot table of [`Declared`] over `prints`: a power of two at least
/// twice their number, so probing always ends at an empty slot.
fn slot_table(prints: &[Fingerprint]) -> Box<[u32]> {
    let size = (prints.len() * 2).next_power_of_two().max(4);
    let mut slots = vec![0u32; size];
    for (index, print) in prints.iter().enumerate() {
        let mut at = print.slot(size - 1);
        while slots[at] != 0 {
            at = (at + 1) & (size - 1);
        }
        slots[at] = index as u32 + 1;
    }
    slots.into()
}

#[inline]
fn first<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[..N].try_into().expect("N bytes")
}

#[inline]
fn last<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[bytes.len() - N..].try_into().expect("N bytes")
}

impl Declared {
    /// Reads the declared keys of a JSON schema, or `None` when the schema
    /// cannot be read (not an object, or `properties` not an object).
    pub fn from_schema(schema: &Value) -> Option<Declared> {
        let schema = schema.as_object()?;
        let properties = match schema.get("properties") {
            None => None,
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => return None,
        };
        let mut keys: Vec<Box<str>> = properties
            .into_iter()
            .flat_map(|properties| properties.keys().map(|k| k.as_str().into()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let prints: Box<[Fingerprint]> = keys.iter().map(|key| Fingerprint::of(key.as_bytes())).collect();
        let slots = slot_table(&prints);
        let mut defaults: Vec<(Box<str>, Value)> = properties
            .into_iter()
            .flatten()
            .filter_map(|(key, property)| Some((key.as_str().into(), property.get("default")?.clone())))
            .collect();
        defaults.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(Declared {
            keys: keys.into(),
            prints,
            slots,
            defaults: defaults.into(),
            diagnosis: Lazy::default(),
        })
    }

    /// Whether `key` is a declared property.
    #[inline]
    pub fn declares(&self, key: &str) -> bool {
        // The hot path of every audit. A fingerprint (length, first and last
        // eight bytes) settles a key in a few integer compares, and the slot
        // table finds the one fingerprint to compare: no string comparison
        // at all for keys of up to 16 bytes.
        let print = Fingerprint::of(key.as_bytes());
        let mask = self.slots.len().wrapping_sub(1);
        let mut at = print.slot(mask);
        loop {
            let Some(index) = self.slots.get(at).and_then(|&slot| slot.checked_sub(1)) else {
                return false;
            };
            let index = index as usize;
            if self.prints[index] == print && (print.is_whole() || *self.keys[index] == *key) {
                return true;
            }
            at = (at + 1) & mask;
        }
    }

    /// Whether the tool declared no property at all. Such a tool is never
    /// audited: every key would be equally undeclared.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The declared keys, sorted by code point.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.keys.iter().map(|k| &**k)
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
    /// `function.parameters`). Declarations without a name are passed over.
    pub fn from_declarations<'a>(declarations: impl IntoIterator<Item = &'a ToolDeclaration>) -> Catalog {
        let mut catalog = Catalog::new();
        for declaration in declarations {
            if let Some(name) = declaration.name() {
                catalog.insert(name, declaration.parameters());
            }
        }
        catalog
    }

    /// Reads MCP tools (`name`, `inputSchema`), as a `tools/list` result
    /// carries them. Tools without a name are passed over.
    pub fn from_mcp_tools<'a>(tools: impl IntoIterator<Item = &'a Value>) -> Catalog {
        let mut catalog = Catalog::new();
        catalog.extend_mcp_tools(tools);
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

    /// Adds tools of either shape to this catalogue, in order: OpenAI
    /// function declarations (`function.name`, `function.parameters`) and
    /// MCP tools (`name`, `inputSchema`) alike, as a listing may hold.
    pub fn extend_tools<'a>(&mut self, tools: impl IntoIterator<Item = &'a Value>) {
        for tool in tools {
            // An MCP tool may carry a vendor `function` member of its own: only
            // a `function` object with a name makes an OpenAI declaration.
            let function = tool
                .get("function")
                .filter(|f| f.get("name").is_some_and(Value::is_string));
            match function {
                Some(function) => self.insert(
                    function["name"].as_str().unwrap_or_default(),
                    function.get("parameters"),
                ),
                None => self.extend_mcp_tools([tool]),
            }
        }
    }

    /// Records one tool's schema; the last record of a name wins, even one
    /// that cannot be read (which removes the tool).
    pub fn insert(&mut self, name: &str, schema: Option<&Value>) {
        self.diagnosis = Lazy::default();
        match schema.and_then(Declared::from_schema) {
            Some(declared) => {
                self.tools.insert(name.into(), declared);
            }
            None => {
                self.tools.remove(name);
            }
        }
    }

    /// The declaration of a listed tool.
    pub fn get(&self, tool: &str) -> Option<&Declared> {
        self.tools.get(tool)
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

    /// The tools kept, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Declared)> {
        self.tools.iter().map(|(name, declared)| (&**name, declared))
    }

    /// The diagnosis's index of which tool declares each key, built on
    /// first use.
    pub(crate) fn diagnosis_index(&self) -> &CatalogIndex {
        self.diagnosis.get_or_init(|| CatalogIndex::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn declared(keys: &[&str]) -> Declared {
        let properties: serde_json::Map<String, Value> =
            keys.iter().map(|k| (k.to_string(), json!({}))).collect();
        Declared::from_schema(&json!({"properties": properties})).unwrap()
    }

    #[test]
    fn declares_exactly_the_declared_keys_at_every_length() {
        let keys = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefgh_middle_differs_ijklmnop",
            "ünïcødé",
        ];
        let set = declared(&keys);
        for key in keys {
            assert!(set.declares(key), "{key:?}");
        }
        let near = [
            "b",
            "ac",
            "abd",
            "abce",
            "abcdf",
            "abcdefh",
            "abcdefgi",
            "abcdefghj",
            "abcdefghijklmnoq",
            "abcdefghijklmnopr",
            "abcdefgh_middle_DIFFERS_ijklmnop",
            "ünïcødè",
            "abcdefghijklmnop ",
        ];
        for key in near {
            assert!(!set.declares(key), "{key:?}");
        }
    }

    #[test]
    fn a_large_declaration_is_searched_too() {
        let keys: Vec<String> = (0..100).map(|i| format!("property_{i}")).collect();
        let set = declared(&keys.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(keys.iter().all(|k| set.declares(k)));
        assert!(!set.declares("property_100"));
    }
}
