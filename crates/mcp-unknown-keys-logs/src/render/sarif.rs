//! `--format sarif`: the report as SARIF 2.1.0, the format code scanning
//! reads (GitHub's `upload-sarif`). One rule per cause a key can have, one
//! result per undeclared (tool, key) pair, located at the input and line
//! of the first call that carried it, with its counts in `properties`.
//! Tested against the OASIS schema.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::html::meaning;
use super::sites::first_sites;
use crate::report::{Pair, Report};
use mcp_unknown_keys::audit::{Cause, Printable};

/// The most results one run holds: GitHub's code scanning refuses more.
const MAX_RESULTS: usize = 25_000;

/// The rule of a nested key, which is not diagnosed.
const NESTED: &str = "nested";

/// Writes the report as one SARIF log.
pub fn write(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let log = log_of(report);
    serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::other)?;
    writeln!(out)
}

fn log_of(report: &Report) -> Value {
    let rules: Vec<String> = Cause::ALL
        .iter()
        .map(|cause| cause.as_str().to_owned())
        .chain([NESTED.to_owned()])
        .collect();
    let sites = first_sites(report);
    let mut pairs = report.pairs();
    // Code scanning takes at most 25,000 results a run: the pairs carried
    // by the most calls are kept, the rest counted.
    pairs.sort_by_key(|pair| std::cmp::Reverse(pair.calls));
    let omitted = pairs.len().saturating_sub(MAX_RESULTS);
    pairs.truncate(MAX_RESULTS);
    let results: Vec<Value> = pairs
        .iter()
        .map(|pair| {
            let rule = rule_of(pair);
            let index = rules.iter().position(|id| id == rule).unwrap_or_default();
            let site = sites.get(&(pair.tool, pair.nested, pair.key));
            result(pair, rule, index, site.copied())
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-unknown-keys",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/mcp-unknown-keys/mcp-unknown-keys",
                "rules": rules.iter().map(|id| rule(id)).collect::<Vec<_>>(),
            }},
            "automationDetails": {"id": "mcp-unknown-keys/audit/"},
            "results": results,
            "properties": {"coverage": report.coverage, "resultsOmitted": omitted},
        }],
    })
}

fn rule_of<'a>(pair: &Pair<'a>) -> &'static str {
    match (pair.nested, pair.cause) {
        (true, _) => NESTED,
        (false, Some(cause)) => cause.as_str(),
        (false, None) => Cause::Undiagnosed.as_str(),
    }
}

fn rule(id: &str) -> Value {
    let why = match Cause::ALL.iter().find(|cause| cause.as_str() == id) {
        Some(cause) => meaning(*cause),
        None => "a key inside a declared object its schema does not declare",
    };
    json!({
        "id": id,
        "name": format!("UndeclaredArgumentKey/{id}"),
        "shortDescription": {"text": format!("A tool call carried an argument key its tool never declared: {why}")},
        "fullDescription": {"text": "An MCP tool call carried an argument key absent from the tool's input schema. \
    Servers drop such keys in silence, and the call does part of the job."},
        "help": {"text": "Fix the caller (the model's prompt, the host) or declare the key in the tool's inputSchema."},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["mcp", "tool-call", "schema"], "precision": "high"},
    })
}

fn result(pair: &Pair<'_>, rule: &str, index: usize, site: Option<&crate::Site>) -> Value {
    let calls = if pair.calls == 1 { "call" } else { "calls" };
    let what = if pair.nested { "nested key" } else { "key" };
    let mut result = json!({
        "ruleId": rule,
        "ruleIndex": index,
        "level": "warning",
        "message": {"text": format!(
            "{} was called with the undeclared {what} `{}` ({}) in {} {calls}",
            Printable(pair.tool), Printable(pair.key), rule, pair.calls
        )},
        "partialFingerprints": {"toolKey/v1": format!("{}\u{1f}{}\u{1f}{}", pair.tool, pair.nested, pair.key)},
        "properties": {
            "tool": pair.tool,
            "key": pair.key,
            "nested": pair.nested,
            "calls": pair.calls,
            "firstId": pair.first_id,
            "verdicts": pair.verdicts,
        },
    });
    if let Some(site) = site.filter(|site| site.input.as_ref() != "-") {
        let mut physical = json!({"artifactLocation": {"uri": uri(&site.input)}});
        if site.line > 0 {
            physical["region"] = json!({"startLine": site.line});
        }
        result["locations"] = json!([{"physicalLocation": physical}]);
    }
    result
}

/// A path as a URI reference: relative as given (code scanning resolves it
/// against the repository), `file://` for an absolute one; `/` between its
/// parts, and the characters a URI cannot hold percent-encoded.
fn uri(path: &str) -> String {
    let mut uri = String::new();
    if path.starts_with('/') {
        uri.push_str("file://");
    }
    for byte in path.replace('\\', "/").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}
