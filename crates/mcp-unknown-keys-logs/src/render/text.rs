//! The readable report (`--format text`): coverage first, then the findings
//! per tool and per cause, then the totals.

use std::collections::BTreeSet;
use std::io::{self, Write};

use crate::groups::Dimension;
use crate::report::{Pair, Report};
use mcp_unknown_keys::audit::{Cause, Printable, Skip, Verdict};

use mcp_unknown_keys::audit::verdicts_text;

/// The most unlisted tool names the report lists; the rest are counted.
const SHOWN_UNLISTED: usize = 25;

/// Writes the readable report, with the rates of the groups by `by` when
/// it names any.
pub fn write(report: &Report, by: &[Dimension], out: &mut impl Write) -> io::Result<()> {
    write_coverage(report, out)?;
    let pairs = report.pairs();
    write_findings_by_tool(report, &pairs, out)?;
    write_findings_by_cause(&pairs, out)?;
    super::rates::write(report, by, out)?;
    write_totals(report, out)
}

fn write_coverage(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let coverage = &report.coverage;
    let cut = report.lines.records_cut();
    if coverage.calls == 0 && cut > 0 {
        writeln!(
            out,
            "Coverage: no tool call read; {cut} record(s) could not be read whole and may hold calls"
        )?;
    } else {
        writeln!(out, "Coverage: {coverage}")?;
    }
    if report.incomplete_inputs > 0 {
        writeln!(
            out,
            "  {} input(s) read only in part (cut short, or failing partway): calls past the cut are missing",
            report.incomplete_inputs
        )?;
    }
    for (skip, calls) in &coverage.unaudited {
        writeln!(out, "  {:<22} {calls:>8}  {}", skip.as_str(), why(*skip))?;
    }
    if cut > 0 {
        writeln!(
            out,
            "  {cut} record(s) too long or nested too deep to read whole: they may hold calls not counted here"
        )?;
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
        let note = report
            .near_match(tool)
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
pub(crate) fn why(skip: Skip) -> &'static str {
    match skip {
        Skip::NoCatalogue => "no catalogue was known: give the tools' schemas with --tools FILE",
        Skip::UnlistedTool => "the tool is in no catalogue given (listed below)",
        Skip::DeclaresNothing => "the tool declares no property: no key can be told undeclared",
        Skip::UnreadableArguments => "the arguments are absent or not a JSON object",
    }
}

fn write_findings_by_tool(report: &Report, pairs: &[Pair<'_>], out: &mut impl Write) -> io::Result<()> {
    let coverage = &report.coverage;
    if pairs.is_empty() {
        // Never "no undeclared keys" of calls that were not looked at.
        let cut = report.lines.records_cut();
        if coverage.calls == 0 && cut > 0 {
            // Never "0 tool calls found" of records that were not read.
            writeln!(
                out,
                "No tool call read, but {cut} record(s) could not be read whole and may hold calls (see Coverage).\n"
            )?;
        } else if coverage.calls == 0 {
            writeln!(out, "0 tool calls found: nothing was audited.\n")?;
        } else if coverage.is_complete() && cut == 0 {
            writeln!(
                out,
                "No undeclared keys in {} audited call(s).\n",
                coverage.audited
            )?;
        } else if coverage.is_complete() {
            writeln!(
                out,
                "No undeclared keys in {} audited call(s), but {cut} record(s) could not be read whole and may hold more (see Coverage).\n",
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
    let tools = pairs.iter().map(|pair| pair.tool).collect::<BTreeSet<_>>().len();
    let nested = pairs.iter().filter(|pair| pair.nested).count();
    let of_them = match nested {
        0 => String::new(),
        n => format!(" ({n} of them nested)"),
    };
    writeln!(
        out,
        "Undeclared keys: {} on {} tool(s){of_them}\n",
        pairs.len(),
        tools
    )?;
    let mut current = None;
    for pair in pairs {
        if current != Some((pair.tool, pair.nested)) {
            if current.is_none_or(|(tool, _)| tool != pair.tool) {
                writeln!(
                    out,
                    "{}  (declares {})",
                    Printable(pair.tool),
                    list(pair.declared_keys)
                )?;
            }
            if pair.nested {
                writeln!(out, "  nested keys")?;
            }
            current = Some((pair.tool, pair.nested));
        }
        let indent = if pair.nested { "    " } else { "  " };
        let width = if pair.nested { 22 } else { 24 };
        writeln!(
            out,
            "{indent}{:<width$} {:>8} {:<5}  first call {}{}",
            Printable(pair.key).to_string(),
            pair.calls,
            plural(pair.calls, "call", "calls"),
            shown_id(pair.first_id),
            verdicts_text(&pair.verdicts),
        )?;
    }
    writeln!(out)
}

/// The same findings grouped by their diagnosed cause, in the order the
/// causes are checked; nested keys, which are not diagnosed, apart.
fn write_findings_by_cause(pairs: &[Pair<'_>], out: &mut impl Write) -> io::Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    writeln!(out, "By cause")?;
    let causes = Cause::ALL.map(|cause| (Some(cause), false));
    let groups = causes.into_iter().chain([(None, false), (None, true)]);
    for (cause, nested) in groups {
        let group: Vec<&Pair<'_>> = pairs
            .iter()
            .filter(|pair| pair.cause == cause && pair.nested == nested)
            .collect();
        if group.is_empty() {
            continue;
        }
        let calls = group
            .iter()
            .fold(0u64, |sum, pair| sum.saturating_add(pair.calls));
        let name = match (cause, nested) {
            (Some(cause), _) => cause.as_str(),
            (None, false) => "not diagnosed",
            (None, true) => "nested",
        };
        writeln!(
            out,
            "  {name:<14} {:>4} key(s) {:>8} {}",
            group.len(),
            calls,
            plural(calls, "call", "calls")
        )?;
        for pair in group {
            writeln!(out, "    {} {}", Printable(pair.tool), Printable(pair.key))?;
        }
    }
    writeln!(out)
}

fn write_totals(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let coverage = &report.coverage;
    let unaudited = |skip| coverage.unaudited.get(&skip).copied().unwrap_or(0);
    let judged = |verdict| report.verdicts.get(&verdict).copied().unwrap_or(0);
    let lines = report.lines;
    let rows = [
        ("lines read", lines.read),
        ("lines not JSON", lines.not_json),
        ("lines not UTF-8", lines.not_utf8),
        ("lines nested too deep", lines.too_deep),
        ("lines too long", lines.too_long),
        ("inputs read in part", report.incomplete_inputs),
        ("lines with no call or catalogue", lines.idle),
        ("catalogues read", report.catalogues),
        ("calls read", coverage.calls),
        ("calls audited", coverage.audited),
        ("calls unaudited", coverage.unaudited_calls()),
        ("  no_catalogue", unaudited(Skip::NoCatalogue)),
        ("  unlisted_tool", unaudited(Skip::UnlistedTool)),
        ("  declares_nothing", unaudited(Skip::DeclaresNothing)),
        ("  unreadable_arguments", unaudited(Skip::UnreadableArguments)),
        ("warnings re-read from a log", report.logged_warnings),
        ("warnings raised", report.warnings.len() as u64),
        ("calls judged", report.judged_calls()),
        ("  ignored", judged(Verdict::Ignored)),
        ("  rejected", judged(Verdict::Rejected)),
        ("  unanswered", judged(Verdict::Unanswered)),
        ("verdicts re-read from a log", report.logged_verdicts),
    ];
    writeln!(out, "Totals")?;
    for (label, count) in rows {
        writeln!(out, "  {label:<32} {count:>10}")?;
    }
    if !report.declares_nothing.is_empty() {
        writeln!(out, "\nTools never audited because they declare nothing")?;
        for (tool, calls) in &report.declares_nothing {
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

pub(crate) fn shown_id(id: &str) -> String {
    if id.is_empty() {
        "(no id)".to_owned()
    } else {
        Printable(id).to_string()
    }
}

pub(crate) fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
