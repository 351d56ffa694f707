//! Reading a proxy's own log lines (`--log`): a warning, a verdict, a note,
//! each read leniently from the members the record's one pass kept, as the
//! proxy wrote them.

use std::borrow::Cow;

use mcp_unknown_keys::audit::{Cause, Hint, Judged, MissingKey, Note, Warning};

use super::capture::Object;
use super::json_string;
use super::plan::{Path, Plan};

/// A verdict a proxy logged: `verdict`, `tool`, `id`, `unknown_keys`
/// and `unknown_paths` read as the proxy wrote them, other members
/// (the attribution) left aside.
pub(super) fn verdict(plan: &Plan, object: &Object<'_>) -> Option<Judged> {
    let paths = &plan.logged;
    let mut text = String::from("{");
    for (name, path) in [
        ("verdict", &paths.verdict),
        ("tool", &paths.tool),
        ("id", &paths.id),
        ("unknown_keys", &paths.unknown_keys),
        ("unknown_paths", &paths.unknown_paths),
        ("missing_required", &paths.missing_required),
    ] {
        if let Some(raw) = plan.raw(object, path) {
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(&format!("\"{name}\":{}", raw.get()));
        }
    }
    text.push('}');
    serde_json::from_str(&text).ok()
}

/// A note a proxy logged.
pub(super) fn note(plan: &Plan, object: &Object<'_>) -> Option<LoggedNote> {
    let raw = plan.raw(object, &plan.logged.note)?;
    serde_json::from_str(raw.get()).ok()
}

/// A warning a proxy logged: its fields read leniently (fields added
/// later are ignored; a diagnosis that does not read is left out).
pub(super) fn warning(plan: &Plan, object: &Object<'_>) -> Option<Warning> {
    let paths = &plan.logged;
    let list =
        |path: &Path| -> Option<Vec<String>> { serde_json::from_str(plan.raw(object, path)?.get()).ok() };
    let tool = plan.text(object, &paths.tool)?.into_owned();
    let unknown_keys = list(&paths.unknown_keys)?;
    // The proxy writes every warning with what its tool declares.
    let declared_keys = list(&paths.declared_keys)?;
    let id = match plan.raw(object, &paths.id) {
        Some(raw) => json_string(raw).map_or_else(|| raw.get().to_owned(), Cow::into_owned),
        None => String::new(),
    };
    let hints: Vec<Hint> = plan
        .raw(object, &paths.hints)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_default();
    let missing: Vec<MissingKey> = plan
        .raw(object, &paths.missing_keys)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or_default();
    let unknown_paths = list(&paths.unknown_paths).unwrap_or_default();
    let missing_required = list(&paths.missing_required).unwrap_or_default();
    let missing_cause = plan
        .raw(object, &paths.missing_cause)
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Cause::MissingRequired);
    let warning = Warning::new(tool, unknown_keys, declared_keys, id)
        .with_diagnosis(hints, missing)
        .with_unknown_paths(unknown_paths)
        .with_missing_required(missing_required, missing_cause);
    Some(warning)
}

/// A note as a proxy logs it: `{"note":{"tool":…,"at":…,"problem":…,…,"text":…}}`
/// (`text` is the note said in words, made again from the rest).
#[derive(serde::Deserialize)]
pub(super) struct LoggedNote {
    pub tool: String,
    #[serde(flatten)]
    pub note: Note,
}
