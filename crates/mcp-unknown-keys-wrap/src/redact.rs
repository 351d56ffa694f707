//! What a dry run shows of a configuration: its text with every value that
//! may be a secret put out of sight, line for line, so that the diff can
//! show these lines in place of the real ones.
//!
//! A value wrap moves into a variable is shown as that variable
//! (`${MUK_HEADER_1}`, `https://${MUK_URL_1}@host/mcp?${MUK_URL_2}`), as
//! wrap names it; an `env` value as its own variable (`${GITHUB_TOKEN}`).
//! Where no variable holds it, a value is shown as [`HIDDEN`]: a header or
//! a URL's userinfo and query in a server's `args` (`mcp-remote URL
//! --header 'Authorization: …'`), the value of a flag whose name says it
//! holds a secret (`--api-key`), and, anywhere in the document, a string
//! member whose key says so (`"primaryApiKey"`, `"clientSecret"`). A
//! reference (`${NAME}`, `${env:NAME}`) holds no secret and is shown as it
//! is.

use std::collections::BTreeMap;

use super::document::{self, MapPath};
use super::edit::{Edit, apply, json_string};
use super::headers::{self, variable_names};
use super::jsonc::{self, Member, Value};
use super::url as urls;

/// What stands for a secret that no variable holds.
pub(crate) const HIDDEN: &str = "***";

/// Words in a key or a flag's name that say its value is a secret (compared
/// without case, `-` or `_`).
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "passw",
    "apikey",
    "auth",
    "credential",
    "privatekey",
    "accesskey",
    "cookie",
];

/// `text` with every value that may be a secret replaced, each on the line
/// it was on; `None` when `text` is not a configuration `plan` reads (then
/// nothing of it may be shown).
pub(crate) fn shown(text: &str, maps: &[MapPath]) -> Option<String> {
    let root = jsonc::parse(text).ok()?;
    // One replacement per string token, by where it starts: an entry's own
    // rule (the variable's name) wins over a key's name (`***`).
    let mut hidden = BTreeMap::new();
    hide_named(&root, &mut hidden);
    for entry in document::entries(&root, maps).ok()? {
        hide_in_entry(entry, &mut hidden);
    }
    let edits: Vec<Edit> = hidden.into_values().collect();
    Some(apply(text, &edits))
}

/// [`shown`] for a Claude Code settings file, which lists no servers but
/// may hold secrets: its `env` values shown as their variables, and any
/// member whose key names a secret hidden.
pub(crate) fn shown_settings(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return Some(text.to_owned());
    }
    let root = jsonc::parse(text).ok()?;
    let mut hidden = BTreeMap::new();
    hide_named(&root, &mut hidden);
    let env = member(root.as_object()?, "env")
        .and_then(Value::as_object)
        .unwrap_or_default();
    for variable in env {
        hide(&variable.value, &reference(&variable.key), &mut hidden);
    }
    let edits: Vec<Edit> = hidden.into_values().collect();
    Some(apply(text, &edits))
}

/// Replaces the string token `value` with `shown` (a decoded string).
fn hide(value: &Value, shown: &str, hidden: &mut BTreeMap<usize, Edit>) {
    if value.as_str().is_some() {
        hidden.insert(value.span.start, Edit::replace(value.span, json_string(shown)));
    }
}

/// Every string member, at any depth, whose key names a secret.
fn hide_named(value: &Value, hidden: &mut BTreeMap<usize, Edit>) {
    if let Some(members) = value.as_object() {
        for member in members {
            if names_a_secret(&member.key) && !is_reference(member.value.as_str().unwrap_or_default()) {
                hide(&member.value, HIDDEN, hidden);
            }
            hide_named(&member.value, hidden);
        }
    }
    for element in value.as_array().unwrap_or_default() {
        hide_named(element, hidden);
    }
}

/// A server entry's `env` values, `headers` values, URL secrets and
/// secret-looking arguments.
fn hide_in_entry(entry: &Value, hidden: &mut BTreeMap<usize, Edit>) {
    let members = entry.as_object().unwrap_or_default();
    let env = member(members, "env")
        .and_then(Value::as_object)
        .unwrap_or_default();
    for variable in env {
        hide(&variable.value, &reference(&variable.key), hidden);
    }
    // Named as wrap names them: past the variables `env` already holds.
    let taken: Vec<&str> = env.iter().map(|variable| variable.key.as_str()).collect();
    if let Some(pairs) = member(members, "headers").and_then(Value::as_object) {
        let names = variable_names(headers::VARIABLE_PREFIX, pairs.len(), &taken);
        for (pair, name) in pairs.iter().zip(&names) {
            hide(&pair.value, &reference(name), hidden);
        }
    }
    for key in ["url", "serverUrl"] {
        let Some(url) = member(members, key) else {
            continue;
        };
        let address = url.as_str().unwrap_or_default();
        let parts = urls::secrets(address);
        if !parts.is_empty() {
            let names = variable_names(urls::VARIABLE_PREFIX, parts.len(), &taken);
            hide(url, &urls::with_references(address, &parts, &names), hidden);
        }
    }
    if let Some(args) = member(members, "args").and_then(Value::as_array) {
        hide_arguments(args, hidden);
    }
}

/// In a command's arguments: a `--header`'s value, a flag's value when the
/// flag names a secret, and the userinfo and query of any URL.
fn hide_arguments(args: &[Value], hidden: &mut BTreeMap<usize, Edit>) {
    let mut flag: Option<&str> = None;
    for value in args {
        let Some(arg) = value.as_str() else {
            flag = None;
            continue;
        };
        let shown = match (flag, arg.split_once('=')) {
            (Some(flag), _) => flag_value_shown(flag, arg),
            (None, Some((flag, value))) if flag.starts_with('-') => {
                flag_value_shown(flag, value).map(|value| format!("{flag}={value}"))
            }
            _ => url_shown(arg),
        };
        if let Some(shown) = shown {
            hide(value, &shown, hidden);
        }
        flag = arg
            .starts_with('-')
            .then_some(arg)
            .filter(|arg| !arg.contains('='));
    }
}

/// How the value of `flag` is shown, when it is not shown as it is.
fn flag_value_shown(flag: &str, value: &str) -> Option<String> {
    if flag == "--header" || flag == "-H" {
        let (name, value) = value.split_once(':').unwrap_or((value, ""));
        let value = value.trim_matches([' ', '\t']);
        return (!value.is_empty() && !is_reference(value)).then(|| format!("{name}: {HIDDEN}"));
    }
    if names_a_secret(flag) {
        return (!is_reference(value)).then(|| HIDDEN.to_owned());
    }
    url_shown(value)
}

/// A URL with its userinfo and query hidden, those that are not references
/// already; `None` when nothing is hidden.
fn url_shown(url: &str) -> Option<String> {
    let parts: Vec<_> = urls::secrets(url)
        .into_iter()
        .filter(|part| !is_reference(&url[part.clone()]))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut shown = String::with_capacity(url.len());
    let mut at = 0;
    for part in parts {
        shown.push_str(&url[at..part.start]);
        shown.push_str(HIDDEN);
        at = part.end;
    }
    shown.push_str(&url[at..]);
    Some(shown)
}

/// The value of the first member named `key`.
fn member<'v>(members: &'v [Member], key: &str) -> Option<&'v Value> {
    members
        .iter()
        .find(|member| member.key == key)
        .map(|member| &member.value)
}

/// `${NAME}`.
fn reference(name: &str) -> String {
    format!("${{{name}}}")
}

/// Whether `value` is one reference a host or the bridge expands
/// (`${NAME}`, `${env:NAME}`, `${input:id}`), and nothing else.
fn is_reference(value: &str) -> bool {
    value
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| !name.is_empty() && !name.contains(['$', '{', '}']))
}

/// Whether a key or a flag's name says its value is a secret.
fn names_a_secret(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SECRET_WORDS.iter().any(|word| folded.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &[MapPath] = &[&["mcpServers"]];

    #[test]
    fn values_are_shown_as_their_variables_and_lines_stay_lines() {
        let text = concat!(
            "{\"accessToken\": \"t-1\", \"theme\": \"dark\",\n",
            " \"mcpServers\": {\"r\": {\"url\": \"https://u:p-2@h/mcp?k=q-3#f\",\n",
            "   \"env\": {\"A\": \"e-4\"}, \"headers\": {\"Authorization\": \"Bearer h-5\", \"X\": \"${env:X}\"}},\n",
            "  \"s\": {\"command\": \"npx\", \"args\": [\"mcp-remote\", \"https://h/mcp?key=a-6\", \"--header\",\n",
            "   \"Authorization: Bearer a-7\", \"--header\", \"X: ${X}\", \"--api-key=a-8\", \"--token\", \"a-9\", \"-v\"]}}}\n",
        );
        let shown = shown(text, MAPS).unwrap();
        assert_eq!(
            shown,
            concat!(
                "{\"accessToken\": \"***\", \"theme\": \"dark\",\n",
                " \"mcpServers\": {\"r\": {\"url\": \"https://${MUK_URL_1}@h/mcp?${MUK_URL_2}#f\",\n",
                "   \"env\": {\"A\": \"${A}\"}, \"headers\": {\"Authorization\": \"${MUK_HEADER_1}\", \"X\": \"${MUK_HEADER_2}\"}},\n",
                "  \"s\": {\"command\": \"npx\", \"args\": [\"mcp-remote\", \"https://h/mcp?***\", \"--header\",\n",
                "   \"Authorization: ***\", \"--header\", \"X: ${X}\", \"--api-key=***\", \"--token\", \"***\", \"-v\"]}}}\n",
            )
        );
    }

    #[test]
    fn text_that_is_no_configuration_shows_nothing() {
        assert_eq!(shown("{\"mcpServers\": [", MAPS), None);
        assert_eq!(shown("{\"mcpServers\": 1}", MAPS), None);
    }

    #[test]
    fn references_are_told_from_values() {
        assert!(is_reference("${MUK_URL_1}") && is_reference("${env:KEY}"));
        assert!(!is_reference("Bearer ${TOKEN}") && !is_reference("${}") && !is_reference("${a}${b}"));
        assert!(names_a_secret("primaryApiKey") && names_a_secret("--github-token"));
        assert!(!names_a_secret("--name") && !names_a_secret("command"));
    }
}
