//! Who may use the reverse proxy from a browser: the `Host` and `Origin`
//! of each request, checked before anything is forwarded.
//!
//! The proxy adds the user's credentials (`--header`) to what it forwards,
//! so a web page must not reach it. A page cannot name the proxy's address
//! as its own, but with DNS rebinding its own name (`evil.example`) comes
//! to resolve to 127.0.0.1: its requests then reach the proxy with
//! `Host: evil.example:PORT` and `Origin: http://evil.example:PORT`, and
//! their answers are the page's to read. The MCP transport asks local
//! servers to check `Origin`; the `Host` check is what stops a page whose
//! browser sends no `Origin` (a plain GET, say).
//!
//! Without DNS rebinding, a page cannot read the answers, but it can still
//! send requests: an `<img>` or a `no-cors` fetch carries no `Origin` and
//! the proxy's own `Host`, and would reach the server with the user's
//! credentials. Browsers say where such a request came from
//! (`Sec-Fetch-Site`), and a GET of the endpoint from a page does not ask
//! for an event stream, as every MCP client's does.
//!
//! A request is let through when its `Host` is a loopback name
//! (`localhost`, `127.0.0.0/8`, `[::1]`, any port), the address the proxy
//! listens on (when the user gave one that is not loopback: any IP literal
//! when it listens on all interfaces), or the host of an origin the user
//! allowed (`--allow-origin`); when it has no `Origin` (a client that
//! is not a browser), or one on a loopback name or the listening address,
//! or one the user allowed; when a browser that marks it as sent from
//! another site (`Sec-Fetch-Site: cross-site` or `same-site`) gave it an
//! `Origin` too, so that the rule before decides; and, a GET of the MCP
//! endpoint, when it accepts `text/event-stream`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use hyper::StatusCode;

/// The longest `Host` or `Origin` quoted on stderr.
const QUOTED: usize = 100;

/// The rules of one proxy: where it listens, and the origins allowed.
#[derive(Debug)]
pub(crate) struct Guard {
    /// The listening address, when it is a name of its own (neither
    /// loopback nor every interface).
    own: Option<IpAddr>,
    /// The proxy listens on every interface: any IP literal is one of its
    /// names (DNS rebinding needs a name, never an IP literal).
    any_ip: bool,
    /// The origins `--allow-origin` allows, as browsers write them.
    allowed: Vec<String>,
}

/// Why a request is refused: the `Host` or the `Origin` it came with, as
/// it may be quoted (shortened, control characters dropped), the
/// `Sec-Fetch-Site` of a page's request without `Origin`, or a GET of the
/// endpoint that does not accept an event stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    Host(String),
    Origin(String),
    FromSite(String),
    NotEventStream,
}

impl Refused {
    /// What stderr says of it, once per value.
    pub(crate) fn explain(&self) -> String {
        match self {
            Refused::Host(host) => format!(
                "refused requests with Host {host:?} (403): not this proxy's address nor a loopback name, as a web page's would be after DNS rebinding; \
                 connect by 127.0.0.1 or localhost, or add --allow-origin with an origin on that host if it is yours"
            ),
            Refused::Origin(origin) => format!(
                "refused requests from the web origin {origin:?} (403): add --allow-origin {origin} if that page may use the server with the credentials the proxy adds"
            ),
            Refused::FromSite(site) => format!(
                "refused a web page's request without Origin (Sec-Fetch-Site: {site}; 403), such as an <img> or a no-cors fetch: \
                 it would reach the server with the credentials the proxy adds. A page that may use the server sends its Origin: \
                 allow it with --allow-origin"
            ),
            Refused::NotEventStream => "refused a GET of the MCP endpoint that does not accept text/event-stream (406): \
                 MCP clients ask for the event stream with Accept: text/event-stream; a web page's <img> or link does not"
                .to_owned(),
        }
    }

    /// The status the refusal is answered with.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Refused::NotEventStream => StatusCode::NOT_ACCEPTABLE,
            _ => StatusCode::FORBIDDEN,
        }
    }

    /// The value refused, the key stderr says it once by.
    pub(crate) fn value(&self) -> &str {
        match self {
            Refused::Host(value) | Refused::Origin(value) | Refused::FromSite(value) => value,
            Refused::NotEventStream => "GET without text/event-stream",
        }
    }
}

impl Guard {
    /// The rules of a proxy listening on `listen`, with the origins of
    /// `--allow-origin`; an error names an origin that is not one.
    pub(crate) fn new(listen: SocketAddr, allowed: &[String]) -> Result<Guard, String> {
        let allowed = allowed
            .iter()
            .map(|origin| {
                normalise_origin(origin).ok_or_else(|| {
                    format!(
                        "--allow-origin {origin:?}: not an origin; write it as a browser sends it, such as https://app.example.com or http://localhost:5173 (no path)"
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        let ip = listen.ip();
        Ok(Guard {
            own: (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip),
            any_ip: ip.is_unspecified(),
            allowed,
        })
    }

    /// Whether a request with this `Host` and `Origin` (as sent, if sent)
    /// may go on.
    pub(crate) fn check(&self, host: Option<&[u8]>, origin: Option<&[u8]>) -> Result<(), Refused> {
        if let Some(host) = host
            && !self.host_allowed(host)
        {
            return Err(Refused::Host(quoted(host)));
        }
        if let Some(origin) = origin
            && !self.origin_allowed(origin)
        {
            return Err(Refused::Origin(quoted(origin)));
        }
        Ok(())
    }

    /// Whether a request with this `Sec-Fetch-Site` may go on: one a
    /// browser sent from another site only with an `Origin`, which
    /// [`Guard::check`] then judges.
    pub(crate) fn check_site(&self, fetch_site: &[u8], has_origin: bool) -> Result<(), Refused> {
        let from_elsewhere =
            fetch_site.eq_ignore_ascii_case(b"cross-site") || fetch_site.eq_ignore_ascii_case(b"same-site");
        if from_elsewhere && !has_origin {
            return Err(Refused::FromSite(quoted(fetch_site).to_ascii_lowercase()));
        }
        Ok(())
    }

    fn host_allowed(&self, host: &[u8]) -> bool {
        let Some(host) = std::str::from_utf8(host).ok().and_then(split_authority) else {
            return false;
        };
        self.is_own(&host)
            || self
                .allowed
                .iter()
                .filter_map(|origin| origin.split_once("://").and_then(|(_, a)| split_authority(a)))
                .any(|allowed| allowed == host)
    }

    fn origin_allowed(&self, origin: &[u8]) -> bool {
        let Ok(origin) = std::str::from_utf8(origin) else {
            return false;
        };
        // `null` (a sandboxed page, a file) is no origin of these.
        let Some(normal) = normalise_origin(origin) else {
            return false;
        };
        if self.allowed.contains(&normal) {
            return true;
        }
        let authority = normal.split_once("://").map_or("", |(_, authority)| authority);
        split_authority(authority).is_some_and(|host| self.is_own(&host))
    }

    /// A loopback name, or the listening address.
    fn is_own(&self, host: &Host) -> bool {
        match host {
            Host::Name(name) => name == "localhost",
            Host::Ip(ip) => ip.is_loopback() || self.any_ip || self.own == Some(*ip),
        }
    }
}

/// Whether the `Accept` values of a request name `text/event-stream` (with
/// a weight above 0): a wildcard is not enough, as every `<img>` and link
/// accepts `*/*`.
pub(super) fn accepts_event_stream<'a>(accept: impl IntoIterator<Item = &'a [u8]>) -> bool {
    accept
        .into_iter()
        .filter_map(|value| std::str::from_utf8(value).ok())
        .flat_map(|value| value.split(','))
        .any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            let refused = parts.any(|parameter| {
                parameter.split_once('=').is_some_and(|(name, weight)| {
                    name.trim().eq_ignore_ascii_case("q") && is_zero(weight.trim())
                })
            });
            media.eq_ignore_ascii_case("text/event-stream") && !refused
        })
}

/// A weight of 0 (`0`, `0.`, `0.000`).
fn is_zero(weight: &str) -> bool {
    weight.strip_prefix('0').is_some_and(|rest| {
        rest.is_empty()
            || rest
                .strip_prefix('.')
                .is_some_and(|zeros| zeros.bytes().all(|b| b == b'0'))
    })
}

/// The host of an authority (`host[:port]`), port set aside.
#[derive(Debug, PartialEq, Eq)]
enum Host {
    Name(String),
    Ip(IpAddr),
}

/// Reads `host[:port]`, `[v6][:port]`: `None` for anything else (a port
/// that is not a number, userinfo, a path).
fn split_authority(authority: &str) -> Option<Host> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            after => Some(after.strip_prefix(':')?),
        };
        (Host::Ip(IpAddr::V6(v6.parse::<Ipv6Addr>().ok()?)), port)
    } else {
        let (name, port) = match authority.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        if name.is_empty() || name.contains(['/', '@', '?', '#', ':', ' ', '[', ']']) {
            return None;
        }
        match name.parse::<Ipv4Addr>() {
            Ok(ip) => (Host::Ip(IpAddr::V4(ip)), port),
            Err(_) => (Host::Name(name), port),
        }
    };
    if let Some(port) = port
        && (port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some(host)
}

/// An origin as browsers send it: `scheme://host[:port]`, lower case, the
/// scheme's default port left out. `None` for anything else.
fn normalise_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().strip_suffix('/').unwrap_or(origin.trim());
    let (scheme, authority) = origin.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    split_authority(authority)?;
    let authority = authority.to_ascii_lowercase();
    let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    Some(format!("{scheme}://{authority}"))
}

/// A header's value as stderr may quote it.
fn quoted(value: &[u8]) -> String {
    String::from_utf8_lossy(value)
        .chars()
        .filter(|c| !c.is_control())
        .take(QUOTED)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_are_let_through_as_the_table_says() {
        let loopback: SocketAddr = "127.0.0.1:8808".parse().unwrap();
        let lan: SocketAddr = "192.168.1.5:8808".parse().unwrap();
        let everywhere: SocketAddr = "0.0.0.0:8808".parse().unwrap();
        let allowed = [
            "https://App.example.com/".to_owned(),
            "http://dev.test:80".to_owned(),
        ];
        // (listening on, Host, Origin, let through)
        let table: &[(SocketAddr, Option<&str>, Option<&str>, bool)] = &[
            (loopback, Some("127.0.0.1:8808"), None, true),
            (loopback, Some("127.0.0.1"), None, true),
            (loopback, Some("127.9.9.9:1"), None, true),
            (loopback, Some("localhost:8808"), None, true),
            (loopback, Some("LOCALHOST."), None, true),
            (loopback, Some("[::1]:8808"), None, true),
            (loopback, Some("[::1]"), None, true),
            (loopback, None, None, true),
            (
                loopback,
                Some("localhost:8808"),
                Some("http://localhost:5173"),
                true,
            ),
            (
                loopback,
                Some("localhost:8808"),
                Some("http://127.0.0.1:8808"),
                true,
            ),
            (loopback, Some("localhost:8808"), Some("http://[::1]:3000"), true),
            // DNS rebinding: the page's own name, with or without Origin.
            (
                loopback,
                Some("evil.example:8808"),
                Some("http://evil.example:8808"),
                false,
            ),
            (loopback, Some("evil.example:8808"), None, false),
            (
                loopback,
                Some("127.0.0.1:8808"),
                Some("http://evil.example:8808"),
                false,
            ),
            (loopback, Some("localhost.evil.example"), None, false),
            (loopback, Some("127.0.0.1.evil.example"), None, false),
            (loopback, Some("192.168.1.5:8808"), None, false),
            (loopback, Some("localhost:x"), None, false),
            (loopback, Some("user@localhost"), None, false),
            (loopback, Some("[::1"), None, false),
            (loopback, Some(""), None, false),
            (loopback, Some("localhost"), Some("null"), false),
            (loopback, Some("localhost"), Some("file://"), false),
            // Allowed origins, as browsers write them, and their hosts.
            (loopback, Some("localhost"), Some("https://app.example.com"), true),
            (
                loopback,
                Some("localhost"),
                Some("https://app.example.com:443"),
                true,
            ),
            (loopback, Some("localhost"), Some("http://app.example.com"), false),
            (loopback, Some("localhost"), Some("http://dev.test"), true),
            (loopback, Some("dev.test"), Some("http://dev.test"), true),
            (loopback, Some("app.example.com:443"), None, true),
            // A non-loopback address the user gave is a name of its own.
            (lan, Some("192.168.1.5:8808"), None, true),
            (lan, Some("192.168.1.5"), Some("http://192.168.1.5:8808"), true),
            (lan, Some("localhost:8808"), None, true),
            (lan, Some("192.168.1.6:8808"), None, false),
            (lan, Some("evil.example:8808"), None, false),
            (everywhere, Some("10.0.0.7:8808"), None, true),
            (everywhere, Some("[fe80::1]:8808"), None, true),
            (everywhere, Some("evil.example:8808"), None, false),
        ];
        for (listen, host, origin, through) in table {
            let guard = Guard::new(*listen, &allowed).unwrap();
            let checked = guard.check(host.map(str::as_bytes), origin.map(str::as_bytes));
            assert_eq!(
                checked.is_ok(),
                *through,
                "{listen} {host:?} {origin:?}: {checked:?}"
            );
        }
    }

    #[test]
    fn a_refusal_names_the_value_and_what_to_do() {
        let guard = Guard::new("127.0.0.1:1".parse().unwrap(), &[]).unwrap();
        let refused = guard
            .check(Some(b"localhost"), Some(b"http://evil.example:1\x07"))
            .unwrap_err();
        assert_eq!(refused, Refused::Origin("http://evil.example:1".into()));
        assert!(refused.explain().contains("--allow-origin http://evil.example:1"));
        let host = guard.check(Some(b"evil.example"), None).unwrap_err();
        assert_eq!(host.value(), "evil.example");
    }

    #[test]
    fn a_page_s_request_from_another_site_needs_an_origin() {
        let guard = Guard::new("127.0.0.1:1".parse().unwrap(), &[]).unwrap();
        for site in ["cross-site", "same-site", "Cross-Site"] {
            let refused = guard.check_site(site.as_bytes(), false).unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN);
            assert!(
                refused.explain().contains("--allow-origin"),
                "{}",
                refused.explain()
            );
            // With its Origin, the Origin decides.
            assert!(guard.check_site(site.as_bytes(), true).is_ok());
        }
        for site in ["same-origin", "none", ""] {
            assert!(guard.check_site(site.as_bytes(), false).is_ok(), "{site}");
        }
    }

    #[test]
    fn only_an_accept_naming_the_event_stream_accepts_it() {
        let accepts = |values: &[&str]| accepts_event_stream(values.iter().map(|v| v.as_bytes()));
        assert!(accepts(&["text/event-stream"]));
        assert!(accepts(&["application/json, Text/Event-Stream; charset=utf-8"]));
        assert!(accepts(&["application/json", "text/event-stream;q=0.5"]));
        assert!(!accepts(&[]));
        assert!(!accepts(&["*/*"]));
        assert!(!accepts(&["text/*"]));
        assert!(!accepts(&[
            "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        ]));
        assert!(!accepts(&["text/event-stream;q=0"]));
        assert!(!accepts(&["text/event-stream; q=0.000"]));
        assert!(!accepts(&["text/event-streams"]));
        assert_eq!(Refused::NotEventStream.status(), StatusCode::NOT_ACCEPTABLE);
    }

    #[test]
    fn an_allowed_origin_must_be_one() {
        let listen = "127.0.0.1:1".parse().unwrap();
        for bad in [
            "app.example.com",
            "https://app.example.com/mcp",
            "ftp://x",
            "https://u@x",
        ] {
            let error = Guard::new(listen, &[bad.to_owned()]).unwrap_err();
            assert!(error.contains("not an origin"), "{bad}: {error}");
        }
    }
}
