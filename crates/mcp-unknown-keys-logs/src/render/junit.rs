//! `--format junit`: the report as JUnit XML, which CI dashboards read as
//! test results. One test case per tool: failed when its calls carried
//! undeclared keys, skipped when its calls were not audited (with the
//! reason), passed otherwise; calls no tool can be named for (made before
//! any listing, or with unreadable arguments) are one skipped case per
//! reason. Tested against the JUnit schema pytest validates with.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::html;
use super::sites::first_sites;
use crate::groups::Dimension;
use crate::report::{Pair, Report};
use mcp_unknown_keys::audit::{Printable, Skip};

/// One test case, as written.
struct Case {
    tool: String,
    outcome: String,
}

/// Writes the report as one JUnit XML document.
pub fn write(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let (cases, failures, skipped) = cases(report);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"mcp-unknown-keys\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        cases.len()
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"mcp-unknown-keys audit\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
        cases.len()
    );
    for case in &cases {
        let _ = write!(
            xml,
            "    <testcase classname=\"mcp-unknown-keys\" name=\"{}\"",
            html::text(&case.tool)
        );
        if case.outcome.is_empty() {
            xml.push_str("/>\n");
        } else {
            let _ = writeln!(xml, ">\n      {}\n    </testcase>", case.outcome);
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    out.write_all(xml.as_bytes())
}

/// The cases, tools in name order, then the calls of no known tool; how
/// many failed and how many were skipped.
fn cases(report: &Report) -> (Vec<Case>, usize, usize) {
    let pairs = report.pairs();
    let sites = first_sites(report);
    let mut by_tool: BTreeMap<&str, Vec<&Pair<'_>>> = BTreeMap::new();
    for pair in &pairs {
        by_tool.entry(pair.tool).or_default().push(pair);
    }
    let mut tools: BTreeMap<String, String> = BTreeMap::new();
    // Calls that carried undeclared keys, per tool (a call carrying two
    // keys is one call).
    let mut flagged: BTreeMap<String, u64> = BTreeMap::new();
    for group in report.groups(&[Dimension::Tool]).unwrap_or_default() {
        if let Some((_, tool)) = group.values.first() {
            tools.entry(tool.clone()).or_default();
            flagged.insert(tool.clone(), group.calls_with_unknown_keys);
        }
    }
    for (tool, calls) in &report.coverage.unlisted_tools {
        tools.insert(tool.clone(), skipped(Skip::UnlistedTool, *calls));
    }
    for (tool, calls) in &report.declares_nothing {
        tools.insert(tool.clone(), skipped(Skip::DeclaresNothing, *calls));
    }
    for (tool, found) in &by_tool {
        let calls = match flagged.get(*tool) {
            Some(calls) if *calls > 0 => format!(" in {calls} call(s)"),
            _ => String::new(),
        };
        let mut detail = String::new();
        for pair in found {
            let site = sites
                .get(&(pair.tool, pair.nested, pair.key))
                .map(|site| format!(", first at {}:{}", site.input, site.line))
                .unwrap_or_default();
            let cause = pair
                .cause
                .map_or(if pair.nested { "nested" } else { "undiagnosed" }, |cause| {
                    cause.as_str()
                });
            let _ = writeln!(
                detail,
                "{} ({cause}): {} call(s){site}",
                Printable(pair.key),
                pair.calls
            );
        }
        let failure = format!(
            "<failure type=\"UndeclaredArgumentKey\" message=\"{} undeclared key(s){calls}\">{}</failure>",
            found.len(),
            html::escape(detail.trim_end())
        );
        tools.insert((*tool).to_owned(), failure);
    }
    let mut cases: Vec<Case> = tools
        .into_iter()
        .map(|(tool, outcome)| Case { tool, outcome })
        .collect();
    for skip in [Skip::NoCatalogue, Skip::UnreadableArguments] {
        if let Some(calls) = report.coverage.unaudited.get(&skip).filter(|calls| **calls > 0) {
            cases.push(Case {
                tool: format!("({skip})"),
                outcome: skipped(skip, *calls),
            });
        }
    }
    let failures = cases
        .iter()
        .filter(|case| case.outcome.starts_with("<failure"))
        .count();
    let skipped = cases
        .iter()
        .filter(|case| case.outcome.starts_with("<skipped"))
        .count();
    (cases, failures, skipped)
}

fn skipped(skip: Skip, calls: u64) -> String {
    let why = match skip {
        Skip::NoCatalogue => "no tools/list answer or catalogue for these calls",
        Skip::UnlistedTool => "not in any listing or catalogue given",
        Skip::DeclaresNothing => "its tool declares no argument and its schema is open",
        Skip::UnreadableArguments => "arguments that are not a JSON object",
    };
    format!("<skipped message=\"{skip}: {why} ({calls} call(s) not audited)\"/>")
}
