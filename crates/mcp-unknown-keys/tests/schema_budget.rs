//! A listing's schemas are read within a budget of work: a hostile listing
//! (a tool of hundreds of thousands of properties, a definition read again
//! for every place that refers to it) cannot make reading it take unbounded
//! time. Past the budget a tool is read no further, said once as a note,
//! and never gives a warning from what it did not read.

use crate::common;

use common::said::{audit, listed, undeclared};
use mcp_unknown_keys::audit::{Catalog, Outcome, Problem, Skip};
use mcp_unknown_keys::limits::{MAX_LISTING_WORK, MAX_SCHEMA_WORK};
use serde_json::{Map, Value, json};

fn tool(name: &str, schema: Value) -> Value {
    json!({"name": name, "inputSchema": schema})
}

/// An `allOf` of `branches` branches, each declaring `per_branch`
/// properties of its own.
fn wide(branches: usize, per_branch: usize) -> Value {
    let branches: Vec<Value> = (0..branches)
        .map(|b| {
            let properties: Map<String, Value> = (0..per_branch)
                .map(|p| (format!("k{b}_{p}"), json!({})))
                .collect();
            json!({ "properties": properties })
        })
        .collect();
    json!({ "allOf": branches })
}

/// `fan_out` properties, each an object that must also satisfy one
/// definition of `definition` properties: each is a shape of its own, so the
/// definition is read once per property.
fn fan_out(fan_out: usize, definition: usize) -> Value {
    let big: Map<String, Value> = (0..definition).map(|p| (format!("d{p}"), json!({}))).collect();
    let properties: Map<String, Value> = (0..fan_out)
        .map(|i| {
            let own = json!({"properties": {format!("own{i}"): {}}});
            (format!("p{i}"), json!({"allOf": [{"$ref": "#/$defs/big"}, own]}))
        })
        .collect();
    json!({"properties": properties, "$defs": {"big": {"properties": big}}})
}

#[test]
fn a_tool_too_wide_to_read_keeps_the_keys_read_and_is_not_audited() {
    // More properties than the budget allows, across many branches.
    let per_branch = 256;
    let branches = MAX_SCHEMA_WORK / per_branch + 8;
    let (auditor, said) = listed(&[tool("t", wide(branches, per_branch))]);
    let catalog = auditor.catalog();
    let declared = catalog.get("t").expect("listed, and kept");
    let read = declared.keys().len();
    assert!(read > MAX_SCHEMA_WORK / 2, "the keys read stay declared: {read}");
    assert!(read < branches * per_branch, "the rest were not read: {read}");
    assert!(!declared.is_audited());
    // Never a warning for a key the reader did not reach.
    let call = format!(r#"{{"k0_0":1,"k{}_0":1}}"#, branches - 1);
    assert_eq!(
        audit(&auditor, "t", &call),
        Outcome::Skipped(Skip::DeclaresNothing)
    );
    let notes = said.notes.lock().unwrap();
    assert_eq!(
        *notes,
        ["t: the schema is too large to read whole: the tool's arguments are not audited"]
    );
    assert_eq!(declared.notes()[0].problem, Problem::TooLarge);
}

#[test]
fn a_definition_read_again_for_every_property_is_charged_each_time() {
    // The arguments' own keys fit; reading the definition once per property
    // does not: the nested values past the budget go unread, said once.
    let (auditor, said) = listed(&[tool("t", fan_out(400, 2_000))]);
    let catalog = auditor.catalog();
    let declared = catalog.get("t").unwrap();
    assert!(declared.is_audited(), "its own keys were read whole");
    assert_eq!(declared.keys().len(), 400);
    assert_eq!(
        undeclared(&auditor, "t", r#"{"p0":{"own0":1},"extra":1}"#),
        (vec!["extra".to_owned()], Vec::new())
    );
    let notes = said.notes.lock().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("too large to read whole"), "{notes:?}");
}

#[test]
fn a_listing_is_read_within_a_budget_of_its_own() {
    // Each tool within its own budget; all together past the listing's.
    let per_tool = MAX_SCHEMA_WORK / 2;
    let tools = MAX_LISTING_WORK / per_tool + 4;
    let schema = fan_out(per_tool / 2_000, 2_000);
    let listing: Vec<Value> = (0..tools)
        .map(|i| tool(&format!("t{i:03}"), schema.clone()))
        .collect();
    let catalog = Catalog::from_mcp_tools(&listing);
    assert_eq!(catalog.len(), tools, "every tool is kept");
    let first = catalog.get("t000").unwrap();
    assert!(first.is_audited() && first.notes().is_empty());
    let last = catalog.get(&format!("t{:03}", tools - 1)).unwrap();
    assert!(!last.is_audited(), "read past the listing's budget");
    assert_eq!(last.notes()[0].problem, Problem::TooLarge);
}
