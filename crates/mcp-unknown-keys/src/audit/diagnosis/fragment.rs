//! Whether a key is a piece of another argument's text.
//!
//! A generation cut short and closed into valid JSON leaves a piece of one
//! value as a key of its own: `{"prompt":"Investigate the","nvestigate":…}`.
//! The call's string values are gathered once per warning into [`Texts`],
//! and each key is looked for in it in one pass.

use serde_json::{Map, Value};

/// Every string value of a call's arguments, nested ones included, in one
/// text, with the top-level member each came from.
pub(super) struct Texts<'a> {
    /// The strings, each followed by a `\0`. A key searched for is
    /// identifier-like, so holds no `\0`: no match spans two strings.
    text: String,
    /// The end, in `text`, of each top-level member's strings, with the
    /// member's name; in the order of `text`.
    members: Vec<(usize, &'a str)>,
}

impl<'a> Texts<'a> {
    /// Gathers the strings of `arguments`. Walks with a stack of its own,
    /// not by recursion: an object handed in already parsed may be nested
    /// arbitrarily deep.
    pub(super) fn of(arguments: &'a Map<String, Value>) -> Texts<'a> {
        let mut text = String::new();
        let mut members = Vec::with_capacity(arguments.len());
        let mut pending = Vec::new();
        for (name, value) in arguments {
            pending.push(value);
            while let Some(value) = pending.pop() {
                match value {
                    Value::String(string) => {
                        text.push_str(string);
                        text.push('\0');
                    }
                    Value::Array(items) => pending.extend(items),
                    Value::Object(members) => pending.extend(members.values()),
                    Value::Null | Value::Bool(_) | Value::Number(_) => {}
                }
            }
            members.push((text.len(), name.as_str()));
        }
        Texts { text, members }
    }

    /// How many bytes one search reads at most.
    pub(super) fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether `piece` occurs in the strings of a member other than
    /// `member`.
    pub(super) fn found_outside(&self, piece: &str, member: &str) -> bool {
        // Most keys are not in the text at all: `contains` says so several
        // times faster than `find` (it has a vectorised path that `find`
        // has not), and only a key found is then placed.
        if !self.text.contains(piece) {
            return false;
        }
        let mut from = 0;
        while let Some(at) = self.text[from..].find(piece) {
            let at = from + at;
            let stretch = self.members.partition_point(|&(end, _)| end <= at);
            let Some(&(end, owner)) = self.members.get(stretch) else {
                return false;
            };
            if owner != member {
                return true;
            }
            // Found only in the key's own value: look past it.
            from = end;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(arguments: &Value) -> Texts<'_> {
        Texts::of(arguments.as_object().unwrap())
    }

    #[test]
    fn a_piece_is_found_in_another_members_strings_at_any_depth() {
        let arguments =
            json!({"prompt": "Investigate the", "nested": {"a": [1, "deep text"]}, "nvestigate": "x"});
        let texts = texts(&arguments);
        assert!(texts.found_outside("nvestigate", "nvestigate"));
        assert!(texts.found_outside("deep", "nvestigate"));
        assert!(!texts.found_outside("absent", "nvestigate"));
    }

    #[test]
    fn a_piece_found_only_in_its_own_value_is_not_found() {
        let arguments = json!({"lang": "lang lang", "query": "python"});
        let texts = texts(&arguments);
        assert!(!texts.found_outside("lang", "lang"));
        let arguments = json!({"lang": "lang", "query": "a lang"});
        assert!(self::texts(&arguments).found_outside("lang", "lang"));
    }

    #[test]
    fn no_match_spans_two_strings() {
        let arguments = json!({"a": "ab", "b": "cd"});
        assert!(!texts(&arguments).found_outside("bc", "x"));
    }

    #[test]
    fn deeply_nested_values_are_walked_without_recursion() {
        let mut value = json!("needle");
        for _ in 0..10_000 {
            value = Value::Array(vec![value]);
        }
        let arguments = Value::Object([("deep".to_owned(), value)].into_iter().collect());
        assert!(texts(&arguments).found_outside("needle", "other"));
        // Dropping a deep `Value` recurses in serde_json: leak it instead.
        std::mem::forget(arguments);
    }
}
