//! What a diagnosis says: a [`Cause`] and a [`Hint`] per undeclared key, and
//! the [`MissingKey`]s the server will run without.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::audit::printable::Printable;

/// Why an undeclared key probably reached the tool, or why a required key
/// was lost.
///
/// Its serde name and its `Display` are the same stable snake_case word
/// (`case_variant`, `near_miss`, …), so a text report and a JSON line say the
/// same thing. The variants up to [`Cause::Undiagnosed`] are an undeclared
/// key's, in the order the diagnosis checks them ([`Cause::ALL`]); the
/// first that fits is the key's cause. The last three say why keys were
/// lost: [`Cause::MissingRequired`] and [`Cause::Emptied`] are given to
/// the missing required keys of a call
/// ([`Warning::missing_cause`](crate::audit::Warning::missing_cause)), and
/// [`Cause::TruncatedResponse`], by `audit`, to whatever a call of a
/// response cut at its length limit carried or lost.
///
/// ```
/// use mcp_unknown_keys::audit::Cause;
///
/// assert_eq!(Cause::CaseVariant.to_string(), "case_variant");
/// assert_eq!(serde_json::to_string(&Cause::OtherTool).unwrap(), r#""other_tool""#);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A declared key written in another case or with other separators:
    /// `styleId`, `StyleId` or `style-id` for `style_id`.
    CaseVariant,
    /// The singular of a declared plural, or the plural of a declared
    /// singular: `filter` for `filters`, `queries` for `query`.
    Plural,
    /// A declared key with its words shortened or replaced by their
    /// initials: `cnt` for `count`, `target_tz` for `target_timezone`, `tz`
    /// for `time_zone`, `max_res` for `max_results`.
    Abbreviation,
    /// A strict prefix or suffix of a declared key that the call did not
    /// carry: the model's key lost its beginning or its end (`ffset`,
    /// `subagent_ty`).
    Truncated,
    /// A typo: a small edit distance from a declared key (`patern`).
    NearMiss,
    /// Not a key at all but a piece of text: not identifier-like, or a piece
    /// of another argument's value.
    Fragment,
    /// Declared by another tool of the catalogue: the model mixed two tools.
    OtherTool,
    /// Seen undeclared on calls to several tools: added by the host or a
    /// middleware rather than the model.
    Injected,
    /// None of the above: the model made the key up.
    Invented,
    /// Not diagnosed: the warning's diagnosis had spent its budget before
    /// this key's comparisons could run (a call with a flood of new keys,
    /// or a tool declaring a great many). The key is still reported.
    Undiagnosed,
    /// A required key the call did not carry, among others it did: the
    /// model left it out.
    MissingRequired,
    /// A required key of a call that carried no arguments at all (`{}`,
    /// none, or empty text) to a tool that requires some: a host or a
    /// transport dropped the arguments, not the model.
    Emptied,
    /// The call was part of a model response cut at its length limit
    /// (`finish_reason: "length"`, `stop_reason: "max_tokens"`, …): what it
    /// carried or lost is the cut's doing. Given by `audit`, which reads
    /// the response's stop reason.
    TruncatedResponse,
}

impl Cause {
    /// Every cause: those checked, in the order they are checked, then
    /// [`Cause::Undiagnosed`], then the causes of lost keys.
    pub const ALL: [Cause; 13] = [
        Cause::CaseVariant,
        Cause::Plural,
        Cause::Abbreviation,
        Cause::Truncated,
        Cause::NearMiss,
        Cause::Fragment,
        Cause::OtherTool,
        Cause::Injected,
        Cause::Invented,
        Cause::Undiagnosed,
        Cause::MissingRequired,
        Cause::Emptied,
        Cause::TruncatedResponse,
    ];

    /// The stable snake_case name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::CaseVariant => "case_variant",
            Cause::Plural => "plural",
            Cause::Truncated => "truncated",
            Cause::Abbreviation => "abbreviation",
            Cause::NearMiss => "near_miss",
            Cause::Fragment => "fragment",
            Cause::OtherTool => "other_tool",
            Cause::Injected => "injected",
            Cause::Invented => "invented",
            Cause::Undiagnosed => "undiagnosed",
            Cause::MissingRequired => "missing_required",
            Cause::Emptied => "emptied",
            Cause::TruncatedResponse => "truncated_response",
        }
    }

    /// Whether a hint of this cause names the declared key the model
    /// probably meant (its `suggestion`).
    pub fn suggests_a_declared_key(self) -> bool {
        matches!(
            self,
            Cause::CaseVariant | Cause::Plural | Cause::Abbreviation | Cause::Truncated | Cause::NearMiss
        )
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The diagnosis of one undeclared key.
///
/// Serialised, the optional fields appear only when they say something:
///
/// ```json
/// {"key":"ffset","cause":"truncated","suggestion":"offset"}
/// {"key":"styleId","cause":"case_variant","suggestion":"style_id"}
/// {"key":"pattern","cause":"other_tool","declared_by":"fs_search"}
/// {"key":"toolCallId","cause":"injected","seen_on_tools":3}
/// ```
///
/// Its `Display` is the brief form of the one-line note, with model-written
/// text escaped and cut: `ffset → offset? (truncated)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Hint {
    /// The undeclared key.
    pub key: String,
    /// Why it probably reached the tool.
    pub cause: Cause,
    /// For the causes that point to a declared key
    /// ([`Cause::suggests_a_declared_key`]): the declared key the model
    /// probably meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// For [`Cause::OtherTool`]: the tool that declares the key (the first
    /// by name when several do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_by: Option<String>,
    /// For [`Cause::Injected`]: on how many tools' calls the key has been
    /// seen undeclared so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_on_tools: Option<usize>,
}

impl Hint {
    /// A hint with no suggestion, tool or count.
    pub fn new(key: impl Into<String>, cause: Cause) -> Hint {
        Hint {
            key: key.into(),
            cause,
            suggestion: None,
            declared_by: None,
            seen_on_tools: None,
        }
    }

    /// The same hint suggesting the declared key `suggestion`.
    pub fn with_suggestion(self, suggestion: impl Into<String>) -> Hint {
        Hint {
            suggestion: Some(suggestion.into()),
            ..self
        }
    }

    /// The same hint naming the tool that declares the key.
    pub fn with_declared_by(self, tool: impl Into<String>) -> Hint {
        Hint {
            declared_by: Some(tool.into()),
            ..self
        }
    }

    /// The same hint with the number of tools the key was seen on.
    pub fn with_seen_on_tools(self, tools: usize) -> Hint {
        Hint {
            seen_on_tools: Some(tools),
            ..self
        }
    }
}

/// `ffset → offset? (truncated)`, `styleId → style_id? (case_variant)`,
/// `pattern (other_tool: declared by fs_search)`,
/// `toolCallId (injected: seen on 3 tools; --allow toolCallId silences it)`,
/// `k9 (undiagnosed)`.
impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = Printable(&self.key);
        if let Some(suggestion) = &self.suggestion {
            return write!(f, "{key} → {}? ({})", Printable(suggestion), self.cause);
        }
        write!(f, "{key} ({}", self.cause)?;
        if let Some(tool) = &self.declared_by {
            write!(f, ": declared by {}", Printable(tool))?;
        }
        if self.cause == Cause::Injected {
            if let Some(tools) = self.seen_on_tools {
                write!(f, ": seen on {tools} tools")?;
            }
            write!(f, "; --allow {key} silences it")?;
        }
        f.write_str(")")
    }
}

/// A declared key that a hint points to (its `suggestion`) and that the call
/// did not carry: the part of the job the server is about to do differently
/// from what the model meant.
///
/// ```json
/// {"key":"offset","default":0}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MissingKey {
    /// The declared key that was not sent.
    pub key: String,
    /// The `default` its schema gives, if it gives one (a schema's own
    /// value, never the call's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    pub default: Option<Value>,
}

impl MissingKey {
    /// A missing key with the default its schema gives, if any.
    pub fn new(key: impl Into<String>, default: Option<Value>) -> MissingKey {
        MissingKey {
            key: key.into(),
            default,
        }
    }
}

/// A `default` member that is present is `Some`, even when it is `null`.
fn present_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// `offset was not sent: the server will use its default, 0`, or
/// `limit was not sent` when the schema gives no default.
impl fmt::Display for MissingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} was not sent", Printable(&self.key))?;
        if let Some(default) = &self.default {
            write!(
                f,
                ": the server will use its default, {}",
                Printable(&default.to_string())
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_cause_has_one_name_for_text_and_json() {
        for cause in Cause::ALL {
            let json = serde_json::to_string(&cause).unwrap();
            assert_eq!(json, format!("\"{cause}\""));
            assert_eq!(serde_json::from_str::<Cause>(&json).unwrap(), cause);
        }
        let names: std::collections::BTreeSet<&str> = Cause::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), Cause::ALL.len());
    }

    #[test]
    fn the_hint_reads_briefly() {
        let shown = |hint: Hint| hint.to_string();
        assert_eq!(
            shown(Hint::new("ffset", Cause::Truncated).with_suggestion("offset")),
            "ffset → offset? (truncated)"
        );
        assert_eq!(
            shown(Hint::new("styleId", Cause::CaseVariant).with_suggestion("style_id")),
            "styleId → style_id? (case_variant)"
        );
        assert_eq!(
            shown(Hint::new("filter", Cause::Plural).with_suggestion("filters")),
            "filter → filters? (plural)"
        );
        assert_eq!(
            shown(Hint::new("tz", Cause::Abbreviation).with_suggestion("timezone")),
            "tz → timezone? (abbreviation)"
        );
        assert_eq!(
            shown(Hint::new("the rest", Cause::Fragment)),
            "the rest (fragment)"
        );
        assert_eq!(
            shown(Hint::new("pattern", Cause::OtherTool).with_declared_by("fs_search")),
            "pattern (other_tool: declared by fs_search)"
        );
        assert_eq!(
            shown(Hint::new("toolCallId", Cause::Injected).with_seen_on_tools(3)),
            "toolCallId (injected: seen on 3 tools; --allow toolCallId silences it)"
        );
        assert_eq!(shown(Hint::new("a\nb", Cause::Invented)), r"a\nb (invented)");
        assert_eq!(shown(Hint::new("k9", Cause::Undiagnosed)), "k9 (undiagnosed)");
    }

    #[test]
    fn the_missing_key_says_what_the_server_will_do() {
        assert_eq!(
            MissingKey::new("offset", Some(json!(0))).to_string(),
            "offset was not sent: the server will use its default, 0"
        );
        assert_eq!(MissingKey::new("limit", None).to_string(), "limit was not sent");
    }

    #[test]
    fn hints_round_trip_through_json_with_only_the_fields_that_say_something() {
        let hint = Hint::new("ffset", Cause::Truncated).with_suggestion("offset");
        let line = serde_json::to_string(&hint).unwrap();
        assert_eq!(
            line,
            r#"{"key":"ffset","cause":"truncated","suggestion":"offset"}"#
        );
        assert_eq!(serde_json::from_str::<Hint>(&line).unwrap(), hint);
        let undiagnosed = Hint::new("k9", Cause::Undiagnosed);
        let line = serde_json::to_string(&undiagnosed).unwrap();
        assert_eq!(line, r#"{"key":"k9","cause":"undiagnosed"}"#);
        let null_default = MissingKey::new("mode", Some(Value::Null));
        let line = serde_json::to_string(&null_default).unwrap();
        assert_eq!(serde_json::from_str::<MissingKey>(&line).unwrap(), null_default);
    }
}
