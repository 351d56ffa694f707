//! `audit` reads every tool call in every shape a real log keeps: each shape
//! on a realistic sample, each call audited once, with its id.

use crate::audit_support;

use audit_support::*;
use serde_json::{Value, json};

/// Audits a fixture against the fixtures' catalogue.
fn audit_fixture(name: &str) -> (Vec<Said>, Covered) {
    output(&audit(&["--tools", &tools_arg(), &fixture_arg(name)], ""))
}

// ------------------------------------------------------------ OpenAI

#[test]
fn an_openai_call_is_audited_with_arguments_as_a_string_or_an_object() {
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            openai_call(
                "call_1",
                "fs_read",
                json!(r#"{"path":"a","ffset":12,"the rest":"…"}"#),
            ),
            openai_call("call_2", "fs_read", json!({"path": "a", "lenght": 3})),
        ]),
    );
    assert_eq!(
        output(&run),
        (
            vec![
                fs_read_warning(&["ffset", "the rest"], "call_1"),
                fs_read_warning(&["lenght"], "call_2")
            ],
            all_audited(2)
        )
    );
}

#[test]
fn escaped_argument_strings_are_unescaped_before_the_scan() {
    let arguments = r#"{"path":"C:\\dir\\\"x\".txt","k\u0065y":1}"#;
    let run = audit(
        &[],
        &lines(&[mcp_catalogue(), openai_call("c", "fs_read", json!(arguments))]),
    );
    assert_eq!(warnings(&run), [fs_read_warning(&["key"], "c")]);
}

#[test]
fn a_batch_is_a_json_array_of_calls_audited_in_order() {
    let batch = json!([
        openai_call("call_1", "fs_read", json!(r#"{"ffset":1}"#)),
        openai_call("call_2", "fs_read", json!(r#"{"ffset":2,"limit":3}"#)),
    ]);
    let run = audit(&[], &lines(&[mcp_catalogue(), batch]));
    assert_eq!(
        output(&run),
        (
            vec![
                fs_read_warning(&["ffset"], "call_1"),
                fs_read_warning(&["limit"], "call_2")
            ],
            all_audited(2)
        )
    );
}

#[test]
fn a_chat_message_with_tool_calls_is_one_batch() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        openai_call("call_1", "fs_read", json!(r#"{"path":"a","ffset":1}"#)),
        openai_call("call_2", "fs_read", json!(r#"{"path":"b","ffset":2}"#)),
    ]});
    let run = audit(&[], &lines(&[mcp_catalogue(), message]));
    // The same pair twice in one batch: said once, with the first call's id.
    assert_eq!(
        output(&run),
        (vec![fs_read_warning(&["ffset"], "call_1")], all_audited(2))
    );
}

#[test]
fn a_legacy_functions_request_declares_what_its_function_calls_meet() {
    let request = json!({"model": "gpt-3.5-turbo-0613",
        "functions": [{"name": "fs_read", "parameters": {"type": "object", "properties": {"path": {}, "offset": {}}}}],
        "messages": [{"role": "assistant", "content": null,
                      "function_call": {"name": "fs_read", "arguments": "{\"path\":\"a\",\"ffset\":1}"}}]});
    assert_eq!(
        output(&audit(&[], &lines(&[request]))),
        (vec![fs_read_warning(&["ffset"], "")], all_audited(1))
    );
}

#[test]
fn a_chat_completions_response_yields_its_choices_tool_calls() {
    assert_eq!(
        audit_fixture("audit/openai-chat-response.json"),
        (
            vec![
                said("read_file", &["offset"], READ_FILE, "call_Qm3fX8rT1aLp"),
                said(
                    "list_directory",
                    &["recursive"],
                    LIST_DIRECTORY,
                    "call_Zk7wB2nH5sVd"
                ),
            ],
            all_audited(2)
        )
    );
}

#[test]
fn streamed_chunks_are_assembled_by_index_until_the_choice_finishes() {
    assert_eq!(
        audit_fixture("audit/openai-chat-stream.sse"),
        (
            vec![
                said("search_files", &["maxDepth"], SEARCH_FILES, "call_Hq8sL2mN4pRt"),
                said("read_file", &["encoding"], READ_FILE, "call_Wc5xV9bN1mKj"),
            ],
            all_audited(2)
        )
    );
}

#[test]
fn a_stream_cut_short_still_hands_over_its_calls() {
    let chunk = |delta: Value| {
        json!({"id": "chatcmpl-x", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
    };
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "fs_read", "arguments": "{\"ffset\""}}]}),
            ),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]})),
        ]),
    );
    assert_eq!(
        output(&run),
        (vec![fs_read_warning(&["ffset"], "call_1")], all_audited(1))
    );
}

#[test]
fn chat_request_bodies_are_audited_against_their_own_tools_and_history_counts_once() {
    // Three requests, each repeating the conversation so far: three calls,
    // not five; the request's own tools are the catalogue.
    let (said_, covered_) = output(&audit(&[&fixture_arg("audit/openai-chat-requests.jsonl")], ""));
    assert_eq!(
        said_,
        [
            said("list_directory", &["depth"], LIST_DIRECTORY, "call_8fKd2LmQ0wEr"),
            said("read_file", &["line_range"], READ_FILE, "call_3nVb7XcZ1aSd"),
        ]
    );
    assert_eq!(covered_, all_audited(3));
}

#[test]
fn responses_api_requests_responses_and_stream_events_count_each_call_once() {
    // A request with the call in its input, a stream's item added (a
    // placeholder) and done, the completed event and the response: two
    // calls. The request's call meets the flat declarations the request
    // carries; the response's, on lines of their own, meet none of them.
    let search = said(
        "search_files",
        &["caseSensitive"],
        &["path", "pattern"],
        "call_Lp0oKi9MjU8n",
    );
    let (said_, covered_) = output(&audit(&[&fixture_arg("audit/openai-responses.jsonl")], ""));
    assert_eq!(said_, std::slice::from_ref(&search));
    assert_eq!(
        covered_,
        covered(2, 1, json!({"no_catalogue": 1}), json!({"read_file": 1}))
    );
    // With the tools given, the response's call is audited too.
    let (said_, covered_) = audit_fixture("audit/openai-responses.jsonl");
    assert_eq!(
        said_,
        [
            search,
            said("read_file", &["max_bytes"], READ_FILE, "call_Bh6yGt5fRe4d"),
        ]
    );
    assert_eq!(covered_, all_audited(2));
}

// ------------------------------------------------------------ Codex

#[test]
fn a_codex_rollout_function_call_is_audited_wrapped_or_bare() {
    let item = |call_id: &str, key: &str| {
        json!({"type": "function_call", "name": "fs_read", "call_id": call_id,
               "arguments": format!(r#"{{"path":"a","{key}":1}}"#)})
    };
    let wrapped = json!({"timestamp": "2026-11-30T07:00:00Z", "type": "response_item", "payload": item("call_1", "ffset")});
    let event = json!({"timestamp": "2026-11-30T07:00:01Z", "type": "event_msg",
                       "payload": {"type": "mcp_tool_call_begin", "call_id": "call_1",
                                   "invocation": {"server": "fs", "tool": "fs_read", "arguments": {"ffset": 1}}}});
    let run = audit(
        &[],
        &lines(&[mcp_catalogue(), wrapped, event, item("call_2", "limit")]),
    );
    assert_eq!(
        output(&run),
        (
            vec![
                fs_read_warning(&["ffset"], "call_1"),
                fs_read_warning(&["limit"], "call_2")
            ],
            all_audited(2)
        )
    );
}

#[test]
fn codex_exec_mcp_tool_calls_name_their_server_and_count_once() {
    let (said_, covered_) = audit_fixture("audit/codex-exec.jsonl");
    assert_eq!(
        said_,
        [said(
            "mcp__fs__list_directory",
            &["include_hidden"],
            LIST_DIRECTORY,
            "item_2"
        )]
    );
    // Started and completed: one call each; the shell command is no tool call.
    assert_eq!(covered_, all_audited(2));
}

// ------------------------------------------------------------ Anthropic

#[test]
fn a_claude_code_transcript_line_yields_its_tool_use_blocks() {
    let line = json!({
        "parentUuid": "p", "sessionId": "s", "type": "assistant", "uuid": "u",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "fs_read", "input": {"path": "a", "ffset": 1}},
            {"type": "tool_use", "id": "toolu_2", "name": "fs_read", "input": {"path": "b", "encoding": "utf8"}},
        ]},
    });
    let tool_result = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"type\":\"tool_use\"}"}]}});
    let run = audit(&[], &lines(&[mcp_catalogue(), line, tool_result]));
    assert_eq!(
        output(&run),
        (
            vec![
                fs_read_warning(&["ffset"], "toolu_1"),
                fs_read_warning(&["encoding"], "toolu_2")
            ],
            all_audited(2)
        )
    );
}

#[test]
fn anthropic_request_bodies_use_their_own_input_schema_and_responses_the_tools_given() {
    // The request's history meets the request's tools; the response, a
    // record of its own, meets only the tools given.
    let search = said(
        "search_files",
        &["limit"],
        &["path", "pattern"],
        "toolu_01A9bQ7cX3dE5fG7hJ9kL1mN",
    );
    let (said_, covered_) = output(&audit(&[&fixture_arg("audit/anthropic-messages.jsonl")], ""));
    assert_eq!(said_, std::slice::from_ref(&search));
    assert_eq!(
        covered_,
        covered(2, 1, json!({"no_catalogue": 1}), json!({"read_file": 1}))
    );
    let (said_, covered_) = audit_fixture("audit/anthropic-messages.jsonl");
    assert_eq!(
        said_,
        [
            search,
            said(
                "read_file",
                &["from_line"],
                READ_FILE,
                "toolu_01Pq2Rs3Tu4Vw5Xy6Za7Bc8D"
            ),
        ]
    );
    assert_eq!(covered_, all_audited(2));
}

#[test]
fn anthropic_batch_results_yield_their_messages_calls() {
    let result = json!({"custom_id": "req-7", "result": {"type": "succeeded", "message": {
        "id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_7", "name": "fs_read", "input": {"path": "a", "ffset": 1}}]}}});
    let run = audit(&[], &lines(&[mcp_catalogue(), result]));
    assert_eq!(
        output(&run),
        (vec![fs_read_warning(&["ffset"], "toolu_7")], all_audited(1))
    );
}

#[test]
fn anthropic_stream_events_are_assembled_from_input_json_deltas() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "fs_read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\", "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"ffset\": 3}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_10", "name": "now", "input": {}}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ];
    // As server-sent events, `event:` lines and all.
    let mut sse = format!("{}\n", mcp_catalogue());
    for event in &events {
        sse.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    let run = audit(&[], &sse);
    assert_eq!(
        output(&run),
        (
            vec![fs_read_warning(&["ffset"], "toolu_9")],
            covered(2, 1, json!({"declares_nothing": 1}), json!({}))
        )
    );
}

// ------------------------------------------------------------ Gemini

#[test]
fn gemini_function_calls_without_ids_are_counted_by_their_place() {
    // The response's two calls have no id; the request that follows holds
    // another in its history.
    let (said_, covered_) = output(&audit(&[&fixture_arg("audit/gemini.jsonl")], ""));
    // No catalogue before the request: the response's calls go unaudited.
    assert_eq!(
        said_,
        [said("list_directory", &["show_sizes"], LIST_DIRECTORY, "")]
    );
    assert_eq!(
        covered_,
        covered(3, 1, json!({"no_catalogue": 2}), json!({"read_file": 2}))
    );
    // Against the catalogue from the start, all three are audited.
    let (said_, covered_) = audit_fixture("audit/gemini.jsonl");
    assert_eq!(
        said_,
        [
            said("read_file", &["bytes"], READ_FILE, ""),
            said("list_directory", &["show_sizes"], LIST_DIRECTORY, "")
        ]
    );
    assert_eq!(covered_, all_audited(3));
}

#[test]
fn a_gemini_cli_session_file_yields_its_tool_calls() {
    assert_eq!(
        audit_fixture("audit/gemini-cli-session.json"),
        (
            vec![said(
                "read_file",
                &["absolute_path"],
                READ_FILE,
                "read_file-1764489605123-a1b2c3"
            )],
            all_audited(2)
        )
    );
}

// ------------------------------------------------------------ Bedrock

#[test]
fn bedrock_converse_requests_use_their_tool_specs_and_responses_the_tools_given() {
    let list = said(
        "list_directory",
        &["pattern"],
        LIST_DIRECTORY,
        "tooluse_kZ3x9Qm2RgWt",
    );
    let (said_, covered_) = output(&audit(&[&fixture_arg("audit/bedrock-converse.jsonl")], ""));
    assert_eq!(said_, std::slice::from_ref(&list));
    assert_eq!(
        covered_,
        covered(2, 1, json!({"no_catalogue": 1}), json!({"read_file": 1}))
    );
    let (said_, covered_) = audit_fixture("audit/bedrock-converse.jsonl");
    assert_eq!(
        said_,
        [
            list,
            said("read_file", &["lines"], READ_FILE, "tooluse_Yb7c1Ne4PoLs"),
        ]
    );
    assert_eq!(covered_, all_audited(2));
}

// ------------------------------------------------------------ frameworks

#[test]
fn langchain_messages_yield_their_tool_calls_args_once() {
    assert_eq!(
        audit_fixture("audit/langchain.jsonl"),
        (
            vec![
                said("read_file", &["section"], READ_FILE, "call_Ab12Cd34Ef56"),
                said("list_directory", &["sort"], LIST_DIRECTORY, "call_Gh78Ij90Kl12"),
            ],
            all_audited(2)
        )
    );
}

#[test]
fn vercel_ai_sdk_tool_call_parts_count_once_wherever_a_result_repeats_them() {
    assert_eq!(
        audit_fixture("audit/vercel-ai-sdk.jsonl"),
        (
            vec![
                said("search_files", &["ignoreCase"], SEARCH_FILES, "call_Mn34Op56Qr78"),
                said("read_file", &["encoding"], READ_FILE, "call_St90Uv12Wx34"),
            ],
            all_audited(2)
        )
    );
}

// ------------------------------------------------------------ OpenTelemetry

#[test]
fn otlp_execute_tool_spans_are_audited_against_the_spans_tool_definitions() {
    // No --tools: the chat span's gen_ai.tool.definitions is the catalogue.
    assert_eq!(
        output(&audit(&[&fixture_arg("audit/otel-otlp.json")], "")),
        (
            vec![said("read_file", &["lang"], READ_FILE, "call_Yz12Ab34Cd56")],
            all_audited(1)
        )
    );
}

#[test]
fn flattened_spans_are_read_as_otlp_ones_are() {
    // One span a line: the chat span's definitions are its own line's, and
    // the execute_tool span on the next line meets only the tools given.
    assert_eq!(
        output(&audit(&[&fixture_arg("audit/otel-flat.jsonl")], "")),
        (
            vec![],
            covered(1, 0, json!({"no_catalogue": 1}), json!({"list_directory": 1}))
        )
    );
    assert_eq!(
        audit_fixture("audit/otel-flat.jsonl"),
        (
            vec![said(
                "list_directory",
                &["limit"],
                LIST_DIRECTORY,
                "call_Ef78Gh90Ij12"
            )],
            all_audited(1)
        )
    );
}

// ------------------------------------------------------------ MCP

#[test]
fn a_json_rpc_tools_call_uses_its_id_as_text() {
    let request = |id: Value, key: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "fs_read", "arguments": {"path": "a", key: 1}}})
    };
    let run = audit(
        &[],
        &lines(&[
            mcp_catalogue(),
            request(json!(7), "ffset"),
            request(json!("req-8"), "limit"),
        ]),
    );
    assert_eq!(
        warnings(&run),
        [
            fs_read_warning(&["ffset"], "7"),
            fs_read_warning(&["limit"], "req-8")
        ]
    );
}

#[test]
fn json_rpc_calls_are_never_merged_though_ids_repeat_across_sessions() {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "fs_read", "arguments": {"path": "a"}}});
    let run = audit(&[], &lines(&[mcp_catalogue(), request.clone(), request]));
    assert_eq!(coverage(&run), all_audited(2));
}

#[test]
fn a_member_repeated_in_a_line_is_read_as_its_last_copy() {
    // As the server's JSON parser reads it: the last `name` wins.
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","name":"fs_read","arguments":{"ffset":1}}}"#;
    let run = audit(&[], &format!("{}\n{line}\n", mcp_catalogue()));
    assert_eq!(warnings(&run), [fs_read_warning(&["ffset"], "1")]);
}

#[test]
fn catalogues_come_in_every_declaration_form() {
    let schema = json!({"type": "object", "properties": {"path": {}, "offset": {}}});
    let forms = [
        json!({"tools": [{"type": "function", "function": {"name": "fs_read", "parameters": schema}}]}),
        json!({"tools": [{"type": "function", "name": "fs_read", "parameters": schema}]}),
        json!({"tools": [{"name": "fs_read", "input_schema": schema}]}),
        json!({"tools": [{"functionDeclarations": [{"name": "fs_read", "parametersJsonSchema": schema}]}]}),
        // A request's catalogue, met by the calls of its own record.
        json!({"toolConfig": {"tools": [{"toolSpec": {"name": "fs_read", "inputSchema": {"json": schema}}}]},
            "messages": [{"role": "assistant", "tool_calls": [openai_call("c", "fs_read", json!(r#"{"ffset":1}"#))]}]}),
        mcp_catalogue(),
        json!({"jsonrpc": "2.0", "id": 1, "result": mcp_catalogue()}),
    ];
    for catalogue in forms {
        let run = audit(
            &[],
            &lines(&[
                catalogue.clone(),
                openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
            ]),
        );
        assert_eq!(warnings(&run), [fs_read_warning(&["ffset"], "c")], "{catalogue}");
    }
}

#[test]
fn lines_of_no_use_are_counted_and_lines_that_are_not_json_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mixed.jsonl");
    let text = format!(
        "{}\nnot JSON at all\n{{\"role\":\"user\",\"content\":\"hi\"}}\n\n42\n{{\"truncated\":\n{{\"type\":\"system\",\"message\":\"compacted\"}}\n{}\n",
        mcp_catalogue(),
        openai_call("c", "fs_read", json!(r#"{"ffset":1}"#)),
    );
    std::fs::write(&path, text).unwrap();
    let run = audit(&["--format", "text", path.to_str().unwrap()], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let shown = path.display();
    assert!(
        run.stderr.contains(&format!("{shown}:2: not JSON")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("{shown}:6: not JSON")),
        "{}",
        run.stderr
    );
    assert_eq!(total(&run.stdout, "lines not JSON"), 2);
    assert_eq!(total(&run.stdout, "lines with no call or catalogue"), 3);
    assert_eq!(total(&run.stdout, "calls read"), 1);
    assert_eq!(total(&run.stdout, "warnings raised"), 1);
}

// ------------------------------------------------- MCP gateway, OTel logs

/// GitHub Agentic Workflows' MCP gateway log holds listings, calls and
/// answers: audited with no `--tools`, each call judged by its answer.
/// Claude Code's OpenTelemetry events hold calls only: audited against the
/// server's catalogue given with `--tools SERVER=FILE`.
#[test]
fn a_gateway_log_and_claude_code_s_otel_events_are_audited_end_to_end() {
    let run = audit(&[&fixture_arg("audit/gh-aw-rpc-messages-v2.jsonl")], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (warned, covered) = output(&run);
    // The second call sent `owner` alone: the required keys it lacked are a
    // warning of their own (no undeclared key).
    assert_eq!(
        warned,
        [
            said(
                "mcp__github__issue_read",
                &["verbose"],
                &["issue_number", "owner", "repo"],
                ""
            ),
            said(
                "mcp__github__issue_read",
                &[],
                &["issue_number", "owner", "repo"],
                ""
            )
        ]
    );
    assert_eq!(covered, all_audited(2));
    // The server ignored `verbose`, and rejected the call that lacked
    // required keys.
    let judged = verdicts(&run);
    assert_eq!(judged.len(), 2, "{judged:?}");
    assert_eq!(judged[0]["verdict"], "ignored");
    assert_eq!(
        (&judged[1]["verdict"], &judged[1]["missing_required"]),
        (&"rejected".into(), &serde_json::json!(["issue_number", "repo"]))
    );

    let tools = format!("github={}", fixture_arg("audit/github-tools.json"));
    let run = audit(
        &[
            "--tools",
            &tools,
            &fixture_arg("audit/claude-code-otel-logs.jsonl"),
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        output(&run),
        (
            vec![said(
                "mcp__github__issue_read",
                &["verbose"],
                &["issue_number", "owner", "repo"],
                "toolu_01A2B3C4D5E6F7G8H9J0K1L2"
            )],
            all_audited(1)
        )
    );
}
