//! `--format markdown`: the report as GitHub-flavoured Markdown, short
//! enough for a CI step summary (`$GITHUB_STEP_SUMMARY` takes 1 MiB): the
//! coverage, the undeclared keys found most often, and the rates `--by`
//! asks for, each table capped and the rest counted.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::html::{escape, text};
use crate::groups::Dimension;
use crate::report::Report;

/// The most keys and groups a table shows.
const SHOWN_ROWS: usize = 30;

/// Writes the report as Markdown.
pub fn write(report: &Report, by: &[Dimension], out: &mut impl Write) -> io::Result<()> {
    let mut page = String::new();
    let _ = page_of(report, by, &mut page);
    out.write_all(page.as_bytes())
}

fn page_of(report: &Report, by: &[Dimension], page: &mut String) -> std::fmt::Result {
    let coverage = &report.coverage;
    writeln!(page, "### mcp-unknown-keys audit\n")?;
    writeln!(page, "**Coverage:** {}\n", escape(&coverage.to_string()))?;
    if !coverage.unaudited.is_empty() {
        writeln!(page, "| not audited because | calls |\n| --- | ---: |")?;
        for (skip, calls) in &coverage.unaudited {
            writeln!(page, "| `{skip}` | {calls} |")?;
        }
        page.push('\n');
    }
    let mut pairs = report.pairs();
    writeln!(
        page,
        "**Undeclared keys:** {} on {} call(s) audited\n",
        pairs.len(),
        coverage.audited
    )?;
    if !pairs.is_empty() {
        pairs.sort_by(|a, b| {
            b.calls
                .cmp(&a.calls)
                .then(a.tool.cmp(b.tool))
                .then(a.key.cmp(b.key))
        });
        writeln!(page, "| tool | key | cause | calls |\n| --- | --- | --- | ---: |")?;
        for pair in pairs.iter().take(SHOWN_ROWS) {
            let cause = pair
                .cause
                .map_or(if pair.nested { "nested" } else { "undiagnosed" }, |cause| {
                    cause.as_str()
                });
            writeln!(
                page,
                "| {} | {} | {cause} | {} |",
                code(pair.tool),
                code(pair.key),
                pair.calls
            )?;
        }
        more(page, pairs.len(), "key")?;
    }
    for grouping in by
        .iter()
        .map(std::slice::from_ref)
        .chain((by.len() > 1).then_some(by))
    {
        let Some(groups) = report.groups(grouping) else {
            continue;
        };
        let names: Vec<&str> = grouping.iter().map(|dimension| dimension.as_str()).collect();
        writeln!(
            page,
            "**Rates by {}** (calls with undeclared keys per 1000 audited)\n",
            names.join(", ")
        )?;
        let header: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        writeln!(
            page,
            "| {} | audited | with undeclared keys | per 1000 |",
            header.join(" | ")
        )?;
        writeln!(page, "|{} ---: | ---: | ---: |", " --- |".repeat(names.len()))?;
        for group in groups.iter().take(SHOWN_ROWS) {
            let values: Vec<String> = group.values.iter().map(|(_, value)| code(value)).collect();
            let rate = group
                .per_1000_audited()
                .map_or("—".to_owned(), |rate| format!("{rate:.1}"));
            writeln!(
                page,
                "| {} | {} | {} | {rate} |",
                values.join(" | "),
                group.audited,
                group.calls_with_unknown_keys
            )?;
        }
        more(page, groups.len(), "group")?;
    }
    Ok(())
}

fn more(page: &mut String, all: usize, what: &str) -> std::fmt::Result {
    if all > SHOWN_ROWS {
        writeln!(
            page,
            "\n… and {} more {what}(s): `--format jsonl` lists them all.",
            all - SHOWN_ROWS
        )?;
    }
    page.push('\n');
    Ok(())
}

/// A name as a table cell: printable, escaped as HTML (GitHub renders
/// `<code>` in a cell; a backtick in a name would end a code span), and
/// with `|`, which ends a cell, written as an entity.
fn code(name: &str) -> String {
    format!("<code>{}</code>", cell(name))
}

fn cell(value: &str) -> String {
    text(value).replace('|', "&#124;")
}
