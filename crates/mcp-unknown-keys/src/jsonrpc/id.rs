//! JSON-RPC ids, compared as a peer's JSON parser compares them.

use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

use super::string;

/// A JSON-RPC id, compared as JSON values compare: a string by its decoded
/// text, a number by its value (`1`, `1.0`, `1e0` and `10e-1` are one id; a
/// server may answer `1.0` with `1`), and a string never equals a number.
///
/// ```
/// use mcp_unknown_keys::jsonrpc::Id;
/// use serde_json::value::RawValue;
///
/// let id = |text: &str| Id::read(&RawValue::from_string(text.to_owned()).unwrap());
/// assert_eq!(id("1.0"), id("1"));
/// assert_eq!(id(r#""a\u0031""#), id(r#""a1""#));
/// assert_ne!(id("1"), id(r#""1""#));
/// assert_eq!(id("null"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// A string id, decoded.
    Text(String),
    /// A numeric id, by value.
    Number(Decimal),
}

/// A JSON number's exact value: `digits × 10^exponent`, with no leading or
/// trailing zero in `digits` (zero is no digits, of either sign). No float
/// rounding: ids that differ in their 20th digit are told apart. It keeps
/// the text it was read from, to show as written (`7.0`), which plays no
/// part in comparing it.
#[derive(Clone, Debug)]
pub struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
    written: Box<str>,
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Decimal) -> bool {
        (self.negative, &self.digits, self.exponent) == (other.negative, &other.digits, other.exponent)
    }
}

impl Eq for Decimal {}

impl std::hash::Hash for Decimal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.negative, &self.digits, self.exponent).hash(state);
    }
}

impl Id {
    /// Reads an id: a string or a number; `None` for any other value.
    pub fn read(raw: &RawValue) -> Option<Id> {
        let text = raw.get().trim();
        match text.as_bytes().first()? {
            b'"' => string(raw).map(|text| Id::Text(text.into_owned())),
            b'-' | b'0'..=b'9' => Decimal::parse(text).map(Id::Number),
            _ => None,
        }
    }

    /// The id a parsed value holds, as [`Id::read`] reads its JSON text: a
    /// call's `id` as [`Message::Call`](super::Message::Call) gives it, to
    /// match the response that answers it.
    ///
    /// ```
    /// use mcp_unknown_keys::jsonrpc::Id;
    /// use serde_json::json;
    ///
    /// assert_eq!(Id::of(&json!(2.0)), Id::of(&json!(2)));
    /// assert_eq!(Id::of(&json!("a")), Some(Id::Text("a".into())));
    /// assert_eq!(Id::of(&json!(null)), None);
    /// ```
    pub fn of(value: &Value) -> Option<Id> {
        match value {
            Value::String(text) => Some(Id::Text(text.clone())),
            Value::Number(number) => Decimal::parse(&number.to_string()).map(Id::Number),
            _ => None,
        }
    }

    /// The id as a JSON value, for a [`Call`](crate::audit::Call)'s `id`:
    /// a string as a string, a number as a number when a JSON number value
    /// holds its value exactly (written as serde_json writes it: `1.50`
    /// becomes `1.5`, the same id), and otherwise as a string of the number
    /// as written (`12345678901234567890123`, which a float would round), so
    /// that [`id_text`](crate::id_text) never gives another id's text.
    ///
    /// ```
    /// use mcp_unknown_keys::id_text;
    /// use mcp_unknown_keys::jsonrpc::Id;
    /// use serde_json::value::RawValue;
    ///
    /// let id = |text: &str| Id::read(&RawValue::from_string(text.to_owned()).unwrap()).unwrap();
    /// assert_eq!(id("7").to_value(), 7);
    /// assert_eq!(id_text(Some(&id("12345678901234567890123").to_value())), "12345678901234567890123");
    /// ```
    pub fn to_value(&self) -> Value {
        match self {
            Id::Text(text) => Value::String(text.clone()),
            Id::Number(number) => {
                // Most ids are integers a JSON number holds as written;
                // `-0` is not one: serde_json reads it as the float -0.0.
                if &*number.written != "-0"
                    && let Ok(integer) = number.written.parse::<i64>()
                {
                    return Value::from(integer);
                }
                let text = number.to_string();
                match serde_json::from_str::<Value>(&text) {
                    Ok(value) if Id::of(&value).as_ref() == Some(self) => value,
                    _ => Value::String(text),
                }
            }
        }
    }
}

/// A string id as its text, a number as it was written.
impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Text(text) => f.write_str(text),
            Id::Number(number) => number.fmt(f),
        }
    }
}

/// The number as it was written.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

impl Decimal {
    /// Reads a JSON number's text, exactly.
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
            Some(at) => (&unsigned[..at], parse_exponent(&unsigned[at + 1..])?),
            None => (unsigned, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Most ids are whole numbers: their digits are borrowed, not copied.
        let all: std::borrow::Cow<'_, str> = match fraction {
            "" => whole.into(),
            fraction => format!("{whole}{fraction}").into(),
        };
        let significant = all.trim_start_matches('0');
        let digits = significant.trim_end_matches('0');
        let dropped = (significant.len() - digits.len()) as i64;
        let exponent = exponent
            .saturating_sub(fraction.len() as i64)
            .saturating_add(dropped);
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits: String::new(),
                exponent: 0,
                written: text.into(),
            });
        }
        Some(Decimal {
            negative,
            digits: digits.to_owned(),
            exponent,
            written: text.into(),
        })
    }
}

/// An exponent's value, saturating: beyond ±2^63 no id is told apart.
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = digits.bytes().fold(0i64, |value, digit| {
        value.saturating_mul(10).saturating_add(i64::from(digit - b'0'))
    });
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_s_value_is_what_serde_json_reads_from_its_text_when_that_is_the_same_id() {
        let read_back = |id: &Id| {
            let text = id.to_string();
            match serde_json::from_str::<Value>(&text) {
                Ok(value) if Id::of(&value).as_ref() == Some(id) => value,
                _ => Value::String(text),
            }
        };
        for text in [
            "7",
            "0",
            "-0",
            "-3",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551615",
            "12345678901234567890123",
            "1.50",
            "-0.0",
            "1e2",
            r#""7""#,
        ] {
            let id = id(text);
            let value = id.to_value();
            assert_eq!(value, read_back(&id), "{text}");
            assert_eq!(
                crate::id_text(Some(&value)),
                crate::id_text(Some(&read_back(&id))),
                "{text}"
            );
        }
    }

    fn id(text: &str) -> Id {
        Id::read(&RawValue::from_string(text.to_owned()).unwrap()).unwrap()
    }

    #[test]
    fn numeric_ids_are_equal_by_value_and_strings_by_decoded_text() {
        for same in ["1", "1.0", "1e0", "10e-1", "0.1e1", "1.000", "100e-2", "1E+0"] {
            assert_eq!(id(same), id("1"), "{same}");
        }
        assert_eq!(id("0"), id("-0.0"));
        assert_eq!(id("120"), id("1.2e2"));
        assert_ne!(id("1"), id("10"));
        assert_ne!(id("1"), id("-1"));
        assert_ne!(id("1"), id("1.5"));
        assert_ne!(id("1"), id(r#""1""#));
        assert_eq!(id(r#""a\u0031""#), id(r#""a1""#));
        assert_ne!(id("12345678901234567890123"), id("12345678901234567890124"));
        assert_eq!(Id::read(&RawValue::from_string("null".into()).unwrap()), None);
    }

    #[test]
    fn an_id_is_shown_as_written_and_compared_by_value() {
        for written in [
            "12345678901234567890123",
            "-1.50",
            "0.0012",
            "12e2",
            "-0",
            "1e999",
            "7.0",
        ] {
            assert_eq!(id(written).to_string(), written);
            let value = id(written).to_value();
            assert!(
                Id::of(&value) == Some(id(written)) || value == written,
                "{written} as {value}"
            );
        }
        // Shown as a call's id: exactly, where a float would round.
        for written in ["12345678901234567890123", "7.0", "7"] {
            assert_eq!(crate::id_text(Some(&id(written).to_value())), written);
        }
        assert_eq!(id("7.0"), id("7"));
    }
}
