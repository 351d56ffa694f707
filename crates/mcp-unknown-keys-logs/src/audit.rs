//! The audit: inputs read in order, every record through the recogniser,
//! every call through the auditors, everything counted.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_unknown_keys::audit::{Auditor, Catalog, Judged, Note, Sink, Warning};
use mcp_unknown_keys::session::Session;

use crate::catalogue::{self, Catalogues};
use crate::error::Error;
use crate::gateway::Relays;
use crate::groups::Groups;
use crate::input::{Event, Input};
use crate::logged::Segment;
use crate::names::{self, Bound};
use crate::observe::{Notice, Observer, Progress, Unreadable};
use crate::options::Options;
use crate::report::{Report, Site};
use crate::scoped::RecordTools;
use crate::shapes::Read;
use crate::shapes::walk::Reader;
use crate::strict::Strictness;

/// The most unreadable lines of one input named in a
/// [`Notice::UnreadableLine`]; the rest are counted, and their number said
/// once in a [`Notice::MoreUnreadableLines`].
pub const NAMED_UNREADABLE_LINES: u64 = 10;

/// An audit of recorded logs: feed it inputs in order, then take its
/// [`Report`].
///
/// Every record of every input is read for the shapes real logs use
/// (transcripts, model API bodies and streams, framework records,
/// OpenTelemetry spans, MCP JSON-RPC traffic, a proxy's `--log`), and every
/// call found is audited against the catalogue of that moment, through the
/// core's [`Auditor`], or counted as unaudited for a named reason. State
/// carries from one input to the next (a catalogue in one input serves the
/// calls of the next; a pair is said once across all of them), except what
/// belongs to one session: the JSON-RPC traffic of each input is one MCP
/// session, acted on by the core's [`Session`] as the proxy acts on it
/// (listings awaited and assembled, calls awaiting their verdict), and the
/// calls already read (for repeated history) are each input's own.
///
/// # Decisions a recording leaves open
///
/// - **Listings.** A JSON-RPC response is a listing page when it answers an
///   awaited `tools/list` request, matched by id as the proxy matches it; a
///   request without a cursor opens a new listing, and calls meet the pages
///   received so far. An error answering a listing keeps the catalogue;
///   `notifications/tools/list_changed` drops it until the next listing. An
///   input that recorded no `tools/list` request before a listing response
///   (a server's side alone) takes it as a page all the same. A listing
///   is assembled within one input: a page of the next input continues
///   none.
/// - **Request bodies.** A record's own `tools` (a request body's, a span's
///   definitions) are the catalogue of that record's calls, whichever
///   member comes first, and of no other record's: only `--tools` and a
///   listing make a catalogue that lasts.
/// - **Repeated history.** A call read before in the same input (same id,
///   name and arguments, however the arguments are laid out, escaped or
///   ordered) is not counted again; JSON-RPC calls never are taken for
///   repeats.
/// - **Verdicts.** A JSON-RPC `tools/call` that carried undeclared keys
///   awaits the response with its id (ids equal by value), and is judged as
///   the proxy judges it ([`Verdicts`]): `ignored` by a result without
///   `isError: true`, `rejected` by an error or `isError: true`,
///   `unanswered` when cancelled or when the input ends first. A recording
///   does not say which side wrote a response: any response with the id
///   answers the call.
/// - **A proxy's `--log`.** A logged warning is said again through the
///   auditor, its nested keys too, so a pair repeated across logs is said
///   once and `allow` applies; calls are counted from the log's summary
///   when it has one. Logged verdicts are said again and counted (the
///   summary's counts replace those of the lines), logged notes said
///   again once.
///
/// [`Verdicts`]: mcp_unknown_keys::audit::Verdicts
///
/// ```
/// use mcp_unknown_keys_logs::{Audit, Input, Options, Tools};
/// use serde_json::json;
///
/// let tools = Tools::declarations("fs", vec![json!({
///     "name": "fs_read", "inputSchema": {"properties": {"path": {}, "offset": {}}},
/// })]);
/// let mut audit = Audit::new(&Options::default().tools(tools))?;
/// let session = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a","ffset":1}}}"#;
/// audit.read(Input::from_reader("session", &session[..])?)?;
/// let report = audit.finish();
/// assert_eq!(report.warnings[0].unknown_keys, ["ffset"]);
/// assert_eq!(report.warnings[0].hints[0].suggestion.as_deref(), Some("offset"));
/// # Ok::<(), mcp_unknown_keys_logs::Error>(())
/// ```
pub struct Audit<O: Observer = ()> {
    /// The auditor of the inputs' catalogue (and of the unbound catalogues
    /// given), which holds it: the one the session installs listings in.
    pub(crate) unbound: Auditor,
    /// One per server a catalogue is bound to.
    pub(crate) bound: Vec<Bound<Shelf>>,
    /// The catalogues of the records being read.
    pub(crate) record_tools: RecordTools,
    /// The fingerprint of the text of the listing kept on its own the
    /// unbound catalogue was made from, if it was.
    pub(crate) unbound_print: Option<u64>,
    /// The MCP session the JSON-RPC traffic of this input is.
    pub(crate) session: Session,
    /// The catalogue given, kept when records are read one by one
    /// ([`Audit::read_record`]) to be put back after a record that listed
    /// tools of its own.
    pub(crate) given: Option<Arc<Catalog>>,
    /// The proxy log being read.
    pub(crate) segment: Segment,
    /// What the auditors' notes were handed to, to be said.
    pub(crate) notes: Notes,
    /// The keys every auditor tolerates (`allow`).
    pub(crate) allow: Vec<String>,
    /// Whether nested keys are left aside.
    pub(crate) top_level_only: bool,
    /// Whether required keys a call lacks go unchecked (`no_missing`).
    pub(crate) no_missing: bool,
    /// Whether a call whose arguments a truncated response left unreadable
    /// has been said ([`Notice::UnreadableInTruncatedResponse`]).
    pub(crate) unreadable_cut_said: bool,
    /// The requests an MCP gateway's servers have not answered yet, in
    /// this input.
    pub(crate) relays: Relays,
    pub(crate) report: Report,
    pub(crate) observer: O,
    /// The record being read: where its warnings are raised.
    pub(crate) at: Site,
}

/// A catalogue bound to a server and the auditor that says what calls
/// against it carry, one per server, so each remembers what it said.
pub(crate) struct Shelf {
    pub(crate) auditor: Auditor,
    pub(crate) catalog: Catalog,
}

/// The notes auditors hand over ([`Auditor::say_notes`]), until they are said.
#[derive(Clone, Default)]
pub(crate) struct Notes(Arc<Mutex<Vec<(String, Note)>>>);

impl Sink for Notes {
    /// Warnings are taken from each call's outcome, not from the sink.
    fn warn(&self, _: &Warning) {}

    fn note(&self, tool: &str, note: &Note) {
        let mut notes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        notes.push((tool.to_owned(), note.clone()));
    }
}

impl Notes {
    fn take(&self) -> Vec<(String, Note)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Audit {
    /// An audit with `options`, followed by no observer. Fails when a
    /// catalogue given cannot be read.
    pub fn new(options: &Options) -> Result<Audit, Error> {
        Audit::with_observer(options, ())
    }
}

impl<O: Observer> Audit<O> {
    /// An audit with `options`, followed by `observer`. Fails when a
    /// catalogue given cannot be read.
    pub fn with_observer(options: &Options, observer: O) -> Result<Audit<O>, Error> {
        let mut said = Vec::new();
        let Catalogues { unbound, bound } =
            catalogue::read_all(&options.tools, &mut |notice| said.push(notice))?;
        let notes = Notes::default();
        let auditor = || new_auditor(&notes, &options.allow, options.top_level_only, options.no_missing);
        let bound = bound
            .into_iter()
            .map(|Bound { server, with }| Bound {
                server,
                with: Shelf {
                    auditor: auditor(),
                    catalog: with,
                },
            })
            .collect();
        let mut audit = Audit {
            unbound: auditor(),
            bound,
            record_tools: RecordTools::default(),
            unbound_print: None,
            session: recorded_session(),
            given: None,
            segment: Segment::default(),
            notes,
            allow: options.allow.clone(),
            top_level_only: options.top_level_only,
            no_missing: options.no_missing,
            unreadable_cut_said: false,
            relays: Relays::default(),
            report: Report {
                groups: Groups::new(&options.group_by),
                strict: Strictness::new(options.strict_preview),
                ..Report::default()
            },
            observer,
            at: Site::default(),
        };
        for notice in said {
            audit.say(notice);
        }
        if let Some(catalog) = unbound {
            audit.set_unbound(catalog);
        }
        for at in 0..audit.bound.len() {
            let Bound { server, with } = &audit.bound[at];
            audit.report.listed(&with.catalog, Some(server));
            with.auditor.say_notes(&with.catalog);
            audit.say_notes(Some(at));
        }
        Ok(audit)
    }

    /// Reads one input to its end. An input that ends partway through a
    /// JSON document, or whose reading fails partway (a corrupt compressed
    /// stream, a disk error), is read up to there: what was read stays
    /// counted, the cut is said in a notice ([`Notice::CutShort`],
    /// [`Notice::ReadFailed`]) and counted in
    /// [`Report::incomplete_inputs`], and the audit goes on. It fails only
    /// as [`Audit::read_file`] does, when the input cannot be opened.
    pub fn read(&mut self, input: Input) -> Result<(), Error> {
        let name = input.name().to_owned();
        let size = input.size();
        let mut reader = Reader::default();
        self.at = Site {
            input: name.as_str().into(),
            line: 0,
        };
        self.report.groups.start_file(&name);
        let mut named = 0;
        let mut last_line = 0;
        let read = input.read(|event| {
            let (read, number) = match event {
                Event::Line { bytes, number } => {
                    last_line = number;
                    self.at.line = number;
                    match std::str::from_utf8(bytes) {
                        Ok(line) => (Ok(reader.read_line(line, |event| self.take(event))), number),
                        Err(_) => (Err(Unreadable::NotUtf8), number),
                    }
                }
                Event::TooLong { number } => {
                    last_line = number;
                    (Err(Unreadable::TooLong), number)
                }
                Event::Part { bytes, number } => {
                    last_line = number;
                    self.at.line = number;
                    match std::str::from_utf8(bytes) {
                        Ok(text) => (Ok(reader.read_document(text, |event| self.take(event))), number),
                        Err(_) => (Err(Unreadable::NotUtf8), number),
                    }
                }
                Event::Document { text } => (Ok(reader.read_document(text, |event| self.take(event))), 0),
                Event::Documents { values } => {
                    let input = name.clone();
                    return self.say(Notice::Document { input, values });
                }
                Event::CutShort { at } => {
                    self.report.incomplete_inputs += 1;
                    let input = name.clone();
                    return self.say(Notice::CutShort { input, at });
                }
                Event::Progress { read } => {
                    let progress = Progress {
                        input: &name,
                        read,
                        size,
                        done: false,
                    };
                    return self.observer.progress(&progress);
                }
            };
            if let Some(why) = self.count(read) {
                named += 1;
                if named <= NAMED_UNREADABLE_LINES {
                    let input = name.clone();
                    self.say(Notice::UnreadableLine {
                        input,
                        line: number,
                        why,
                    });
                }
            }
        });
        let progress = Progress {
            input: &name,
            read: 0,
            size,
            done: true,
        };
        self.observer.progress(&progress);
        if let Err(error) = read {
            self.report.incomplete_inputs += 1;
            self.say(Notice::ReadFailed {
                input: name.clone(),
                line: last_line + 1,
                error: error.to_string(),
            });
        }
        reader.finish(|event| self.take(event));
        self.end_of_input();
        if named > NAMED_UNREADABLE_LINES {
            let lines = named - NAMED_UNREADABLE_LINES;
            self.say(Notice::MoreUnreadableLines { input: name, lines });
        }
        Ok(())
    }

    /// Opens and reads the file at `path` (`-` is stdin).
    pub fn read_file(&mut self, path: impl AsRef<Path>) -> Result<(), Error> {
        self.read(Input::open(path)?)
    }

    /// What was found so far.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The observer.
    pub fn observer(&self) -> &O {
        &self.observer
    }

    /// The observer, to change.
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }

    /// Ends the audit: what it found.
    pub fn finish(self) -> Report {
        self.report
    }

    /// Counts a line read; why it could not be read, if it could not.
    pub(crate) fn count(&mut self, read: Result<Read, Unreadable>) -> Option<Unreadable> {
        let lines = &mut self.report.lines;
        let why = match read {
            Ok(Read::Blank) => return None,
            Ok(Read::Used) => None,
            Ok(Read::Nothing) => {
                lines.idle += 1;
                None
            }
            Ok(Read::Unreadable) => Some(Unreadable::NotJson),
            Ok(Read::TooDeep) => Some(Unreadable::TooDeep),
            Err(why) => Some(why),
        };
        lines.read += 1;
        let why = why?;
        lines.count(why);
        Some(why)
    }

    /// One input ends, and its session with it: a proxy log cut short
    /// keeps its warning lines' counts, the calls still awaiting an answer
    /// are unanswered, and the verdicts are counted per pair; the next
    /// input is another session.
    pub(crate) fn end_of_input(&mut self) {
        self.segment
            .end(&mut self.report.coverage, &mut self.report.logged);
        let coverage = &self.report.coverage;
        self.report.groups.end_file(coverage.calls, coverage.audited);
        let unanswered = self.session.finish();
        self.judged(unanswered);
        self.relays = Relays::default();
        let ended = std::mem::replace(&mut self.session, recorded_session());
        self.report.count_verdicts(ended.verdicts().tally());
    }

    /// An auditor as every auditor of this audit is: saying its notes to
    /// be said, tolerating `allow`.
    pub(crate) fn new_auditor(&self) -> Auditor {
        new_auditor(&self.notes, &self.allow, self.top_level_only, self.no_missing)
    }

    /// Says a notice, and keeps it.
    pub(crate) fn say(&mut self, notice: Notice) {
        self.observer.notice(&notice);
        self.report.notices.push(notice);
    }

    /// Says a warning as it is raised, and keeps it.
    pub(crate) fn warn(&mut self, warning: Warning) {
        self.observer.warning(&warning);
        self.report.warnings.push(warning);
        self.report.warning_sites.push(self.at.clone());
    }

    /// Says verdicts as they are given, and counts them.
    pub(crate) fn judged(&mut self, judged: impl IntoIterator<Item = Judged>) {
        for judged in judged {
            self.observer.verdict(&judged);
            self.report.strict.judged(&judged);
            *self.report.verdicts.entry(judged.verdict).or_default() += 1;
        }
    }

    /// Says the notes the auditor of the unbound catalogue (`None`) or of a
    /// bound server has just handed over.
    pub(crate) fn say_notes(&mut self, shelf: Option<usize>) {
        for (tool, note) in self.notes.take() {
            let server = shelf.map(|at| self.bound[at].server.as_str());
            let tool = names::shown(&tool, server).into_owned();
            self.say(Notice::Schema { tool, note });
        }
    }

    /// The catalogue of the inputs is now `catalog`.
    pub(crate) fn set_unbound(&mut self, catalog: Catalog) {
        let catalog = self.unbound.install_catalog(catalog);
        self.installed(&catalog);
    }

    /// `catalog` was installed as the catalogue of the inputs: it is
    /// counted and its notes said.
    pub(crate) fn installed(&mut self, catalog: &Catalog) {
        self.report.listed(catalog, None);
        self.unbound.say_notes(catalog);
        self.say_notes(None);
        self.unbound_print = None;
    }
}

impl<O: Observer + std::fmt::Debug> std::fmt::Debug for Audit<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("tools", &self.unbound.listed_tools())
            .field(
                "servers",
                &self.bound.iter().map(|b| &b.server).collect::<Vec<_>>(),
            )
            .field("observer", &self.observer)
            .finish_non_exhaustive()
    }
}

fn new_auditor(notes: &Notes, allow: &[String], top_level_only: bool, no_missing: bool) -> Auditor {
    Auditor::new()
        .with_sink(notes.clone())
        .allow_all(allow.iter().map(String::as_str))
        .top_level_only(top_level_only)
        .check_required(!no_missing)
}

/// A session of recorded traffic: until the recording holds a `tools/list`
/// request, it may be a server's side alone, whose listing responses answer
/// no request it holds ([`Session::take_unrequested_listings`]).
fn recorded_session() -> Session {
    let mut session = Session::new();
    session.take_unrequested_listings(true);
    session
}
