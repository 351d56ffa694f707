//! Records read one by one (`Audit::read_record`): each an input of its
//! own, so that records read in any order and any partition add up.

use mcp_unknown_keys_logs::{Audit, Dimension, Options, Tools};
use serde_json::json;

const LISTING: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search","inputSchema":{"properties":{"q":{}}}}]}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","limit":5}}}"#;

fn audit(options: &Options, records: &[&str]) -> mcp_unknown_keys_logs::Report {
    let mut audit = Audit::new(options).unwrap();
    for (number, record) in (1..).zip(records) {
        audit.read_record("rows", number, record.as_bytes());
    }
    audit.finish()
}

#[test]
fn a_listing_serves_the_calls_of_its_own_record_only() {
    let together = format!("[{LISTING},{CALL}]");
    let report = audit(&Options::default(), &[&together, CALL]);
    assert_eq!((report.coverage.calls, report.coverage.audited), (2, 1));
    assert_eq!(report.warnings[0].unknown_keys, ["limit"]);
}

#[test]
fn the_catalogue_given_comes_back_after_a_record_listing_its_own() {
    let given = Tools::declarations(
        "given",
        vec![json!({"name": "search", "inputSchema": {"properties": {"q": {}, "limit": {}}}})],
    );
    let options = Options::default().tools(given);
    // The record's listing declares no `limit`: its call carries one
    // undeclared; the next record's call meets the catalogue given.
    let together = format!("[{LISTING},{CALL}]");
    let report = audit(&options, &[&together, CALL, CALL]);
    assert_eq!((report.coverage.calls, report.coverage.audited), (3, 3));
    assert_eq!(report.findings.iter().map(|f| f.calls).sum::<u64>(), 1);
}

#[test]
fn records_in_any_order_count_the_same() {
    let records = [
        r#"{"model":"m1","tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"q\":1,\"limt\":2}"}}]}]}"#,
        r#"{"model":"m2","tools":[{"name":"f","parameters":{"properties":{"q":{}}}}],"messages":[{"tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"q\":1,\"limt\":2}"}}]}]}"#,
        LISTING,
        CALL,
        "not JSON",
    ];
    let options = Options::default().group_by([Dimension::Model]);
    let forward = audit(&options, &records);
    let mut reversed = records;
    reversed.reverse();
    let backward = audit(&options, &reversed);
    assert_eq!(forward.coverage, backward.coverage);
    // The same call in two records is two calls: a repeat is one within a record.
    assert_eq!(forward.coverage.calls, 3);
    assert_eq!(forward.lines, backward.lines);
    let calls = |report: &mcp_unknown_keys_logs::Report| {
        let mut groups: Vec<(String, u64)> = report
            .groups(&[Dimension::Model])
            .unwrap()
            .into_iter()
            .map(|group| (group.values[0].1.clone(), group.calls))
            .collect();
        groups.sort();
        groups
    };
    assert_eq!(calls(&forward), calls(&backward));
    assert_eq!(forward.lines.not_json, 1);
}
