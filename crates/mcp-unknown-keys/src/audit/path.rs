//! How a nested key is written: a path from the arguments' top level.
//!
//! - an object's key follows its parent after a dot: `options.recursve`;
//! - an array's items are `[]`, whatever their index: `entities[].age`;
//! - a key that is empty, or holds `.`, `[`, `]`, `"`, `\` or a control
//!   character, is written as a JSON string in brackets:
//!   `config["a.b"].c`, `["odd key"].x` at the top, `tags[""]`.
//!
//! So every path reads back to one place in the arguments, and two different
//! places never share a path.

/// One step from a value to a value inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// The value of this key of an object.
    Key(&'a str),
    /// Any item of an array.
    Items,
}

/// Appends one step to `path`.
pub(crate) fn push(path: &mut String, step: Step<'_>) {
    match step {
        Step::Items => path.push_str("[]"),
        Step::Key(key) if needs_quoting(key) => {
            path.push('[');
            path.push_str(&serde_json::to_string(key).expect("a string serialises"));
            path.push(']');
        }
        Step::Key(key) => {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
        }
    }
}

/// The path of `steps`, outermost first.
#[cfg(test)]
pub(crate) fn render<'a>(steps: impl IntoIterator<Item = Step<'a>>) -> String {
    let mut path = String::new();
    for step in steps {
        push(&mut path, step);
    }
    path
}

fn needs_quoting(key: &str) -> bool {
    key.is_empty()
        || key
            .chars()
            .any(|c| matches!(c, '.' | '[' | ']' | '"' | '\\') || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_dots_and_items_are_brackets() {
        use Step::*;
        assert_eq!(render([Key("options"), Key("recursve")]), "options.recursve");
        assert_eq!(render([Key("entities"), Items, Key("age")]), "entities[].age");
        assert_eq!(render([Key("grid"), Items, Items, Key("x")]), "grid[][].x");
    }

    #[test]
    fn keys_that_would_read_as_syntax_are_quoted() {
        use Step::*;
        assert_eq!(
            render([Key("config"), Key("a.b"), Key("c")]),
            r#"config["a.b"].c"#
        );
        assert_eq!(render([Key("odd [key]"), Key("x")]), r#"["odd [key]"].x"#);
        assert_eq!(render([Key("tags"), Key("")]), r#"tags[""]"#);
        assert_eq!(render([Key("a"), Key("say \"hi\"\n")]), r#"a["say \"hi\"\n"]"#);
        assert_eq!(render([Key("a b"), Key("ünï")]), "a b.ünï");
    }
}
