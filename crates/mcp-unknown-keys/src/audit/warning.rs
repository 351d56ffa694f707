//! The warning a call with undeclared keys raises.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::diagnosis::hint::{Cause, Hint, MissingKey};
use super::printable::{Printable, write_each};
use crate::limits::MAX_LISTED;
use crate::trace::TraceContext;

/// A tool was called with keys it never declared, or without keys it
/// requires.
///
/// Serialised, it is the JSON line the proxy logs and `audit` prints (one
/// line; wrapped here):
///
/// ```json
/// {"tool":"fs_read","unknown_keys":["ffset","the rest"],"declared_keys":["offset","path"],"id":"call_1",
///  "hints":[{"key":"ffset","cause":"truncated","suggestion":"offset"},{"key":"the rest","cause":"fragment"}],
///  "missing_keys":[{"key":"offset","default":0}],"unknown_paths":[]}
/// ```
///
/// The first four fields are the finding; `hints` and `missing_keys` are the
/// [diagnosis](super::diagnosis) an [`Auditor`](super::Auditor) adds, and never
/// change the finding. A call that lacked required keys adds
/// `"missing_required":["path"],"missing_cause":"missing_required"` (both
/// written only then). Fields may be added in later versions; none will be
/// renamed.
///
/// Two fields name keys the call did not carry, for different reasons:
/// `missing_keys` is the diagnosis of an undeclared key (`ffset` was
/// probably `offset`, which was then not sent), whether the schema requires
/// it or not; `missing_required` is a finding of its own, the keys the
/// schema lists in `required` that the call lacked, reported once per
/// (tool, key) whatever else the call carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Warning {
    /// The tool name as the catalogue published it.
    pub tool: String,
    /// The undeclared keys reported now for the first time, sorted by code
    /// point, without duplicates.
    pub unknown_keys: Vec<String>,
    /// Every property the tool's declaration published, sorted by code point.
    pub declared_keys: Vec<String>,
    /// The call's id as text, or `""` when it had none.
    pub id: String,
    /// What probably went wrong: one hint per key of `unknown_keys`, in the
    /// same order (empty for a warning built without a diagnosis).
    #[serde(default)]
    pub hints: Vec<Hint>,
    /// The declared keys a hint suggests (`case_variant`, `plural`,
    /// `abbreviation`, `truncated`, `near_miss`) that the
    /// call did not carry, sorted, each with its schema's default: what the
    /// server is about to do differently from what the model meant.
    #[serde(default)]
    pub missing_keys: Vec<MissingKey>,
    /// The undeclared nested keys reported now for the first time, as paths
    /// from the arguments' top level, sorted, without duplicates.
    /// `unknown_keys` holds top-level keys only.
    ///
    /// A path names an object's key after a dot (`options.recursve`) and an
    /// array's items, whatever their index, as `[]` (`entities[].age`); a
    /// key that is empty or holds `.`, `[`, `]`, `"`, `\` or a control
    /// character is written as a JSON string in brackets
    /// (`config["a.b"].c`).
    #[serde(default)]
    pub unknown_paths: Vec<String>,
    /// The required keys the call lacked, reported now for the first time:
    /// keys the schema lists in `required`, at the top level (`path`) and in
    /// the nested objects audited (`options.mode`, `entities[].name`),
    /// written as [`Warning::unknown_paths`] are, sorted, without
    /// duplicates. Serialised only when not empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_required: Vec<String>,
    /// Why the keys of `missing_required` were lost:
    /// [`Cause::MissingRequired`] (the call left them out),
    /// [`Cause::Emptied`] (it carried no arguments at all) or, from
    /// `audit`, [`Cause::TruncatedResponse`]; `None` when nothing is
    /// missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_cause: Option<Cause>,
    /// The W3C trace context the call carried (`params._meta.traceparent`),
    /// when it carried a valid one: a sink that exports spans (the proxy's
    /// `--otlp`) joins the warning to the call's trace. Never serialised,
    /// so the JSON line is the same with it or without.
    #[serde(skip)]
    pub trace: Option<TraceContext>,
}

impl Warning {
    /// Builds a warning; keys are sorted and deduplicated here.
    pub fn new(
        tool: impl Into<String>,
        mut unknown_keys: Vec<String>,
        mut declared_keys: Vec<String>,
        id: impl Into<String>,
    ) -> Warning {
        unknown_keys.sort_unstable();
        unknown_keys.dedup();
        declared_keys.sort_unstable();
        declared_keys.dedup();
        Warning {
            tool: tool.into(),
            unknown_keys,
            declared_keys,
            id: id.into(),
            hints: Vec::new(),
            missing_keys: Vec::new(),
            unknown_paths: Vec::new(),
            missing_required: Vec::new(),
            missing_cause: None,
            trace: None,
        }
    }

    /// The same warning with required keys the call lacked (sorted and
    /// deduplicated here) and why they were lost; `cause` is kept only
    /// when some key is missing.
    pub fn with_missing_required(mut self, mut missing: Vec<String>, cause: Cause) -> Warning {
        missing.sort_unstable();
        missing.dedup();
        self.missing_cause = (!missing.is_empty()).then_some(cause);
        self.missing_required = missing;
        self
    }

    /// The same warning with undeclared nested keys, as paths; they are
    /// sorted and deduplicated here.
    pub fn with_unknown_paths(mut self, mut unknown_paths: Vec<String>) -> Warning {
        unknown_paths.sort_unstable();
        unknown_paths.dedup();
        self.unknown_paths = unknown_paths;
        self
    }

    /// The same warning with a diagnosis: `hints` (one per unknown key) and
    /// `missing_keys`, which is sorted here.
    pub fn with_diagnosis(mut self, hints: Vec<Hint>, mut missing_keys: Vec<MissingKey>) -> Warning {
        missing_keys.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        self.hints = hints;
        self.missing_keys = missing_keys;
        self
    }

    /// The hint about `key`, when the warning has one.
    pub fn hint(&self, key: &str) -> Option<&Hint> {
        self.hints.iter().find(|hint| hint.key == key)
    }

    /// The warning as one JSON line, without the newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a warning is plain strings")
    }
}

/// The warning as one human-readable line, the diagnosis after a dash:
///
/// `fs_read was called with undeclared argument(s) ffset, the rest; it declares offset, path
/// — ffset → offset? (truncated), the rest (fragment); offset was not sent: the server will use its default, 0`
///
/// (one line; wrapped here). Nested keys follow the top-level ones:
/// `… undeclared argument(s) ffset and nested key(s) options.recursve; …`,
/// or `… undeclared nested key(s) entities[].age; …` alone. Required keys
/// the call lacked come last, with their cause:
/// `…; required key(s) not sent: path (emptied)`, or alone:
/// `fs_read was called without required key(s) path (emptied); it declares offset, path`.
///
/// Keys are model-written text: control characters are escaped and very
/// long keys are cut, so a key cannot forge a log line or flood a terminal;
/// and each list (keys, paths, declared keys, hints, keys not sent) shows at
/// most [`MAX_LISTED`] items, then `… and N more`. The JSON line keeps
/// everything.
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unknown_keys.is_empty() && self.unknown_paths.is_empty() && !self.missing_required.is_empty()
        {
            write!(f, "{} was called without required key(s) ", Printable(&self.tool))?;
            self.write_missing_required(f)?;
            f.write_str("; it declares ")?;
            return self.write_declared(f);
        }
        write!(f, "{} was called with undeclared ", Printable(&self.tool))?;
        if !self.unknown_keys.is_empty() {
            f.write_str("argument(s) ")?;
            write_list(f, &self.unknown_keys)?;
            if !self.unknown_paths.is_empty() {
                f.write_str(" and ")?;
            }
        }
        if !self.unknown_paths.is_empty() {
            f.write_str("nested key(s) ")?;
            write_list(f, &self.unknown_paths)?;
        }
        f.write_str("; it declares ")?;
        self.write_declared(f)?;
        if !self.hints.is_empty() {
            f.write_str(" — ")?;
            write_capped(f, &self.hints, ", ")?;
        }
        if !self.missing_keys.is_empty() {
            f.write_str("; ")?;
            write_capped(f, &self.missing_keys, "; ")?;
        }
        if !self.missing_required.is_empty() {
            f.write_str("; required key(s) not sent: ")?;
            self.write_missing_required(f)?;
        }
        Ok(())
    }
}

impl Warning {
    fn write_declared(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.declared_keys.is_empty() {
            f.write_str("none")
        } else {
            write_list(f, &self.declared_keys)
        }
    }

    /// `path, options.mode (missing_required)`.
    fn write_missing_required(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.missing_required)?;
        match self.missing_cause {
            Some(cause) => write!(f, " ({cause})"),
            None => Ok(()),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, keys: &[String]) -> fmt::Result {
    let shown: Vec<Printable<'_>> = keys.iter().take(MAX_LISTED).map(|key| Printable(key)).collect();
    write_each(f, &shown, ", ")?;
    write_more(f, keys.len())
}

/// Writes the first [`MAX_LISTED`] items, `separator` between them.
fn write_capped<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T], separator: &str) -> fmt::Result {
    write_each(f, &items[..items.len().min(MAX_LISTED)], separator)?;
    write_more(f, items.len())
}

/// Says how many of `total` items were not shown, if any.
fn write_more(f: &mut fmt::Formatter<'_>, total: usize) -> fmt::Result {
    match total.checked_sub(MAX_LISTED) {
        Some(more) if more > 0 => write!(f, " … and {more} more"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::Cause;
    use crate::limits::MAX_SHOWN_CHARS;

    fn warning(unknown: &[&str], declared: &[&str]) -> Warning {
        Warning::new(
            "fs_read",
            unknown.iter().map(|k| k.to_string()).collect(),
            declared.iter().map(|k| k.to_string()).collect(),
            "call_1",
        )
    }

    #[test]
    fn the_line_names_the_tool_the_keys_and_what_it_declares() {
        let line = warning(&["the rest", "ffset"], &["path", "offset"]).to_string();
        assert_eq!(
            line,
            "fs_read was called with undeclared argument(s) ffset, the rest; it declares offset, path"
        );
    }

    #[test]
    fn the_line_says_none_when_nothing_is_declared() {
        assert!(warning(&["x"], &[]).to_string().ends_with("it declares none"));
    }

    #[test]
    fn the_line_escapes_control_characters_and_cuts_long_keys() {
        let long = "k".repeat(1000);
        let line = warning(&["evil\nfs_read was fine", "\u{1b}[31m", &long], &["path"]).to_string();
        assert!(!line.contains('\n') && !line.contains('\u{1b}'));
        assert!(line.contains(r"evil\nfs_read was fine"));
        assert!(line.contains(&format!("{}…", "k".repeat(MAX_SHOWN_CHARS))));
        assert!(!line.contains(&"k".repeat(MAX_SHOWN_CHARS + 1)));
    }

    fn diagnosed() -> Warning {
        warning(&["the rest", "ffset"], &["path", "offset"]).with_diagnosis(
            vec![
                Hint::new("ffset", Cause::Truncated).with_suggestion("offset"),
                Hint::new("the rest", Cause::Fragment),
            ],
            vec![MissingKey::new("offset", Some(serde_json::json!(0)))],
        )
    }

    #[test]
    fn the_json_line_has_the_four_fields_then_the_diagnosis() {
        let line = warning(&["ffset"], &["path", "offset"]).to_json_line();
        assert_eq!(
            line,
            r#"{"tool":"fs_read","unknown_keys":["ffset"],"declared_keys":["offset","path"],"id":"call_1","hints":[],"missing_keys":[],"unknown_paths":[]}"#
        );
        assert_eq!(
            diagnosed().to_json_line(),
            concat!(
                r#"{"tool":"fs_read","unknown_keys":["ffset","the rest"],"declared_keys":["offset","path"],"id":"call_1","#,
                r#""hints":[{"key":"ffset","cause":"truncated","suggestion":"offset"},{"key":"the rest","cause":"fragment"}],"#,
                r#""missing_keys":[{"key":"offset","default":0}],"unknown_paths":[]}"#
            )
        );
    }

    #[test]
    fn a_json_line_without_the_diagnosis_still_reads() {
        let line =
            r#"{"tool":"fs_read","unknown_keys":["ffset"],"declared_keys":["offset","path"],"id":"call_1"}"#;
        let read: Warning = serde_json::from_str(line).unwrap();
        assert_eq!(read, warning(&["ffset"], &["path", "offset"]));
        let diagnosed = diagnosed();
        assert_eq!(
            serde_json::from_str::<Warning>(&diagnosed.to_json_line()).unwrap(),
            diagnosed
        );
    }

    #[test]
    fn the_line_adds_the_diagnosis_after_the_finding() {
        assert_eq!(
            diagnosed().to_string(),
            "fs_read was called with undeclared argument(s) ffset, the rest; it declares offset, path \
             — ffset → offset? (truncated), the rest (fragment); offset was not sent: the server will use its default, 0"
        );
    }

    #[test]
    fn nested_keys_follow_the_top_level_ones_or_stand_alone() {
        let both = warning(&["ffset"], &["options", "path"])
            .with_unknown_paths(vec!["options.recursve".into()])
            .to_string();
        assert_eq!(
            both,
            "fs_read was called with undeclared argument(s) ffset and nested key(s) options.recursve; \
             it declares options, path"
        );
        let alone = warning(&[], &["entities"])
            .with_unknown_paths(vec!["entities[].age".into(), "entities[].age".into()])
            .to_string();
        assert_eq!(
            alone,
            "fs_read was called with undeclared nested key(s) entities[].age; it declares entities"
        );
    }

    #[test]
    fn each_list_shows_a_bounded_number_of_items_and_the_json_line_all() {
        let many =
            |prefix: &str, n: usize| -> Vec<String> { (0..n).map(|i| format!("{prefix}{i:03}")).collect() };
        let keys = many("k", 25);
        let hints: Vec<Hint> = keys
            .iter()
            .map(|key| Hint::new(key.clone(), Cause::Invented))
            .collect();
        let missing = many("m", 21)
            .into_iter()
            .map(|key| MissingKey::new(key, None))
            .collect();
        let full = Warning::new("t", keys.clone(), many("d", 1000), "")
            .with_unknown_paths(many("a.p", 30))
            .with_diagnosis(hints, missing);
        let line = full.to_string();
        assert!(
            line.contains("k019 … and 5 more and nested key(s) a.p000"),
            "{line}"
        );
        assert!(line.contains("a.p019 … and 10 more;"), "{line}");
        assert!(line.contains("d019 … and 980 more — "), "{line}");
        assert!(line.contains("k019 (invented) … and 5 more; "), "{line}");
        assert!(line.ends_with(" … and 1 more"), "{line}");
        assert!(!line.contains("k020") && !line.contains("d020") && !line.contains("a.p020"));
        let json = full.to_json_line();
        assert!(json.contains("\"k024\"") && json.contains("\"d999\"") && json.contains("\"a.p029\""));
    }

    #[test]
    fn the_diagnosis_escapes_and_cuts_model_written_keys_too() {
        let long = "k".repeat(1000);
        let line = warning(&["a\nb", &long], &["path"])
            .with_diagnosis(
                vec![
                    Hint::new("a\nb", Cause::Invented),
                    Hint::new(long.clone(), Cause::Fragment),
                ],
                vec![],
            )
            .to_string();
        assert!(!line.contains('\n'));
        assert!(!line.contains(&"k".repeat(MAX_SHOWN_CHARS + 1)));
    }
}
