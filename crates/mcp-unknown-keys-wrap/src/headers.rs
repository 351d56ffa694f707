//! A remote server's `headers`, kept off the bridge's command line.
//!
//! A header value is often a secret (`Authorization: Bearer …`), and a
//! command line is readable by every process of the user (`ps`). So wrap
//! moves each value into the entry's `env`, under a variable of its own, and
//! gives the bridge only a reference the bridge expands from its
//! environment:
//!
//! ```text
//! "headers": {"Authorization": "Bearer ${TOKEN}"}
//! "env": {"MUK_HEADER_1": "Bearer ${TOKEN}"}, "args": [… "--header", "Authorization: ${MUK_HEADER_1}"]
//! ```
//!
//! Without an `env` member the `headers` member simply becomes it: its key
//! and its members' keys are renamed and every other byte stays, comments
//! included, and the host resolves its own references in `env` as it did
//! in `headers`. Unwrap renames them back.

use super::edit::{Edit, json_string, remove_member, separator_after, slice};
use super::jsonc::{Member, Span};

/// The prefix of the variables that hold header values.
pub(crate) const VARIABLE_PREFIX: &str = "MUK_HEADER_";

/// The edits that move a `headers` member's values into `env`, with the
/// members `extra` (text: the URL's variables) added there too, and the
/// `--header` arguments (decoded) that refer to them.
pub(crate) fn wrap(
    text: &str,
    members: &[Member],
    headers: usize,
    env: Option<usize>,
    extra: &[String],
) -> (Vec<Edit>, Vec<String>) {
    let pairs = members[headers].value.as_object().unwrap_or_default();
    let taken: Vec<&str> = env
        .and_then(|i| members[i].value.as_object())
        .unwrap_or_default()
        .iter()
        .map(|member| member.key.as_str())
        .collect();
    let names = variable_names(VARIABLE_PREFIX, pairs.len(), &taken);
    let arguments = pairs
        .iter()
        .zip(&names)
        .map(|(pair, name)| format!("{}: ${{{name}}}", pair.key))
        .collect();
    let edits = match env.map(|i| &members[i]) {
        None => {
            let mut edits = vec![Edit::replace(members[headers].key_span, json_string("env"))];
            edits.extend(
                pairs
                    .iter()
                    .zip(&names)
                    .map(|(pair, name)| Edit::replace(pair.key_span, json_string(name))),
            );
            if !extra.is_empty() {
                edits.push(append(text, &members[headers], &extra.join(", ")));
            }
            edits
        }
        // An entry that has both (no host writes one): the values join the
        // variables already there, and `headers` goes.
        Some(env) => {
            let added: Vec<String> = pairs
                .iter()
                .zip(&names)
                .map(|(pair, name)| format!("{}: {}", json_string(name), slice(text, pair.value.span)))
                .chain(extra.iter().cloned())
                .collect();
            let mut edits = vec![append(text, env, &added.join(", "))];
            edits.extend(remove_member(text, members, headers));
            edits
        }
    };
    (edits, arguments)
}

/// The edit that adds `members` (text) at the end of an object member,
/// after a separator like the one before its last member (a new line when
/// each member has its own). Several members added to an object laid out
/// one per line share the new line.
pub(crate) fn append(text: &str, object: &Member, added: &str) -> Edit {
    match object.value.as_object().and_then(<[Member]>::last) {
        Some(last) => Edit::insert(
            last.value.span.end,
            format!("{}{added}", separator_after(text, last)),
        ),
        None => Edit::insert(object.value.span.end - 1, added.to_owned()),
    }
}

/// `MUK_HEADER_1`, `MUK_HEADER_2`, … (or another `prefix`): `count` names
/// not among `taken`.
pub(crate) fn variable_names(prefix: &str, count: usize, taken: &[&str]) -> Vec<String> {
    (1..)
        .map(|n| format!("{prefix}{n}"))
        .filter(|name| !taken.contains(&name.as_str()))
        .take(count)
        .collect()
}

/// How unwrap gives back a wrapped entry's headers.
pub(crate) enum Restore {
    /// `env` holds the header values and nothing else, in the headers'
    /// order: rename it `headers` (with these edits) and drop `args`.
    Rename(Vec<Edit>),
    /// Write `"headers": {…}` (these members, values resolved) in place of
    /// `args`, and make these edits to `env` (its header variables taken
    /// out when they can be in one piece).
    Write { pairs: Vec<String>, env: Vec<Edit> },
}

/// How to give back `headers` (the `--header` arguments, decoded) of an
/// entry whose `env` member is `env`, the variables at `url` (the URL's,
/// put back in it already) taken out of `env` too.
pub(crate) fn restore(
    text: &str,
    members: &[Member],
    headers: &[String],
    env: Option<usize>,
    url: &[usize],
) -> Restore {
    let variables = env.and_then(|i| members[i].value.as_object()).unwrap_or_default();
    let split: Vec<(&str, &str, Option<usize>)> = headers
        .iter()
        .map(|header| {
            let (key, value) = header.split_once(':').unwrap_or((header, ""));
            let value = value.trim_start_matches([' ', '\t']);
            let held = reference(value).and_then(|name| {
                variables
                    .iter()
                    .position(|v| v.key == name && v.value.as_str().is_some())
            });
            (key.trim(), value, held)
        })
        .collect();
    let mut held: Vec<usize> = split.iter().filter_map(|(_, _, held)| *held).collect();
    let mut url = url.to_vec();
    url.sort_unstable();
    url.dedup();
    // The header variables first, in order, then the URL's, as wrap wrote
    // them.
    let in_order = held.len() == split.len()
        && held.iter().copied().eq(0..split.len())
        && url.iter().copied().eq(split.len()..variables.len());
    if let (Some(env), true, false) = (env, in_order, split.is_empty()) {
        let mut edits = vec![Edit::replace(members[env].key_span, json_string("headers"))];
        edits.extend(
            split
                .iter()
                .zip(variables)
                .map(|((key, _, _), variable)| Edit::replace(variable.key_span, json_string(key))),
        );
        if let Some(&first) = url.first() {
            edits.push(Edit::delete(Span {
                start: variables[first - 1].value.span.end,
                end: variables[variables.len() - 1].value.span.end,
            }));
        }
        return Restore::Rename(edits);
    }
    held.extend(url);
    let pairs = split
        .iter()
        .map(|(key, value, held)| {
            let value = match held {
                Some(i) => slice(text, variables[*i].value.span).to_owned(),
                None => json_string(value),
            };
            format!("{}: {value}", json_string(key))
        })
        .collect();
    Restore::Write {
        pairs,
        env: env.map(|i| forget(text, members, i, &held)).unwrap_or_default(),
    }
}

/// The edits that take the variables at `held` out of the `env` member at
/// `env`: all of them (the member goes), or a run at its end; otherwise
/// they stay (harmless, and no edit can take them out without touching
/// what is not wrap's).
fn forget(text: &str, members: &[Member], env: usize, held: &[usize]) -> Vec<Edit> {
    let variables = members[env].value.as_object().unwrap_or_default();
    let mut sorted = held.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let Some(&first) = sorted.first() else {
        return Vec::new();
    };
    if !sorted.iter().copied().eq(first..variables.len()) {
        return Vec::new();
    }
    if first == 0 {
        return remove_member(text, members, env);
    }
    vec![Edit::delete(Span {
        start: variables[first - 1].value.span.end,
        end: variables[variables.len() - 1].value.span.end,
    })]
}

/// `NAME` when `value` is exactly `${NAME}` with NAME one of wrap's.
fn reference(value: &str) -> Option<&str> {
    value
        .strip_prefix("${")?
        .strip_suffix('}')
        .filter(|name| name.starts_with(VARIABLE_PREFIX))
}
