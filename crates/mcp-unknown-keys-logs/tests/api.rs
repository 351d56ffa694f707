//! The library as a program (or another language's binding) uses it:
//! `audit_files` over files, `Audit` over inputs with an observer, the
//! errors it gives and the notices it keeps.

use std::path::Path;

use mcp_unknown_keys_logs::{
    Audit, Error, Input, Notice, Observer, Options, Progress, RecordKind, Role, Tools, Unreadable,
    audit_files, read_record,
};
use serde_json::{Value, json};

fn write(dir: &Path, name: &str, lines: &[Value]) -> std::path::PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).expect("write a file");
    path
}

fn fs_read() -> Value {
    json!({"name": "fs_read", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}})
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

#[test]
fn files_are_read_in_order_and_a_catalogue_serves_the_files_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(
        dir.path(),
        "a.jsonl",
        &[
            json!({"tools": [fs_read()]}),
            tool_use("t1", "fs_read", json!({"ffset": 1})),
        ],
    );
    let second = write(
        dir.path(),
        "b.jsonl",
        &[tool_use("t2", "fs_read", json!({"limit": 1}))],
    );
    let report = audit_files([&first, &second], &Options::default()).unwrap();
    let keys: Vec<&[String]> = report.warnings.iter().map(|w| &w.unknown_keys[..]).collect();
    assert_eq!(keys, [["ffset"], ["limit"]]);
    assert_eq!((report.coverage.calls, report.coverage.audited), (2, 2));
    assert_eq!(report.lines.read, 3);
}

#[test]
fn declarations_at_hand_are_a_catalogue_and_may_be_bound_to_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(
        dir.path(),
        "session.jsonl",
        &[
            tool_use("t1", "mcp__fs__fs_read", json!({"ffset": 1})),
            tool_use("t2", "mcp__git__fs_read", json!({"ffset": 1})),
        ],
    );
    let options = Options::default()
        .tools(Tools::declarations("fs tools", vec![fs_read()]).of_server("fs"))
        .tools(Tools::declarations("git tools", vec![fs_read()]).of_server("git"));
    let report = audit_files([&log], &options).unwrap();
    let tools: Vec<&str> = report.warnings.iter().map(|w| w.tool.as_str()).collect();
    // Each bound server's pairs are its own.
    assert_eq!(tools, ["mcp__fs__fs_read", "mcp__git__fs_read"]);
    assert_eq!(report.catalogues, 2);
}

#[test]
fn errors_name_the_file_and_its_role() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let error = audit_files([&missing], &Options::default()).unwrap_err();
    assert!(
        matches!(
            &error,
            Error::Open {
                role: Role::Input,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("missing.jsonl"), "{error}");

    let catalogue = Options::default().tools(Tools::file(&missing));
    let error = Audit::new(&catalogue).unwrap_err();
    assert!(
        matches!(
            &error,
            Error::Open {
                role: Role::Catalogue,
                ..
            }
        ),
        "{error:?}"
    );

    let error = Audit::new(&Options::default().tools(Tools::declarations(
        "nothing",
        vec![json!({"type": "web_search"})],
    )))
    .unwrap_err();
    assert!(matches!(&error, Error::NoTools { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("the catalogue nothing holds no readable tool"),
        "{error}"
    );

    let error = audit_files([dir.path()], &Options::default()).unwrap_err();
    assert!(matches!(&error, Error::Directory { .. }), "{error:?}");

    let binary = dir.path().join("binary.jsonl");
    std::fs::write(&binary, b"\x00\x01\x02{}").unwrap();
    let error = audit_files([&binary], &Options::default()).unwrap_err();
    assert!(matches!(&error, Error::NotText { .. }), "{error:?}");
}

/// Everything an observer was told, in order.
#[derive(Default)]
struct Told {
    events: Vec<String>,
    done: usize,
}

impl Observer for Told {
    fn warning(&mut self, warning: &mcp_unknown_keys::audit::Warning) {
        self.events
            .push(format!("warning {}", warning.unknown_keys.join(",")));
    }

    fn notice(&mut self, notice: &Notice) {
        self.events.push(format!("notice {notice}"));
    }

    fn progress(&mut self, progress: &Progress<'_>) {
        self.done += usize::from(progress.done);
    }
}

#[test]
fn an_observer_is_told_as_it_goes_and_the_report_keeps_it_all() {
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    let listing = format!(
        r#"{{"tools":[{},{{"name":"deep","inputSchema":{{"properties":{{"x":{deep}}}}}}}]}}"#,
        fs_read()
    );
    // Listed again, in another order: the tool is named once.
    let again = format!(
        r#"{{"tools":[{{"name":"deep","inputSchema":{{"properties":{{"x":{deep}}}}}}},{}]}}"#,
        fs_read()
    );
    let text = format!(
        "{listing}\nnot JSON\n{}\n\u{ff}\n{again}\n",
        tool_use("t1", "fs_read", json!({"ffset": 1}))
    );
    let mut bytes = text.into_bytes();
    // A line that is not UTF-8.
    let at = bytes.iter().position(|&b| b == 0xc3).unwrap();
    bytes[at] = 0xff;
    let mut audit = Audit::with_observer(&Options::default(), Told::default()).unwrap();
    audit
        .read(Input::from_reader("log", std::io::Cursor::new(bytes)).unwrap())
        .unwrap();
    let told = &audit.observer().events;
    assert_eq!(
        told,
        &[
            "notice note: deep: its schema nests too deep to read: the tool's arguments are not audited",
            "notice log:2: not JSON, counted as unreadable",
            "warning ffset",
            "notice log:4: not UTF-8, counted as unreadable",
        ]
    );
    assert_eq!(audit.observer().done, 1);
    let report = audit.finish();
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(report.notices.len(), 3);
    assert_eq!(report.catalogues, 2);
    assert!(matches!(
        report.notices[2],
        Notice::UnreadableLine {
            line: 4,
            why: Unreadable::NotUtf8,
            ..
        }
    ));
    assert_eq!((report.lines.not_json, report.lines.not_utf8), (1, 1));
}

#[test]
fn read_record_is_the_recogniser_without_state() {
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"\u0074ools/call","params":{"name":"a","name":"fs_read","arguments":"{\"ffset\":1}"}}"#;
    let found = read_record(call.as_bytes());
    assert_eq!(found.kind, RecordKind::Used);
    assert_eq!(found.calls[0].tool, "fs_read");
    assert_eq!(found.calls[0].arguments.as_deref(), Some(r#"{"ffset":1}"#));
    assert_eq!(found.calls[0].id, Some(json!(1)));
    let listing = read_record(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#);
    assert_eq!((listing.kind, listing.messages), (RecordKind::Used, 1));
    assert_eq!(read_record(b"\xff").kind, RecordKind::NotUtf8);
    assert_eq!(read_record(b"   ").kind, RecordKind::Blank);
    assert_eq!(read_record(br#"{"role":"user"}"#).kind, RecordKind::Idle);
}

#[test]
fn what_crosses_threads_can() {
    // A binding releases its interpreter's lock around `audit_files`: what
    // goes in and what comes out must be free to cross threads.
    fn sendable<T: Send + Sync>() {}
    sendable::<Options>();
    sendable::<mcp_unknown_keys_logs::Report>();
    sendable::<Error>();
    sendable::<Notice>();
    fn send<T: Send>() {}
    send::<Audit>();
}
