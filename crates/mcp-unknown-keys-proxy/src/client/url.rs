//! The server's URL as the user wrote it: `${VAR}` in `--url` read from the
//! environment as in a `--header` value (so that `wrap` can keep a token in
//! the host's `env` block), and the parts that may hold a secret — the
//! userinfo, the query — never shown. A userinfo (`user:password@`) is
//! taken out of the URL and sent as `Authorization: Basic`, as curl sends
//! it.
//!
//! A URL whose userinfo holds an unencoded `/`, `?` or `#` reads, by
//! RFC 3986 and by every client, as if the authority ended there: the user
//! name becomes the host, the password its port, and the rest the path.
//! Such a URL is refused before anything is read from it, with nothing of
//! it quoted.

use hyper::header::HeaderValue;

use super::headers::{self, Reference, base64};

/// The text after `scheme://` and up to the first `/`, `?` or `#`: the
/// authority, userinfo included.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// Refuses a URL with an `@` after its authority, where a user name and
/// password whose `/`, `?` or `#` was not percent-encoded would put it.
/// `what` names the option (`--url`). The error quotes nothing of the URL.
pub(crate) fn check_userinfo(url: &str, what: &str) -> Result<(), String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = authority(url);
    if rest[authority.len()..].contains('@') {
        return Err(format!(
            "{what}: the URL has an @ after its host, where a user name or password holding /, ? or # would put it \
             (not shown: it may be one). Percent-encode those characters in the user name and password \
             (/ as %2F, ? as %3F, # as %23), and an @ in the path or query as %40"
        ));
    }
    Ok(())
}

/// `--url` with each `${VAR}` replaced by the variable's value, as a
/// `--header` value is read. Errors name the variable, never a value; a
/// value that would change where the URL's userinfo ends is refused.
pub(crate) fn expand(template: &str, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    check_userinfo(template, "--url")?;
    let expanded = headers::expand(template, &env).map_err(|wrong| match wrong {
        Reference::Unset(variable) => format!("--url: the environment variable {variable} is not set"),
        Reference::Malformed => {
            "--url: write a variable as ${NAME}, NAME made of letters, digits and _".to_owned()
        }
    })?;
    // Where the text the user wrote has a userinfo, the expanded one must
    // still have it whole: a value holding /, ? or # would end it early.
    if authority(template).contains('@') && !authority(&expanded).contains('@') {
        return Err(
            "--url: a variable in the URL's user name or password holds /, ? or #; percent-encode it \
             in the variable (/ as %2F, ? as %3F, # as %23)"
                .to_owned(),
        );
    }
    Ok(expanded)
}

/// The URL without its userinfo, and the userinfo as the value of an
/// `Authorization: Basic` header: user name and password percent-decoded,
/// joined by `:` (a user name alone is sent with an empty password),
/// marked sensitive so that hyper never shows it either.
pub(crate) fn take_userinfo(url: &str) -> (String, Option<HeaderValue>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), None);
    };
    let authority = authority(url);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return (url.to_owned(), None);
    };
    let without = format!("{scheme}://{host}{}", &rest[authority.len()..]);
    if userinfo.is_empty() {
        return (without, None);
    }
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let mut credentials = percent_decoded(user);
    credentials.push(b':');
    credentials.extend(percent_decoded(password));
    let mut value =
        HeaderValue::from_str(&format!("Basic {}", base64(&credentials))).expect("base64 is a header value");
    value.set_sensitive(true);
    (without, Some(value))
}

/// `%XX` read as the byte it encodes; any other `%` kept as it is.
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                at += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    decoded
}

/// The URL as messages name it: scheme, host, port and path, without
/// userinfo, query or fragment.
pub(crate) fn shown(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or(url);
    match without_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => without_query.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "KEY" => Some("k3y-value".into()),
            "USER" => Some("me".into()),
            "PASS" => Some("pa%2Fss".into()),
            "SLASHED" => Some("pa/ss".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded_as_in_a_header() {
        assert_eq!(
            expand("https://h/mcp?api_key=${KEY}&x=$1", env).unwrap(),
            "https://h/mcp?api_key=k3y-value&x=$1"
        );
        assert_eq!(
            expand("https://${USER}:${PASS}@h:8443/mcp", env).unwrap(),
            "https://me:pa%2Fss@h:8443/mcp"
        );
        assert_eq!(
            expand("https://h/mcp?k=${MISSING}", env).unwrap_err(),
            "--url: the environment variable MISSING is not set"
        );
        assert!(
            expand("https://h/mcp?k=${KEY", env)
                .unwrap_err()
                .contains("${NAME}")
        );
    }

    #[test]
    fn a_userinfo_that_would_end_early_is_refused_unquoted() {
        for (template, secret) in [
            ("https://admin:s3cr/et@h/mcp", "s3cr"),
            ("https://admin:4242?z9@h/mcp", "4242"),
            ("https://admin:p#w@h/mcp", "admin"),
        ] {
            let error = expand(template, env).unwrap_err();
            assert!(error.contains("%2F"), "{error}");
            assert!(!error.contains(secret) && !error.contains("admin"), "{error}");
        }
        let error = expand("https://me:${SLASHED}@h/mcp", env).unwrap_err();
        assert!(error.contains("variable") && !error.contains("pa/ss"), "{error}");
        // Encoded, it is a URL like any other.
        assert!(expand("https://admin:s3cr%2Fet@h/mcp", env).is_ok());
        assert!(check_userinfo("https://h/a%40b?mail=x%40y", "--url").is_ok());
    }

    #[test]
    fn a_userinfo_becomes_basic_credentials_decoded_as_curl_decodes_them() {
        let basic = |url: &str| {
            let (without, value) = take_userinfo(url);
            (without, value.map(|v| v.to_str().unwrap().to_owned()))
        };
        // "user:pa:ss@/" in base64.
        assert_eq!(
            basic("https://us%65r:pa:ss%40%2F@h.example:8443/mcp?k=v"),
            (
                "https://h.example:8443/mcp?k=v".to_owned(),
                Some("Basic dXNlcjpwYTpzc0Av".to_owned())
            )
        );
        // "me:" and ":pw".
        assert_eq!(basic("http://me@h/").1.as_deref(), Some("Basic bWU6"));
        assert_eq!(basic("http://:pw@h/").1.as_deref(), Some("Basic OnB3"));
        // "a%zz:" : a % that encodes nothing stays.
        assert_eq!(basic("http://a%zz@h").1.as_deref(), Some("Basic YSV6ejo="));
        assert_eq!(basic("http://@h/mcp"), ("http://h/mcp".to_owned(), None));
        assert_eq!(basic("http://h/a%40b"), ("http://h/a%40b".to_owned(), None));
        assert!(take_userinfo("http://u:p@h/").1.unwrap().is_sensitive());
    }

    #[test]
    fn urls_are_shown_without_credentials_or_query() {
        assert_eq!(
            shown("https://user:pw@example.com:8443/mcp?token=x#f"),
            "https://example.com:8443/mcp"
        );
        assert_eq!(shown("http://127.0.0.1:3000"), "http://127.0.0.1:3000");
    }
}
