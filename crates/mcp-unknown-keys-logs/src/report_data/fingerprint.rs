//! What a report's audit was given, fingerprinted: reports merge only when
//! theirs agree, since the counts of audits against different catalogues,
//! different allowed keys, or of top-level keys alone against nested ones,
//! do not add up to the report of any one audit.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::options::{Options, Source};

/// The options of the audit a report was made by, as far as they change
/// what it counts: the catalogue (`tools`), the keys tolerated (`allow`),
/// `top_level_only`, and `no_missing`. Grouping (`by`) is told by the
/// report's own groupings.
///
/// The catalogue and the keys are fingerprinted (128-bit FNV-1a, the same
/// in every build and on every machine), so a report stays small whatever
/// it was given: a catalogue of declarations by their JSON (the order of
/// an object's members aside), a catalogue file by its bytes (what it
/// holds, not where it is); the keys as a set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fingerprint {
    /// The catalogues given, `None` when none was: the audit read only
    /// those the inputs hold.
    pub tools: Option<String>,
    /// The keys tolerated besides `reason`.
    pub allow: String,
    /// Whether nested keys went unread.
    pub top_level_only: bool,
    /// Whether required keys calls lacked went unchecked: written only
    /// when they did, so a report from before the check reads back as one
    /// that checked them (as its audit then did not, its counts hold no
    /// missing key to add up wrongly with).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_missing: bool,
}

impl Fingerprint {
    /// The fingerprint of `options`. A catalogue file that cannot be read
    /// (which the audit itself then refused) is fingerprinted by its path.
    ///
    /// ```
    /// use mcp_unknown_keys_logs::report_data::Fingerprint;
    /// use mcp_unknown_keys_logs::{Options, Tools};
    /// use serde_json::json;
    ///
    /// let tools = |schema| Options::default().tools(Tools::declarations("tools", vec![json!({"name": "f", "inputSchema": schema})]));
    /// let a = Fingerprint::of(&tools(json!({"type": "object", "properties": {"q": {}}})));
    /// let b = Fingerprint::of(&tools(json!({"properties": {"q": {}}, "type": "object"})));
    /// let c = Fingerprint::of(&tools(json!({"properties": {"r": {}}})));
    /// assert_eq!(a, b);
    /// assert_ne!(a.tools, c.tools);
    /// assert_eq!(a.allow, Fingerprint::of(&Options::default()).allow);
    /// assert_eq!(Fingerprint::of(&Options::default()).tools, None);
    /// ```
    pub fn of(options: &Options) -> Fingerprint {
        let tools = (!options.tools.is_empty()).then(|| {
            let mut hash = Fnv::new();
            for tools in &options.tools {
                hash.text(tools.server.as_deref().unwrap_or_default());
                match &tools.source {
                    Source::File(path) => match std::fs::read(path) {
                        Ok(bytes) => {
                            hash.tag(b'f');
                            hash.bytes(&bytes);
                        }
                        Err(_) => {
                            hash.tag(b'p');
                            hash.text(&path.to_string_lossy());
                        }
                    },
                    Source::Declarations { tools, .. } => {
                        hash.tag(b'd');
                        hash.count(tools.len());
                        for tool in tools {
                            hash.value(tool);
                        }
                    }
                }
            }
            hash.hex()
        });
        let mut allowed: Vec<&str> = options.allow.iter().map(String::as_str).collect();
        allowed.sort_unstable();
        allowed.dedup();
        let mut allow = Fnv::new();
        allow.count(allowed.len());
        for key in allowed {
            allow.text(key);
        }
        Fingerprint {
            tools,
            allow: allow.hex(),
            top_level_only: options.top_level_only,
            no_missing: options.no_missing,
        }
    }

    /// Which option differs from `other`'s, said for a user: `None` when
    /// they agree.
    pub fn differs_from(&self, other: &Fingerprint) -> Option<&'static str> {
        if self.tools != other.tools {
            Some("the catalogue (tools=)")
        } else if self.allow != other.allow {
            Some("the keys allowed (allow=)")
        } else if self.top_level_only != other.top_level_only {
            Some("top_level_only")
        } else if self.no_missing != other.no_missing {
            Some("no_missing")
        } else {
            None
        }
    }

    fn is_well_formed(&self) -> bool {
        let digits = |text: &str| text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit());
        digits(&self.allow) && self.tools.as_deref().is_none_or(digits)
    }
}

/// Read back, each fingerprint must be one this writes: 32 hexadecimal
/// digits (or `null` for no catalogue), and nothing else.
impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fingerprint, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Written {
            tools: Option<String>,
            allow: String,
            top_level_only: bool,
            #[serde(default)]
            no_missing: bool,
        }
        let written = Written::deserialize(deserializer)?;
        let fingerprint = Fingerprint {
            tools: written.tools,
            allow: written.allow,
            top_level_only: written.top_level_only,
            no_missing: written.no_missing,
        };
        if !fingerprint.is_well_formed() {
            return Err(serde::de::Error::custom(
                "options: a fingerprint is 32 hexadecimal digits",
            ));
        }
        Ok(fingerprint)
    }
}

/// FNV-1a, 128 bits, fed lengths before contents so that no two inputs
/// feed the same bytes.
struct Fnv(u128);

impl Fnv {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    fn new() -> Fnv {
        Fnv(Fnv::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.count(bytes.len());
        for &byte in bytes {
            self.0 = (self.0 ^ u128::from(byte)).wrapping_mul(Fnv::PRIME);
        }
    }

    fn tag(&mut self, tag: u8) {
        self.0 = (self.0 ^ u128::from(tag)).wrapping_mul(Fnv::PRIME);
    }

    fn count(&mut self, count: usize) {
        for byte in (count as u64).to_le_bytes() {
            self.tag(byte);
        }
    }

    fn text(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    /// A JSON value, an object's members in the order of their keys: walked
    /// with a stack of its own, however deep it nests.
    fn value(&mut self, value: &Value) {
        enum Step<'a> {
            Value(&'a Value),
            Key(&'a str),
        }
        let mut steps = vec![Step::Value(value)];
        while let Some(step) = steps.pop() {
            let value = match step {
                Step::Key(key) => {
                    self.text(key);
                    continue;
                }
                Step::Value(value) => value,
            };
            match value {
                Value::Null => self.tag(b'n'),
                Value::Bool(true) => self.tag(b't'),
                Value::Bool(false) => self.tag(b'f'),
                Value::Number(number) => {
                    self.tag(b'#');
                    self.text(&number.to_string());
                }
                Value::String(text) => {
                    self.tag(b's');
                    self.text(text);
                }
                Value::Array(items) => {
                    self.tag(b'[');
                    self.count(items.len());
                    steps.extend(items.iter().rev().map(Step::Value));
                }
                Value::Object(members) => {
                    self.tag(b'{');
                    self.count(members.len());
                    let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
                    sorted.sort_unstable_by_key(|(key, _)| *key);
                    for (key, value) in sorted.into_iter().rev() {
                        steps.push(Step::Value(value));
                        steps.push(Step::Key(key));
                    }
                }
            }
        }
    }

    fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tools;

    #[test]
    fn each_option_is_told_apart() {
        let base = Options::default();
        let of = Fingerprint::of;
        assert_eq!(of(&base), of(&Options::default()));
        let allowed = of(&base.clone().allow("b").allow("a"));
        assert_eq!(
            allowed,
            of(&base.clone().allow("a").allow("b").allow("a")),
            "a set of keys"
        );
        assert_eq!(
            allowed.differs_from(&of(&base)),
            Some("the keys allowed (allow=)")
        );
        assert_eq!(
            of(&base.clone().top_level_only(true)).differs_from(&of(&base)),
            Some("top_level_only")
        );
        let tools = of(&base
            .clone()
            .tools(Tools::declarations("t", vec![serde_json::json!({"name": "f"})])));
        assert_eq!(tools.differs_from(&of(&base)), Some("the catalogue (tools=)"));
        assert!(tools.is_well_formed() && allowed.is_well_formed());
    }

    #[test]
    fn a_catalogue_file_is_told_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, r#"[{"name": "f"}]"#).unwrap();
        std::fs::write(&b, r#"[{"name": "f"}]"#).unwrap();
        let of = |path: &std::path::Path| Fingerprint::of(&Options::default().tools(Tools::file(path)));
        assert_eq!(of(&a), of(&b));
        std::fs::write(&b, r#"[{"name": "g"}]"#).unwrap();
        assert_ne!(of(&a), of(&b));
        assert_ne!(of(&dir.path().join("missing.json")), of(&a));
    }

    #[test]
    fn deep_declarations_are_fingerprinted_without_recursion() {
        let mut deep = Value::Null;
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let options = Options::default().tools(Tools::declarations("t", vec![deep]));
        assert!(Fingerprint::of(&options).tools.is_some());
        // A value this deep drops recursively: leak it rather than overflow the test's stack.
        std::mem::forget(options);
    }
}
