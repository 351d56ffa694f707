//! A call whose keys are all declared costs no allocation at all, nested
//! keys read or not: keys are borrowed from the text, values are skipped,
//! and the path to a nested value lives on the stack.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
use serde_json::{Value, json};

/// The system allocator, counting the allocations of each thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// How many allocations this thread makes in `work`.
fn allocations(work: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

fn clean(auditor: &Auditor, catalog: &Catalog, tool: &str, arguments: &str) -> usize {
    allocations(|| {
        let outcome = auditor.audit(catalog, Call::new(tool, Arguments::Json(arguments)));
        assert!(
            matches!(outcome, Outcome::Audited { warning: None, .. }),
            "{arguments}"
        );
    })
}

#[test]
fn a_clean_call_allocates_nothing() {
    let catalog = Catalog::from_mcp_tools(&[
        json!({"name": "fs_read", "inputSchema": {"properties": {"path": {}, "offset": {}}}}),
        json!({"name": "create_entities", "inputSchema": {"properties": {"entities": {"type": "array", "items": {
            "properties": {"name": {}, "entityType": {}, "observations": {"items": {"type": "string"}}},
        }}}}}),
        json!({"name": "tree", "inputSchema": {"$ref": "#/$defs/node", "$defs": {"node": {"properties": {
            "name": {}, "children": {"items": {"$ref": "#/$defs/node"}},
        }}}}}),
    ]);
    let auditor = Auditor::new().with_sink(());
    assert_eq!(
        clean(&auditor, &catalog, "fs_read", r#"{"path":"a\nb","offset":1}"#),
        0
    );
    let entities: Vec<Value> = (0..100)
        .map(|i| json!({"name": format!("e{i}"), "entityType": "t", "observations": ["x\ty"]}))
        .collect();
    let entities = json!({ "entities": entities }).to_string();
    assert_eq!(clean(&auditor, &catalog, "create_entities", &entities), 0);
    // Within MAX_NESTED_DEPTH: a value skipped past it is skipped by
    // serde_json, which keeps a stack of its own for deep values, as the
    // floor (a bare `IgnoredAny` scan) does.
    let mut tree = r#"{"name":"leaf"}"#.to_owned();
    for _ in 0..30 {
        tree = format!(r#"{{"name":"n","children":[{tree},{{"name":"x"}}]}}"#);
    }
    assert_eq!(clean(&auditor, &catalog, "tree", &tree), 0);
}

#[test]
fn arguments_sent_as_a_json_string_are_decoded_with_one_copy_at_most() {
    let object = json!({"path": "a\nb", "text": "x".repeat(10_000)}).to_string();
    let member = Value::String(object.clone()).to_string();
    let mut decoded = None;
    let made = allocations(|| decoded = Some(mcp_unknown_keys::audit::arguments_text(&member)));
    assert_eq!(decoded.as_deref(), Some(object.as_str()));
    assert_eq!(made, 1, "one String, allocated once");
    let plain = r#""{\u0020}""#.replace("\\u0020", " ");
    assert_eq!(
        allocations(|| drop(mcp_unknown_keys::audit::arguments_text(&plain))),
        0,
        "a string without escapes is borrowed"
    );
}

#[test]
fn a_nested_key_repeated_in_every_item_costs_its_path_once() {
    let catalog = Catalog::from_mcp_tools(&[json!({"name": "create_entities", "inputSchema": {
        "properties": {"entities": {"items": {"properties": {"name": {}}}}},
    }})]);
    let call = |items: usize| {
        let entities: Vec<Value> = (0..items)
            .map(|i| json!({"name": format!("e{i}"), "age": i}))
            .collect();
        json!({ "entities": entities }).to_string()
    };
    let audit = |arguments: &str| {
        // A fresh auditor each time: the same warning is built for both.
        let auditor = Auditor::new().with_sink(());
        allocations(|| {
            let outcome = auditor.audit(&catalog, Call::new("create_entities", Arguments::Json(arguments)));
            let Outcome::Audited { undeclared_paths, .. } = outcome else {
                panic!("audited")
            };
            assert_eq!(undeclared_paths, ["entities[].age"]);
        })
    };
    let (few, many) = (audit(&call(10)), audit(&call(10_000)));
    assert_eq!(few, many, "the work of a finding does not grow with the items");
}
