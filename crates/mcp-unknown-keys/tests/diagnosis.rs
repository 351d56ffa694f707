//! The diagnosis each warning carries: what probably went wrong with each
//! undeclared key, and which declared keys the server will run without.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use mcp_unknown_keys::audit::{
    Arguments, Auditor, Call, Catalog, Cause, Coverage, Findings, Hint, MissingKey, Outcome, Sink, Skip,
    StderrSink, Summary, TracingSink, VerdictTally, Warning,
};
use mcp_unknown_keys::limits::MAX_UNDECLARED_PER_CALL;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// `fs_read` (path, offset with default 0, limit), `fs_search`, and the
/// specification's delegation tool `task`.
fn catalog() -> Catalog {
    Catalog::from_mcp_tools(&[
        json!({"name": "fs_read", "inputSchema": {"type": "object", "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "default": 0},
            "limit": {"type": "integer"},
        }}}),
        json!({"name": "fs_search", "inputSchema": {"type": "object", "properties": {
            "pattern": {"type": "string"},
            "filters": {"type": "array"},
            "token_budget": {"type": "integer", "default": 4000},
            "file_path": {"type": "string"},
        }}}),
        json!({"name": "task", "inputSchema": {"type": "object", "properties": {
            "prompt": {"type": "string"},
            "description": {"type": "string"},
            "subagent_type": {"type": "string"},
        }}}),
        json!({"name": "clock", "inputSchema": {"type": "object", "properties": {"timezone": {}}}}),
        json!({"name": "convert_time", "inputSchema": {"type": "object", "properties": {
            "source_timezone": {}, "time": {}, "target_timezone": {},
        }}}),
        json!({"name": "chart_set_style", "inputSchema": {"type": "object", "properties": {
            "chart_name": {}, "style_id": {"type": "integer", "default": 1},
        }}}),
    ])
}

fn auditor() -> Auditor {
    let auditor = Auditor::new().with_sink(());
    auditor.replace_catalog(catalog());
    auditor
}

fn warn(auditor: &Auditor, tool: &str, arguments: &str) -> Option<Warning> {
    auditor
        .audit(&auditor.catalog(), Call::new(tool, Arguments::Json(arguments)))
        .warning()
}

fn hints_of(warning: &Warning) -> Vec<(String, Cause, Option<String>)> {
    let hints = warning.hints.iter();
    hints
        .map(|hint| (hint.key.clone(), hint.cause, hint.suggestion.clone()))
        .collect()
}

fn hint(key: &str, cause: Cause, suggestion: Option<&str>) -> (String, Cause, Option<String>) {
    (key.to_owned(), cause, suggestion.map(str::to_owned))
}

#[test]
fn the_first_incident_is_a_truncated_offset_and_a_fragment() {
    let warning = warn(
        &auditor(),
        "fs_read",
        r#"{"path":"src/app.raku","ffset":12,"the rest":"…"}"#,
    )
    .unwrap();
    assert_eq!(
        hints_of(&warning),
        [
            hint("ffset", Cause::Truncated, Some("offset")),
            hint("the rest", Cause::Fragment, None),
        ]
    );
    assert_eq!(warning.missing_keys, [MissingKey::new("offset", Some(json!(0)))]);
    assert_eq!(
        warning.to_string(),
        "fs_read was called with undeclared argument(s) ffset, the rest; it declares limit, offset, path \
         — ffset → offset? (truncated), the rest (fragment); offset was not sent: the server will use its default, 0"
    );
}

#[test]
fn the_second_incident_is_two_fragments_of_the_prompt() {
    let arguments = r#"{"prompt":"Investigate the","nvestigate":"…","the rest":"…"}"#;
    let warning = warn(&auditor(), "task", arguments).unwrap();
    assert_eq!(
        hints_of(&warning),
        [
            hint("nvestigate", Cause::Fragment, None),
            hint("the rest", Cause::Fragment, None),
        ]
    );
    assert!(warning.missing_keys.is_empty());
}

#[test]
fn variants_plurals_and_typos_suggest_the_declared_key_and_say_what_was_not_sent() {
    let arguments = r#"{"patern":"x","tokenBudget":10,"file-path":"a","filter":[]}"#;
    let warning = warn(&auditor(), "fs_search", arguments).unwrap();
    assert_eq!(
        hints_of(&warning),
        [
            hint("file-path", Cause::CaseVariant, Some("file_path")),
            hint("filter", Cause::Plural, Some("filters")),
            hint("patern", Cause::NearMiss, Some("pattern")),
            hint("tokenBudget", Cause::CaseVariant, Some("token_budget")),
        ]
    );
    assert_eq!(
        warning.missing_keys,
        [
            MissingKey::new("file_path", None),
            MissingKey::new("filters", None),
            MissingKey::new("pattern", None),
            MissingKey::new("token_budget", Some(json!(4000))),
        ]
    );
}

#[test]
fn the_wrong_case_names_the_key_meant_and_its_default() {
    let warning = warn(
        &auditor(),
        "chart_set_style",
        r#"{"chart_name":"Revenue","styleId":12}"#,
    )
    .unwrap();
    assert_eq!(
        hints_of(&warning),
        [hint("styleId", Cause::CaseVariant, Some("style_id"))]
    );
    assert_eq!(
        warning.missing_keys,
        [MissingKey::new("style_id", Some(json!(1)))]
    );
    assert!(
        warning.to_string().ends_with(
            "— styleId → style_id? (case_variant); style_id was not sent: the server will use its default, 1"
        ),
        "{warning}"
    );
    let line = warning.to_json_line();
    assert!(
        line.contains(r#""hints":[{"key":"styleId","cause":"case_variant","suggestion":"style_id"}]"#),
        "{line}"
    );
}

#[test]
fn short_forms_are_abbreviations_of_the_key_meant() {
    let auditor = auditor();
    let warning = warn(
        &auditor,
        "convert_time",
        r#"{"src_tz":"UTC","time":"9:00","target_tz":"Asia/Tokyo"}"#,
    )
    .unwrap();
    assert_eq!(
        hints_of(&warning),
        [
            hint("src_tz", Cause::Abbreviation, Some("source_timezone")),
            hint("target_tz", Cause::Abbreviation, Some("target_timezone")),
        ]
    );
    assert_eq!(
        warning.missing_keys,
        [
            MissingKey::new("source_timezone", None),
            MissingKey::new("target_timezone", None)
        ]
    );
    let warning = warn(&auditor, "clock", r#"{"tz":"Europe/Paris"}"#).unwrap();
    assert_eq!(
        hints_of(&warning),
        [hint("tz", Cause::Abbreviation, Some("timezone"))]
    );
    assert!(
        warning
            .to_string()
            .contains("tz → timezone? (abbreviation); timezone was not sent")
    );
}

#[test]
fn a_cut_key_is_only_truncated_when_its_declared_key_was_not_sent() {
    let warning = warn(&auditor(), "fs_read", r#"{"path":"a","offset":3,"ffset":12}"#).unwrap();
    assert_ne!(warning.hints[0].cause, Cause::Truncated);
    assert!(warning.missing_keys.is_empty());
}

#[test]
fn a_key_of_another_tool_names_that_tool_from_the_snapshot_audited_against() {
    let auditor = auditor();
    let snapshot = auditor.catalog();
    auditor.clear_catalog();
    let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","subagent_type":"x"}"#));
    let warning = auditor.audit(&snapshot, call).warning().unwrap();
    assert_eq!(
        warning.hints,
        [Hint::new("subagent_type", Cause::OtherTool).with_declared_by("task")]
    );
    assert_eq!(
        warning.hints[0].to_string(),
        "subagent_type (other_tool: declared by task)"
    );
}

#[test]
fn a_key_said_on_a_third_tool_is_injected_and_earlier_warnings_stay_as_they_were() {
    let auditor = auditor();
    let first = warn(&auditor, "fs_read", r#"{"path":"a","toolCallId":"c1"}"#).unwrap();
    let second = warn(&auditor, "fs_search", r#"{"pattern":"b","toolCallId":"c2"}"#).unwrap();
    // Said once: the same pair again raises nothing and counts no new tool.
    assert!(warn(&auditor, "fs_search", r#"{"toolCallId":"c3"}"#).is_none());
    let third = warn(&auditor, "task", r#"{"prompt":"c","toolCallId":"c4"}"#).unwrap();
    let fourth = warn(&auditor, "clock", r#"{"toolCallId":"c5"}"#).unwrap();
    assert_eq!(first.hints, [Hint::new("toolCallId", Cause::Invented)]);
    assert_eq!(second.hints, [Hint::new("toolCallId", Cause::Invented)]);
    assert_eq!(
        third.hints,
        [Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(3)]
    );
    assert_eq!(
        fourth.hints,
        [Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(4)]
    );
    assert!(third.to_string().contains("--allow toolCallId silences it"));
}

#[test]
fn a_key_that_fits_no_cause_is_invented() {
    let warning = warn(&auditor(), "fs_read", r#"{"path":"a","encoding":"utf-8"}"#).unwrap();
    assert_eq!(warning.hints, [Hint::new("encoding", Cause::Invented)]);
    assert!(warning.missing_keys.is_empty());
    assert!(warning.to_string().ends_with("— encoding (invented)"));
}

#[test]
fn arguments_given_as_an_object_are_diagnosed_as_their_json_text_is() {
    let text = r#"{"prompt":"Investigate the","nvestigate":"…","ffset":1,"description":"x"}"#;
    let object: Map<String, Value> = serde_json::from_str(text).unwrap();
    let from_text = warn(&auditor(), "task", text).unwrap();
    let auditor = auditor();
    let from_object = auditor
        .audit(&auditor.catalog(), Call::new("task", Arguments::Object(&object)))
        .warning()
        .unwrap();
    assert_eq!(from_text, from_object);
}

#[test]
fn a_call_without_new_undeclared_keys_raises_no_warning_and_no_diagnosis() {
    let auditor = auditor();
    assert!(warn(&auditor, "fs_read", r#"{"path":"a","offset":1,"reason":"why"}"#).is_none());
    assert!(warn(&auditor, "fs_read", r#"{"path":"a","ffset":1}"#).is_some());
    assert!(warn(&auditor, "fs_read", r#"{"path":"a","ffset":2}"#).is_none());
}

#[test]
fn many_keys_at_once_are_diagnosed_as_they_are_one_by_one() {
    let keys = [
        "ffset",
        "the rest",
        "Path",
        "subagent_type",
        "pattern",
        "encoding",
        "colour",
        "token_budget",
        "x y",
        "lmit",
    ];
    let many: Map<String, Value> = keys.iter().map(|key| (key.to_string(), json!(1))).collect();
    let auditor = auditor();
    let together = auditor
        .audit(&auditor.catalog(), Call::new("fs_read", Arguments::Object(&many)))
        .warning()
        .unwrap();
    for key in keys {
        let one: Map<String, Value> = [(key.to_string(), json!(1))].into_iter().collect();
        let alone = self::auditor()
            .audit(&auditor.catalog(), Call::new("fs_read", Arguments::Object(&one)))
            .warning()
            .unwrap();
        assert_eq!(together.hint(key), alone.hint(key), "{key}");
    }
    assert_eq!(
        together.hint("token_budget"),
        Some(&Hint::new("token_budget", Cause::OtherTool).with_declared_by("fs_search"))
    );
}

#[test]
fn a_call_with_thousands_of_new_keys_is_diagnosed_in_bounded_work() {
    // Past the keys read of one call, the rest are counted, not diagnosed;
    // within them, the diagnosis budget still holds (see the test below
    // for a tool declaring thousands of keys).
    let mut many: Map<String, Value> = (0..5000).map(|i| (format!("a{i:04}"), json!("offset"))).collect();
    many.insert("Path".into(), json!("a"));
    let auditor = auditor();
    let warning = auditor
        .audit(&auditor.catalog(), Call::new("fs_read", Arguments::Object(&many)))
        .warning()
        .unwrap();
    assert_eq!(warning.hints.len(), MAX_UNDECLARED_PER_CALL);
    assert_eq!(warning.hint("a0000").unwrap().cause, Cause::Invented);
    assert_eq!(warning.hint("Path").unwrap().cause, Cause::CaseVariant);
    assert!(warning.hint("a4999").is_none(), "past the bound, counted only");
}

#[test]
fn a_tool_declaring_thousands_of_keys_is_diagnosed_in_bounded_work() {
    // 20,000 keys of one shape, and a call with 300 near misses of them:
    // each would need 20,000 comparisons, which no warning's budget allows.
    let properties: Map<String, Value> = (0..20_000)
        .map(|i| (format!("sensor_{i:06}_temperature"), json!({})))
        .collect();
    let auditor = Auditor::new().with_sink(());
    auditor.replace_catalog(Catalog::from_mcp_tools(&[
        json!({"name": "sensors", "inputSchema": {"type": "object", "properties": properties}}),
    ]));
    let mut call: Map<String, Value> = (0..300)
        .map(|i| (format!("sensor_{i:06}_temprature"), json!(1)))
        .collect();
    call.insert("Sensor_000001_Temperature".into(), json!(2));
    let warning = auditor
        .audit(&auditor.catalog(), Call::new("sensors", Arguments::Object(&call)))
        .warning()
        .unwrap();
    assert_eq!(warning.hints.len(), 301);
    let undiagnosed = warning
        .hints
        .iter()
        .filter(|hint| hint.cause == Cause::Undiagnosed)
        .count();
    assert_eq!(undiagnosed, 300);
    assert_eq!(
        warning.hint("Sensor_000001_Temperature"),
        Some(
            &Hint::new("Sensor_000001_Temperature", Cause::CaseVariant)
                .with_suggestion("sensor_000001_temperature")
        )
    );
}

#[test]
fn arguments_nested_too_deep_to_parse_are_diagnosed_without_their_values() {
    let deep = format!(
        r#"{{"path":"a","the rest":{}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let auditor = auditor();
    // The key scan may accept such nesting (then the diagnosis, which cannot
    // parse it, judges by the keys alone) or refuse it; it must not panic.
    match auditor.audit(&auditor.catalog(), Call::new("fs_read", Arguments::Json(&deep))) {
        Outcome::Audited { warning, .. } => {
            assert_eq!(warning.unwrap().hints, [Hint::new("the rest", Cause::Fragment)]);
        }
        Outcome::Skipped(skip) => assert_eq!(skip, Skip::UnreadableArguments),
    }
}

#[test]
fn the_stderr_and_tracing_sinks_carry_the_diagnosis() {
    let warning = warn(
        &auditor(),
        "fs_read",
        r#"{"path":"src/app.raku","ffset":12,"the rest":"…"}"#,
    )
    .unwrap();
    let fields = traced(&warning);
    assert!(
        fields.contains("hints=ffset → offset? (truncated), the rest (fragment)"),
        "{fields}"
    );
    assert!(fields.contains(r#"causes=["truncated", "fragment"]"#), "{fields}");
    assert!(
        fields.contains("missing_keys=offset was not sent: the server will use its default, 0"),
        "{fields}"
    );
    // The stderr sink writes the Display line; it must not panic either.
    StderrSink.warn(&warning);
}

#[test]
fn the_tracing_sink_says_a_session_s_summary_as_one_event() {
    let mut coverage = Coverage::default();
    coverage.count_audited();
    coverage.count_unaudited("write", Skip::UnlistedTool);
    let (findings, verdicts) = (Findings::default(), VerdictTally::default());
    let recorder = Recorder::default();
    let fields = recorder.fields.clone();
    tracing::subscriber::with_default(recorder, || {
        TracingSink.summary(&Summary::new(&coverage, &findings, &verdicts))
    });
    assert_eq!(
        *fields.lock().unwrap(),
        "message=session ended\ncalls=2\naudited=1\nunaudited=1\n\
         coverage=2 call(s): 1 audited, 1 unaudited (1 unlisted_tool)\nfindings=0\n"
    );
}

/// What a warning shows in every output: its line, its JSON line and the
/// fields of its `tracing` event.
fn every_output(warning: &Warning) -> String {
    format!("{warning}\n{}\n{}", warning.to_json_line(), traced(warning))
}

/// The fields of the `tracing` event [`TracingSink`] emits for `warning`.
fn traced(warning: &Warning) -> String {
    let recorder = Recorder::default();
    let fields = recorder.fields.clone();
    tracing::subscriber::with_default(recorder, || TracingSink.warn(warning));
    let fields = fields.lock().unwrap();
    fields.clone()
}

/// A `tracing` subscriber that writes down every event's fields.
#[derive(Default)]
struct Recorder {
    fields: Arc<Mutex<String>>,
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        event.record(&mut FieldWriter(&mut self.fields.lock().unwrap()));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

struct FieldWriter<'a>(&'a mut String);

impl tracing::field::Visit for FieldWriter<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = writeln!(self.0, "{}={value:?}", field.name());
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = writeln!(self.0, "{}={value}", field.name());
    }
}

/// Keys of every cause, and declared ones, for the property tests.
const KEYS: &[&str] = &[
    "path",
    "offset",
    "ffset",
    "the rest",
    "nvestigate",
    "Investigate",
    "Path",
    "subagent_type",
    "toolCallId",
    "encoding",
    "a\"b",
    "",
];

/// Text that makes the fragment search find some keys inside values.
const PREFIXES: &[&str] = &["", "Investigate the ", "the rest ", "offset "];

/// A value holding `marker` (a string, in an array, in an object) or a
/// number.
fn value_with(marker: String, prefix: &'static str, shape: u8) -> Value {
    let text = format!("{prefix}{marker}");
    match shape {
        0 => Value::String(text),
        1 => json!([1, text]),
        2 => json!({"nested": {"deep": text}}),
        _ => json!(12),
    }
}

fn arguments_strategy() -> impl Strategy<Value = Vec<(&'static str, String, &'static str, u8)>> {
    let marker = prop_oneof!["[A-Z]{10,16}", "\\PC{10,30}"];
    let entry = (
        prop::sample::select(KEYS),
        marker,
        prop::sample::select(PREFIXES),
        0u8..4,
    );
    prop::collection::vec(entry, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_value_text_ever_appears_in_any_warning_output(entries in arguments_strategy(), as_text in any::<bool>()) {
        let auditor = auditor();
        // Two earlier tools make `toolCallId` injected on this call.
        warn(&auditor, "fs_search", r#"{"toolCallId":"x"}"#);
        warn(&auditor, "task", r#"{"toolCallId":"y"}"#);
        let mut arguments = Map::new();
        let mut markers = Vec::new();
        for (key, marker, prefix, shape) in entries {
            if shape < 3 {
                markers.push(marker.clone());
            }
            arguments.insert(key.to_owned(), value_with(marker, prefix, shape));
        }
        let text = serde_json::to_string(&arguments).unwrap();
        let call_arguments = if as_text { Arguments::Json(&text) } else { Arguments::Object(&arguments) };
        let outcome = auditor.audit(&auditor.catalog(), Call::new("fs_read", call_arguments));
        if let Some(warning) = outcome.warning() {
            let shown = every_output(&warning);
            for marker in &markers {
                prop_assert!(!shown.contains(marker.as_str()), "{marker:?} leaked into {shown}");
            }
        }
    }

    #[test]
    fn the_diagnosis_leaves_the_four_original_fields_as_they_were(
        keys in prop::collection::vec(prop::sample::select(KEYS), 0..8),
    ) {
        let arguments: Map<String, Value> = keys.iter().map(|key| (key.to_string(), json!(1))).collect();
        let auditor = auditor();
        let call = Call::new("fs_read", Arguments::Object(&arguments)).with_id(&Value::Null);
        let warning = auditor.audit(&auditor.catalog(), call).warning();
        let declared = ["limit", "offset", "path"];
        let mut undeclared: Vec<String> =
            keys.iter().filter(|key| !declared.contains(key)).map(|key| key.to_string()).collect();
        undeclared.sort();
        undeclared.dedup();
        match warning {
            None => prop_assert!(undeclared.is_empty()),
            Some(warning) => {
                prop_assert_eq!(&warning.tool, "fs_read");
                prop_assert_eq!(&warning.unknown_keys, &undeclared);
                prop_assert_eq!(&warning.declared_keys, &declared);
                prop_assert_eq!(&warning.id, "");
                let hinted: Vec<&str> = warning.hints.iter().map(|hint| hint.key.as_str()).collect();
                prop_assert_eq!(hinted, undeclared.iter().map(String::as_str).collect::<Vec<_>>());
            }
        }
    }
}

/// The labelled set: mangled calls across ten realistic tools, replayed in
/// order through one auditor (the injected keys need the history).
const CASES: &str = include_str!("data/diagnosis_cases.json");

/// The share of each cause's keys the diagnosis must keep getting right
/// (cause and, for the causes that suggest a key or name a tool, that key
/// or tool). Measured on the set and reported in BENCHMARKS.md; a change
/// that lowers one fails.
const FLOORS: &[(Cause, f64)] = &[
    (Cause::CaseVariant, 1.0),
    (Cause::Plural, 0.93),
    (Cause::Abbreviation, 0.95),
    (Cause::Truncated, 1.0),
    (Cause::NearMiss, 0.94),
    (Cause::Fragment, 0.93),
    (Cause::OtherTool, 1.0),
    // The first two tools a host key is seen on cannot be told from
    // invention: that is the rule, not a miss to fix.
    (Cause::Injected, 0.6),
    (Cause::Invented, 0.94),
];

/// The share of the whole set the diagnosis must get right.
const OVERALL_FLOOR: f64 = 0.90;

#[test]
fn the_labelled_set_is_classified_at_least_as_well_as_measured() {
    let cases: Value = serde_json::from_str(CASES).unwrap();
    let auditor = Auditor::new().with_sink(());
    auditor.replace_catalog(Catalog::from_mcp_tools(cases["tools"].as_array().unwrap()));
    assert!(auditor.audited_tools().len() >= 5);
    let mut tally: BTreeMap<Cause, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in cases["calls"].as_array().unwrap() {
        let tool = case["tool"].as_str().unwrap();
        let arguments = match &case["arguments"] {
            Value::String(text) => Arguments::Json(text),
            Value::Object(object) => Arguments::Object(object),
            other => panic!("arguments must be text or an object, not {other}"),
        };
        let warning = auditor
            .audit(&auditor.catalog(), Call::new(tool, arguments))
            .warning()
            .unwrap_or_else(|| panic!("no warning for {case}: is a (tool, key) pair repeated?"));
        for (key, expected) in case["expect"].as_object().unwrap() {
            let expected = expected.as_str().unwrap();
            let (cause, suggestion) = expected.split_once(' ').unwrap_or((expected, ""));
            let cause: Cause = serde_json::from_value(json!(cause)).unwrap();
            let hint = warning
                .hint(key)
                .unwrap_or_else(|| panic!("no hint for {key:?} in {case}"));
            let named = hint
                .suggestion
                .as_deref()
                .or(hint.declared_by.as_deref())
                .unwrap_or("");
            let right = hint.cause == cause && named == suggestion;
            let counts = tally.entry(cause).or_default();
            counts.0 += usize::from(right);
            counts.1 += 1;
            if !right {
                misses.push(format!("{tool} {key:?}: expected {expected}, got {hint}"));
            }
        }
    }
    println!("cause        right / keys   share");
    let (mut right, mut total) = (0, 0);
    for (cause, (r, n)) in &tally {
        println!(
            "{:<12} {r:>5} / {n:<4}  {:>5.1} %",
            cause.as_str(),
            100.0 * *r as f64 / *n as f64
        );
        right += r;
        total += n;
    }
    println!(
        "{:<12} {right:>5} / {total:<4}  {:>5.1} %",
        "all",
        100.0 * right as f64 / total as f64
    );
    for miss in &misses {
        println!("miss: {miss}");
    }
    let overall = right as f64 / total as f64;
    assert!(
        overall >= OVERALL_FLOOR,
        "{right}/{total} right, below the floor {OVERALL_FLOOR}; misses: {misses:#?}"
    );
    for (cause, floor) in FLOORS {
        let (r, n) = tally[cause];
        assert!(n >= 10, "{cause}: only {n} labelled keys");
        let share = r as f64 / n as f64;
        assert!(
            share >= *floor,
            "{cause}: {r}/{n} right, below the floor {floor}; misses: {misses:#?}"
        );
    }
}
