//! What the audit counted, and the readable report made of it.

use std::collections::BTreeMap;
use std::io::{self, Write};

use mcp_unknown_keys::audit::{Catalog, Cause, Finding, Findings, Printable, Skip};

/// Everything the audit counts. Its size grows with the distinct (tool, key)
/// pairs and the tools listed, never with the number of lines read.
#[derive(Debug, Default)]
pub struct Tally {
    /// Non-blank lines read.
    pub lines: u64,
    /// Lines that were not JSON.
    pub unreadable_lines: u64,
    /// JSON lines of no shape the audit knows.
    pub skipped_lines: u64,
    /// Catalogues read (`--tools`, complete listings in the input).
    pub catalogues: u64,
    /// Calls found in the input.
    pub calls: u64,
    /// Calls audited against their tool's declaration.
    pub audited: u64,
    /// Calls not audited: tool not in the catalogue (or none known yet).
    pub skipped_unlisted: u64,
    /// Calls not audited: the tool declares nothing.
    pub skipped_declares_nothing: u64,
    /// Calls not audited: arguments absent or not a JSON object.
    pub skipped_not_an_object: u64,
    /// Warnings re-read from a proxy's `--log`.
    pub logged_warnings: u64,
    /// Warnings raised (each pair said once).
    pub warnings: u64,
    /// Every undeclared (tool, key) pair, with how many calls carried it.
    pub findings: Findings,
    /// Tools listed as declaring nothing, with how many calls to them were
    /// therefore never audited.
    pub declares_nothing: BTreeMap<String, u64>,
}

impl Tally {
    /// Counts a call that was not audited, and why.
    pub fn skipped(&mut self, tool: &str, skip: Skip) {
        match skip {
            Skip::NoCatalogue | Skip::UnlistedTool => self.skipped_unlisted += 1,
            Skip::UnreadableArguments => self.skipped_not_an_object += 1,
            Skip::DeclaresNothing => {
                self.skipped_declares_nothing += 1;
                if let Some(calls) = self.declares_nothing.get_mut(tool) {
                    *calls += 1;
                }
            }
        }
    }

    /// Notes the tools of a new catalogue that declare nothing.
    pub fn listed(&mut self, catalog: &Catalog) {
        self.catalogues += 1;
        for (tool, declared) in catalog.iter() {
            if declared.is_empty() && !self.declares_nothing.contains_key(tool) {
                self.declares_nothing.insert(tool.to_owned(), 0);
            }
        }
    }
}

/// Writes the readable report: the findings per tool, then per cause, then
/// the totals.
pub fn write_text(tally: &Tally, out: &mut impl Write) -> io::Result<()> {
    let findings: Vec<Finding<'_>> = tally.findings.iter().collect();
    write_findings_by_tool(&findings, tally.findings.tools(), out)?;
    write_findings_by_cause(&findings, out)?;
    write_totals(tally, out)
}

fn write_findings_by_tool(findings: &[Finding<'_>], tools: usize, out: &mut impl Write) -> io::Result<()> {
    if findings.is_empty() {
        return writeln!(out, "No undeclared keys.\n");
    }
    writeln!(out, "Undeclared keys: {} on {} tool(s)\n", findings.len(), tools)?;
    let mut current = None;
    for finding in findings {
        if current != Some(finding.tool) {
            current = Some(finding.tool);
            writeln!(
                out,
                "{}  (declares {})",
                Printable(finding.tool),
                list(finding.declared_keys)
            )?;
        }
        writeln!(
            out,
            "  {:<24} {:>8} {:<5}  first call {}",
            Printable(finding.key).to_string(),
            finding.calls,
            plural(finding.calls, "call", "calls"),
            shown_id(finding.first_id),
        )?;
    }
    writeln!(out)
}

/// The same findings grouped by their diagnosed cause, in the order the
/// causes are checked.
fn write_findings_by_cause(findings: &[Finding<'_>], out: &mut impl Write) -> io::Result<()> {
    if findings.is_empty() {
        return Ok(());
    }
    writeln!(out, "By cause")?;
    let causes = Cause::ALL.map(Some).into_iter().chain([None]);
    for cause in causes {
        let group: Vec<&Finding<'_>> = findings.iter().filter(|f| f.cause == cause).collect();
        if group.is_empty() {
            continue;
        }
        let calls: u64 = group.iter().map(|f| f.calls).sum();
        let name = cause.map_or("not diagnosed", Cause::as_str);
        writeln!(
            out,
            "  {name:<14} {:>4} key(s) {:>8} {}",
            group.len(),
            calls,
            plural(calls, "call", "calls")
        )?;
        for finding in group {
            writeln!(out, "    {} {}", Printable(finding.tool), Printable(finding.key))?;
        }
    }
    writeln!(out)
}

fn write_totals(tally: &Tally, out: &mut impl Write) -> io::Result<()> {
    let rows = [
        ("lines read", tally.lines),
        ("unreadable lines", tally.unreadable_lines),
        ("lines of no known shape", tally.skipped_lines),
        ("catalogues read", tally.catalogues),
        ("calls read", tally.calls),
        ("calls audited", tally.audited),
        ("calls skipped", tally.calls - tally.audited),
        ("  tool not listed", tally.skipped_unlisted),
        ("  tool declares nothing", tally.skipped_declares_nothing),
        ("  arguments not an object", tally.skipped_not_an_object),
        ("warnings re-read from a log", tally.logged_warnings),
        ("warnings raised", tally.warnings),
    ];
    writeln!(out, "Totals")?;
    for (label, count) in rows {
        writeln!(out, "  {label:<30} {count:>10}")?;
    }
    if !tally.declares_nothing.is_empty() {
        writeln!(out, "\nTools never audited because they declare nothing")?;
        for (tool, calls) in &tally.declares_nothing {
            writeln!(
                out,
                "  {:<30} {:>10} {}",
                Printable(tool).to_string(),
                calls,
                plural(*calls, "call", "calls")
            )?;
        }
    }
    Ok(())
}

fn list(keys: &[String]) -> String {
    if keys.is_empty() {
        return "none".to_owned();
    }
    keys.iter()
        .map(|k| Printable(k).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn shown_id(id: &str) -> String {
    if id.is_empty() {
        "(no id)".to_owned()
    } else {
        Printable(id).to_string()
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
