//! Keeping, in one pass over a JSON text, only the members some shape looks
//! at.
//!
//! The [`Vocabulary`] is every member name the shapes of
//! [`table`](super::table) name, each marked by how it is kept: as its raw
//! JSON text ([`Keep::Raw`]: a name, an id, a call's arguments, a list of
//! tools), opened ([`Keep::Open`]: an object or array a shape looks inside),
//! or both ([`Keep::Both`]: kept raw and opened only when a shape asks).
//! Reading a text builds a small tree of [`Node`]s: every other member is
//! skipped without being decoded, so a transcript line full of tool output
//! costs little more than checking that it is JSON.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// How a member is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// As its raw JSON text.
    Raw,
    /// Opened: an object becomes an [`Object`], an array a [`Node::Array`].
    Open,
    /// As its raw text, opened later if a shape looks inside and it is an
    /// array (a Responses request's `input` holds records; a `tool_use`
    /// block's holds arguments, never read as records).
    Both,
}

/// A member name the shapes use: its index in the vocabulary.
pub(super) type Word = u16;

/// Every member name the shapes use, and how each is kept.
#[derive(Debug, Default)]
pub(super) struct Vocabulary {
    words: Vec<(&'static str, Keep)>,
    /// The words of each length, for a lookup that compares few bytes.
    by_len: Vec<Vec<Word>>,
}

impl Vocabulary {
    /// Adds `name`, kept as `keep` (a name kept raw by one shape and opened
    /// by another is kept both ways), and returns its word.
    pub(super) fn add(&mut self, name: &'static str, keep: Keep) -> Word {
        if let Some(word) = self.find(name) {
            let kept = &mut self.words[usize::from(word)].1;
            if *kept != keep {
                *kept = Keep::Both;
            }
            return word;
        }
        let word = Word::try_from(self.words.len()).expect("fewer than 65536 member names");
        self.words.push((name, keep));
        if self.by_len.len() <= name.len() {
            self.by_len.resize(name.len() + 1, Vec::new());
        }
        self.by_len[name.len()].push(word);
        word
    }

    /// The word for `name`, added kept raw if no shape used it yet; kept as
    /// it is if one did: a condition's presence test reads a member
    /// however it is kept.
    pub(super) fn mention(&mut self, name: &'static str) -> Word {
        match self.find(name) {
            Some(word) => word,
            None => self.add(name, Keep::Raw),
        }
    }

    /// The word for `name`, if a shape uses it.
    #[inline]
    pub(super) fn find(&self, name: &str) -> Option<Word> {
        let candidates = self.by_len.get(name.len())?;
        // Most member names met are no word: a first byte rules them out
        // before any comparison of the rest.
        let first = *name.as_bytes().first()?;
        candidates.iter().copied().find(|&word| {
            let known = self.words[usize::from(word)].0.as_bytes();
            known[0] == first && known == name.as_bytes()
        })
    }

    /// How many words there are.
    pub(super) fn len(&self) -> u16 {
        self.words.len() as u16
    }

    /// How `word` is kept.
    pub(super) fn keep_of(&self, word: Word) -> Keep {
        self.words[usize::from(word)].1
    }

    /// Reads `text` (one JSON value) as a tree of the members the shapes
    /// use. `root`: the members no shape names that hold arrays are kept
    /// too, so a record of no known shape can be searched one level down.
    pub(super) fn read<'a>(&self, text: &'a str, root: bool) -> serde_json::Result<Node<'a>> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let opened = Opened {
            vocabulary: self,
            root,
            inside: None,
        };
        let node = opened.deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(node)
    }
}

/// What was kept of one JSON value.
#[derive(Debug)]
pub(super) enum Node<'a> {
    /// Raw JSON text.
    Raw(&'a RawValue),
    /// An object, with the members kept.
    Object(Object<'a>),
    /// An array, each element kept as the array was.
    Array(Vec<Node<'a>>),
    /// A value opened for looking inside that was neither an object nor an
    /// array.
    Scalar,
}

/// The members kept of one object.
#[derive(Debug, Default)]
pub(super) struct Object<'a> {
    members: Vec<(Word, Node<'a>)>,
    /// At the root only: the values of the members no shape names that are
    /// arrays, in order.
    pub other_arrays: Vec<&'a RawValue>,
    /// Whether it held members no shape names.
    pub unnamed: bool,
}

impl<'a> Object<'a> {
    /// The member named by `word`; of duplicates, the last, as the JSON
    /// parsers servers use read it.
    #[inline]
    pub(super) fn get(&self, word: Word) -> Option<&Node<'a>> {
        self.members
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, node)| node)
    }

    /// The members kept, with their words.
    pub(super) fn members(&self) -> impl Iterator<Item = (Word, &Node<'a>)> + '_ {
        self.members.iter().map(|(word, node)| (*word, node))
    }

    fn insert(&mut self, word: Word, node: Node<'a>) {
        match self.members.iter_mut().find(|(w, _)| *w == word) {
            Some(member) => member.1 = node,
            None => self.members.push((word, node)),
        }
    }
}

/// Deserializes one value to open.
struct Opened<'v> {
    vocabulary: &'v Vocabulary,
    root: bool,
    /// The member this value is (or is an element of). No shape looks for a
    /// member inside its own value (a `content` block's `content`, a tool
    /// result, is never a container of calls), so it is skipped there
    /// rather than opened: opening decodes every string in it.
    inside: Option<Word>,
}

impl<'de, 'v> DeserializeSeed<'de> for Opened<'v> {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 'v> Visitor<'de> for Opened<'v> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut object = Object::default();
        while let Some(word) = map.next_key_seed(Key(self.vocabulary))? {
            match word {
                Some(word) if self.inside == Some(word) && self.vocabulary.keep_of(word) == Keep::Open => {
                    map.next_value::<IgnoredAny>()?;
                }
                Some(word) => {
                    let node = match self.vocabulary.keep_of(word) {
                        Keep::Raw | Keep::Both => Node::Raw(map.next_value()?),
                        Keep::Open => map.next_value_seed(Opened {
                            vocabulary: self.vocabulary,
                            root: false,
                            inside: Some(word),
                        })?,
                    };
                    object.insert(word, node);
                }
                // Kept raw costs what skipping does: the text is borrowed.
                None if self.root => {
                    object.unnamed = true;
                    let raw: &RawValue = map.next_value()?;
                    if raw.get().starts_with('[') {
                        object.other_arrays.push(raw);
                    }
                }
                None => {
                    object.unnamed = true;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Node::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut elements = Vec::new();
        while let Some(element) = seq.next_element_seed(Opened { ..self })? {
            elements.push(element);
        }
        Ok(Node::Array(elements))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Scalar)
    }
}

/// Reads a member name, borrowed (decoded when it holds escapes), and looks
/// it up: no allocation per member.
struct Key<'v>(&'v Vocabulary);

impl<'de, 'v> DeserializeSeed<'de> for Key<'v> {
    type Value = Option<Word>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<Word>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'v> Visitor<'de> for Key<'v> {
    type Value = Option<Word>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Option<Word>, E> {
        Ok(self.0.find(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocabulary() -> Vocabulary {
        let mut vocabulary = Vocabulary::default();
        vocabulary.add("message", Keep::Open);
        vocabulary.add("content", Keep::Open);
        vocabulary.add("type", Keep::Raw);
        vocabulary.add("input", Keep::Raw);
        vocabulary.add("input", Keep::Open);
        vocabulary
    }

    fn raw_of<'a>(object: &'a Object<'_>, vocabulary: &Vocabulary, name: &str) -> &'a str {
        match object.get(vocabulary.find(name).unwrap()) {
            Some(Node::Raw(raw)) => raw.get(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn only_named_members_are_kept_and_opened_as_marked() {
        let v = vocabulary();
        let text = r#"{"type":"assistant","skip":{"type":"x"},"message":{"content":[{"type":"tool_use","input":{"a":1}},"text"]}}"#;
        let Node::Object(root) = v.read(text, false).unwrap() else {
            panic!("an object")
        };
        assert_eq!(raw_of(&root, &v, "type"), r#""assistant""#);
        let Some(Node::Object(message)) = root.get(v.find("message").unwrap()) else {
            panic!("message opened")
        };
        let Some(Node::Array(content)) = message.get(v.find("content").unwrap()) else {
            panic!("content opened")
        };
        let Node::Object(block) = &content[0] else {
            panic!("a block")
        };
        // Kept both ways: raw, to be opened on demand.
        assert_eq!(raw_of(block, &v, "input"), r#"{"a":1}"#);
        assert!(matches!(content[1], Node::Scalar));
    }

    #[test]
    fn a_member_inside_its_own_value_is_not_opened() {
        let v = vocabulary();
        let text = r#"{"content":[{"type":"tool_result","content":[{"type":"tool_use"}]}]}"#;
        let Node::Object(root) = v.read(text, false).unwrap() else {
            panic!("an object")
        };
        let Some(Node::Array(blocks)) = root.get(v.find("content").unwrap()) else {
            panic!("content opened")
        };
        let Node::Object(block) = &blocks[0] else {
            panic!("a block")
        };
        assert!(block.get(v.find("type").unwrap()).is_some());
        assert!(block.get(v.find("content").unwrap()).is_none());
    }

    #[test]
    fn the_last_of_duplicate_members_wins() {
        let v = vocabulary();
        let Node::Object(root) = v.read(r#"{"type":"a","type":"b"}"#, false).unwrap() else {
            panic!("an object")
        };
        assert_eq!(raw_of(&root, &v, "type"), r#""b""#);
    }

    #[test]
    fn escaped_member_names_are_decoded() {
        let v = vocabulary();
        let Node::Object(root) = v.read(r#"{"\u0074ype":"a"}"#, false).unwrap() else {
            panic!("an object")
        };
        assert_eq!(raw_of(&root, &v, "type"), r#""a""#);
    }

    #[test]
    fn at_the_root_unnamed_arrays_are_kept_raw() {
        let v = vocabulary();
        let Node::Object(root) = v.read(r#"{"loglines":[{"a":1}],"n":2,"o":{}}"#, true).unwrap() else {
            panic!("an object")
        };
        let arrays: Vec<&str> = root.other_arrays.iter().map(|raw| raw.get()).collect();
        assert_eq!(arrays, [r#"[{"a":1}]"#]);
    }

    #[test]
    fn text_that_is_not_one_json_value_is_an_error() {
        let v = vocabulary();
        for text in ["{", r#"{"a":1} x"#, "nope", ""] {
            assert!(v.read(text, true).is_err(), "{text}");
        }
    }
}
