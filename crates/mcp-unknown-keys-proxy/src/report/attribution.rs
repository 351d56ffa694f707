//! Who said a log line, and when: `ts`, `server` and `session` on every
//! line of `--log`, so that lines from many servers and runs can share one
//! file, one collector, one search.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_unknown_keys::utc::Utc;

/// The attribution of one proxy run.
#[derive(Clone, Debug)]
pub(crate) struct Attribution {
    /// `--name`, else the command's base name, else the URL's host.
    pub server: String,
    /// One random id per run: 32 hex digits.
    pub session: String,
}

impl Attribution {
    /// The attribution of this run, for `server`, with a fresh session id.
    pub(crate) fn new(server: String) -> Attribution {
        Attribution {
            server,
            session: session_id(),
        }
    }

    /// `line`, a JSON object, with `"ts"`, `"server"` and `"session"` (and
    /// `"upstream_session"` when given) added as its last members.
    pub(crate) fn stamp(&self, line: &str, upstream: Option<&str>) -> String {
        self.stamp_at(line, &rfc3339_now(), upstream)
    }

    fn stamp_at(&self, line: &str, ts: &str, upstream: Option<&str>) -> String {
        let body = line.strip_suffix('}').unwrap_or(line);
        let mut stamped = String::with_capacity(line.len() + 128);
        stamped.push_str(body);
        if !body.trim_end().ends_with('{') {
            stamped.push(',');
        }
        let _ = write!(
            stamped,
            "\"ts\":{},\"server\":{},\"session\":{}",
            json_string(ts),
            json_string(&self.server),
            json_string(&self.session)
        );
        if let Some(upstream) = upstream {
            let _ = write!(stamped, ",\"upstream_session\":{}", json_string(upstream));
        }
        stamped.push('}');
        stamped
    }
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// The name a server run as `command` goes by when `--name` is not given:
/// the program's base name (`npx`, `mcp-server-time`).
pub(crate) fn command_name(command: &[OsString]) -> String {
    command.first().map_or_else(String::new, |program| {
        let base = Path::new(program).file_name().unwrap_or(program.as_os_str());
        base.to_string_lossy().into_owned()
    })
}

/// The host of `url`, without userinfo or port.
#[cfg(feature = "remote")]
pub(crate) fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host.strip_prefix('[') {
        bracketed.split(']').next()?
    } else {
        host.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_owned())
}

/// 128 random bits as 32 hex digits: from the system's random source, or,
/// should it be unreadable, from std's randomly keyed hasher.
pub(crate) fn session_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut random| random.read_exact(&mut bytes));
    if read.is_err() {
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos(),
            );
            hasher.write_u32(std::process::id());
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    hex(&bytes)
}

/// Lower-case hex digits of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// Now, as RFC 3339 in UTC with milliseconds: `2026-11-30T07:00:00.123Z`.
pub(crate) fn rfc3339_now() -> String {
    rfc3339(SystemTime::now())
}

/// A time as RFC 3339 in UTC with milliseconds (times before 1970 read as
/// 1970).
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let at = Utc::of(time);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year, at.month, at.day, at.hour, at.minute, at.second, at.millis
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_in_utc_with_milliseconds() {
        let at = |seconds: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(1_796_022_000, 123), "2026-11-30T07:00:00.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn a_line_gets_its_attribution_as_last_members() {
        let attribution = Attribution {
            server: "fs \"one\"".into(),
            session: "ab".into(),
        };
        assert_eq!(
            attribution.stamp_at(r#"{"tool":"t"}"#, "T", None),
            r#"{"tool":"t","ts":"T","server":"fs \"one\"","session":"ab"}"#
        );
        assert_eq!(
            attribution.stamp_at("{}", "T", Some("u")),
            r#"{"ts":"T","server":"fs \"one\"","session":"ab","upstream_session":"u"}"#
        );
    }

    #[test]
    fn a_server_run_as_a_command_is_named_by_the_program() {
        let command = [OsString::from("/usr/bin/npx"), OsString::from("-y")];
        assert_eq!(command_name(&command), "npx");
    }

    #[cfg(feature = "remote")]
    #[test]
    fn a_remote_server_is_named_by_its_url_host() {
        for (url, host) in [
            ("https://user:pw@mcp.example.com:8443/mcp?x=1", "mcp.example.com"),
            ("http://127.0.0.1:9/mcp", "127.0.0.1"),
            ("http://[::1]:9/", "::1"),
        ] {
            assert_eq!(url_host(url).as_deref(), Some(host));
        }
    }

    #[test]
    fn session_ids_are_128_random_bits() {
        let (a, b) = (session_id(), session_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
