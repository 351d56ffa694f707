//! `--header 'Name: value'`: headers the user adds to every request to the
//! server, with `${VAR}` in a value read from the environment, so that a
//! secret stays out of the host's configuration file.
//!
//! A value is never shown: not in errors, not in logs. Errors name the
//! header and the variable, nothing more.

use std::fmt;

use hyper::header::{HeaderMap, HeaderName, HeaderValue};

/// Headers the bridge sets itself, from the protocol: a user's value would
/// contradict the message or the session.
const SET_BY_THE_BRIDGE: [&str; 10] = [
    "accept",
    "content-type",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "transfer-encoding",
];

/// Why a `--header` cannot be used. Says which header and which variable,
/// never the value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// No colon between a name and a value.
    NoColon,
    /// The name (before the first colon) of the `--header` at this place
    /// (from 1) is not an HTTP field name. The name itself is not kept: a
    /// header written without its colon (`Authorization Bearer sk-…`)
    /// holds its value there.
    BadName(usize),
    /// The bridge sets this header itself.
    Reserved(String),
    /// `${VAR}` names a variable that is not set (or not Unicode).
    Unset { header: String, variable: String },
    /// `${` without its `}`, or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    BadReference(String),
    /// The value, once expanded, holds a byte no header value may (a line
    /// break, say).
    BadValue(String),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Not even the start of it: it may be nothing but a secret.
            HeaderError::NoColon => f.write_str("a --header has no colon: write it as 'Name: value'"),
            HeaderError::BadName(place) => write!(
                f,
                "--header number {place}: what comes before its first colon is not a header name (not shown: it may hold the value); write it as 'Name: value'"
            ),
            HeaderError::Reserved(name) => write!(
                f,
                "--header {name}: the proxy sets this header itself, from the protocol"
            ),
            HeaderError::Unset { header, variable } => write!(
                f,
                "--header {header}: the environment variable {variable} is not set"
            ),
            HeaderError::BadReference(header) => write!(
                f,
                "--header {header}: write a variable as ${{NAME}}, NAME made of letters, digits and _"
            ),
            HeaderError::BadValue(header) => write!(
                f,
                "--header {header}: the value (once variables are read) holds a character a header cannot carry"
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

/// Reads every `--header`, expanding `${VAR}` with `env`. Values are marked
/// sensitive, so that hyper never shows them either.
pub(crate) fn parse_all(
    specs: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<HeaderMap, HeaderError> {
    let mut headers = HeaderMap::new();
    for (place, spec) in specs.iter().enumerate() {
        let (name, value) = parse(spec, place + 1, &env)?;
        headers.append(name, value);
    }
    Ok(headers)
}

/// Reads one `Name: value`, the `place`th `--header`.
fn parse(
    spec: &str,
    place: usize,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<(HeaderName, HeaderValue), HeaderError> {
    let (name, value) = spec.split_once(':').ok_or(HeaderError::NoColon)?;
    let name = name.trim();
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| HeaderError::BadName(place))?;
    if SET_BY_THE_BRIDGE.contains(&header.as_str()) {
        return Err(HeaderError::Reserved(name.to_owned()));
    }
    let expanded = expand(value.trim(), env).map_err(|wrong| match wrong {
        Reference::Unset(variable) => HeaderError::Unset {
            header: name.to_owned(),
            variable,
        },
        Reference::Malformed => HeaderError::BadReference(name.to_owned()),
    })?;
    let mut value = HeaderValue::from_str(&expanded).map_err(|_| HeaderError::BadValue(name.to_owned()))?;
    value.set_sensitive(true);
    Ok((header, value))
}

/// What is wrong with a `${VAR}` in a text to expand.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reference {
    /// The variable, not set (or not Unicode).
    Unset(String),
    /// `${` without its `}`, or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    Malformed,
}

/// Replaces each `${VAR}` with the variable's value; a `$` not followed by
/// `{` stays as it is. `--header` values and `--url` are read alike.
pub(crate) fn expand(value: &str, env: &impl Fn(&str) -> Option<String>) -> Result<String, Reference> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('}').ok_or(Reference::Malformed)?;
        let variable = &after[..end];
        if !is_variable_name(variable) {
            return Err(Reference::Malformed);
        }
        let found = env(variable).ok_or_else(|| Reference::Unset(variable.to_owned()))?;
        out.push_str(&found);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "NL" => Some("a\nb".into()),
            _ => None,
        }
    }

    fn one(spec: &str) -> Result<(HeaderName, HeaderValue), HeaderError> {
        parse(spec, 1, &env)
    }

    #[test]
    fn variables_are_expanded_and_values_marked_sensitive() {
        let (name, value) = one("Authorization: Bearer ${TOKEN}").unwrap();
        assert_eq!(name, "authorization");
        assert_eq!(value, "Bearer s3cret");
        assert!(value.is_sensitive());
        assert_eq!(
            one("X-Price: $5 and ${TOKEN}${TOKEN}").unwrap().1,
            "$5 and s3crets3cret"
        );
        assert_eq!(one("X-Empty:").unwrap().1, "");
    }

    #[test]
    fn errors_name_the_header_and_variable_never_the_value() {
        let unset = one("Authorization: Bearer ${MISSING}").unwrap_err();
        assert_eq!(
            unset.to_string(),
            "--header Authorization: the environment variable MISSING is not set"
        );
        let newline = one("X-Key: ${NL}").unwrap_err();
        assert_eq!(newline, HeaderError::BadValue("X-Key".into()));
        assert!(!newline.to_string().contains("a\nb"));
        for spec in ["X-Key: ${TOKEN", "X-Key: ${1X}", "X-Key: ${}"] {
            assert_eq!(
                one(spec).unwrap_err(),
                HeaderError::BadReference("X-Key".into()),
                "{spec}"
            );
        }
        assert_eq!(one("s3cret").unwrap_err(), HeaderError::NoColon);
    }

    #[test]
    fn a_header_missing_its_colon_is_never_quoted() {
        // The colon forgotten, another one further on: what comes before
        // it is the name, and the secret.
        let specs = [
            "X-Ok: 1".to_owned(),
            "Authorization Bearer sk-live-4f9a:x".to_owned(),
        ];
        let error = parse_all(&specs, env).unwrap_err();
        assert_eq!(error, HeaderError::BadName(2));
        let said = error.to_string();
        assert!(said.starts_with("--header number 2:"), "{said}");
        for part in ["Authorization", "Bearer", "sk-live", "4f9a"] {
            assert!(!said.contains(part), "{said}");
        }
    }

    #[test]
    fn headers_the_protocol_sets_are_refused() {
        for name in [
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Accept",
            "Content-Type",
            "Mcp-Method",
        ] {
            assert_eq!(
                one(&format!("{name}: x")).unwrap_err(),
                HeaderError::Reserved(name.into())
            );
        }
        assert_eq!(one("Bad Name: x").unwrap_err(), HeaderError::BadName(1));
    }

    #[test]
    fn repeated_names_are_all_sent() {
        let specs = ["X-A: 1".to_owned(), "X-A: 2".to_owned()];
        let headers = parse_all(&specs, env).unwrap();
        assert_eq!(headers.get_all("x-a").iter().count(), 2);
    }
}
