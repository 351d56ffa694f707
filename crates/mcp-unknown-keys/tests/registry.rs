//! The Registry's rules, one by one, with in-process providers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_unknown_keys::audit::Warning;
use mcp_unknown_keys::{
    BoxError, Provider, Registry, RegistryError, ToolCall, ToolDeclaration, ToolResult, UnknownKeysLayer,
};
use serde_json::{Value, json};
use tower_layer::Layer;

/// A toolkit that records every batch it receives and answers each call
/// with `name <arguments as JSON>`.
#[derive(Clone, Default)]
struct Toolkit {
    tools: Vec<&'static str>,
    batches: Arc<Mutex<Vec<Vec<ToolCall>>>>,
}

impl Toolkit {
    fn new(tools: &[&'static str]) -> Toolkit {
        Toolkit {
            tools: tools.to_vec(),
            batches: Arc::default(),
        }
    }

    fn batches(&self) -> Vec<Vec<ToolCall>> {
        self.batches.lock().unwrap().clone()
    }
}

impl Provider for Toolkit {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        Ok(self
            .tools
            .iter()
            .map(|name| {
                ToolDeclaration::new(
                    *name,
                    Some("a tool"),
                    json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                )
            })
            .collect())
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        self.batches.lock().unwrap().push(calls.clone());
        Ok(calls
            .iter()
            .map(|call| {
                let arguments = call.arguments().cloned().unwrap_or(Value::Null);
                ToolResult::ok(
                    call.id_text(),
                    format!("{} {arguments}", call.name().unwrap_or("?")),
                )
            })
            .collect())
    }
}

/// A provider that fails whatever it is asked.
struct Broken;

impl Provider for Broken {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        Err("the disk is on fire".into())
    }

    async fn execute_tool_calls(&self, _: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        Err("the disk is on fire".into())
    }
}

/// A provider that answers only the first call of each batch.
struct AnswersOne;

impl Provider for AnswersOne {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        Ok(vec![])
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        Ok(calls
            .iter()
            .take(1)
            .map(|call| ToolResult::ok(call.id_text(), "one"))
            .collect())
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn names(declarations: &[ToolDeclaration]) -> Vec<&str> {
    declarations.iter().filter_map(|d| d.name()).collect()
}

fn call(id: &str, name: &str, arguments: impl Into<Value>) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

#[test]
fn publishes_tag_plus_name_in_registration_order() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read", "write"]), "fs").unwrap();
    registry.add(Toolkit::new(&["now"]), "time").unwrap();
    registry
        .add_with_separator(Toolkit::new(&["search"]), "jira", "__")
        .unwrap();
    registry
        .add_with_separator(Toolkit::new(&["ping"]), "net-", "")
        .unwrap();

    let tools = block_on(registry.tools_for_llm()).unwrap();
    assert_eq!(
        names(&tools),
        ["fs_read", "fs_write", "time_now", "jira__search", "net-ping"]
    );
    // Everything but the name is republished as it came.
    assert_eq!(tools[0].description(), Some("a tool"));
    assert_eq!(
        tools[0].parameters(),
        Some(&json!({"type": "object", "properties": {"path": {"type": "string"}}}))
    );
    assert_eq!(registry.prefixes(), ["fs", "time", "jira", "net-"]);
    assert_eq!(registry.tags(), ["fs_", "time_", "jira__", "net-"]);
}

#[test]
fn refuses_an_empty_prefix() {
    let registry = Registry::new();
    assert_eq!(
        registry.add(Toolkit::default(), ""),
        Err(RegistryError::EmptyPrefix)
    );
    assert!(registry.prefixes().is_empty());
}

#[test]
fn refuses_prefixes_and_separators_outside_the_allowed_characters() {
    let registry = Registry::new();
    for prefix in ["f s", "fs.", "fé", "fs/", "fs\n"] {
        let refusal = registry.add(Toolkit::default(), prefix).unwrap_err();
        assert_eq!(refusal, RegistryError::InvalidPrefix(prefix.to_owned()));
        assert!(refusal.to_string().contains("[A-Za-z0-9_-]"), "{refusal}");
    }
    for separator in [".", ":", " ", "::"] {
        let refusal = registry
            .add_with_separator(Toolkit::default(), "fs", separator)
            .unwrap_err();
        assert_eq!(refusal, RegistryError::InvalidSeparator(separator.to_owned()));
    }
    assert!(registry.prefixes().is_empty());
    registry
        .add_with_separator(Toolkit::default(), "Fs-2_x", "-_")
        .unwrap();
}

#[test]
fn refuses_a_duplicate_prefix_even_with_another_separator() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    let refusal = registry
        .add_with_separator(Toolkit::new(&["write"]), "fs", "-")
        .unwrap_err();
    assert_eq!(refusal, RegistryError::DuplicatePrefix("fs".into()));
    assert!(refusal.to_string().contains("`fs` is already registered"));
    assert_eq!(registry.tags(), ["fs_"]);
}

#[test]
fn refuses_a_collision_of_the_published_tag() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    let refusal = registry
        .add_with_separator(Toolkit::new(&["read"]), "fs_", "")
        .unwrap_err();
    assert_eq!(
        refusal,
        RegistryError::TagCollision {
            tag: "fs_".into(),
            prefix: "fs_".into(),
            registered: "fs".into(),
        }
    );
    let message = refusal.to_string();
    assert!(
        message.contains("`fs_…`") && message.contains("prefix `fs`"),
        "{message}"
    );

    // And the other way round.
    let registry = Registry::new();
    registry
        .add_with_separator(Toolkit::new(&["read"]), "fs_", "")
        .unwrap();
    assert!(matches!(
        registry.add(Toolkit::new(&["read"]), "fs"),
        Err(RegistryError::TagCollision { .. })
    ));
    assert_eq!(registry.prefixes(), ["fs_"]);
}

#[test]
fn routes_to_the_longest_tag_and_strips_it() {
    let short = Toolkit::new(&["read", "x_read"]);
    let long = Toolkit::new(&["read"]);
    let registry = Registry::new();
    registry.add(short.clone(), "fs").unwrap();
    registry.add(long.clone(), "fs_x").unwrap();

    let results =
        block_on(registry.execute_tool_calls(vec![call("1", "fs_x_read", "{}"), call("2", "fs_read", "{}")]))
            .unwrap();
    assert_eq!(results[0].content, "read \"{}\"");
    assert_eq!(results[1].content, "read \"{}\"");
    assert_eq!(long.batches()[0][0].name(), Some("read"));
    assert_eq!(short.batches()[0][0].name(), Some("read"));
    assert_eq!(long.batches()[0][0].id_text(), "1");
    assert_eq!(short.batches()[0][0].id_text(), "2");
}

#[test]
fn passes_arguments_and_other_members_unchanged() {
    let files = Toolkit::new(&["read"]);
    let registry = Registry::new();
    registry.add(files.clone(), "fs").unwrap();

    // A string stays the very same string: spacing, key order, escapes.
    let text = "{ \"path\" : \"a.txt\",\n \"zeta\":1, \"alpha\": \"\\u00e9\" }";
    let mut with_vendor_fields = call("a", "fs_read", text);
    with_vendor_fields.as_value_mut()["index"] = json!(3);
    with_vendor_fields.as_value_mut()["function"]["x-vendor"] = json!({"k": true});
    let object = json!({"path": "b.txt", "nested": {"deep": [1, 2]}});

    block_on(registry.execute_tool_calls(vec![
        with_vendor_fields,
        call("b", "fs_read", object.clone()),
        call("c", "fs_read", ""),
    ]))
    .unwrap();

    let received = &files.batches()[0];
    assert_eq!(received[0].arguments(), Some(&Value::String(text.into())));
    assert_eq!(received[0].as_value()["index"], json!(3));
    assert_eq!(received[0].as_value()["function"]["x-vendor"], json!({"k": true}));
    assert_eq!(received[0].as_value()["type"], json!("function"));
    assert_eq!(received[1].arguments(), Some(&object));
    assert_eq!(received[2].arguments(), Some(&json!("")));
}

#[test]
fn sends_one_batch_per_provider_and_puts_results_back_in_place() {
    let files = Toolkit::new(&["read"]);
    let clock = Toolkit::new(&["now"]);
    let registry = Registry::new();
    registry.add(files.clone(), "fs").unwrap();
    registry.add(clock.clone(), "time").unwrap();

    let results = block_on(registry.execute_tool_calls(vec![
        call("1", "time_now", ""),
        call("2", "fs_read", r#"{"path":"a"}"#),
        call("3", "time_now", "{}"),
        call("4", "fs_read", r#"{"path":"b"}"#),
    ]))
    .unwrap();

    let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4"]);
    assert_eq!(results[1].content, r#"read "{\"path\":\"a\"}""#);
    assert_eq!(results[3].content, r#"read "{\"path\":\"b\"}""#);
    assert_eq!(files.batches().len(), 1);
    assert_eq!(clock.batches().len(), 1);
    let file_ids: Vec<String> = files.batches()[0].iter().map(ToolCall::id_text).collect();
    assert_eq!(file_ids, ["2", "4"]);
}

#[test]
fn runs_the_providers_side_by_side() {
    /// Answers only once its partner has been called too.
    struct Rendezvous(Arc<tokio::sync::Barrier>);

    impl Provider for Rendezvous {
        async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
            self.0.wait().await;
            Ok(vec![])
        }

        async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
            self.0.wait().await;
            Ok(calls.iter().map(|c| ToolResult::ok(c.id_text(), "met")).collect())
        }
    }

    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let registry = Registry::new();
    registry.add(Rendezvous(barrier.clone()), "a").unwrap();
    registry.add(Rendezvous(barrier), "b").unwrap();
    block_on(async {
        let both = registry.execute_tool_calls(vec![call("1", "a_x", ""), call("2", "b_x", "")]);
        let results = tokio::time::timeout(Duration::from_secs(5), both)
            .await
            .expect("providers run one after the other")
            .unwrap();
        assert_eq!(results[1].content, "met");
        tokio::time::timeout(Duration::from_secs(5), registry.tools_for_llm())
            .await
            .expect("listings run one after the other")
            .unwrap();
    });
}

#[test]
fn an_unknown_prefix_fails_only_its_call() {
    let files = Toolkit::new(&["read"]);
    let registry = Registry::new();
    registry.add(files.clone(), "fs").unwrap();

    let results = block_on(registry.execute_tool_calls(vec![
        call("1", "fs_read", "{}"),
        call("2", "git_log", "{}"),
        call("3", "fs_", "{}"), // the bare tag names no tool
    ]))
    .unwrap();
    assert!(!results[0].is_error);
    assert!(results[1].is_error);
    assert_eq!(results[1].tool_call_id, "2");
    assert!(
        results[1].content.contains("unknown tool `git_log`"),
        "{}",
        results[1].content
    );
    assert!(results[1].content.contains("fs_"), "{}", results[1].content);
    assert!(results[2].is_error);
    assert_eq!(files.batches()[0].len(), 1);
}

#[test]
fn a_malformed_call_fails_only_itself() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();

    let results = block_on(registry.execute_tool_calls(vec![
        ToolCall::from(json!("not a call")),
        ToolCall::from(json!({"id": "no-function"})),
        ToolCall::from(json!({"id": 7, "function": {"name": 42}})),
        call("ok", "fs_read", "{}"),
    ]))
    .unwrap();
    assert_eq!(results.len(), 4);
    assert!(results[..3].iter().all(|r| r.is_error));
    assert!(results[0].content.contains("malformed"));
    assert_eq!(results[1].tool_call_id, "no-function");
    assert_eq!(results[2].tool_call_id, "7");
    assert!(!results[3].is_error);
}

#[test]
fn a_failing_provider_fails_only_its_calls() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    registry.add(Broken, "db").unwrap();

    let results = block_on(registry.execute_tool_calls(vec![
        call("1", "db_query", "{}"),
        call("2", "fs_read", "{}"),
        call("3", "db_query", "{}"),
    ]))
    .unwrap();
    assert!(results[0].is_error && results[2].is_error);
    assert!(!results[1].is_error);
    assert_eq!(results[2].tool_call_id, "3");
    assert!(results[0].content.contains("the disk is on fire"));
    assert!(results[0].content.contains("db_"));
}

#[test]
fn a_panicking_provider_fails_only_its_calls() {
    struct Panics;

    impl Provider for Panics {
        async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
            panic!("listing went wrong")
        }

        async fn execute_tool_calls(&self, _: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
            panic!("calling went wrong")
        }
    }

    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    registry.add(Panics, "bad").unwrap();
    let results =
        block_on(registry.execute_tool_calls(vec![call("1", "bad_x", ""), call("2", "fs_read", "")]))
            .unwrap();
    assert!(results[0].is_error);
    assert!(results[0].content.contains("panicked"), "{}", results[0].content);
    assert!(!results[1].is_error);

    let listing = block_on(registry.tools_for_llm()).unwrap_err().to_string();
    assert!(
        listing.contains("prefix `bad`") && listing.contains("panicked"),
        "{listing}"
    );
}

#[test]
fn a_short_answer_fails_only_the_calls_left_unanswered() {
    let registry = Registry::new();
    registry.add(AnswersOne, "one").unwrap();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();

    let results = block_on(registry.execute_tool_calls(vec![
        call("1", "one_a", ""),
        call("2", "fs_read", ""),
        call("3", "one_b", ""),
        call("4", "one_c", ""),
    ]))
    .unwrap();
    assert_eq!(results[0].content, "one");
    assert!(!results[0].is_error && !results[1].is_error);
    assert!(results[2].is_error && results[3].is_error);
    assert_eq!(results[3].tool_call_id, "4");
    assert!(
        results[2].content.contains("answered 1 result(s) for 3 call(s)"),
        "{}",
        results[2].content
    );
}

#[test]
fn a_provider_that_cannot_list_fails_the_listing() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    registry.add(Broken, "db").unwrap();
    let error = block_on(registry.tools_for_llm()).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("prefix `db`"), "{message}");
    assert!(message.contains("the disk is on fire"), "{message}");
}

#[test]
fn an_empty_batch_calls_nobody() {
    let files = Toolkit::new(&["read"]);
    let registry = Registry::new();
    registry.add(files.clone(), "fs").unwrap();
    let results = block_on(registry.execute_tool_calls(vec![])).unwrap();
    assert!(results.is_empty());
    assert!(files.batches().is_empty());
}

#[test]
fn remove_takes_a_provider_out_and_frees_its_prefix() {
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    registry.add(Toolkit::new(&["now"]), "time").unwrap();

    assert!(registry.remove("fs").is_some());
    assert!(registry.remove("fs").is_none());
    assert!(registry.remove("nothing").is_none());
    assert_eq!(names(&block_on(registry.tools_for_llm()).unwrap()), ["time_now"]);
    let results = block_on(registry.execute_tool_calls(vec![call("1", "fs_read", "")])).unwrap();
    assert!(results[0].is_error);

    registry.add(Toolkit::new(&["write"]), "fs").unwrap();
    assert_eq!(
        names(&block_on(registry.tools_for_llm()).unwrap()),
        ["time_now", "fs_write"]
    );
}

#[test]
fn registries_nest() {
    let jira = Toolkit::new(&["search"]);
    let inner = Registry::new();
    inner.add(jira.clone(), "jira").unwrap();
    let outer = Registry::new();
    outer.add(inner, "corp").unwrap();

    let tools = block_on(outer.tools_for_llm()).unwrap();
    assert_eq!(names(&tools), ["corp_jira_search"]);

    let arguments = r#"{"q": "bug"}"#;
    let results = block_on(outer.execute_tool_calls(vec![call("1", "corp_jira_search", arguments)])).unwrap();
    assert!(!results[0].is_error);
    assert_eq!(jira.batches()[0][0].name(), Some("search"));
    assert_eq!(jira.batches()[0][0].arguments(), Some(&json!(arguments)));
}

#[test]
fn a_shared_registry_can_still_change() {
    let registry = Arc::new(Registry::new());
    let stack = UnknownKeysLayer::new().layer(registry.clone());
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    assert_eq!(names(&block_on(stack.tools_for_llm()).unwrap()), ["fs_read"]);
}

#[test]
fn unknown_keys_over_a_registry_audits_the_published_names() {
    let warnings = Arc::new(Mutex::new(Vec::<Warning>::new()));
    let record = warnings.clone();
    let registry = Registry::new();
    registry.add(Toolkit::new(&["read"]), "fs").unwrap();
    let stack = UnknownKeysLayer::new()
        .on_warn(move |w: &Warning| record.lock().unwrap().push(w.clone()))
        .layer(registry);

    block_on(stack.tools_for_llm()).unwrap();
    let results = block_on(stack.execute_tool_calls(vec![call(
        "call_1",
        "fs_read",
        r#"{"path":"src/app.rs","ffset":12}"#,
    )]))
    .unwrap();
    assert!(!results[0].is_error);
    let warnings = warnings.lock().unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].tool, "fs_read");
    assert_eq!(warnings[0].unknown_keys, ["ffset"]);
}
