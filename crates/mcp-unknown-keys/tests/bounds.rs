//! The bounds that keep the alarm's memory and work finite
//! (`mcp_unknown_keys::limits`): past each, things are counted, not
//! remembered, and that is said once.

use mcp_unknown_keys::audit::{Arguments, Call, Findings, Notice, Outcome};
use mcp_unknown_keys::limits::{MAX_SAID_PAIRS, MAX_UNDECLARED_PER_CALL};
use serde_json::json;

use crate::common::said::{audit, listed};

/// A call to `t` carrying the keys `k{from}` … `k{to - 1}`.
fn keys(from: usize, to: usize) -> String {
    let members: Vec<String> = (from..to).map(|i| format!(r#""k{i}":1"#)).collect();
    format!("{{{}}}", members.join(","))
}

#[test]
fn past_the_said_pairs_new_pairs_are_counted_and_that_is_said_once() {
    let (auditor, said) = listed(&[json!({"name": "t", "inputSchema": {"properties": {"a": {}}}})]);
    let per_call = 1_000;
    let total = MAX_SAID_PAIRS + 2_500;
    for from in (0..total).step_by(per_call) {
        audit(&auditor, "t", &keys(from, (from + per_call).min(total)));
    }
    let warned: usize = said
        .warnings
        .lock()
        .unwrap()
        .iter()
        .map(|w| w.unknown_keys.len())
        .sum();
    assert_eq!(warned, MAX_SAID_PAIRS);
    assert_eq!(auditor.unsaid_pairs(), 2_500);
    let full = said
        .notices
        .lock()
        .unwrap()
        .iter()
        .filter(|notice| matches!(notice, Notice::SaidMemoryFull { .. }))
        .count();
    assert_eq!(full, 1);
    // A pair said before the memory filled is still remembered as said.
    let again = audit(&auditor, "t", r#"{"k0":1}"#);
    assert!(matches!(again, Outcome::Audited { warning: None, .. }));
}

#[test]
fn one_call_is_read_for_a_bounded_number_of_undeclared_keys() {
    let (auditor, said) = listed(&[json!({"name": "t", "inputSchema": {"properties": {"a": {}}}})]);
    let outcome = audit(&auditor, "t", &keys(0, 3 * MAX_UNDECLARED_PER_CALL));
    let Outcome::Audited {
        undeclared, warning, ..
    } = outcome
    else {
        panic!("audited")
    };
    assert_eq!(undeclared.len(), MAX_UNDECLARED_PER_CALL);
    assert_eq!(warning.unwrap().unknown_keys.len(), MAX_UNDECLARED_PER_CALL);
    audit(&auditor, "t", &keys(5_000, 5_000 + 2 * MAX_UNDECLARED_PER_CALL));
    let notices = said.notices.lock().unwrap().clone();
    assert_eq!(
        notices,
        [Notice::ManyKeys {
            tool: "t".into(),
            read: MAX_UNDECLARED_PER_CALL
        }]
    );
    assert!(notices[0].to_string().contains("the rest are passed over"));
}

#[test]
fn findings_keep_a_bounded_number_of_pairs_and_count_the_rest() {
    let (auditor, _) = listed(&[json!({"name": "t", "inputSchema": {"properties": {"a": {}}}})]);
    let mut findings = Findings::default();
    let total = MAX_SAID_PAIRS + 300;
    for from in (0..total).step_by(1_000) {
        let text = keys(from, (from + 1_000).min(total));
        let call = Call::new("t", Arguments::Json(&text));
        findings.record(&call, &auditor.audit(&auditor.catalog(), call));
    }
    assert_eq!(findings.len(), MAX_SAID_PAIRS);
    assert_eq!(findings.unkept(), 300);
    // A pair kept is still counted per call.
    let call = Call::new("t", Arguments::Json(r#"{"k0":1}"#));
    findings.record(&call, &auditor.audit(&auditor.catalog(), call));
    let k0 = findings.iter().find(|finding| finding.key == "k0").unwrap();
    assert_eq!(k0.calls, 2);
}
