//! The auditor: the one place the audit rules live.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, RandomState};
use std::mem;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::{Map, Value};

use super::call::{Call, Outcome, Skip};
use super::catalog::note::Note;
use super::catalog::{Catalog, Declared};
use super::coverage::Coverage;
use super::diagnosis::Diagnosed;
use super::diagnosis::hint::Cause;
use super::keys;
use super::keys::Arguments;
use super::keys::nested::{Found, Present};
use super::notice::Notice;
use super::sink::{Sink, StderrSink};
use super::summary::Summary;
use super::verdicts::Judged;
use super::warning::Warning;
use crate::limits::{MAX_SAID_NOTES, MAX_SAID_PAIRS, MAX_UNDECLARED_PER_CALL};
use crate::wire::{ToolCall, id_text};

/// The key every auditor tolerates, declared or not: the parameter the
/// `Reasons` layer adds to declarations and strips from calls
/// ([`REASON_PARAMETER`](crate::reasons::REASON_PARAMETER) is this one), so
/// an auditor works in a stack with no `Reasons` layer at all.
pub(crate) const REASON_KEY: &str = "reason";

/// Audits calls against the latest catalogue and says each undeclared
/// (tool, key) pair once.
///
/// The provider layer, the proxy and the `audit` command all audit through an
/// `Auditor`, so the rules are written once:
///
/// - a call is audited only when its tool is in the catalogue and
///   [audited](Declared::is_audited) (it declares a key, or its schema is
///   closed), and its arguments read as a JSON object;
/// - the keys inside a declared key's value are audited too when its schema
///   declares them ([`Catalog`] says when), and reported as paths
///   ([`Warning::unknown_paths`]), unless [`Auditor::top_level_only`];
/// - [`REASON_PARAMETER`](crate::reasons::REASON_PARAMETER) and the keys given to [`Auditor::allow`] are tolerated;
/// - the keys its schema lists in `required` (at the top level, and in the
///   nested objects audited) that a call lacks are reported too
///   ([`Warning::missing_required`]), unless [`Auditor::check_required`]
///   is off; a call that carried no arguments at all (`{}`, none, empty
///   text) to a tool that requires keys is audited so, its keys lost to
///   [`Cause::Emptied`];
/// - each (tool, key) pair, each (tool, path) pair and each (tool, missing
///   required key) pair is reported once in the auditor's life: a
///   catalogue refresh does not forget what was said;
/// - each warning carries a [diagnosis](super::diagnosis) of its keys,
///   worked out only when a warning is raised: a call whose keys are all
///   declared, or already said, costs no more for it.
///
/// ```
/// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Outcome};
/// use serde_json::json;
///
/// let auditor = Auditor::new().with_sink(());
/// auditor.replace_catalog(Catalog::from_mcp_tools(&[json!({
///     "name": "fs_read",
///     "inputSchema": {"properties": {"path": {}, "offset": {}}},
/// })]));
///
/// let call = Call::new("fs_read", Arguments::Json(r#"{"path":"a","ffset":12}"#));
/// let Outcome::Audited { warning: Some(warning), .. } = auditor.audit(&auditor.catalog(), call) else {
///     panic!("expected a warning");
/// };
/// assert_eq!(warning.unknown_keys, ["ffset"]);
/// assert_eq!(warning.hints[0].suggestion.as_deref(), Some("offset"));
/// assert_eq!(warning.missing_keys[0].key, "offset");
///
/// // Said once: the same pair again raises nothing new.
/// let again = Call::new("fs_read", Arguments::Json(r#"{"ffset":1}"#));
/// assert!(auditor.audit(&auditor.catalog(), again).warning().is_none());
/// ```
pub struct Auditor {
    catalog: RwLock<Arc<Catalog>>,
    said: Mutex<Said>,
    allowed: Vec<Box<str>>,
    top_level_only: bool,
    check_required: bool,
    sink: Arc<dyn Sink>,
}

/// The said-once memory: each (tool, key), (tool, path) and (tool, missing
/// required key) pair said, each
/// key's count of tools said on (for [`Cause::Injected`](super::Cause::Injected)),
/// and the catalogue notes said. Only undeclared keys are ever kept, as
/// fingerprints ([`Fingerprints`]), so a pair costs the same whatever its
/// key's length; at most [`MAX_SAID_PAIRS`] pairs and [`MAX_SAID_NOTES`]
/// notes are kept.
#[derive(Default)]
struct Said {
    fingerprints: Fingerprints,
    pairs: HashSet<u128>,
    tools_per_key: HashMap<u128, u32>,
    notes: HashSet<u128>,
    /// New pairs found once the memory was full: counted, not said.
    unsaid: u64,
    /// Whether a call carried more undeclared keys than are read of one
    /// call, and that was said.
    many_keys_said: bool,
}

/// 128-bit fingerprints under keys random to this auditor: no text a model
/// writes can be made to collide with another's, and two pairs share one
/// with a chance of about pairs² / 2^129.
struct Fingerprints(RandomState, RandomState);

impl Default for Fingerprints {
    fn default() -> Fingerprints {
        Fingerprints(RandomState::new(), RandomState::new())
    }
}

impl Fingerprints {
    fn of(&self, item: impl Hash + Copy) -> u128 {
        (u128::from(self.0.hash_one(item)) << 64) | u128::from(self.1.hash_one(item))
    }
}

impl Default for Auditor {
    fn default() -> Self {
        Auditor::new()
    }
}

impl Auditor {
    /// An auditor with an empty catalogue and the stderr sink.
    pub fn new() -> Auditor {
        Auditor {
            catalog: RwLock::new(Arc::new(Catalog::none())),
            said: Mutex::new(Said::default()),
            allowed: Vec::new(),
            top_level_only: false,
            check_required: true,
            sink: Arc::new(StderrSink),
        }
    }

    /// Sends warnings to `sink` instead of stderr.
    pub fn with_sink(self, sink: impl Sink + 'static) -> Auditor {
        self.with_shared_sink(Arc::new(sink))
    }

    /// Sends warnings to a sink shared with others.
    pub fn with_shared_sink(mut self, sink: Arc<dyn Sink>) -> Auditor {
        self.sink = sink;
        self
    }

    /// Tolerates `key` on every tool, as [`REASON_PARAMETER`](crate::reasons::REASON_PARAMETER) is: for keys a host
    /// or middleware injects (n8n's `toolCallId`, a proxy's `_auth_token`).
    pub fn allow(mut self, key: impl Into<String>) -> Auditor {
        self.allowed.push(key.into().into_boxed_str());
        self
    }

    /// Tolerates each of `keys` on every tool, as [`Auditor::allow`] does.
    pub fn allow_all<K: Into<String>>(self, keys: impl IntoIterator<Item = K>) -> Auditor {
        keys.into_iter().fold(self, Auditor::allow)
    }

    /// With `true`, audits top-level keys only, as the specification's
    /// first version did: no nested key is read, none is reported in
    /// [`Warning::unknown_paths`].
    ///
    /// ```
    /// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog};
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_mcp_tools(&[json!({"name": "search", "inputSchema": {
    ///     "properties": {"options": {"properties": {"recursive": {}}}},
    /// }})]);
    /// let call = Call::new("search", Arguments::Json(r#"{"options":{"recursve":true}}"#));
    ///
    /// let nested = Auditor::new().with_sink(());
    /// assert_eq!(nested.audit(&catalog, call).warning().unwrap().unknown_paths, ["options.recursve"]);
    /// let top_level_only = Auditor::new().with_sink(()).top_level_only(true);
    /// assert!(top_level_only.audit(&catalog, call).warning().is_none());
    /// ```
    pub fn top_level_only(mut self, top_level_only: bool) -> Auditor {
        self.top_level_only = top_level_only;
        self
    }

    /// With `false`, does not check required keys: a call that lacks keys
    /// its schema lists in `required` raises nothing for it, and a call
    /// with no arguments at all is unaudited
    /// ([`Skip::UnreadableArguments`]), as the specification's first
    /// version did. On by default.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::{Arguments, Auditor, Call, Catalog, Cause};
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_mcp_tools(&[json!({"name": "fs_read", "inputSchema": {
    ///     "properties": {"path": {}, "offset": {}}, "required": ["path"],
    /// }})]);
    /// let call = Call::new("fs_read", Arguments::Json(r#"{"offset":12}"#));
    ///
    /// let checked = Auditor::new().with_sink(());
    /// let warning = checked.audit(&catalog, call).warning().unwrap();
    /// assert_eq!(warning.missing_required, ["path"]);
    /// assert_eq!(warning.missing_cause, Some(Cause::MissingRequired));
    /// let unchecked = Auditor::new().with_sink(()).check_required(false);
    /// assert!(unchecked.audit(&catalog, call).warning().is_none());
    /// ```
    pub fn check_required(mut self, check_required: bool) -> Auditor {
        self.check_required = check_required;
        self
    }

    /// Whether `key` (or, below the top level, a path) is tolerated on every
    /// tool: [`REASON_PARAMETER`](crate::reasons::REASON_PARAMETER) and the keys given to [`Auditor::allow`], which
    /// may be paths such as `entities[].age`.
    pub fn tolerates(&self, key: &str) -> bool {
        key == REASON_KEY || self.allowed.iter().any(|allowed| **allowed == *key)
    }

    /// The current catalogue. Costs one reference count, whatever its size:
    /// take it once per batch and audit the whole batch against it.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the catalogue wholesale, as after a successful listing, and
    /// says its notes not said before ([`Auditor::say_notes`]). Pairs
    /// already said stay said.
    pub fn replace_catalog(&self, catalog: Catalog) {
        let catalog = self.install_catalog(catalog);
        self.say_notes(&catalog);
    }

    /// Replaces the catalogue as [`Auditor::replace_catalog`] does but says
    /// none of its notes, and returns it. For a door that decides under a
    /// lock of its own whether a catalogue is still the newest to install:
    /// this never calls the sink, so the lock can be held across it, and
    /// the notes are said afterwards ([`Auditor::say_notes`]) with the lock
    /// released, since a sink may call the door back.
    pub fn install_catalog(&self, catalog: Catalog) -> Arc<Catalog> {
        // Built here, once per tool, so that no call pays for it.
        catalog.index_tools_for_diagnosis();
        let catalog = Arc::new(catalog);
        // The old catalogue is dropped after the lock is released.
        let _old = mem::replace(
            &mut *self.catalog.write().unwrap_or_else(PoisonError::into_inner),
            catalog.clone(),
        );
        catalog
    }

    /// Hands each note of `catalog` (what its schemas could not be read
    /// for) to the sink's [`Sink::note`], once in the auditor's life: a
    /// later listing with the same problem says nothing new. For a door
    /// that audits against catalogues of its own rather than through
    /// [`Auditor::replace_catalog`].
    pub fn say_notes(&self, catalog: &Catalog) {
        let notes = catalog.notes();
        if notes.is_empty() {
            return;
        }
        let new: Vec<(&str, &Note)> = {
            let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
            notes
                .into_iter()
                .filter(|(tool, note)| said.claim_note(tool, note))
                .collect()
        };
        for (tool, note) in new {
            let _ = catch_unwind(AssertUnwindSafe(|| self.sink.note(tool, note)));
        }
    }

    /// Forgets the catalogue until the next listing: nothing is audited
    /// meanwhile.
    pub fn clear_catalog(&self) {
        self.replace_catalog(Catalog::none());
    }

    /// The tools the last listing left a declaration for, sorted: the
    /// specification's `audited-tools`, the answer to "why did this not
    /// warn?". A tool whose schema is an object with no `properties`
    /// (absent or `null`) or an empty one is among them, declaring nothing
    /// (its calls are counted as [`Skip::DeclaresNothing`]); a tool listed
    /// with no schema, with one that is not an object, or with a
    /// `properties` that is not an object is not: see
    /// [`Auditor::listed_tools`] and [`Catalog::audited_tool_names`].
    pub fn audited_tools(&self) -> Vec<String> {
        self.catalog().audited_tool_names()
    }

    /// Every tool of the current catalogue, sorted: the audited ones and
    /// those listed declaring nothing.
    pub fn listed_tools(&self) -> Vec<String> {
        self.catalog().tool_names()
    }

    /// Audits one call against `catalog`, claiming the pairs it says. The
    /// warning is returned, not delivered: deliver it with [`Auditor::warn`].
    pub fn audit(&self, catalog: &Catalog, call: Call<'_>) -> Outcome {
        let Some(declared) = catalog.get(call.tool) else {
            let skip = if catalog.is_listed() {
                Skip::UnlistedTool
            } else {
                Skip::NoCatalogue
            };
            return Outcome::Skipped(skip);
        };
        if !declared.is_audited() {
            return Outcome::Skipped(Skip::DeclaresNothing);
        }
        let Some(arguments) = call.arguments else {
            return Outcome::Skipped(Skip::UnreadableArguments);
        };
        let mut found = Found::default();
        let required = self.check_required && !declared.root().required.is_empty();
        let scanned = if self.top_level_only || !declared.has_nested() {
            if required {
                self.scan_required(arguments, declared, &mut found)
            } else {
                // The path of every tool without nested shapes nor required
                // keys, as it always was. Inlined into the scan's loop: a
                // call per key costs as much as the lookup itself.
                arguments.for_each_key(
                    #[inline(always)]
                    |key| {
                        if !declared.declares(key) {
                            self.undeclared(key, &mut found);
                        }
                    },
                )
            }
        } else {
            let tolerates = |key: &str| self.tolerates(key);
            keys::scan(arguments, declared, &tolerates, self.check_required, &mut found)
        };
        if scanned.is_err() {
            if required && writes_no_arguments(arguments) {
                // Read as the empty object a server runs it with.
                found = Found::default();
                found.push_missing_keys(declared.root(), &Present::default());
            } else {
                return Outcome::Skipped(Skip::UnreadableArguments);
            }
        }
        if found.more > 0 {
            self.said_many_keys(call.tool);
        }
        if found.keys.is_empty() && found.paths.is_empty() && found.missing.is_empty() {
            return Outcome::Audited {
                undeclared: found.keys,
                undeclared_paths: found.paths,
                missing_required: found.missing,
                emptied: false,
                warning: None,
            };
        }
        self.found(catalog, declared, call, arguments, found)
    }

    /// Reads the top-level keys of a call to a tool without nested shapes
    /// that requires keys: as the plain scan, and which required keys were
    /// carried. Out of line: the plain scan's loop stays as small as it was.
    /// A tool of at most 64 keys (all but the largest) marks each declared
    /// key carried as a bit of its index, with no branch, and compares the
    /// bits with the required ones once at the end.
    #[inline(never)]
    fn scan_required(
        &self,
        arguments: Arguments<'_>,
        declared: &Declared,
        found: &mut Found,
    ) -> Result<(), keys::NotAnObject> {
        let root = declared.root();
        if !root.fits_bits() {
            return self.scan_required_by_rank(arguments, declared, found);
        }
        let mut carried = 0u64;
        let mut keys = 0usize;
        arguments.for_each_key(
            #[inline(always)]
            |key| {
                keys += 1;
                match root.table.find(key) {
                    // Below 64: the table holds at most 64 keys.
                    Some(index) => carried |= 1 << index,
                    None if root.by_pattern(key).is_some() => {}
                    None => self.undeclared(key, found),
                }
            },
        )?;
        found.top_level_keys = keys;
        if carried & root.required_bits != root.required_bits {
            let mut present = Present::default();
            for (rank, &index) in root.required.iter().enumerate() {
                if carried & 1 << index != 0 {
                    present.mark(rank);
                }
            }
            found.push_missing_keys(root, &present);
        }
        Ok(())
    }

    /// [`Auditor::scan_required`] for a tool of more than 64 keys: each
    /// declared key carried is looked up among the required ones.
    #[cold]
    #[inline(never)]
    fn scan_required_by_rank(
        &self,
        arguments: Arguments<'_>,
        declared: &Declared,
        found: &mut Found,
    ) -> Result<(), keys::NotAnObject> {
        let root = declared.root();
        let mut present = Present::default();
        arguments.for_each_key(
            #[inline(always)]
            |key| {
                found.top_level_keys += 1;
                match root.table.find(key) {
                    Some(index) => {
                        if let Some(rank) = root.required_rank(index) {
                            present.mark(rank);
                        }
                    }
                    None if root.by_pattern(key).is_some() => {}
                    None => self.undeclared(key, found),
                }
            },
        )?;
        if !present.has_all(root.required.len()) {
            found.push_missing_keys(root, &present);
        }
        Ok(())
    }

    /// Keeps a top-level key the tool does not declare, unless tolerated.
    /// Out of line: a clean call's scan inlines only the lookup.
    #[cold]
    #[inline(never)]
    fn undeclared(&self, key: &str, found: &mut Found) {
        if !self.tolerates(key) {
            found.push_key(key);
        }
    }

    /// Claims what a call carried undeclared and builds the warning for what
    /// is said now for the first time. Out of line: the path of calls that
    /// carry only declared keys carries none of it.
    #[cold]
    #[inline(never)]
    fn found(
        &self,
        catalog: &Catalog,
        declared: &Declared,
        call: Call<'_>,
        arguments: Arguments<'_>,
        mut found: Found,
    ) -> Outcome {
        for list in [&mut found.keys, &mut found.paths, &mut found.missing] {
            list.sort_unstable();
            list.dedup();
        }
        let emptied = !found.missing.is_empty() && found.top_level_keys == 0;
        let (keys, paths, missing) = self.claim(call.tool, &found.keys, &found.paths, &found.missing);
        let warning = (!keys.is_empty() || !paths.is_empty() || !missing.is_empty()).then(|| {
            let cause = if emptied {
                Cause::Emptied
            } else {
                Cause::MissingRequired
            };
            self.warning(catalog, declared, call, arguments, keys, paths)
                .with_missing_required(missing, cause)
        });
        Outcome::Audited {
            undeclared: found.keys,
            undeclared_paths: found.paths,
            missing_required: found.missing,
            emptied,
            warning,
        }
    }

    /// Builds the warning for the keys and paths just claimed, with the
    /// diagnosis of the keys. Only here, off the path of calls that raise
    /// nothing, are the arguments read a second time, values included.
    fn warning(
        &self,
        catalog: &Catalog,
        declared: &Declared,
        call: Call<'_>,
        arguments: Arguments<'_>,
        claimed: Vec<(String, usize)>,
        paths: Vec<String>,
    ) -> Warning {
        let (hints, missing_keys) = if claimed.is_empty() {
            Default::default()
        } else {
            let arguments = reread(arguments);
            let diagnosed = Diagnosed {
                catalog,
                tool: call.tool,
                declared,
                arguments: arguments.as_deref(),
            };
            diagnosed.diagnose(&claimed)
        };
        Warning::new(
            call.tool,
            claimed.into_iter().map(|(key, _)| key).collect(),
            declared.keys().map(str::to_owned).collect(),
            id_text(call.id),
        )
        .with_diagnosis(hints, missing_keys)
        .with_unknown_paths(paths)
    }

    /// Audits a batch against one catalogue snapshot and returns its
    /// warnings in call order. A call without a tool name is a call to the
    /// empty name, counted as an unlisted tool.
    pub fn audit_batch(&self, calls: &[ToolCall]) -> Vec<Warning> {
        self.audit_batch_counted(calls, &mut Coverage::default())
    }

    /// [`Auditor::audit_batch`], counting each call in `coverage`.
    pub fn audit_batch_counted(&self, calls: &[ToolCall], coverage: &mut Coverage) -> Vec<Warning> {
        let catalog = self.catalog();
        calls
            .iter()
            .map(Call::of_tool_call)
            .filter_map(|call| {
                let outcome = self.audit(&catalog, call);
                coverage.record(&call, &outcome);
                outcome.warning()
            })
            .collect()
    }

    /// Delivers one warning to the sink. A sink that panics is caught and
    /// swallowed.
    pub fn warn(&self, warning: &Warning) {
        let _ = catch_unwind(AssertUnwindSafe(|| self.sink.warn(warning)));
    }

    /// Delivers one notice to the sink, shielded as [`Auditor::warn`] is.
    pub fn notice(&self, notice: &Notice) {
        let _ = catch_unwind(AssertUnwindSafe(|| self.sink.notice(notice)));
    }

    /// Delivers one verdict to the sink, shielded as [`Auditor::warn`] is.
    pub fn verdict(&self, judged: &Judged) {
        let _ = catch_unwind(AssertUnwindSafe(|| self.sink.verdict(judged)));
    }

    /// Tells the sink a catalogue was installed ([`Sink::installed`]),
    /// shielded as [`Auditor::warn`] is: for a door that keeps the listing
    /// page's text.
    pub fn say_installed(&self, page: Option<&str>, catalog: &Catalog) {
        let _ = catch_unwind(AssertUnwindSafe(|| self.sink.installed(page, catalog)));
    }

    /// Delivers a session's summary to the sink ([`Sink::summary`]),
    /// shielded as [`Auditor::warn`] is: for a door whose session ended.
    pub fn summarise(&self, summary: &Summary<'_>) {
        let _ = catch_unwind(AssertUnwindSafe(|| self.sink.summary(summary)));
    }

    /// Claims nested keys a warning read back from a log reported (paths
    /// such as `entities[].age`), for a door that replays logged warnings
    /// through this auditor: returns those neither tolerated nor said
    /// before for `tool`, sorted, now said. Top-level keys are said again
    /// by auditing a call that carries them, as any call is.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Auditor;
    ///
    /// let auditor = Auditor::new().with_sink(()).allow("entities[].id");
    /// let logged = ["entities[].age".to_owned(), "entities[].id".to_owned()];
    /// assert_eq!(auditor.claim_logged_paths("create_entities", &logged), ["entities[].age"]);
    /// assert!(auditor.claim_logged_paths("create_entities", &logged).is_empty());
    /// ```
    pub fn claim_logged_paths(&self, tool: &str, paths: &[String]) -> Vec<String> {
        let mut paths: Vec<String> = paths
            .iter()
            .filter(|path| !self.tolerates(path))
            .cloned()
            .collect();
        paths.sort_unstable();
        paths.dedup();
        self.claim(tool, &[], &paths, &[]).1
    }

    /// Claims required keys a warning read back from a log reported
    /// missing (`missing_required`), as [`Auditor::claim_logged_paths`]
    /// does nested keys: returns those not said before for `tool`, sorted,
    /// now said. Nothing when required keys are not checked.
    ///
    /// ```
    /// use mcp_unknown_keys::audit::Auditor;
    ///
    /// let auditor = Auditor::new().with_sink(());
    /// let logged = ["path".to_owned(), "options.mode".to_owned()];
    /// assert_eq!(auditor.claim_logged_missing("fs_read", &logged), ["options.mode", "path"]);
    /// assert!(auditor.claim_logged_missing("fs_read", &logged).is_empty());
    /// ```
    pub fn claim_logged_missing(&self, tool: &str, missing: &[String]) -> Vec<String> {
        if !self.check_required {
            return Vec::new();
        }
        let mut missing = missing.to_vec();
        missing.sort_unstable();
        missing.dedup();
        self.claim(tool, &[], &[], &missing).2
    }

    /// Marks each of `keys`, `paths` and `missing` (sorted) as said for
    /// `tool` and returns those that were not said before, each key with
    /// the number of tools it has now been said on. The lock is held for
    /// the claim only; should the memory fill up, that is said once, after.
    fn claim(&self, tool: &str, keys: &[String], paths: &[String], missing: &[String]) -> Claimed {
        let mut filled = false;
        let claimed = {
            let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
            let mut claimed = Vec::new();
            for key in keys {
                if said.claim_pair(Pair::Key, tool, key, &mut filled) {
                    let tools = said.count_tool_of(key);
                    claimed.push((key.clone(), tools));
                }
            }
            let mut claim = |pair: Pair, items: &[String]| -> Vec<String> {
                items
                    .iter()
                    .filter(|item| said.claim_pair(pair, tool, item, &mut filled))
                    .cloned()
                    .collect()
            };
            let paths = claim(Pair::Path, paths);
            let missing = claim(Pair::Missing, missing);
            (claimed, paths, missing)
        };
        if filled {
            self.notice(&Notice::SaidMemoryFull {
                pairs: MAX_SAID_PAIRS,
            });
        }
        claimed
    }

    /// Says, once in the auditor's life, that a call to `tool` carried
    /// more undeclared keys than one call is read for.
    fn said_many_keys(&self, tool: &str) {
        let first = {
            let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
            !std::mem::replace(&mut said.many_keys_said, true)
        };
        if first {
            self.notice(&Notice::ManyKeys {
                tool: tool.to_owned(),
                read: MAX_UNDECLARED_PER_CALL,
            });
        }
    }

    /// How many new (tool, key) pairs were found once the said-once memory
    /// was full ([`MAX_SAID_PAIRS`]): counted, not said.
    pub fn unsaid_pairs(&self) -> u64 {
        self.said.lock().unwrap_or_else(PoisonError::into_inner).unsaid
    }
}

/// What [`Auditor::claim`] found new: keys (each with its count of tools),
/// paths, missing required keys.
type Claimed = (Vec<(String, usize)>, Vec<String>, Vec<String>);

/// Which part of the said-once memory a pair is in.
#[derive(Clone, Copy, Hash)]
enum Pair {
    Key,
    Path,
    Missing,
}

impl Said {
    /// Marks (tool, item) said; whether it was not said before. Once
    /// [`MAX_SAID_PAIRS`] are kept a new pair is counted instead, and
    /// `filled` set the first time.
    fn claim_pair(&mut self, pair: Pair, tool: &str, item: &str, filled: &mut bool) -> bool {
        let print = self.fingerprints.of((pair, tool, item));
        if self.pairs.contains(&print) {
            return false;
        }
        if self.pairs.len() >= MAX_SAID_PAIRS {
            *filled |= self.unsaid == 0;
            self.unsaid += 1;
            return false;
        }
        self.pairs.insert(print)
    }

    /// One more tool said to carry `key`; how many now.
    fn count_tool_of(&mut self, key: &str) -> usize {
        let print = self.fingerprints.of(key);
        let tools = self.tools_per_key.entry(print).or_insert(0);
        *tools = tools.saturating_add(1);
        *tools as usize
    }

    /// Keeps (tool, note) as said; whether it was not said before (and
    /// fewer than [`MAX_SAID_NOTES`] are kept).
    fn claim_note(&mut self, tool: &str, note: &Note) -> bool {
        self.notes.len() < MAX_SAID_NOTES && self.notes.insert(self.fingerprints.of((tool, note)))
    }
}

/// Whether `arguments` that did not read as an object are no arguments at
/// all: empty or whitespace text, or `null` (which MCP servers run as no
/// arguments).
fn writes_no_arguments(arguments: Arguments<'_>) -> bool {
    match arguments {
        Arguments::Json(text) => matches!(text.trim_matches([' ', '\t', '\n', '\r']), "" | "null"),
        Arguments::Object(_) | Arguments::Host(_) => false,
    }
}

/// The arguments as an object, values included, for the diagnosis: borrowed
/// when they already are one, parsed when they are JSON text (which the key
/// scan has already found to be an object), converted from a host's object.
fn reread(arguments: Arguments<'_>) -> Option<Cow<'_, Map<String, Value>>> {
    match arguments {
        Arguments::Object(object) => Some(Cow::Borrowed(object)),
        Arguments::Json(text) => serde_json::from_str(text).ok().map(Cow::Owned),
        Arguments::Host(host) => host.to_object().map(Cow::Owned),
    }
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor")
            .field("audited_tools", &self.audited_tools())
            .field("allowed", &self.allowed)
            .field("top_level_only", &self.top_level_only)
            .field("check_required", &self.check_required)
            .finish_non_exhaustive()
    }
}
