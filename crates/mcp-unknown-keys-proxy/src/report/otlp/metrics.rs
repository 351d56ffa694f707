//! The counter `mcp_unknown_keys.tool.calls`: MCP `tools/call` requests
//! whose arguments carried keys the tool's schema does not declare, by
//! tool, cause and verdict, as an OTLP/JSON cumulative monotonic sum
//! (`/v1/metrics`).
//!
//! Never labelled by key: keys are the model's text, without bound. The
//! labels are `gen_ai.tool.name` (a listed tool), `mcp_unknown_keys.cause`
//! (a [`Cause`] name, or `nested` for an undeclared nested key),
//! `mcp_unknown_keys.verdict` (`ignored`, `rejected`, `unanswered`) and the
//! resource's `mcp_unknown_keys.server`. A call whose keys have several
//! causes is counted once under each. Past [`MAX_SERIES`] label sets, a new
//! tool is counted as `_OTHER`; past [`MAX_CAUSES_KEPT`] (tool, key) pairs,
//! the cause of a key not seen before is `undiagnosed`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mcp_unknown_keys::audit::{Cause, Judged, Warning};
use serde_json::{Value, json};

use super::encode::{NESTED, attribute, scope, string, unix_nanos};

/// The metric's name.
pub(crate) const METRIC: &str = "mcp_unknown_keys.tool.calls";

/// The most label sets counted.
pub(crate) const MAX_SERIES: usize = 1000;

/// The most (tool, key) pairs whose cause is remembered for the calls that
/// carry them again.
pub(crate) const MAX_CAUSES_KEPT: usize = 65_536;

/// One label set.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Series {
    tool: String,
    cause: &'static str,
    verdict: &'static str,
}

/// The running counts of one run.
#[derive(Debug)]
pub(crate) struct CallCounter {
    causes: HashMap<(String, String), Cause>,
    series: BTreeMap<Series, u64>,
    start: String,
    /// Counted since the last export.
    changed: bool,
}

impl Default for CallCounter {
    fn default() -> Self {
        CallCounter {
            causes: HashMap::new(),
            series: BTreeMap::new(),
            start: unix_nanos(),
            changed: false,
        }
    }
}

impl CallCounter {
    /// Remembers the cause of each key a warning says for the first time.
    pub(crate) fn warned(&mut self, warning: &Warning) {
        for hint in &warning.hints {
            if self.causes.len() >= MAX_CAUSES_KEPT {
                return;
            }
            self.causes
                .insert((warning.tool.clone(), hint.key.clone()), hint.cause);
        }
    }

    /// Counts a call that carried undeclared keys, once its verdict is in.
    pub(crate) fn judged(&mut self, judged: &Judged) {
        let mut causes: BTreeSet<&'static str> = judged
            .unknown_keys
            .iter()
            .map(|key| {
                self.causes
                    .get(&(judged.tool.clone(), key.clone()))
                    .map_or(Cause::Undiagnosed.as_str(), |cause| cause.as_str())
            })
            .collect();
        if !judged.unknown_paths.is_empty() {
            causes.insert(NESTED);
        }
        for cause in causes {
            let mut series = Series {
                tool: judged.tool.clone(),
                cause,
                verdict: judged.verdict.as_str(),
            };
            if !self.series.contains_key(&series) && self.series.len() >= MAX_SERIES {
                series.tool = "_OTHER".to_owned();
            }
            *self.series.entry(series).or_default() += 1;
            self.changed = true;
        }
    }

    /// The body of a `/v1/metrics` request with every count so far, when
    /// something was counted since the last one.
    pub(crate) fn export(&mut self, resource: &Value) -> Option<Value> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        let now = unix_nanos();
        let points: Vec<Value> = self
            .series
            .iter()
            .map(|(series, count)| {
                json!({
                    "attributes": [
                        attribute("gen_ai.tool.name", string(&series.tool)),
                        attribute("mcp_unknown_keys.cause", string(series.cause)),
                        attribute("mcp_unknown_keys.verdict", string(series.verdict)),
                    ],
                    "startTimeUnixNano": self.start,
                    "timeUnixNano": now,
                    "asInt": count.to_string(),
                })
            })
            .collect();
        Some(json!({"resourceMetrics": [{
            "resource": resource,
            "scopeMetrics": [{"scope": scope(), "metrics": [{
                "name": METRIC,
                "unit": "{call}",
                "description": "MCP tools/call requests whose arguments carried keys the tool's input schema does not declare",
                // AGGREGATION_TEMPORALITY_CUMULATIVE
                "sum": {"dataPoints": points, "aggregationTemporality": 2, "isMonotonic": true},
            }]}],
        }]}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(tool: &str, keys: &[&str]) -> Judged {
        serde_json::from_value(json!({"verdict": "ignored", "tool": tool, "id": "1", "unknown_keys": keys}))
            .unwrap()
    }

    fn tools(counter: &CallCounter) -> BTreeSet<&str> {
        counter.series.keys().map(|series| series.tool.as_str()).collect()
    }

    #[test]
    fn label_sets_are_bounded_and_keys_never_label() {
        let mut counter = CallCounter::default();
        for i in 0..MAX_SERIES + 10 {
            counter.judged(&judged(&format!("tool_{i}"), &["k"]));
        }
        assert_eq!(counter.series.len(), MAX_SERIES + 1);
        assert!(tools(&counter).contains("_OTHER"));
        let body = counter.export(&json!({})).unwrap().to_string();
        assert!(!body.contains("\"k\""), "no key is a label");
        assert!(counter.export(&json!({})).is_none(), "nothing new counted");
    }
}
