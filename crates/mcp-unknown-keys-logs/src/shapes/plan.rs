//! The table of shapes made ready for reading: every path turned into the
//! words of one [`Vocabulary`], and each member marked by how it is kept.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::value::RawValue;

use super::capture::{Keep, Node, Object, Vocabulary, Word};
use super::table::{
    self, CHAT_CHUNK, ChatChunkPaths, MESSAGE_EVENTS, MessageEventPaths, PLACEHOLDER, RELAYED, Reads,
    RelayedPaths, Roles, SHAPES, Shape, When,
};

/// Where a value is, from an object.
#[derive(Debug)]
pub(super) enum Path {
    /// Through these members (none: the object itself).
    Members(Box<[Word]>),
    /// An OpenTelemetry attribute: a member of `attributes` (an object or
    /// an OTLP key/value list), or a member of the object with that dotted
    /// name.
    Attribute {
        name: &'static str,
        dotted: Word,
        attributes: Word,
    },
    /// A member of the JSON object that the string at `outer` holds as
    /// text: read as text only ([`Plan::text`]).
    InString { outer: Box<Path>, member: &'static str },
}

/// A condition, made ready.
#[derive(Debug)]
pub(super) enum Condition {
    Always,
    Has(Path),
    Lacks(Path),
    Is(Path, &'static [&'static str]),
    All(Vec<Condition>),
}

/// Call roles, made ready.
#[derive(Debug)]
pub(super) struct CallPaths {
    pub name: Vec<Path>,
    pub arguments: Vec<Path>,
    pub id: Vec<Path>,
    pub server: Vec<Path>,
}

/// What an object found is, made ready.
pub(super) type Reading = Reads<CallPaths>;

/// One shape, made ready.
#[derive(Debug)]
pub(super) struct Compiled {
    pub shape: &'static Shape,
    /// A member a record must have for the shape to be there, if one.
    pub key: Option<Word>,
    /// Whether the shape's condition is settled by the value of one of the
    /// record's members (`type`, `method`, `object`): a record is offered
    /// the shape only when it holds.
    pub settled: bool,
    pub at: Path,
    pub when: Condition,
    pub reading: Reading,
    /// For [`Reads::Opened`], the member opened.
    pub opened: Option<Path>,
}

/// The members a proxy's log lines are read from: a warning's, a
/// verdict's, a note's and the summary's.
#[derive(Debug)]
pub(super) struct LoggedPaths {
    pub verdict: Path,
    pub note: Path,
    pub tool: Path,
    pub unknown_keys: Path,
    pub unknown_paths: Path,
    pub declared_keys: Path,
    pub id: Path,
    pub hints: Path,
    pub missing_keys: Path,
    pub missing_required: Path,
    pub missing_cause: Path,
    pub summary: Path,
}

/// The members a JSON-RPC message is recognised by.
#[derive(Debug)]
pub(super) struct RpcWords {
    pub jsonrpc: Word,
    pub method: Word,
    pub id: Word,
    pub result: Word,
    pub error: Word,
}

/// The members a JSON-RPC message is recognised and read by.
#[derive(Debug)]
pub(super) struct RpcPaths {
    pub words: RpcWords,
    pub jsonrpc: Path,
    pub id: Path,
    pub method: Path,
    pub result: Path,
    pub params: Path,
    /// In `params`.
    pub name: Path,
    pub arguments: Path,
    pub cursor: Path,
    pub request: Path,
    /// In `result`.
    pub tools: Path,
    pub next_cursor: Path,
}

/// At most this many shapes: a record's candidates are a bit set.
const MAX_SHAPES: usize = 128;

/// A member that makes a record a JSON-RPC message: `jsonrpc`, `method`.
const RPC_NAMED: u8 = 1;
/// `id`: a JSON-RPC message with a `result` or an `error`.
const RPC_ID: u8 = 2;
/// `result` or `error`: a JSON-RPC message with an `id`.
const RPC_ANSWER: u8 = 4;

/// Everything the walker reads with.
#[derive(Debug)]
pub(super) struct Plan {
    pub vocabulary: Vocabulary,
    pub shapes: Vec<Compiled>,
    /// Per word, the shapes (as bits, in table order) a record with that
    /// member may hold: a record is tried only against those, and against
    /// the shapes no one member announces.
    keyed: Vec<u128>,
    unkeyed: u128,
    /// Per word, what it says of a record being a JSON-RPC message
    /// ([`RPC_NAMED`], [`RPC_ID`], [`RPC_ANSWER`]): one load per member.
    rpc_role: Vec<u8>,
    /// Per word, per value of that member, the shapes whose condition the
    /// value settles.
    discriminated: Vec<HashMap<&'static str, u128>>,
    pub placeholder: Condition,
    pub chunk: ChatChunkPaths<Path>,
    pub events: MessageEventPaths<Path>,
    pub relayed: RelayedPaths<Path>,
    pub logged: LoggedPaths,
    pub rpc: RpcPaths,
    /// The members of a `tools/list` result kept on its own: `tools`, and
    /// `nextCursor`.
    pub bare_listing: [Word; 2],
    /// Where a record names its model ([`table::MODEL`]).
    pub model: Vec<Path>,
    /// Where a record says its response was cut, and the value that says
    /// so ([`table::TRUNCATED`]).
    pub truncated: Vec<(Path, &'static str)>,
}

/// What one look at a record's members decides ([`Plan::candidates`]): the
/// shapes it may hold, and whether it is a JSON-RPC message.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidates {
    /// The shapes, as a bit set in table order.
    set: u128,
    /// It has a `jsonrpc` member, a `method`, or an `id` with a `result`
    /// or an `error` (read by the core's reader, [`super::rpc`]).
    message: bool,
}

impl Candidates {
    /// Whether the record is a JSON-RPC message.
    pub(super) fn is_message(self) -> bool {
        self.message
    }

    /// The shapes, in table order.
    pub(super) fn shapes(self, plan: &Plan) -> impl Iterator<Item = &Compiled> {
        let mut set = self.set;
        std::iter::from_fn(move || {
            let at = set.trailing_zeros() as usize;
            (set != 0).then(|| {
                set &= set - 1;
                &plan.shapes[at]
            })
        })
    }
}

impl Plan {
    /// The plan of [`SHAPES`], made once.
    pub(super) fn get() -> &'static Plan {
        static PLAN: OnceLock<Plan> = OnceLock::new();
        PLAN.get_or_init(Plan::new)
    }

    fn new() -> Plan {
        let mut v = Vocabulary::default();
        assert!(SHAPES.len() <= MAX_SHAPES, "more shapes than a bit set holds");
        // Before the shapes: the gateway's shape tests for its `payload`,
        // which its paths open.
        let relayed = RELAYED.map(|p, keep| path(&mut v, p, keep));
        let shapes: Vec<Compiled> = SHAPES.iter().map(|shape| compile(&mut v, shape)).collect();
        let placeholder = condition(&mut v, PLACEHOLDER);
        let chunk = CHAT_CHUNK.map(|p, keep| path(&mut v, p, keep));
        let events = MESSAGE_EVENTS.map(|p, keep| path(&mut v, p, keep));
        let logged = LoggedPaths {
            verdict: path(&mut v, "verdict", Keep::Raw),
            note: path(&mut v, "note", Keep::Raw),
            tool: path(&mut v, "tool", Keep::Raw),
            unknown_keys: path(&mut v, "unknown_keys", Keep::Raw),
            unknown_paths: path(&mut v, "unknown_paths", Keep::Raw),
            declared_keys: path(&mut v, "declared_keys", Keep::Raw),
            id: path(&mut v, "id", Keep::Raw),
            hints: path(&mut v, "hints", Keep::Raw),
            missing_keys: path(&mut v, "missing_keys", Keep::Raw),
            missing_required: path(&mut v, "missing_required", Keep::Raw),
            missing_cause: path(&mut v, "missing_cause", Keep::Raw),
            summary: path(&mut v, "summary", Keep::Raw),
        };
        let rpc = RpcPaths {
            words: RpcWords {
                jsonrpc: v.add("jsonrpc", Keep::Raw),
                method: v.add("method", Keep::Raw),
                id: v.add("id", Keep::Raw),
                result: v.add("result", Keep::Open),
                error: v.add("error", Keep::Raw),
            },
            jsonrpc: path(&mut v, "jsonrpc", Keep::Raw),
            id: path(&mut v, "id", Keep::Raw),
            method: path(&mut v, "method", Keep::Raw),
            result: path(&mut v, "result", Keep::Open),
            params: path(&mut v, "params", Keep::Open),
            name: path(&mut v, "params.name", Keep::Raw),
            arguments: path(&mut v, "params.arguments", Keep::Raw),
            cursor: path(&mut v, "params.cursor", Keep::Raw),
            request: path(&mut v, "params.requestId", Keep::Raw),
            tools: members(&mut v, &[table::LISTING.0, table::LISTING.1], Keep::Raw),
            next_cursor: path(&mut v, "result.nextCursor", Keep::Raw),
        };
        let bare_listing = [v.add(table::LISTING.1, Keep::Raw), v.add("nextCursor", Keep::Raw)];
        let model = table::MODEL.iter().map(|p| path(&mut v, p, Keep::Raw)).collect();
        let truncated = table::TRUNCATED
            .iter()
            .map(|(p, value)| (path(&mut v, p, Keep::Raw), *value))
            .collect();
        let mut keyed = vec![0u128; usize::from(v.len())];
        let mut rpc_role = vec![0u8; usize::from(v.len())];
        for (word, role) in [
            (rpc.words.jsonrpc, RPC_NAMED),
            (rpc.words.method, RPC_NAMED),
            (rpc.words.id, RPC_ID),
            (rpc.words.result, RPC_ANSWER),
            (rpc.words.error, RPC_ANSWER),
        ] {
            rpc_role[usize::from(word)] |= role;
        }
        let mut discriminated = vec![HashMap::new(); usize::from(v.len())];
        let mut unkeyed = 0;
        for (at, shape) in shapes.iter().enumerate() {
            match (&shape.when, shape.key) {
                (Condition::Is(Path::Members(words), values), _) if shape.settled => {
                    for value in *values {
                        *discriminated[usize::from(words[0])].entry(*value).or_default() |= 1 << at;
                    }
                }
                (_, Some(word)) => keyed[usize::from(word)] |= 1 << at,
                (_, None) => unkeyed |= 1 << at,
            }
        }
        Plan {
            vocabulary: v,
            shapes,
            keyed,
            rpc_role,
            unkeyed,
            discriminated,
            placeholder,
            chunk,
            events,
            relayed,
            logged,
            rpc,
            bare_listing,
            model,
            truncated,
        }
    }

    /// Whether `record` says its response was cut at its length limit.
    pub(super) fn is_truncated(&self, record: &Object<'_>) -> bool {
        self.truncated
            .iter()
            .any(|(path, value)| self.text(record, path).as_deref() == Some(value))
    }

    /// The shapes `record` may hold, and whether it is a JSON-RPC message:
    /// found once per record (one look at each member it kept, for every
    /// record is asked), then read as often as the walker needs.
    pub(super) fn candidates(&self, record: &Object<'_>) -> Candidates {
        let mut rpc = 0;
        let mut set = self.unkeyed;
        for (word, node) in record.members() {
            let word = usize::from(word);
            rpc |= self.rpc_role[word];
            set |= self.keyed[word];
            if let (false, Node::Raw(raw)) = (self.discriminated[word].is_empty(), node)
                && let Some(value) = super::json_string(raw)
            {
                set |= self.discriminated[word].get(value.as_ref()).copied().unwrap_or(0);
            }
        }
        Candidates {
            set,
            message: rpc & RPC_NAMED != 0 || rpc & (RPC_ID | RPC_ANSWER) == RPC_ID | RPC_ANSWER,
        }
    }

    /// Whether `object` meets `condition`.
    pub(super) fn holds(&self, condition: &Condition, object: &Object<'_>) -> bool {
        match condition {
            Condition::Always => true,
            Condition::Has(path) => self.present(object, path),
            Condition::Lacks(path) => !self.present(object, path),
            Condition::All(conditions) => conditions.iter().all(|c| self.holds(c, object)),
            Condition::Is(path, values) => self.raw(object, path).is_some_and(|raw| {
                // Compared as written when the string holds no escape.
                let text = raw.get();
                match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                    Some(inner) if !inner.contains('\\') => values.contains(&inner),
                    _ => super::json_string(raw).is_some_and(|text| values.contains(&text.as_ref())),
                }
            }),
        }
    }

    /// Whether the value at `path` is there and not `null`.
    pub(super) fn present(&self, object: &Object<'_>, path: &Path) -> bool {
        match self.node(object, path) {
            Some(Node::Raw(raw)) => raw.get() != "null",
            Some(_) => true,
            None => self.raw(object, path).is_some(),
        }
    }

    /// The node at a path of members, if every member is there and each but
    /// the last is an object.
    pub(super) fn node<'n, 'a>(&self, object: &'n Object<'a>, path: &Path) -> Option<&'n Node<'a>> {
        let Path::Members(words) = path else {
            return None;
        };
        let (last, through) = words.split_last()?;
        let mut at = object;
        for word in through {
            match at.get(*word)? {
                Node::Object(inner) => at = inner,
                _ => return None,
            }
        }
        at.get(*last)
    }

    /// The raw JSON text at `path`, if it is there and not `null`.
    pub(super) fn raw<'a>(&self, object: &Object<'a>, path: &Path) -> Option<&'a RawValue> {
        let raw = match path {
            Path::Members(_) => match self.node(object, path)? {
                Node::Raw(raw) => *raw,
                _ => return None,
            },
            Path::Attribute {
                name,
                dotted,
                attributes,
            } => match object.get(*dotted) {
                Some(Node::Raw(raw)) => *raw,
                _ => match object.get(*attributes)? {
                    Node::Raw(raw) => super::attributes::find(raw, name)?,
                    _ => return None,
                },
            },
            Path::InString { .. } => return None,
        };
        (raw.get() != "null").then_some(raw)
    }

    /// The string at `path`, decoded; `None` when absent or not a string.
    pub(super) fn text<'a>(&self, object: &Object<'a>, path: &Path) -> Option<std::borrow::Cow<'a, str>> {
        if let Path::InString { outer, member } = path {
            return in_string(&self.text(object, outer)?, member).map(std::borrow::Cow::Owned);
        }
        super::json_string(self.raw(object, path)?)
    }
}

fn compile(v: &mut Vocabulary, shape: &'static Shape) -> Compiled {
    let at_keep = match shape.reads {
        Reads::Catalogue | Reads::Embedded => Keep::Raw,
        _ => Keep::Open,
    };
    let at = path(v, shape.at, at_keep);
    let when = condition(v, shape.when);
    let key = first_word(&at)
        .or_else(|| condition_word(&when))
        .or_else(|| match shape.reads {
            Reads::Call(roles) => roles
                .name
                .first()
                .and_then(|name| first_word(&path(v, name, Keep::Raw))),
            _ => None,
        });
    // `type` is `tool_use`: settled by one look at the record's `type`.
    let settled = matches!(&when, Condition::Is(Path::Members(words), _) if words.len() == 1)
        && matches!(&at, Path::Members(words) if words.is_empty());
    let reading = shape.reads.map(|roles| call_paths(v, roles));
    let opened = match shape.reads {
        Reads::Opened(member) => Some(path(v, member, Keep::Raw)),
        _ => None,
    };
    Compiled {
        shape,
        key,
        settled,
        at,
        when,
        reading,
        opened,
    }
}

fn first_word(path: &Path) -> Option<Word> {
    match path {
        Path::Members(words) => words.first().copied(),
        Path::Attribute { .. } | Path::InString { .. } => None,
    }
}

/// A member a record meeting `when` must have, if one: of several
/// conditions, the first that names one.
fn condition_word(when: &Condition) -> Option<Word> {
    match when {
        Condition::Has(path) | Condition::Is(path, _) => first_word(path),
        Condition::All(conditions) => conditions.iter().find_map(condition_word),
        Condition::Always | Condition::Lacks(_) => None,
    }
}

/// The string member `member` of the JSON object `text` holds; `None`
/// when `text` is no such object (cut short, say) or the member no string.
fn in_string(text: &str, member: &str) -> Option<String> {
    let object: std::collections::BTreeMap<std::borrow::Cow<'_, str>, &RawValue> =
        serde_json::from_str(text).ok()?;
    super::json_string(object.get(member)?).map(std::borrow::Cow::into_owned)
}

fn call_paths(v: &mut Vocabulary, roles: &Roles) -> CallPaths {
    let mut paths =
        |list: &[&'static str]| -> Vec<Path> { list.iter().map(|p| path(v, p, Keep::Raw)).collect() };
    CallPaths {
        name: paths(roles.name),
        arguments: paths(roles.arguments),
        id: paths(roles.id),
        server: paths(roles.server),
    }
}

fn condition(v: &mut Vocabulary, when: When) -> Condition {
    match when {
        When::Always => Condition::Always,
        When::Has(p) => Condition::Has(presence(v, p)),
        When::Lacks(p) => Condition::Lacks(presence(v, p)),
        When::Is(p, values) => Condition::Is(path(v, p, Keep::Raw), values),
        When::All(all) => Condition::All(all.iter().map(|when| condition(v, *when)).collect()),
    }
}

/// The path of a member whose presence is tested: its last member keeps
/// whatever keeping the shapes before gave it (a member opened for its
/// records is not kept raw as well for a presence test).
fn presence(v: &mut Vocabulary, text: &'static str) -> Path {
    match text.rsplit_once('.') {
        None if !text.starts_with('@') => Path::Members(Box::new([v.mention(text)])),
        _ => path(v, text, Keep::Raw),
    }
}

/// Turns `text` into a path, adding its members to the vocabulary: each but
/// the last opened, the last kept as `last`.
fn path(v: &mut Vocabulary, text: &'static str, last: Keep) -> Path {
    if let Some((outer, member)) = text.split_once('#') {
        let outer = Box::new(path(v, outer, Keep::Raw));
        return Path::InString { outer, member };
    }
    if let Some(name) = text.strip_prefix('@') {
        return Path::Attribute {
            name,
            dotted: v.add(name, Keep::Raw),
            attributes: v.add(table::ATTRIBUTES, Keep::Raw),
        };
    }
    if text.is_empty() {
        return Path::Members(Box::new([]));
    }
    let parts: Vec<&'static str> = text.split('.').collect();
    members(v, &parts, last)
}

/// The path through `parts`, each but the last opened, the last kept as
/// `last`.
fn members(v: &mut Vocabulary, parts: &[&'static str], last: Keep) -> Path {
    let (final_member, through) = parts.split_last().expect("a path of one member at least");
    let mut words: Vec<Word> = through.iter().map(|m| v.add(m, Keep::Open)).collect();
    words.push(v.add(final_member, last));
    Path::Members(words.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_compiles_and_members_are_kept_as_their_uses_need() {
        let plan = Plan::get();
        assert_eq!(plan.shapes.len(), SHAPES.len());
        let keep = |name: &str| {
            let word = plan.vocabulary.find(name).unwrap_or_else(|| panic!("{name}"));
            plan.vocabulary.keep_of(word)
        };
        assert_eq!(keep("message"), Keep::Open);
        assert_eq!(keep("arguments"), Keep::Raw);
        // A Responses request's `input` holds records; a tool_use's holds
        // the arguments.
        assert_eq!(keep("input"), Keep::Both);
        assert_eq!(keep("tools"), Keep::Raw);
        assert_eq!(keep("gen_ai.tool.name"), Keep::Raw);
    }
}
