//! `audit` reads the envelopes teams keep model traffic in: a request and
//! its response on one record under any of the usual member names, batch
//! files, HAR captures, and the call forms frameworks and benchmarks write.
//! Each on a realistic sample (`fixtures/audit/`).

use crate::audit_support;

use audit_support::*;
use serde_json::json;

/// Audits a fixture against the fixtures' catalogue.
fn with_tools(name: &str) -> (Vec<Said>, Covered) {
    output(&audit(&["--tools", &tools_arg(), &fixture_arg(name)], ""))
}

/// Audits a fixture with only the catalogues it holds.
fn alone(name: &str) -> (Vec<Said>, Covered) {
    output(&audit(&[&fixture_arg(name)], ""))
}

const WEB_SEARCH: &[&str] = &["num_results", "query"];
const DOCS_SEARCH: &[&str] = &["collection", "q", "top_k"];

#[test]
fn a_request_and_its_response_pair_under_every_usual_member_name() {
    // request/response (either order), input/output, req/res, messages +
    // response, and bodies one level deeper: `search` is a web search on
    // some lines and a docs search on others, each line's calls meeting
    // its own line's declaration.
    assert_eq!(
        alone("audit/exchanges.jsonl"),
        (
            vec![
                said("search", &["safe_search"], WEB_SEARCH, "call_w2"),
                said("search", &["num_results"], DOCS_SEARCH, "call_d2"),
            ],
            all_audited(6)
        )
    );
}

#[test]
fn openai_batch_input_and_output_files_are_read() {
    // The input file's requests carry their tools and history.
    assert_eq!(
        alone("audit/openai-batch-input.jsonl"),
        (
            vec![said("list_directory", &["recursive"], LIST_DIRECTORY, "call_in1")],
            all_audited(1)
        )
    );
    // The output file holds no tools, and the input file's belong to its
    // own records: its calls meet the tools given.
    let unaudited = covered(2, 0, json!({"no_catalogue": 2}), json!({"read_file": 2}));
    let input = fixture_arg("audit/openai-batch-input.jsonl");
    let output_file = fixture_arg("audit/openai-batch-output.jsonl");
    assert_eq!(coverage(&audit(&[&output_file], "")), unaudited);
    let both = output(&audit(&[&input, &output_file], ""));
    assert_eq!((both.1.calls, both.1.audited), (3, 1));
    assert_eq!(
        with_tools("audit/openai-batch-output.jsonl"),
        (
            vec![said("read_file", &["lines"], READ_FILE, "call_b1")],
            all_audited(2)
        )
    );
}

#[test]
fn anthropic_message_batch_results_are_read() {
    assert_eq!(
        with_tools("audit/anthropic-batch-results.jsonl"),
        (
            vec![said("list_directory", &["depth"], LIST_DIRECTORY, "toolu_01Ba")],
            all_audited(2)
        )
    );
}

#[test]
fn a_har_capture_reads_each_entry_s_bodies_json_or_server_sent_events() {
    // A Chat Completions exchange (JSON bodies), an Anthropic stream (its
    // response body is server-sent events), and a page's own request:
    // each entry's calls meet its request's tools.
    assert_eq!(
        alone("audit/capture.har"),
        (
            vec![
                said("search", &["lang"], DOCS_SEARCH, "call_h1"),
                said("search", &["limit"], &["status", "text"], "toolu_01Hs"),
            ],
            all_audited(2)
        )
    );
}

#[test]
fn tau2_calls_with_object_arguments_are_read_and_expected_actions_are_not_calls() {
    // Two calls the agent made; the task's expected action and the
    // reward's action check name a key no call carried (`refund`), and
    // are no calls.
    let tools = fixture_arg("audit/tau2-tools.json");
    let run = audit(&["--tools", &tools, &fixture_arg("audit/tau2-results.json")], "");
    assert_eq!(
        output(&run),
        (
            vec![said(
                "cancel_reservation",
                &["notify_by"],
                &["reservation_id"],
                "call_t2"
            )],
            all_audited(2)
        )
    );
}

#[test]
fn ollama_calls_carry_their_arguments_as_an_object() {
    // Ollama's calls have no id.
    assert_eq!(
        alone("audit/ollama-chat.jsonl"),
        (
            vec![said("get_weather", &["units"], &["city", "unit"], "")],
            all_audited(1)
        )
    );
}

#[test]
fn tool_name_and_tool_input_are_a_call_counted_once_across_hook_events() {
    // PreToolUse and PostToolUse carry the same call.
    assert_eq!(
        with_tools("audit/hooks.jsonl"),
        (
            vec![said("mcp__fs__read_file", &["offset"], READ_FILE, "toolu_01K1")],
            all_audited(1)
        )
    );
}

#[test]
fn name_with_input_or_arguments_objects_are_calls_in_a_list_of_calls_only() {
    // A framework's steps: `{name, input}` and `{name, arguments}` in
    // `tool_calls`; an `observation` with a name and an input is no call.
    assert_eq!(
        with_tools("audit/agent-steps.jsonl"),
        (
            vec![said("list_directory", &["glob"], LIST_DIRECTORY, "s1")],
            all_audited(2)
        )
    );
}
