use super::*;
use crate::audit::{Skip, Verdict};
use crate::jsonrpc::{Line, read_line};

struct Run {
    auditor: Auditor,
    session: Session,
}

impl Run {
    fn new() -> Run {
        Run {
            auditor: Auditor::new().with_sink(()),
            session: Session::new(),
        }
    }

    fn read(&mut self, from: Side, line: &str) -> Step {
        let Line::Message(message) = read_line(line.as_bytes()) else {
            panic!("not a message: {line}")
        };
        self.session.read(&self.auditor, from, message)
    }

    fn list(&mut self, id: &str, cursor: Option<&str>) {
        let params = cursor.map_or(String::new(), |c| format!(r#","params":{{"cursor":"{c}"}}"#));
        self.read(
            Side::Host,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#),
        );
    }

    fn page(&mut self, id: &str, tools: &[(&str, &str)], next: Option<&str>) -> Step {
        let tools: Vec<String> = tools
            .iter()
            .map(|(name, key)| {
                format!(r#"{{"name":"{name}","inputSchema":{{"properties":{{"{key}":{{}}}}}}}}"#)
            })
            .collect();
        let next = next.map_or(String::new(), |n| format!(r#","nextCursor":"{n}""#));
        self.read(
            Side::Server,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{next}}}}}"#,
                tools.join(",")
            ),
        )
    }

    fn call(&mut self, id: &str, tool: &str, arguments: &str) -> Step {
        self.read(
            Side::Host,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            ),
        )
    }

    fn skipped(&self, skip: Skip) -> u64 {
        self.session.coverage().unaudited.get(&skip).copied().unwrap_or(0)
    }
}

/// The reason to skip the step said for the first time, if it did.
fn first_skip(step: &Step) -> Option<Skip> {
    step.notices.iter().find_map(|notice| match notice {
        Notice::Unaudited { skip, .. } => Some(*skip),
        _ => None,
    })
}

fn unknown(step: &Step) -> Vec<String> {
    step.warning().map(|w| w.unknown_keys.clone()).unwrap_or_default()
}

#[test]
fn pages_are_assembled_and_calls_meet_the_pages_so_far() {
    let mut run = Run::new();
    let step = run.call("1", "read", r#"{"x":1}"#);
    assert_eq!(first_skip(&step), Some(Skip::NoCatalogue));
    run.list("2", None);
    assert_eq!(run.session.awaited_listings(), 1);
    assert!(run.page("2", &[("read", "path")], Some("p2")).installed.is_some());
    assert_eq!(
        unknown(&run.call("3", "read", r#"{"path":"a","ffset":1}"#)),
        ["ffset"]
    );
    run.list("4", Some("p2"));
    run.page("4", &[("write", "data")], None);
    assert_eq!(run.auditor.audited_tools(), ["read", "write"]);
    assert_eq!(unknown(&run.call("5", "write", r#"{"dat":1}"#)), ["dat"]);
    let coverage = run.session.coverage();
    assert_eq!((coverage.calls, coverage.audited), (3, 2));
    assert_eq!(run.skipped(Skip::NoCatalogue), 1);
}

#[test]
fn only_the_response_to_an_awaited_listing_is_a_listing() {
    let mut run = Run::new();
    // Answers a request never seen as tools/list.
    assert!(run.page("9", &[("read", "path")], None).installed.is_none());
    run.list("1.0", None);
    // Ids compare by value: 1 answers 1.0.
    assert!(run.page("1", &[("read", "path")], None).installed.is_some());
    assert_eq!(run.session.awaited_listings(), 0);
}

#[test]
fn list_changed_drops_the_catalogue_until_the_next_listing_and_a_relisting_replaces_it() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], None);
    run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
    );
    let step = run.call("2", "read", r#"{"x":1}"#);
    assert!(matches!(
        step.call.unwrap().outcome,
        Outcome::Skipped(Skip::NoCatalogue)
    ));
    // A relisting without list_changed replaces the catalogue wholesale.
    run.list("3", None);
    run.page("3", &[("write", "data")], None);
    run.list("4", None);
    run.page("4", &[("read", "path")], None);
    let step = run.call("5", "write", r#"{"x":1}"#);
    assert!(matches!(
        step.call.unwrap().outcome,
        Outcome::Skipped(Skip::UnlistedTool)
    ));
}

#[test]
fn an_error_answering_a_listing_keeps_the_catalogue_and_gives_up_the_listing() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], Some("p2"));
    run.list("2", Some("p2"));
    run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad cursor"}}"#,
    );
    assert_eq!(run.auditor.audited_tools(), ["read"]);
    // A page of the abandoned listing is passed over.
    run.list("3", Some("p2"));
    assert!(run.page("3", &[("write", "data")], None).installed.is_none());
}

#[test]
fn a_flagged_call_is_judged_by_its_answer_its_cancellation_or_the_end() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], None);
    for id in ["2", "3", "4", "5", "6"] {
        assert!(
            run.call(id, "read", &format!(r#"{{"path":"a","k{id}":1}}"#))
                .call
                .unwrap()
                .flagged
        );
    }
    let verdict = |step: Step| step.verdicts.first().map(|judged| judged.verdict);
    let ignored = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
    );
    assert_eq!(verdict(ignored), Some(Verdict::Ignored));
    let rejected = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"x"}}"#,
    );
    assert_eq!(verdict(rejected), Some(Verdict::Rejected));
    let cancelled = run.read(
        Side::Host,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
    );
    assert_eq!(verdict(cancelled), Some(Verdict::Unanswered));
    let door = run.read(
        Side::Door,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"x"}}"#,
    );
    assert_eq!(
        verdict(door),
        Some(Verdict::Unanswered),
        "the server never answered"
    );
    let finished: Vec<Verdict> = run.session.finish().iter().map(|judged| judged.verdict).collect();
    assert_eq!(finished, [Verdict::Unanswered]);
}

#[test]
fn each_skip_is_first_said_once_and_a_tool_too_deep_is_a_note() {
    let mut run = Run::new();
    assert_eq!(first_skip(&run.call("1", "a", "{}")), Some(Skip::NoCatalogue));
    assert_eq!(first_skip(&run.call("2", "a", "{}")), None);
    let deep = format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300));
    for id in ["3", "4"] {
        run.list(id, None);
        let step = run.read(
            Side::Server,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"deep","inputSchema":{deep}}}]}}}}"#),
        );
        // Listed, declaring nothing, with a note the auditor says once.
        let installed = step.installed.unwrap();
        let notes = installed.notes();
        assert_eq!(notes.len(), 1);
        assert_eq!(
            (notes[0].0, &notes[0].1.problem),
            ("deep", &crate::audit::Problem::TooDeep)
        );
    }
    let step = run.call("5", "deep", r#"{"x":1}"#);
    assert_eq!(first_skip(&step), Some(Skip::DeclaresNothing));
    assert_eq!(run.auditor.listed_tools(), ["deep"]);
    assert!(run.auditor.audited_tools().is_empty());
}

#[test]
fn a_call_audited_by_the_door_is_counted_and_awaits_its_answer_as_any_call() {
    let mut run = Run::new();
    let catalog = Catalog::from_mcp_tools(&[serde_json::json!({
        "name": "read", "inputSchema": {"properties": {"path": {}}},
    })]);
    let audit = |run: &mut Run, id: Option<u64>, tool: &str| {
        let shown = id.map(serde_json::Value::from);
        let call = Call {
            tool,
            arguments: Some(Arguments::Json(r#"{"path":"a","ffset":1}"#)),
            id: shown.as_ref(),
        };
        // The door's own catalogue, which the session does not hold.
        let outcome = run.auditor.audit(&catalog, call);
        let key = id.and_then(|id| Id::of(&serde_json::Value::from(id)));
        run.session.read_audited_call(&call, key, outcome)
    };
    let step = audit(&mut run, Some(1), "read");
    assert!(step.call.as_ref().unwrap().flagged && step.verdicts.is_empty());
    assert_eq!(step.warning().unwrap().unknown_keys, ["ffset"]);
    // Without an id, nothing can answer it.
    let step = audit(&mut run, None, "read");
    assert!(step.call.unwrap().flagged);
    let step = audit(&mut run, Some(3), "write");
    assert_eq!(first_skip(&step), Some(Skip::UnlistedTool));
    assert_eq!(run.session.verdicts().awaited(), 1);
    let coverage = run.session.coverage();
    assert_eq!((coverage.calls, coverage.audited), (3, 2));
    assert_eq!(run.session.findings().len(), 1);
    let step = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#,
    );
    assert!(step.used);
    assert_eq!(step.verdicts[0].verdict, Verdict::Rejected);
}

#[test]
fn unrequested_listings_are_taken_only_while_the_door_says_so() {
    let mut run = Run::new();
    run.session.take_unrequested_listings(true);
    // No request awaits these: a server's side alone.
    let step = run.page("1", &[("read", "path")], Some("p2"));
    assert!(step.used && step.installed.is_some());
    run.page("2", &[("write", "data")], None);
    assert_eq!(run.auditor.audited_tools(), ["read", "write"], "a further page");
    run.page("3", &[("list", "dir")], None);
    assert_eq!(run.auditor.audited_tools(), ["list"], "a new listing");
    // A response that is no listing answers nothing.
    let step = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#,
    );
    assert!(!step.used);
    run.session.take_unrequested_listings(false);
    let step = run.page("5", &[("read", "path")], None);
    assert!(!step.used && step.installed.is_none());
    assert_eq!(run.auditor.audited_tools(), ["list"]);
}

#[test]
fn an_abandoned_listing_takes_no_further_page() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], Some("p2"));
    run.session.abandon_listing();
    run.list("2", Some("p2"));
    let step = run.page("2", &[("write", "data")], None);
    assert!(step.used, "it answered an awaited request");
    assert!(step.installed.is_none());
    assert_eq!(run.auditor.audited_tools(), ["read"]);
}

#[test]
fn a_step_says_whether_the_message_was_of_use() {
    let mut run = Run::new();
    let used = |run: &mut Run, from: Side, line: &str| run.read(from, line).used;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    assert!(!used(&mut run, Side::Host, cancel), "nothing awaits 1");
    run.list("1", None);
    assert!(used(&mut run, Side::Host, cancel), "gives up the listing request");
    assert!(!used(
        &mut run,
        Side::Server,
        r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#
    ));
    assert!(used(
        &mut run,
        Side::Server,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
    ));
    assert!(
        !used(
            &mut run,
            Side::Host,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        ),
        "the host sends no list_changed"
    );
    assert!(run.call("2", "read", "{}").used);
    assert!(!used(
        &mut run,
        Side::Host,
        r#"{"jsonrpc":"2.0","method":"ping","id":3}"#
    ));
}

/// A session whose catalogue lists `read(path)`.
fn listed() -> Run {
    let mut run = Run::new();
    run.list("100", None);
    run.page("100", &[("read", "path")], None);
    run
}

#[test]
fn requests_in_flight_under_one_id_by_value_are_ambiguous_and_said_once() {
    for (first, second) in [("0", "-0"), ("1", "1.0"), ("1", "1e0"), (r#""a""#, r#""\u0061""#)] {
        let mut run = listed();
        let step = run.call(first, "read", r#"{"path":"a","ffset":1}"#);
        assert!(step.notices.is_empty());
        // A clean call under the same id: the answers cannot be told apart.
        let step = run.call(second, "read", r#"{"path":"a"}"#);
        assert!(
            matches!(&step.notices[..], [Notice::AmbiguousId { .. }]),
            "{first} {second}: {:?}",
            step.notices
        );
        let answered = run.read(
            Side::Server,
            &format!(r#"{{"jsonrpc":"2.0","id":{second},"error":{{}}}}"#),
        );
        assert_eq!(
            answered.verdicts[0].verdict,
            Verdict::Ambiguous,
            "{first} {second}"
        );
        // Said once per session.
        run.call("7", "read", r#"{"path":"a","ffset":1}"#);
        assert!(run.call("7", "read", r#"{"path":"a","x":1}"#).notices.is_empty());
    }
}

#[test]
fn verdicts_write_the_id_as_it_came() {
    for id in ["1e0", "1.0", "-0", "12345678901234567890123"] {
        let mut run = listed();
        run.call(id, "read", r#"{"path":"a","ffset":1}"#);
        let step = run.read(
            Side::Server,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        );
        assert_eq!(step.verdicts[0].id, id);
    }
}

#[test]
fn an_interim_answer_and_a_task_are_followed_to_the_final_one() {
    let mut run = listed();
    run.call("1", "read", r#"{"path":"a","ffset":1}"#);
    let interim = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#,
    );
    assert!(interim.verdicts.is_empty());
    run.call("2", "read", r#"{"path":"a","ffset":1}"#);
    let task = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t1","status":"working"}}}"#,
    );
    assert!(task.verdicts.is_empty());
    let fetch = run.read(
        Side::Host,
        r#"{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"t1"}}"#,
    );
    assert!(fetch.used);
    let result = run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":3,"result":{"isError":true}}"#,
    );
    assert_eq!(
        (result.verdicts[0].id.as_str(), result.verdicts[0].verdict),
        ("2", Verdict::Rejected)
    );
    run.call("4", "read", r#"{"path":"a","ffset":1}"#);
    run.read(
        Side::Server,
        r#"{"jsonrpc":"2.0","id":4,"result":{"task":{"taskId":"t4","status":"working"}}}"#,
    );
    let cancel = run.read(
        Side::Host,
        r#"{"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"taskId":"t4"}}"#,
    );
    assert_eq!(cancel.verdicts[0].verdict, Verdict::Unanswered);
    // The call answered by an interim result was retried as call 2.
    assert!(run.session.finish().is_empty());
}

/// A `traceparent` header, as a host propagating its trace sends it.
const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A call to `read` carrying [`PARENT`] in its `_meta`.
fn traced(id: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read","arguments":{arguments},"_meta":{{"traceparent":"{PARENT}"}}}}}}"#
    )
}

/// A call that raised a finding hands its trace context to its warning and
/// to its verdict; a clean call's `_meta` is not read, and the JSON lines
/// never show the context.
#[test]
fn a_flagged_call_s_trace_context_goes_with_its_warning_and_its_verdict() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], None);
    let step = run.read(Side::Host, &traced("2", r#"{"path":"a","ffset":1}"#));
    let warning = step.warning().unwrap();
    assert_eq!(warning.trace, TraceContext::parse(PARENT));
    assert!(
        !warning.to_json_line().contains("trace"),
        "{}",
        warning.to_json_line()
    );
    let clean = run.read(Side::Host, &traced("3", r#"{"path":"a"}"#));
    assert!(clean.warning().is_none());
    let step = run.read(Side::Server, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    assert_eq!(step.verdicts[0].trace, TraceContext::parse(PARENT));
    assert!(!step.verdicts[0].to_json_line().contains("trace"));
    // A call without one: neither carries any.
    let step = run.call("4", "read", r#"{"path":"a","ffset":1,"x":2}"#);
    assert_eq!(step.warning().unwrap().trace, None);
    assert_eq!(run.session.finish()[0].trace, None);
}

/// A trace context stays with the call that carried it: not given to
/// another call under the same id, nor to a number id written as the
/// string's text.
#[test]
fn a_trace_context_goes_to_its_own_call_s_verdict_only() {
    let mut run = Run::new();
    run.list("1", None);
    run.page("1", &[("read", "path")], None);
    // Two calls under id 5, the second traced: each verdict its own.
    run.call("5", "read", r#"{"ffset":1}"#);
    run.read(Side::Host, &traced("5", r#"{"ffset":1}"#));
    // The string "7" traced, the number 7 not.
    run.read(Side::Host, &traced(r#""7""#, r#"{"ffset":1}"#));
    run.call("7", "read", r#"{"ffset":1}"#);
    let judged = run.session.finish();
    let traces: Vec<(&str, bool)> = judged
        .iter()
        .map(|judged| (judged.id.as_str(), judged.trace.is_some()))
        .collect();
    assert_eq!(traces, [("5", false), ("5", true), ("7", true), ("7", false)]);
}
