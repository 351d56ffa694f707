//! A report's JSON form read back (`report_data::ReportData::from_json`, what
//! the Python package's `Report.from_json` runs), on any bytes; and the
//! same bytes audited as a log, the report they make written and read
//! back. Nothing may panic or hang; a report read back passes the checks,
//! writes the text it is read back from again, and added to itself adds up
//! or refuses the overflow; and the report of any log reads back as it
//! was, unless a forged proxy summary pushed its counts near 2^64, where
//! the counts may saturate.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys_logs::report_data::{Fingerprint, ReportData, check, merge, same};
use mcp_unknown_keys_logs::{Audit, Dimension, Input, Options};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(read) = ReportData::from_json(text)
    {
        reads_back(&read);
        if let Ok(twice) = merge(&read, &read) {
            reads_back(&twice);
            assert_eq!(twice.coverage.calls, 2 * read.coverage.calls);
        }
    }
    let mut options = Options::default();
    for dimension in Dimension::ALL {
        options = options.group_by([dimension]);
    }
    let options = options.group_by([Dimension::Model, Dimension::Key]);
    let Ok(mut audit) = Audit::new(&options) else {
        return;
    };
    if let Ok(input) = Input::from_reader("fuzz", Cursor::new(data.to_vec())) {
        let _ = audit.read(input);
    }
    let made = ReportData::from(audit.finish()).made_with(Fingerprint::of(&options));
    if made.coverage.calls < 1 << 60 {
        reads_back(&made);
    }
});

/// `data` passes the checks, and its JSON form reads back as the same
/// report, which writes the same text again.
fn reads_back(data: &ReportData) {
    if let Err(why) = check(data) {
        panic!("a report's counts disagree: {why}");
    }
    let text = data.to_json();
    let back = ReportData::from_json(&text).unwrap_or_else(|why| panic!("{why}: {text}"));
    assert!(same(&back, data), "read back otherwise: {text}");
    assert_eq!(back.to_json(), text);
}
