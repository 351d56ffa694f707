//! Many tasks share one layer: each pair is still said once, and a catalogue
//! refresh in the middle of auditing neither blocks nor tears a batch.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::{Recorder, block_on, declares, fs_catalogue, recording_auditor};
use mcp_unknown_keys::{Provider, ToolCall, UnknownKeys};

#[test]
fn many_threads_sending_the_same_undeclared_key_raise_exactly_one_warning() {
    let (auditor, warnings) = recording_auditor();
    let layer = Arc::new(UnknownKeys::with_auditor(
        Recorder::listing(fs_catalogue()),
        auditor,
    ));
    block_on(layer.tools_for_llm()).unwrap();

    let threads = 16;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let layer = layer.clone();
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                for i in 0..50 {
                    let call = ToolCall::new(format!("{t}-{i}"), "fs_read", r#"{"path":"a","ffset":1}"#);
                    block_on(layer.execute_tool_calls(vec![call])).unwrap();
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());

    let warnings = warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].unknown_keys, ["ffset"]);
    assert_eq!(
        layer.get_ref().batches.lock().unwrap().len(),
        threads * 50,
        "every batch was forwarded"
    );
}

#[test]
fn refreshing_the_catalogue_while_batches_are_audited_is_safe() {
    let (auditor, warnings) = recording_auditor();
    let layer = Arc::new(UnknownKeys::with_auditor(
        Recorder::listing(fs_catalogue()),
        auditor,
    ));
    block_on(layer.tools_for_llm()).unwrap();

    let refresher = {
        let layer = layer.clone();
        thread::spawn(move || {
            for i in 0..200 {
                // Alternate between a catalogue that declares `encoding` and one that does not.
                let keys: &[&str] = if i % 2 == 0 {
                    &["path", "offset", "encoding"]
                } else {
                    &["path", "offset"]
                };
                layer.get_ref().set_listing(Ok(vec![declares("fs_read", keys)]));
                block_on(layer.tools_for_llm()).unwrap();
            }
        })
    };
    let callers: Vec<_> = (0..4)
        .map(|t| {
            let layer = layer.clone();
            thread::spawn(move || {
                for i in 0..200 {
                    let batch = vec![
                        ToolCall::new(
                            format!("{t}-{i}-a"),
                            "fs_read",
                            r#"{"path":"a","encoding":"utf8"}"#,
                        ),
                        ToolCall::new(
                            format!("{t}-{i}-b"),
                            "fs_read",
                            format!(r#"{{"path":"a","k{t}_{i}":1}}"#),
                        ),
                    ];
                    let results = block_on(layer.execute_tool_calls(batch)).unwrap();
                    assert_eq!(results.len(), 2);
                }
            })
        })
        .collect();
    refresher.join().unwrap();
    callers.into_iter().for_each(|h| h.join().unwrap());

    let warnings = warnings.lock().unwrap();
    // Every distinct key was said exactly once; `encoding` at most once.
    let fresh_keys = warnings
        .iter()
        .flat_map(|w| &w.unknown_keys)
        .filter(|k| k.starts_with('k'))
        .count();
    assert_eq!(fresh_keys, 4 * 200);
    let encoding = warnings
        .iter()
        .flat_map(|w| &w.unknown_keys)
        .filter(|k| *k == "encoding")
        .count();
    assert!(encoding <= 1, "encoding said {encoding} times");
    assert_eq!(layer.audited_tools(), ["fs_read"]);
}
