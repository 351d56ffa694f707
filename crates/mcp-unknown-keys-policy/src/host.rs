//! Websites: the `host` a rule is about, and the host a call's URL names,
//! read by a small strict parser that refuses every URL two readers could
//! disagree about.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::patterns::checked_string;
use crate::error::RuleError;

/// The websites a rule is about: an exact host (`docs.rs`), or every host
/// below one (`*.example.com`). Compared without case, on a `.` boundary.
///
/// `*.example.com` matches `api.example.com` and `a.b.example.com`, but not
/// `example.com` itself (write a second rule for it) and not
/// `evilexample.com`. A `*` anywhere else, a scheme, a port, a path, a
/// trailing dot or characters no host name has are refused. An IPv6 address
/// is written with or without brackets (`::1`, `[::1]`) and matched as an
/// address, whatever the spelling on either side (`0:0::1`,
/// `0000:0000:0000:0000:0000:0000:0000:0001`); a zone id (`fe80::1%eth0`)
/// is refused in a pattern, and a URL carrying one (`%25eth0`) cannot be
/// read (a deny or ask rule about its tool fires).
///
/// ```
/// use mcp_unknown_keys_policy::HostPattern;
///
/// let docs = HostPattern::new("*.example.com").unwrap();
/// assert!(docs.matches("api.example.com"));
/// assert!(!docs.matches("example.com"));
/// assert!(!docs.matches("evilexample.com"));
/// assert!(HostPattern::new("https://example.com").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HostPattern(String);

impl HostPattern {
    /// Reads a pattern; fails on anything but a host or `*.` and a host.
    pub fn new(pattern: impl Into<String>) -> Result<HostPattern, RuleError> {
        let pattern = pattern.into();
        let unbracketed = pattern
            .strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .unwrap_or(&pattern);
        if let Some(address) = canonical_ipv6(unbracketed) {
            return Ok(HostPattern(address));
        }
        let host = pattern.strip_prefix("*.").unwrap_or(&pattern);
        if !is_host_name(host) {
            return Err(RuleError::new(format!(
                "`{}` is not a host pattern: write a host such as `docs.rs`, or `*.` and a host such as `*.example.com` (no scheme, port, path or other `*`)",
                pattern.escape_debug()
            )));
        }
        Ok(HostPattern(pattern))
    }

    /// Whether the pattern matches this host (as [`url_host`] reads it).
    pub fn matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let pattern = self.0.to_ascii_lowercase();
        match pattern.strip_prefix("*.") {
            Some(parent) => host
                .strip_suffix(parent)
                .is_some_and(|below| below.len() > 1 && below.ends_with('.')),
            None => host == pattern,
        }
    }
}

checked_string!(HostPattern);

/// Why a URL's host could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlProblem {
    /// The value is not a string.
    NotText,
    /// It holds whitespace or a control character.
    Whitespace,
    /// It holds a backslash, which browsers read as `/` and others do not.
    Backslash,
    /// It is not an absolute `http://` or `https://` URL.
    NotHttp,
    /// It names no host.
    NoHost,
    /// It carries a user name or password (`user@host`).
    Userinfo,
    /// Its host is percent-encoded.
    Percent,
    /// Its port is not a number up to 65535.
    Port,
    /// Its host holds characters a host name does not.
    Host,
    /// Its host is an IPv4 address written other than as four decimal
    /// numbers (`2130706433`, `0x7f.1`), which resolvers read differently.
    Address,
}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlProblem::NotText => "it is not a string",
            UrlProblem::Whitespace => "it contains whitespace or a control character",
            UrlProblem::Backslash => "it contains a backslash",
            UrlProblem::NotHttp => "it is not an http:// or https:// URL",
            UrlProblem::NoHost => "it names no host",
            UrlProblem::Userinfo => "it carries a user name (`user@`)",
            UrlProblem::Percent => "its host is percent-encoded",
            UrlProblem::Port => "its port is not a number up to 65535",
            UrlProblem::Host => "its host is not a plain host name",
            UrlProblem::Address => "its host is an IP address written in an unusual form",
        })
    }
}

/// The host an `http` or `https` URL names, lower-cased, without a port,
/// brackets or a final dot; or why it cannot be read.
///
/// Strict on purpose: whatever a permissive parser would repair (a
/// backslash, a missing `//`, a user name before an `@`, a percent-encoded
/// or numeric host) is a URL that two readers — this policy and the tool
/// that fetches it — could place on different hosts, so it is refused.
///
/// ```
/// use mcp_unknown_keys_policy::{UrlProblem, url_host};
///
/// assert_eq!(url_host("https://Docs.RS:443/a?b#c").as_deref(), Ok("docs.rs"));
/// assert_eq!(url_host("http://[::1]:8080/").as_deref(), Ok("::1"));
/// assert_eq!(url_host("https://docs.rs@evil.example/"), Err(UrlProblem::Userinfo));
/// assert_eq!(url_host("https://evil.example\\@docs.rs/"), Err(UrlProblem::Backslash));
/// assert_eq!(url_host("file:///etc/passwd"), Err(UrlProblem::NotHttp));
/// ```
pub fn url_host(url: &str) -> Result<String, UrlProblem> {
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(UrlProblem::Whitespace);
    }
    if url.contains('\\') {
        return Err(UrlProblem::Backslash);
    }
    let (scheme, rest) = url.split_once("://").ok_or(UrlProblem::NotHttp)?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(UrlProblem::NotHttp);
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    if authority.contains('@') {
        return Err(UrlProblem::Userinfo);
    }
    if authority.contains('%') {
        return Err(UrlProblem::Percent);
    }
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (literal, after) = bracketed.split_once(']').ok_or(UrlProblem::Host)?;
        let address = canonical_ipv6(literal).ok_or(UrlProblem::Host)?;
        return port_of(after).map(|()| address);
    }
    let (host, after) = authority.split_at(authority.find(':').unwrap_or(authority.len()));
    if after.matches(':').count() > 1 {
        return Err(UrlProblem::Host); // an IPv6 literal must be bracketed
    }
    port_of(after)?;
    // One final dot names the same site; a rule must not be walked around
    // by writing it.
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if host.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    if !is_host_name(&host) {
        return Err(UrlProblem::Host);
    }
    if looks_numeric(&host) && !is_dotted_quad(&host) {
        return Err(UrlProblem::Address);
    }
    Ok(host)
}

/// What follows a host: nothing, or `:` and a port (empty means the
/// default).
fn port_of(after_host: &str) -> Result<(), UrlProblem> {
    if after_host.is_empty() {
        return Ok(());
    }
    let digits = after_host.strip_prefix(':').ok_or(UrlProblem::Port)?;
    let number = digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 5;
    match number
        && digits
            .parse::<u32>()
            .map_or(digits.is_empty(), |port| port <= 65535)
    {
        true => Ok(()),
        false => Err(UrlProblem::Port),
    }
}

/// Dot-separated labels of ASCII letters, digits, `-` and `_`, none empty.
fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// An IPv6 address in its one canonical spelling (RFC 5952: lower case,
/// zeros compressed, `::1`), or `None` when `literal` is not one (a zone id
/// included).
fn canonical_ipv6(literal: &str) -> Option<String> {
    literal
        .parse::<std::net::Ipv6Addr>()
        .ok()
        .map(|address| address.to_string())
}

/// Whether a URL parser would take the host for an IPv4 address: its last
/// label is a decimal or `0x` number.
fn looks_numeric(host: &str) -> bool {
    let last = host.rsplit('.').next().unwrap_or_default();
    let hex = last
        .strip_prefix("0x")
        .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_hexdigit()));
    hex || last.bytes().all(|b| b.is_ascii_digit())
}

/// Four decimal numbers up to 255, without leading zeros.
fn is_dotted_quad(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|part| {
            (part.len() == 1 || !part.starts_with('0')) && part.len() <= 3 && part.parse::<u8>().is_ok()
        })
}
