//! What the audit counted, and the readable report made of it.

use std::collections::BTreeMap;
use std::io::{self, Write};

use mcp_unknown_keys::audit::{Catalog, Cause, Coverage, Findings, Printable, Skip};

use super::logged::{LogCounts, Segment};
use super::names::Known;

/// The most unlisted tool names the report lists; the rest are counted.
const SHOWN_UNLISTED: usize = 25;

/// Everything the audit counts. Its size grows with the distinct (tool, key)
/// pairs and the tools listed, never with the number of lines read.
#[derive(Debug, Default)]
pub struct Tally {
    /// Lines read (or JSON documents, for an input that is not JSON Lines).
    pub lines: u64,
    /// Lines that were not JSON.
    pub not_json_lines: u64,
    /// Lines that were not UTF-8.
    pub not_utf8_lines: u64,
    /// JSON lines holding nothing the audit uses.
    pub idle_lines: u64,
    /// Catalogues read (`--tools`, complete listings in the input).
    pub catalogues: u64,
    /// Every call found, audited or unaudited for a named reason.
    pub coverage: Coverage,
    /// Every undeclared (tool, key) pair of the calls audited here.
    pub findings: Findings,
    /// What proxy logs recorded, counted in calls.
    pub logged: LogCounts,
    /// The proxy log being read.
    pub segment: Segment,
    /// Warning lines re-read from a proxy's `--log`.
    pub logged_warnings: u64,
    /// Warnings raised (each pair said once).
    pub warnings: u64,
    /// Tools listed as declaring nothing, with how many calls to them were
    /// therefore never audited.
    pub declares_nothing: BTreeMap<String, u64>,
    /// Every tool name met in a catalogue, for near matches.
    pub known: Known,
}

impl Tally {
    /// Notes a catalogue: its tools that declare nothing, and its names.
    pub fn listed(&mut self, catalog: &Catalog, server: Option<&str>) {
        self.catalogues += 1;
        self.known.learn(catalog, server);
        for (tool, declared) in catalog.iter() {
            if declared.is_empty() && !self.declares_nothing.contains_key(tool) {
                self.declares_nothing.insert(tool.to_owned(), 0);
            }
        }
    }

    /// The log being read ends.
    pub fn end_of_log(&mut self) {
        self.segment.end(&mut self.coverage, &mut self.logged);
    }
}

/// One undeclared pair, as the report lists it.
struct Row<'a> {
    tool: &'a str,
    key: &'a str,
    calls: u64,
    first_id: &'a str,
    cause: Option<Cause>,
    declared: &'a [String],
}

/// Writes the readable report: coverage first, then the findings per tool
/// and per cause, then the totals.
pub fn write_text(tally: &Tally, out: &mut impl Write) -> io::Result<()> {
    write_coverage(tally, out)?;
    let rows = rows(tally);
    write_findings_by_tool(tally, &rows, out)?;
    write_findings_by_cause(&rows, out)?;
    write_totals(tally, out)
}

/// The pairs of the calls audited here and of the logs re-read, merged.
fn rows(tally: &Tally) -> Vec<Row<'_>> {
    let mut rows: BTreeMap<(&str, &str), Row<'_>> = BTreeMap::new();
    for finding in tally.findings.iter() {
        rows.insert(
            (finding.tool, finding.key),
            Row {
                tool: finding.tool,
                key: finding.key,
                calls: finding.calls,
                first_id: finding.first_id,
                cause: finding.cause,
                declared: finding.declared_keys,
            },
        );
    }
    for ((tool, key), pair) in &tally.logged.pairs {
        let declared = tally.logged.declared.get(tool).map_or(&[][..], Vec::as_slice);
        match rows.get_mut(&(tool.as_str(), key.as_str())) {
            Some(row) => {
                row.calls += pair.calls;
                row.cause = row.cause.or(pair.cause);
            }
            None => {
                let row = Row {
                    tool,
                    key,
                    calls: pair.calls,
                    first_id: &pair.first_id,
                    cause: pair.cause,
                    declared,
                };
                rows.insert((tool, key), row);
            }
        }
    }
    rows.into_values().collect()
}

fn write_coverage(tally: &Tally, out: &mut impl Write) -> io::Result<()> {
    let coverage = &tally.coverage;
    writeln!(out, "Coverage: {coverage}")?;
    for (skip, calls) in &coverage.unaudited {
        writeln!(out, "  {:<22} {calls:>8}  {}", skip.as_str(), why(*skip))?;
    }
    writeln!(out)?;
    if coverage.unlisted_tools.is_empty() {
        return Ok(());
    }
    writeln!(out, "Tools in no catalogue")?;
    let mut unlisted: Vec<(&String, &u64)> = coverage.unlisted_tools.iter().collect();
    unlisted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (tool, calls) in unlisted.iter().take(SHOWN_UNLISTED) {
        // The note's names are escaped where it is made.
        let note = tally
            .known
            .note(tool)
            .map(|note| format!("  {note}"))
            .unwrap_or_default();
        let row = format!(
            "  {:<30} {:>8} {:<5}{note}",
            Printable(tool).to_string(),
            calls,
            plural(**calls, "call", "calls"),
        );
        writeln!(out, "{}", row.trim_end())?;
    }
    if unlisted.len() > SHOWN_UNLISTED {
        writeln!(
            out,
            "  … and {} more tool name(s)",
            unlisted.len() - SHOWN_UNLISTED
        )?;
    }
    writeln!(out)
}

/// What a reason means, and what to do about it.
fn why(skip: Skip) -> &'static str {
    match skip {
        Skip::NoCatalogue => "no catalogue was known: give the tools' schemas with --tools FILE",
        Skip::UnlistedTool => "the tool is in no catalogue given (listed below)",
        Skip::DeclaresNothing => "the tool declares no property: no key can be told undeclared",
        Skip::UnreadableArguments => "the arguments are absent or not a JSON object",
    }
}

fn write_findings_by_tool(tally: &Tally, rows: &[Row<'_>], out: &mut impl Write) -> io::Result<()> {
    let coverage = &tally.coverage;
    if rows.is_empty() {
        // Never "no undeclared keys" of calls that were not looked at.
        if coverage.calls == 0 {
            writeln!(out, "No tool calls found: nothing was audited.\n")?;
        } else if coverage.is_complete() {
            writeln!(
                out,
                "No undeclared keys in {} audited call(s).\n",
                coverage.audited
            )?;
        } else {
            writeln!(
                out,
                "Nothing undeclared in the {} call(s) audited, but {} of {} call(s) could not be audited (see Coverage).\n",
                coverage.audited,
                coverage.unaudited_calls(),
                coverage.calls,
            )?;
        }
        return Ok(());
    }
    let tools = rows
        .iter()
        .map(|row| row.tool)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    writeln!(out, "Undeclared keys: {} on {} tool(s)\n", rows.len(), tools)?;
    let mut current = None;
    for row in rows {
        if current != Some(row.tool) {
            current = Some(row.tool);
            writeln!(out, "{}  (declares {})", Printable(row.tool), list(row.declared))?;
        }
        writeln!(
            out,
            "  {:<24} {:>8} {:<5}  first call {}",
            Printable(row.key).to_string(),
            row.calls,
            plural(row.calls, "call", "calls"),
            shown_id(row.first_id),
        )?;
    }
    writeln!(out)
}

/// The same findings grouped by their diagnosed cause, in the order the
/// causes are checked.
fn write_findings_by_cause(rows: &[Row<'_>], out: &mut impl Write) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "By cause")?;
    let causes = Cause::ALL.map(Some).into_iter().chain([None]);
    for cause in causes {
        let group: Vec<&Row<'_>> = rows.iter().filter(|row| row.cause == cause).collect();
        if group.is_empty() {
            continue;
        }
        let calls: u64 = group.iter().map(|row| row.calls).sum();
        let name = cause.map_or("not diagnosed", Cause::as_str);
        writeln!(
            out,
            "  {name:<14} {:>4} key(s) {:>8} {}",
            group.len(),
            calls,
            plural(calls, "call", "calls")
        )?;
        for row in group {
            writeln!(out, "    {} {}", Printable(row.tool), Printable(row.key))?;
        }
    }
    writeln!(out)
}

fn write_totals(tally: &Tally, out: &mut impl Write) -> io::Result<()> {
    let coverage = &tally.coverage;
    let unaudited = |skip| coverage.unaudited.get(&skip).copied().unwrap_or(0);
    let rows = [
        ("lines read", tally.lines),
        ("lines not JSON", tally.not_json_lines),
        ("lines not UTF-8", tally.not_utf8_lines),
        ("lines with no call or catalogue", tally.idle_lines),
        ("catalogues read", tally.catalogues),
        ("calls read", coverage.calls),
        ("calls audited", coverage.audited),
        ("calls unaudited", coverage.unaudited_calls()),
        ("  no_catalogue", unaudited(Skip::NoCatalogue)),
        ("  unlisted_tool", unaudited(Skip::UnlistedTool)),
        ("  declares_nothing", unaudited(Skip::DeclaresNothing)),
        ("  unreadable_arguments", unaudited(Skip::UnreadableArguments)),
        ("warnings re-read from a log", tally.logged_warnings),
        ("warnings raised", tally.warnings),
    ];
    writeln!(out, "Totals")?;
    for (label, count) in rows {
        writeln!(out, "  {label:<32} {count:>10}")?;
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
