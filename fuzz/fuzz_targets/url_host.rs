//! The policy's strict URL reader, on any text: nothing may panic, and a
//! host it reads is always one an exact `host` rule (the grant a question
//! suggests) can name and match.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys_policy::{HostPattern, url_host};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(host) = url_host(&text) {
        let pattern = HostPattern::new(host.as_str()).expect("a host read from a URL is a host pattern");
        assert!(pattern.matches(&host), "{host:?} does not match itself");
    }
});
