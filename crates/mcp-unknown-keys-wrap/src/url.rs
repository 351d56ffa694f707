//! A remote server's URL, its secrets kept off the bridge's command line.
//!
//! Hosted servers often carry their key in the URL itself: in the userinfo
//! (`https://user:key@host/mcp`) or in the query (`…/mcp?api_key=…`). A
//! command line is readable by every process of the user (`ps`), so wrap
//! moves each of those two parts into the entry's `env`, as it does header
//! values, and gives the bridge a reference it expands from its
//! environment (`--url` expands `${VAR}` as `--header` does):
//!
//! ```text
//! "url": "https://mcp.example.com/mcp?api_key=sk-1"
//! "args": [… "--url", "https://mcp.example.com/mcp?${MUK_URL_1}"], "env": {"MUK_URL_1": "api_key=sk-1"}
//! ```
//!
//! The path stays: it is what tells one server from another in a report,
//! and a key in the path (`/s/<key>/mcp`) cannot be told from a name
//! there. The fragment stays too: it is never sent.

use std::ops::Range;

use super::edit::json_string;
use super::jsonc::Member;

/// The prefix of the variables that hold a URL's secret parts.
pub(crate) const VARIABLE_PREFIX: &str = "MUK_URL_";

/// The byte ranges of the parts of `url` that may hold a secret: its
/// userinfo (before the `@` of the authority) and its query (after `?`,
/// before `#`), each when not empty. None for text that is not
/// `scheme://…`.
pub(crate) fn secrets(url: &str) -> Vec<Range<usize>> {
    let Some(scheme_end) = url.find("://") else {
        return Vec::new();
    };
    let authority_start = scheme_end + 3;
    let authority_end = url[authority_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| authority_start + at);
    let mut parts = Vec::new();
    if let Some(at) = url[authority_start..authority_end].rfind('@')
        && at > 0
    {
        parts.push(authority_start..authority_start + at);
    }
    let fragment = url[authority_end..]
        .find('#')
        .map_or(url.len(), |at| authority_end + at);
    if let Some(question) = url[authority_end..fragment].find('?') {
        let start = authority_end + question + 1;
        if start < fragment {
            parts.push(start..fragment);
        }
    }
    parts
}

/// `url` with each of `parts` (as [`secrets`] gives them) replaced by a
/// reference to the variable of the same place in `names`.
pub(crate) fn with_references(url: &str, parts: &[Range<usize>], names: &[String]) -> String {
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    for (part, name) in parts.iter().zip(names) {
        out.push_str(&url[at..part.start]);
        out.push_str(&format!("${{{name}}}"));
        at = part.end;
    }
    out.push_str(&url[at..]);
    out
}

/// The `--url` argument `token` (a JSON string token) with wrap's
/// references put back from the `env` members `variables`, as a JSON
/// string token, and the indices of the variables it used. A URL without
/// such references is given back as it was written, byte for byte.
pub(crate) fn restore(token: &str, variables: &[Member]) -> (String, Vec<usize>) {
    let Ok(url) = serde_json::from_str::<String>(token) else {
        return (token.to_owned(), Vec::new());
    };
    let mut used = Vec::new();
    let mut out = String::with_capacity(url.len());
    let mut rest = url.as_str();
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let held = after.find('}').and_then(|end| {
            let name = after[..end]
                .strip_prefix(VARIABLE_PREFIX)
                .map(|_| &after[..end])?;
            let index = variables.iter().position(|v| v.key == name)?;
            Some((end, index, variables[index].value.as_str()?))
        });
        match held {
            Some((end, index, value)) => {
                out.push_str(&rest[..at]);
                out.push_str(value);
                used.push(index);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[..at + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    match used.is_empty() {
        true => (token.to_owned(), used),
        false => (json_string(&out), used),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret_parts(url: &str) -> Vec<&str> {
        secrets(url).into_iter().map(|range| &url[range]).collect()
    }

    #[test]
    fn userinfo_and_query_are_the_secret_parts() {
        assert_eq!(secret_parts("https://a.test/mcp"), Vec::<&str>::new());
        assert_eq!(
            secret_parts("https://a.test/mcp?api_key=k&x=1#f"),
            ["api_key=k&x=1"]
        );
        assert_eq!(secret_parts("https://u:p@a.test/mcp"), ["u:p"]);
        assert_eq!(secret_parts("https://u:p@a.test?k=1"), ["u:p", "k=1"]);
        assert_eq!(
            secret_parts("https://a.test/x@y/mcp"),
            Vec::<&str>::new(),
            "an @ in the path"
        );
        assert_eq!(secret_parts("https://a.test/mcp?"), Vec::<&str>::new());
        assert_eq!(
            secret_parts("https://a.test/mcp#?x"),
            Vec::<&str>::new(),
            "a fragment"
        );
        assert_eq!(secret_parts("https://a:b@c@a.test/"), ["a:b@c"]);
        assert_eq!(secret_parts("not a url?x=1"), Vec::<&str>::new());
    }

    #[test]
    fn references_replace_the_parts() {
        let url = "https://u:p@a.test/mcp?k=1#top";
        let names = ["MUK_URL_1".to_owned(), "MUK_URL_2".to_owned()];
        assert_eq!(
            with_references(url, &secrets(url), &names),
            "https://${MUK_URL_1}@a.test/mcp?${MUK_URL_2}#top"
        );
    }
}
