//! The one list of causes, [`Cause::ALL`], is the list every language's
//! types give: the Python stub's `Cause` literal and the union the Node
//! package's Rust declares for `native.d.ts`, name for name and in order.

use mcp_unknown_keys::audit::Cause;

/// The names of `Cause::ALL`, in order.
fn rust_causes() -> Vec<&'static str> {
    Cause::ALL.iter().map(|cause| cause.as_str()).collect()
}

/// The text of a file of a sibling crate.
fn sibling(path: &str) -> String {
    let at = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()))
}

/// The quoted names between `open` and the first `close` after it.
fn quoted_between(text: &str, open: &str, close: &str) -> Vec<String> {
    let start = text.find(open).unwrap_or_else(|| panic!("{open:?} not found")) + open.len();
    let end = start + text[start..].find(close).expect("the list ends");
    text[start..end]
        .split(['"', '\''])
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_python_stub_lists_every_cause_in_order() {
    let stub = sibling("mcp-unknown-keys-py/python/mcp_unknown_keys/_native.pyi");
    assert_eq!(quoted_between(&stub, "Cause = Literal[", "]"), rust_causes());
}

#[test]
fn the_node_types_list_every_cause_in_order_wherever_a_cause_is_typed() {
    let report = sibling("mcp-unknown-keys-node/src/report.rs");
    let unions: Vec<&str> = report
        .match_indices("ts_type = \"'case_variant'")
        .map(|(at, _)| &report[at..])
        .collect();
    // A hint's `cause` and a warning's `missing_cause`.
    assert_eq!(unions.len(), 2, "each typed cause is the whole union");
    for union in unions {
        assert_eq!(quoted_between(union, "ts_type = \"", "\""), rust_causes());
    }
}
