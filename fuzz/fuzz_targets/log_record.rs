//! The audit's shape recogniser, on any bytes: `read_record` on the whole
//! input as one record, and `Audit::read` on it as an input of many lines
//! (listings, streams, verdicts and a proxy's log lines carried from one
//! line to the next). Nothing may panic or hang; a record that parses as
//! JSON is never called unreadable, and one that is not UTF-8 is said so.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys_logs::{Audit, Input, Options, RecordKind, read_record};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let found = read_record(data);
    match std::str::from_utf8(data) {
        Err(_) => assert_eq!(found.kind, RecordKind::NotUtf8),
        Ok(text) if serde_json::from_str::<Value>(text).is_ok() => {
            assert!(
                !matches!(found.kind, RecordKind::NotJson | RecordKind::NotUtf8),
                "JSON read as {:?}",
                found.kind
            );
        }
        Ok(_) => {}
    }
    let Ok(mut audit) = Audit::new(&Options::default()) else {
        return;
    };
    if let Ok(input) = Input::from_reader("fuzz", Cursor::new(data.to_vec())) {
        let _ = audit.read(input);
    }
    let report = audit.finish();
    let _ = report.pairs();
    let _ = report.coverage.to_json_line();
});
