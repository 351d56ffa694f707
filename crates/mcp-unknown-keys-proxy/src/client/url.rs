//! The server's URL as the user wrote it: `${VAR}` in `--url` read from the
//! environment as in a `--header` value (so that `wrap` can keep a token in
//! the host's `env` block), and the parts that may hold a secret — the
//! userinfo, the query — never shown.
//!
//! A URL whose userinfo holds an unencoded `/`, `?` or `#` reads, by
//! RFC 3986 and by every client, as if the authority ended there: the user
//! name becomes the host, the password its port, and the rest the path.
//! Such a URL is refused before anything is read from it, with nothing of
//! it quoted.

use super::headers::{self, Reference};

/// The text after `scheme://` and up to the first `/`, `?` or `#`: the
/// authority, userinfo included.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// Refuses a URL with an `@` after its authority, where a user name and
/// password whose `/`, `?` or `#` was not percent-encoded would put it.
/// `what` names the option (`--url`). The error quotes nothing of the URL.
pub fn check_userinfo(url: &str, what: &str) -> Result<(), String> {
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
pub fn expand(template: &str, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
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

/// The URL as messages name it: scheme, host, port and path, without
/// userinfo, query or fragment.
pub fn shown(url: &str) -> String {
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
    fn urls_are_shown_without_credentials_or_query() {
        assert_eq!(
            shown("https://user:pw@example.com:8443/mcp?token=x#f"),
            "https://example.com:8443/mcp"
        );
        assert_eq!(shown("http://127.0.0.1:3000"), "http://127.0.0.1:3000");
    }
}
