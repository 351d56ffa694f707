//! The tap, line by line, as the relays show it lines.

use super::*;
use std::sync::Mutex;

use mcp_unknown_keys::audit::{Judged, Sink, Warning};
use mcp_unknown_keys::trace::TraceContext;

fn tap() -> (Tap, Arc<Mutex<Vec<Warning>>>) {
    let said = Arc::new(Mutex::new(Vec::new()));
    let record = said.clone();
    let auditor = Auditor::new().with_sink(move |w: &Warning| record.lock().unwrap().push(w.clone()));
    (Tap::new(auditor), said)
}

/// Shows a client line as the relay would.
fn from_client(tap: &Tap, line: &str) {
    if line.len() <= tap.client().keep_limit() && tap.client().before_forward(line.as_bytes()) {
        tap.client().after_forward(line.as_bytes());
    }
}

fn from_server(tap: &Tap, line: &str) {
    if line.len() <= tap.server().keep_limit() && tap.server().before_forward(line.as_bytes()) {
        tap.server().after_forward(line.as_bytes());
    }
}

fn listed(tap: &Tap) {
    from_client(tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    from_server(
        tap,
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "fs_read", "inputSchema": {"properties": {"path": {}}}}]}}"#,
    );
    assert_eq!(tap.audited_tools(), ["fs_read"]);
}

fn said(said: &Arc<Mutex<Vec<Warning>>>, tap: &Tap) -> Vec<(String, Vec<String>, String)> {
    tap.settle(None);
    said.lock()
        .unwrap()
        .iter()
        .map(|w| (w.tool.clone(), w.unknown_keys.clone(), w.id.clone()))
        .collect()
}

fn says(tool: &str, keys: &[&str], id: &str) -> (String, Vec<String>, String) {
    (
        tool.into(),
        keys.iter().map(|k| k.to_string()).collect(),
        id.into(),
    )
}

#[test]
fn every_call_carrying_an_undeclared_key_is_counted_though_said_once() {
    let (tap, said) = tap();
    listed(&tap);
    for id in 2..5 {
        from_client(
            &tap,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"a","ffset":1,"x":{id}}}}}}}"#
            ),
        );
    }
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a","x":1}}}"#,
    );
    tap.settle(None);
    assert_eq!(said.lock().unwrap().len(), 1);
    let findings = tap.findings();
    let counts: Vec<(&str, &str, u64)> = findings.iter().map(|f| (f.tool, f.key, f.calls)).collect();
    assert_eq!(counts, [("fs_read", "ffset", 3), ("fs_read", "x", 4)]);
    assert_eq!((tap.coverage().calls, tap.coverage().audited), (4, 4));
}

#[test]
fn a_numeric_id_becomes_its_decimal_digits_and_a_string_id_stays_as_is() {
    let (tap, warnings) = tap();
    listed(&tap);
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":12345678901,"method":"tools/call","params":{"name":"fs_read","arguments":{"a":1}}}"#,
    );
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":"call \"7\"","method":"tools/call","params":{"name":"fs_read","arguments":{"b":1}}}"#,
    );
    let ids: Vec<String> = said(&warnings, &tap).into_iter().map(|(_, _, id)| id).collect();
    assert_eq!(ids, ["12345678901", "call \"7\""]);
}

#[test]
fn escaped_methods_names_and_ids_are_read_as_json_reads_them() {
    let (tap, warnings) = tap();
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","\u0069d":"l\u0031","method":"\u0074ools\/list"}"#,
    );
    from_server(
        &tap,
        r#"{"result":{"tools":[{"name":"t","inputSchema":{"properties":{"a":{}}}}]},"jsonrpc":"2.0","id":"l1"}"#,
    );
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":2,"method":"\u0074ools/call","params":{"name":"t","arguments":{"b":1}}}"#,
    );
    assert_eq!(said(&warnings, &tap), [says("t", &["b"], "2")]);
}

#[test]
fn a_listing_answered_with_an_id_equal_by_value_is_learned() {
    let (tap, _) = tap();
    from_client(&tap, r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}"#);
    from_server(
        &tap,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"properties":{"a":{}}}}]}}"#,
    );
    assert_eq!(tap.audited_tools(), ["t"]);
}

#[test]
fn a_short_listing_that_mentions_list_changed_is_still_a_listing() {
    let (tap, _) = tap();
    from_client(&tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    from_server(
        &tap,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"watch","description":"sends list_changed","inputSchema":{"properties":{"a":{}}}}]}}"#,
    );
    assert_eq!(tap.audited_tools(), ["watch"]);
}

#[test]
fn the_window_opens_before_a_listing_request_is_forwarded_and_closes_once_answered_or_cancelled() {
    let (tap, _) = tap();
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
    from_client(&tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(
        tap.server().keep_limit(),
        MAX_TAPPED_LINE,
        "open at once, read or not"
    );
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_TAPPED_LINE, "a listing is awaited");
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    );
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
    // A call that mentions `tools/list` opens the window until it is read;
    // one that mentions a mere `list` does not.
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_directory","arguments":{"x":"tools/list"}}}"#,
    );
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
    // A call, until it is read, opens the server's lines too: one of them
    // may answer it. Checked before the line is queued, so that the worker
    // cannot have read it yet.
    let call = br#"{"method":"tools/call","params":{"name":"list_directory"}}"#;
    assert!(tap.client().before_forward(call));
    assert_eq!(tap.server().keep_limit(), MAX_TAPPED_LINE);
    tap.client().after_forward(call);
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
    from_client(&tap, r#"{"jsonrpc":"2.0","id":3,"method":"tools\/list"}"#);
    assert_eq!(
        tap.server().keep_limit(),
        MAX_TAPPED_LINE,
        "a slash written `\\/`"
    );
}

#[test]
fn unanswered_listings_are_forgotten_beyond_a_bound() {
    let (tap, _) = tap();
    for id in 0..1000 {
        from_client(
            &tap,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        );
    }
    tap.settle(None);
    assert_eq!(
        tap.shared.gates.window.load(Ordering::SeqCst),
        mcp_unknown_keys::limits::MAX_AWAITED_LISTINGS
    );
}

#[test]
fn a_listing_left_unanswered_while_the_server_answers_much_else_is_forgotten() {
    let (tap, _) = tap();
    from_client(&tap, r#"{"jsonrpc":"2.0","id":"never","method":"tools/list"}"#);
    for id in 0..mcp_unknown_keys::limits::MAX_RESPONSES_AWAITING {
        from_server(&tap, &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    }
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_TAPPED_LINE, "still awaited");
    from_server(&tap, r#"{"jsonrpc":"2.0","id":"other","result":{}}"#);
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE, "given up");
}

#[test]
fn a_listing_is_audited_against_from_its_first_page() {
    let (tap, warnings) = tap();
    from_client(&tap, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    from_server(
        &tap,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"properties":{"x":{}}}}],"nextCursor":"2"}}"#,
    );
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"y":1}}}"#,
    );
    assert_eq!(said(&warnings, &tap), [says("a", &["y"], "2")]);
}

#[test]
fn a_batch_is_read_message_by_message() {
    let (tap, warnings) = tap();
    listed(&tap);
    from_client(
        &tap,
        r#"[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_read","arguments":{"b":1}}},{"jsonrpc":"2.0","method":"ping"}]"#,
    );
    assert_eq!(said(&warnings, &tap), [says("fs_read", &["b"], "2")]);
}

#[test]
fn calls_are_counted_by_why_they_were_not_audited() {
    let (tap, _) = tap();
    let call = |id: u32, name: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        )
    };
    from_client(&tap, &call(1, "early", "{}"));
    listed(&tap);
    from_client(&tap, &call(2, "nope", "{}"));
    from_client(&tap, &call(3, "fs_read", "[]"));
    from_client(&tap, &call(4, "fs_read", r#"{"path":"a"}"#));
    from_server(
        &tap,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
    );
    from_client(&tap, &call(5, "fs_read", "{}"));
    tap.settle(None);
    assert_eq!(
        tap.coverage().to_json_line(),
        r#"{"coverage":{"calls":5,"audited":1,"unaudited":{"no_catalogue":2,"unlisted_tool":1,"unreadable_arguments":1},"unlisted_tools":{"early":1,"fs_read":1,"nope":1}}}"#
    );
}

#[test]
fn a_client_line_too_long_to_read_counts_as_a_call_not_audited() {
    let (tap, _) = tap();
    tap.client().passed_over();
    assert_eq!(tap.unread().too_long, 1);
    let coverage = tap.coverage();
    assert_eq!((coverage.calls, coverage.audited), (1, 0));
}

#[test]
fn a_client_line_too_long_to_read_counts_as_a_call_only_if_it_may_be_one() {
    let (tap, _) = tap();
    let client = tap.client();
    // Its first bytes show a call, or show nothing of its method, or write
    // it with an escape: it may be a call.
    for head in [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fs_write","arguments":{"text":"aaaa"#,
        r#"{"jsonrpc":"2.0","id":7,"params":{"arguments":{"method":"x","text":"aaaa"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"#,
        r#"[{"jsonrpc":"2.0","id":7,"method":"notifications/progress"}, {"jsonrpc":"2.0","id":8,"#,
    ] {
        client.passed_over_line(head.as_bytes());
    }
    // They show another method, or a response: no call.
    for head in [
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"aaaa"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"aaaa"#,
        r#"{"params":{"name":"tools/call"},"method" : "sampling/createMessage","#,
    ] {
        client.passed_over_line(head.as_bytes());
    }
    let unread = tap.unread();
    assert_eq!(
        (unread.too_long, unread.too_long_calls, unread.calls()),
        (7, 4, 4)
    );
    let coverage = tap.coverage();
    assert_eq!((coverage.calls, coverage.audited), (4, 0));
    assert_eq!(coverage.unaudited[&Skip::UnreadableArguments], 4);
}

use proptest::strategy::Strategy;

proptest::proptest! {
    #[test]
    fn no_jumble_of_json_rpc_fragments_panics(
        lines in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", ",", ":", "\"id\"", "1", "\"1\"", "-2.5e3", "1e999999999999999999", "null", "\"method\"",
                "\"tools/list\"", "\"tools/call\"", "\"notifications/tools/list_changed\"",
                "\"notifications/cancelled\"", "\"params\"", "\"name\"", "\"fs_read\"", "\"arguments\"",
                "\"result\"", "\"tools\"", "\"inputSchema\"", "\"properties\"", "\"nextCursor\"",
                "\"cursor\"", "\"requestId\"", "\"error\"", " ", "\\", "\"\\u00e9\"", "\u{e9}",
            ]), 0..40).prop_map(|parts| parts.concat()),
            0..30,
        )
    ) {
        let (tap, _) = tap();
        for line in &lines {
            from_client(&tap, line);
            from_server(&tap, line);
        }
        tap.settle(None);
        let _ = mcp_unknown_keys::jsonrpc::read_line(lines.concat().as_bytes());
    }
}

#[test]
fn nothing_read_from_a_line_panics() {
    let (tap, _) = tap();
    listed(&tap);
    for line in [
        "",
        "{",
        "[]",
        "null",
        r#"{"id":{"nested":1},"method":"tools/call","params":[]}"#,
        r#"{"id":1,"method":"tools/call","params":{"name":5}}"#,
        r#"{"id":1,"method":"tools/call","params":{"name":"fs_read","arguments":null}}"#,
        r#"{"id":1,"method":"tools/call","params":{"name":"fs_read","arguments":"{\"k\":1}"}}"#,
        r#"{"id":1,"id":2,"method":"tools/list"}"#,
        r#"{"id":1,"result":{"tools":"no"}}"#,
        r#"{"id":1e400,"result":{}}"#,
        "\"id\":",
        "\"id\"",
    ] {
        from_client(&tap, line);
        from_server(&tap, line);
    }
    tap.settle(None);
}

/// A sink whose warnings say they hold the audit worker, then wait until
/// the test lets them go; it keeps the summary's coverage.
struct Held {
    holding: Mutex<std::sync::mpsc::Sender<()>>,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
    coverage: Mutex<Option<Coverage>>,
    unsettled_calls: Mutex<Option<u64>>,
}

/// A held report, the sender that lets its warnings go, and the receiver
/// told each time one holds the worker.
fn held() -> (
    Arc<Held>,
    std::sync::mpsc::Sender<()>,
    std::sync::mpsc::Receiver<()>,
) {
    let (release, released) = std::sync::mpsc::channel();
    let (holding, held_now) = std::sync::mpsc::channel();
    let held = Arc::new(Held {
        holding: Mutex::new(holding),
        release: Mutex::new(released),
        coverage: Mutex::new(None),
        unsettled_calls: Mutex::new(None),
    });
    (held, release, held_now)
}

impl Held {
    /// The summary's coverage, and how many calls it counted unread.
    fn summarised(&self) -> (String, u64) {
        let coverage = self.coverage.lock().unwrap().take().expect("a summary");
        let unsettled_calls = self.unsettled_calls.lock().unwrap().take().expect("a summary");
        (coverage.to_json_line(), unsettled_calls)
    }
}

/// A call to `fs_read` (listed by [`listed`]) with an undeclared key.
fn misspelt_call(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"fs_read","arguments":{{"path":"a","ffset":{id}}}}}}}"#
    )
}

impl Sink for Held {
    fn warn(&self, _: &Warning) {
        let _ = self.holding.lock().unwrap().send(());
        let _ = self.release.lock().unwrap().recv();
    }

    fn summary(&self, summary: &Summary<'_>) {
        *self.coverage.lock().unwrap() = Some(summary.coverage.clone());
        *self.unsettled_calls.lock().unwrap() = Some(summary.unread.unsettled_calls);
    }
}

impl Held {
    /// A tap that says everything to `held`.
    fn tap(held: &Arc<Held>) -> Tap {
        Tap::new(Auditor::new().with_shared_sink(held.clone()))
    }
}

#[test]
fn every_call_read_is_in_the_summary_though_the_audit_had_not_reached_it() {
    let (held, release, _) = held();
    let tap = Held::tap(&held);
    listed(&tap);
    // The first call's warning holds the worker; the rest wait behind it.
    from_client(&tap, &misspelt_call(2));
    from_client(&tap, &misspelt_call(3));
    from_client(&tap, &misspelt_call(4));
    from_client(&tap, r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    tap.summarise(Some(Duration::from_millis(50)));
    release.send(()).unwrap();
    assert_eq!(
        held.summarised(),
        (
            r#"{"coverage":{"calls":3,"audited":1,"unaudited":{"unreadable_arguments":2},"unlisted_tools":{}}}"#.into(),
            2
        )
    );
}

#[test]
fn calls_queued_when_the_session_ends_are_counted_once_read() {
    let (tap, _) = tap();
    listed(&tap);
    tap.shared.worker.end_soon();
    from_client(
        &tap,
        r#"[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a"}}},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"other","arguments":{}}}]"#,
    );
    tap.settle(None);
    let (coverage, unread) = tap.shared.worker.end(&tap.shared.gates);
    assert_eq!(
        unread, 0,
        "the line was read: its calls are counted, not the line"
    );
    assert_eq!(
        coverage.to_json_line(),
        r#"{"coverage":{"calls":2,"audited":0,"unaudited":{"unreadable_arguments":2},"unlisted_tools":{}}}"#
    );
}

#[test]
fn a_server_line_shaped_as_a_call_is_no_call_when_the_session_ends() {
    let (held, release, held_now) = held();
    let tap = Held::tap(&held);
    listed(&tap);
    // The first call's warning holds the worker; behind it, a call and the
    // same call written back by a server that echoes what it is sent.
    from_client(&tap, &misspelt_call(2));
    held_now.recv().unwrap();
    from_client(&tap, &misspelt_call(3));
    from_server(&tap, &misspelt_call(3));
    // The session ends before the worker reads them: it only counts them.
    tap.shared.worker.end_soon();
    release.send(()).unwrap();
    tap.settle(None);
    let (coverage, unread) = tap.shared.worker.end(&tap.shared.gates);
    assert_eq!(unread, 0);
    assert_eq!(
        coverage.to_json_line(),
        r#"{"coverage":{"calls":2,"audited":1,"unaudited":{"unreadable_arguments":1},"unlisted_tools":{}}}"#
    );
}

#[test]
fn a_batch_cut_short_when_the_session_ends_is_counted_whole() {
    let (held, release, held_now) = held();
    let tap = Held::tap(&held);
    listed(&tap);
    let calls: Vec<String> = (2..52).map(misspelt_call).collect();
    from_client(&tap, &format!("[{}]", calls.join(",")));
    // The first call's warning holds the worker inside the batch: one call
    // counted, 49 still to count.
    held_now.recv().unwrap();
    tap.summarise(Some(Duration::ZERO));
    release.send(()).unwrap();
    assert_eq!(
        held.summarised(),
        (
            r#"{"coverage":{"calls":50,"audited":1,"unaudited":{"unreadable_arguments":49},"unlisted_tools":{}}}"#.into(),
            49
        )
    );
}

/// A sink that keeps each warning's and verdict's id with its trace
/// context, and the notices.
#[derive(Default)]
struct Recorded {
    traces: Mutex<Vec<(String, Option<TraceContext>)>>,
    verdicts: Mutex<Vec<(String, Option<TraceContext>)>>,
    notices: Mutex<Vec<String>>,
}

impl Sink for Recorded {
    fn warn(&self, warning: &Warning) {
        self.traces
            .lock()
            .unwrap()
            .push((warning.id.clone(), warning.trace));
    }
    fn verdict(&self, judged: &Judged) {
        self.verdicts
            .lock()
            .unwrap()
            .push((judged.id.clone(), judged.trace));
    }
    fn notice(&self, notice: &Notice) {
        self.notices.lock().unwrap().push(notice.to_string());
    }
}

fn recorded() -> (Tap, Arc<Recorded>) {
    let recorded = Arc::new(Recorded::default());
    let tap = Tap::new(Auditor::new().with_shared_sink(recorded.clone()));
    (tap, recorded)
}

#[test]
fn a_call_in_a_batch_with_an_id_too_large_for_a_float_keeps_its_trace() {
    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (tap, recorded) = recorded();
    listed(&tap);
    from_client(
        &tap,
        &format!(
            r#"[{{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/call","params":{{"name":"fs_read","arguments":{{"ffset":1}},"_meta":{{"traceparent":"{PARENT}"}}}}}},{{"jsonrpc":"2.0","method":"ping"}}]"#
        ),
    );
    tap.settle(None);
    assert_eq!(
        *recorded.traces.lock().unwrap(),
        [("12345678901234567890123".to_owned(), TraceContext::parse(PARENT))]
    );
    from_server(
        &tap,
        r#"{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}"#,
    );
    tap.settle(None);
    assert_eq!(
        *recorded.verdicts.lock().unwrap(),
        [("12345678901234567890123".to_owned(), TraceContext::parse(PARENT))],
        "the verdict joins the call's trace too"
    );
}

#[test]
fn a_call_naming_no_tool_is_said_so() {
    let (tap, recorded) = recorded();
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"","arguments":{}}}"#,
    );
    listed(&tap);
    from_client(
        &tap,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
    );
    tap.settle(None);
    let notices = recorded.notices.lock().unwrap();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(
        notices[0].starts_with("a call naming no tool was not audited: no tools/list answer seen yet"),
        "{}",
        notices[0]
    );
    assert!(
        notices[1]
            .starts_with("a call naming no tool was not audited: the server's tools/list does not name it"),
        "{}",
        notices[1]
    );
}

#[test]
fn the_ids_awaited_by_the_server_side_stay_bounded_and_are_forgotten_once_answered() {
    let (tap, _) = tap();
    listed(&tap);
    let gate_size = |tap: &Tap| {
        let mut size = 0;
        tap.shared.gates.awaited.update(|ids| size = ids.len());
        size
    };
    // Far more calls carrying an undeclared key than are awaited at once,
    // none answered: the oldest are judged unanswered as new ones come.
    let calls = 3 * mcp_unknown_keys::limits::MAX_AWAITED;
    for id in 2..2 + calls {
        from_client(&tap, &misspelt_call(id as u32));
        if id % 256 == 0 {
            tap.settle(None);
        }
    }
    tap.settle(None);
    assert_eq!(tap.server().keep_limit(), MAX_TAPPED_LINE, "answers are awaited");
    let size = gate_size(&tap);
    assert!(
        (mcp_unknown_keys::limits::MAX_AWAITED..=2 * mcp_unknown_keys::limits::MAX_AWAITED).contains(&size),
        "{size} ids"
    );
    // Every awaited call answered: the server side narrows again.
    for id in 2 + calls - mcp_unknown_keys::limits::MAX_AWAITED..2 + calls {
        from_server(&tap, &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    }
    tap.settle(None);
    assert_eq!(gate_size(&tap), 0);
    assert_eq!(tap.server().keep_limit(), MAX_NOTIFICATION_LINE);
}
