//! Following a `$ref` within the schema that holds it: `#`, a JSON
//! pointer with its escapes, an anchor, or the root's own `$id` before
//! either. Nothing is ever fetched from elsewhere.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::note::Problem;

/// What a schema's references can point at.
pub(crate) struct References<'s> {
    root: &'s Value,
    /// The root's `$id` without its fragment: a `$ref` starting with it is
    /// local.
    base: Option<&'s str>,
    /// `$anchor`, `$dynamicAnchor` and `#name` `$id`s, gathered on the first
    /// reference to one.
    anchors: Option<HashMap<&'s str, &'s Value>>,
    /// Each reference resolved so far, by its text: a definition that many
    /// places refer to is looked up once, not once per place.
    resolved: HashMap<&'s str, Result<&'s Value, Problem>>,
}

impl<'s> References<'s> {
    /// The references of the schema `root`.
    pub(super) fn of(root: &'s Value) -> References<'s> {
        let base = root
            .get("$id")
            .and_then(Value::as_str)
            .map(|id| id.split_once('#').map_or(id, |(base, _)| base))
            .filter(|base| !base.is_empty());
        References {
            root,
            base,
            anchors: None,
            resolved: HashMap::new(),
        }
    }

    /// The subschema a reference points at, within this schema: never
    /// fetched from elsewhere.
    pub(super) fn resolve(&mut self, reference: &'s str) -> Result<&'s Value, Problem> {
        if let Some(resolved) = self.resolved.get(reference) {
            return resolved.clone();
        }
        let resolved = self.look_up(reference);
        self.resolved.insert(reference, resolved.clone());
        resolved
    }

    fn look_up(&mut self, reference: &str) -> Result<&'s Value, Problem> {
        let fragment = match reference.split_once('#') {
            Some(("", fragment)) => Some(fragment),
            Some((base, fragment)) if Some(base) == self.base => Some(fragment),
            None if reference.is_empty() || Some(reference) == self.base => Some(""),
            _ => None,
        };
        let Some(fragment) = fragment else {
            return Err(Problem::RemoteRef {
                reference: reference.to_owned(),
            });
        };
        let target = match percent_decoded(fragment) {
            None => None,
            Some(fragment) if fragment.is_empty() => Some(self.root),
            Some(fragment) if fragment.starts_with('/') => pointer(self.root, &fragment),
            Some(fragment) => self.anchors().get(&*fragment).copied(),
        };
        target.ok_or_else(|| Problem::UnresolvedRef {
            reference: reference.to_owned(),
        })
    }

    /// Every anchor of the schema, by name: `$anchor`, `$dynamicAnchor`,
    /// and the `#name` form of `$id` of earlier drafts.
    fn anchors(&mut self) -> &HashMap<&'s str, &'s Value> {
        let root = self.root;
        self.anchors.get_or_insert_with(|| {
            let mut anchors = HashMap::new();
            let mut pending = vec![root];
            while let Some(value) = pending.pop() {
                match value {
                    Value::Object(members) => {
                        for keyword in ["$anchor", "$dynamicAnchor", "$id"] {
                            let name = members.get(keyword).and_then(Value::as_str);
                            let name = if keyword == "$id" {
                                name.and_then(|id| id.strip_prefix('#'))
                            } else {
                                name
                            };
                            if let Some(name) = name {
                                anchors.entry(name).or_insert(value);
                            }
                        }
                        pending.extend(members.values());
                    }
                    Value::Array(items) => pending.extend(items),
                    _ => {}
                }
            }
            anchors
        })
    }
}

/// The value `pointer` (a JSON pointer, `/$defs/a~1b/0`) points at in
/// `root`. As `Value::pointer`, without allocating for tokens that hold no
/// `~` escape, which is most of them.
fn pointer<'s>(root: &'s Value, pointer: &str) -> Option<&'s Value> {
    let mut target = root;
    for token in pointer.split('/').skip(1) {
        let token = if token.contains('~') {
            Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
        } else {
            Cow::Borrowed(token)
        };
        target = match target {
            Value::Object(members) => members.get(&*token)?,
            Value::Array(items) => items.get(array_index(&token)?)?,
            _ => return None,
        };
    }
    Some(target)
}

/// An array index as a JSON pointer writes it: digits, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    let leading_zero = token.len() > 1 && token.starts_with('0');
    if leading_zero || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// A URI fragment with its `%XX` escapes decoded; `None` when an escape is
/// malformed or the bytes are not UTF-8.
fn percent_decoded(fragment: &str) -> Option<Cow<'_, str>> {
    if !fragment.contains('%') {
        return Some(Cow::Borrowed(fragment));
    }
    let bytes = fragment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(decoded).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn percent_escapes_are_decoded_and_malformed_ones_refused() {
        assert_eq!(percent_decoded("/$defs/a%20b").as_deref(), Some("/$defs/a b"));
        assert_eq!(percent_decoded("/%7Bx%7d").as_deref(), Some("/{x}"));
        assert_eq!(percent_decoded("/%zz"), None);
        assert_eq!(percent_decoded("/%4"), None);
        assert_eq!(percent_decoded("/%ff"), None);
    }

    #[test]
    fn pointers_are_read_as_json_pointers() {
        let root = json!({"a/b": {"c~d": [1, {"e": 2}]}, "": 3});
        for (at, expected) in [
            ("/a~1b/c~0d/1/e", Some(json!(2))),
            ("/a~1b/c~0d/0", Some(json!(1))),
            ("/", Some(json!(3))),
            ("/a~1b/c~0d/01", None),
            ("/a~1b/c~0d/-", None),
            ("/missing", None),
        ] {
            assert_eq!(pointer(&root, at), expected.as_ref(), "{at}");
            assert_eq!(root.pointer(at), expected.as_ref(), "serde_json agrees on {at}");
        }
    }
}
