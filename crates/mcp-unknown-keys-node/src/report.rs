//! What the core reports, as the plain objects a Node host receives:
//! `Warning`, `Coverage`, `Verdict`, with the fields of the JSON lines every
//! door writes (so `unknown_keys`, not `unknownKeys`).

use std::collections::HashMap;

use mcp_unknown_keys::audit;
use napi_derive::napi;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A tool was called with keys it never declared: the fields of the JSON
/// line the proxy logs and `audit` prints.
#[napi(object)]
#[derive(Clone, Debug, Deserialize)]
pub struct Warning {
    /// The tool name as the catalogue published it.
    pub tool: String,
    /// The undeclared top-level keys reported now for the first time, sorted.
    #[napi(js_name = "unknown_keys")]
    pub unknown_keys: Vec<String>,
    /// The undeclared nested keys reported now for the first time, as paths
    /// (`options.recursve`, `entities[].age`), sorted.
    #[napi(js_name = "unknown_paths")]
    #[serde(default)]
    pub unknown_paths: Vec<String>,
    /// Every property the tool's declaration published, sorted.
    #[napi(js_name = "declared_keys")]
    pub declared_keys: Vec<String>,
    /// The call's id as text, `""` when it had none.
    pub id: String,
    /// Per unknown key, its likely cause.
    #[serde(default)]
    pub hints: Vec<Hint>,
    /// Declared keys a hint points to that the call did not carry.
    #[napi(js_name = "missing_keys")]
    #[serde(default)]
    pub missing_keys: Vec<MissingKey>,
    /// The required keys the call lacked, reported now for the first time,
    /// as paths (`path`, `options.mode`), sorted. Not `missing_keys`, which
    /// the diagnosis of an unknown key names.
    #[napi(js_name = "missing_required")]
    #[serde(default)]
    pub missing_required: Option<Vec<String>>,
    /// Why the keys of `missing_required` were lost; absent when none is.
    #[napi(
        js_name = "missing_cause",
        ts_type = "'case_variant' | 'plural' | 'abbreviation' | 'truncated' | 'near_miss' | 'fragment' | 'other_tool' | 'injected' | 'invented' | 'undiagnosed' | 'missing_required' | 'emptied' | 'truncated_response'"
    )]
    #[serde(default)]
    pub missing_cause: Option<String>,
}

/// Why an undeclared key probably reached the tool.
#[napi(object)]
#[derive(Clone, Debug, Deserialize)]
pub struct Hint {
    /// The undeclared key.
    pub key: String,
    /// The cause's name (`case_variant`, `truncated`, `other_tool`, …):
    /// every name of the Rust `Cause::ALL`, in its order (a test holds them
    /// equal).
    #[napi(
        ts_type = "'case_variant' | 'plural' | 'abbreviation' | 'truncated' | 'near_miss' | 'fragment' | 'other_tool' | 'injected' | 'invented' | 'undiagnosed' | 'missing_required' | 'emptied' | 'truncated_response'"
    )]
    pub cause: String,
    /// The declared key the model probably meant, for the causes that point
    /// to one.
    pub suggestion: Option<String>,
    /// For `other_tool`: the tool that declares the key.
    #[napi(js_name = "declared_by")]
    pub declared_by: Option<String>,
    /// For `injected`: on how many tools' calls the key was seen undeclared.
    #[napi(js_name = "seen_on_tools")]
    pub seen_on_tools: Option<u32>,
}

/// A declared key a hint points to that the call did not carry.
#[napi(object)]
#[derive(Clone, Debug, Deserialize)]
pub struct MissingKey {
    /// The declared key.
    pub key: String,
    /// The `default` its schema gives, if any (the schema's value, never
    /// the call's).
    pub default: Option<serde_json::Value>,
}

/// Every call found: audited, or unaudited for a named reason.
#[napi(object)]
#[derive(Clone, Debug, Deserialize)]
pub struct Coverage {
    /// Every call found.
    pub calls: i64,
    /// The calls whose keys were compared with a declaration.
    pub audited: i64,
    /// The calls not audited, by reason (`no_catalogue`, `unlisted_tool`,
    /// `declares_nothing`, `unreadable_arguments`); reasons with no call
    /// are absent.
    pub unaudited: HashMap<String, i64>,
    /// The tools called but not listed, each with its number of calls.
    #[napi(js_name = "unlisted_tools")]
    pub unlisted_tools: HashMap<String, i64>,
    /// Whether every call found was audited (true when none was found).
    #[napi(js_name = "is_complete")]
    #[serde(default)]
    pub is_complete: bool,
}

/// What the server did with a call that carried undeclared keys.
#[napi(object)]
#[derive(Clone, Debug, Deserialize)]
pub struct Verdict {
    /// `ignored` (the server succeeded), `rejected` or `unanswered`.
    pub verdict: String,
    /// The tool called.
    pub tool: String,
    /// The call's id as text.
    pub id: String,
    /// Every undeclared top-level key the call carried.
    #[napi(js_name = "unknown_keys")]
    pub unknown_keys: Vec<String>,
    /// Every undeclared nested key the call carried, as paths.
    #[napi(js_name = "unknown_paths")]
    #[serde(default)]
    pub unknown_paths: Vec<String>,
    /// Every required key the call lacked, as paths; absent when none.
    #[napi(js_name = "missing_required")]
    #[serde(default)]
    pub missing_required: Option<Vec<String>>,
}

/// A core report as its JSON form reads: the same fields, by construction.
fn as_json<T: DeserializeOwned>(value: &impl serde::Serialize) -> T {
    let json = serde_json::to_value(value).expect("a report serialises");
    serde_json::from_value(json).expect("a report reads as its JSON form")
}

impl From<&audit::Warning> for Warning {
    fn from(warning: &audit::Warning) -> Warning {
        as_json(warning)
    }
}

impl From<&audit::Coverage> for Coverage {
    fn from(coverage: &audit::Coverage) -> Coverage {
        Coverage {
            is_complete: coverage.is_complete(),
            ..as_json(coverage)
        }
    }
}

impl From<&audit::Judged> for Verdict {
    fn from(judged: &audit::Judged) -> Verdict {
        as_json(judged)
    }
}
