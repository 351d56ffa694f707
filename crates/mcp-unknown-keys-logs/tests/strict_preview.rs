//! The strict-readiness preview: what a server that rejects undeclared keys
//! would have refused, per tool, split by who wrote the keys, with what
//! servers did with those calls, and what to adopt first.

use mcp_unknown_keys::audit::{Cause, Verdict};
use mcp_unknown_keys_logs::Options;
use mcp_unknown_keys_logs::strict::{
    KNOWN_HOST_KEYS, MAX_KEY_SETS, MAX_TOOLS, Origin, StrictPreview, StrictTool,
};

use crate::support::audited;
use serde_json::{Value, json};

fn preview(lines: &[Value]) -> StrictPreview {
    audited(lines, &Options::default().strict_preview(true))
        .strict_preview()
        .expect("asked for")
}

fn tool<'a>(preview: &'a StrictPreview, name: &str) -> &'a StrictTool {
    preview.tools.iter().find(|tool| tool.tool == name).expect(name)
}

fn catalogue() -> Value {
    json!({"tools": [
        {"name": "fs_read", "inputSchema": {"properties": {
            "path": {}, "offset": {}, "perPage": {},
            "opts": {"type": "object", "properties": {"depth": {}}},
        }}},
        {"name": "fs_write", "inputSchema": {"properties": {"path": {}, "text": {}}}},
        {"name": "search", "inputSchema": {"properties": {"q": {}}}},
    ]})
}

fn tool_use(id: u64, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id.to_string(), "name": name, "input": input})
}

#[test]
fn nothing_is_counted_unless_asked_for() {
    let report = audited(&[catalogue()], &Options::default());
    assert_eq!(report.strict_preview(), None);
}

#[test]
fn calls_are_split_by_who_wrote_their_keys_once_the_whole_log_is_read() {
    let preview = preview(&[
        catalogue(),
        // `trace` is a host's, though only its third tool shows it.
        tool_use(1, "fs_read", json!({"path": "a", "trace": "t"})),
        tool_use(2, "fs_read", json!({"path": "a", "ffset": 1})),
        tool_use(3, "fs_read", json!({"path": "a", "per_page": 3, "_meta": {}})),
        tool_use(4, "fs_read", json!({"path": "a", "opts": {"dpth": 1}})),
        tool_use(5, "fs_write", json!({"path": "a", "text": "b", "trace": "t"})),
        tool_use(6, "search", json!({"q": "a", "trace": "t"})),
        tool_use(7, "search", json!({"q": "a"})),
    ]);
    assert_eq!((preview.audited, preview.refused), (7, 6));
    assert_eq!(
        (preview.refused_for_model_keys, preview.refused_for_host_keys_only),
        (3, 3)
    );
    let fs_read = tool(&preview, "fs_read");
    assert_eq!(
        (fs_read.audited, fs_read.refused, fs_read.model, fs_read.host_only),
        (4, 4, 3, 1)
    );
    assert_eq!(fs_read.per_1000_audited, 1000.0);
    let key = |name: &str| fs_read.keys.iter().find(|key| key.key == name).expect(name);
    assert_eq!(key("trace").origin, Origin::Host);
    assert_eq!(key("trace").cause, Some(Cause::Injected));
    assert_eq!(key("_meta").origin, Origin::Host);
    assert_eq!(key("ffset").origin, Origin::Model);
    assert_eq!(key("ffset").cause, Some(Cause::Truncated));
    assert_eq!(key("ffset").suggestion.as_deref(), Some("offset"));
    assert!(key("opts.dpth").nested);
    assert_eq!(key("opts.dpth").origin, Origin::Model);
    let search = tool(&preview, "search");
    assert_eq!(
        (search.audited, search.refused, search.per_1000_audited),
        (2, 1, 500.0)
    );
    // Most refused first.
    assert_eq!(preview.tools[0].tool, "fs_read");

    assert_eq!(preview.adopt.allow, ["_meta", "trace"]);
    let aliases = &preview.adopt.aliases["fs_read"];
    assert_eq!(aliases["ffset"], "offset");
    assert_eq!(aliases["per_page"], "perPage");
    assert_eq!(aliases.len(), 2, "{aliases:?}");
}

#[test]
fn every_known_host_key_is_a_hosts_on_its_first_call() {
    let mut lines = vec![catalogue()];
    for (n, key) in KNOWN_HOST_KEYS.iter().enumerate() {
        lines.push(tool_use(n as u64, "search", json!({"q": "a", *key: 1})));
    }
    let preview = preview(&lines);
    assert_eq!(preview.refused_for_host_keys_only, KNOWN_HOST_KEYS.len() as u64);
    assert_eq!(preview.refused_for_model_keys, 0);
    let mut allow: Vec<&str> = KNOWN_HOST_KEYS.to_vec();
    allow.sort_unstable();
    assert_eq!(preview.adopt.allow, allow);
}

#[test]
fn what_the_server_did_with_each_call_it_would_have_refused_is_counted() {
    let call = |id: u64, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "fs_read", "arguments": arguments}});
    let preview = preview(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1, "result": catalogue()}),
        call(2, json!({"path": "a", "ffset": 1})),
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
        call(3, json!({"path": "a", "ffset": 1, "limt": 2})),
        json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": true}}),
        call(4, json!({"path": "a"})),
        json!({"jsonrpc": "2.0", "id": 4, "result": {"content": []}}),
    ]);
    let fs_read = tool(&preview, "fs_read");
    assert_eq!((fs_read.audited, fs_read.refused), (3, 2));
    assert_eq!(fs_read.verdicts.get(&Verdict::Ignored), Some(&1));
    assert_eq!(fs_read.verdicts.get(&Verdict::Rejected), Some(&1));
}

#[test]
fn a_call_lacking_only_a_required_key_is_not_one_strictness_refuses() {
    let preview = preview(&[
        json!({"tools": [{"name": "search", "inputSchema": {"properties": {"q": {}}, "required": ["q"]}}]}),
        tool_use(1, "search", json!({})),
        tool_use(2, "search", json!({"query": "a"})),
    ]);
    assert_eq!((preview.audited, preview.refused), (2, 1));
}

#[test]
fn memory_stays_bounded_and_every_call_is_still_counted() {
    let tools: Vec<Value> = (0..MAX_TOOLS + 50)
        .map(|n| json!({"name": format!("t{n}"), "inputSchema": {"properties": {"q": {}}}}))
        .collect();
    let mut lines = vec![json!({ "tools": tools })];
    let calls = MAX_KEY_SETS + 500;
    for n in 0..calls {
        let tool = format!("t{}", n % (MAX_TOOLS + 50));
        lines.push(tool_use(n as u64, &tool, json!({"q": 1, format!("k{n}"): 1})));
    }
    let preview = preview(&lines);
    assert_eq!(preview.tools.len(), MAX_TOOLS + 1);
    assert!(preview.tools.iter().any(|tool| tool.tool == "(other)"));
    assert_eq!((preview.audited, preview.refused), (calls as u64, calls as u64));
    assert_eq!(preview.refused_for_model_keys, calls as u64);
}

#[test]
fn a_tool_a_host_names_mcp_server_tool_is_counted_under_its_server() {
    let preview = preview(&[
        json!({"tools": [{"name": "mcp__fs__fs_read", "inputSchema": {"properties": {"path": {}}}}]}),
        tool_use(1, "mcp__fs__fs_read", json!({"path": "a", "ffset": 1})),
        tool_use(2, "search", json!({"q": "a"})),
    ]);
    let fs_read = tool(&preview, "mcp__fs__fs_read");
    assert_eq!(fs_read.server.as_deref(), Some("fs"));
    assert_eq!(fs_read.refused, 1);
}

#[test]
fn a_key_past_256_bytes_is_kept_cut_and_never_offered_to_adopt() {
    let long = format!("_meta{}", "x".repeat(1 << 20));
    let preview = preview(&[
        catalogue(),
        tool_use(1, "search", json!({"q": "a", long.as_str(): 1})),
        tool_use(2, "fs_write", json!({"path": "a", "text": "b", long.as_str(): 1})),
        tool_use(3, "fs_read", json!({"path": "a", long.as_str(): 1})),
    ]);
    let key = &tool(&preview, "search").keys[0];
    assert!(
        key.key.len() <= 256 && key.key.ends_with('…'),
        "{}",
        key.key.len()
    );
    // Seen on three tools: a host's, but not one to write into a file cut.
    assert_eq!(key.origin, Origin::Host);
    assert!(preview.adopt.allow.is_empty(), "{:?}", preview.adopt);
}
