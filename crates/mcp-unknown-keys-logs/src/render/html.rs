//! The report to look at (`--format html`): one self-contained page, no
//! script, no font, nothing fetched. The coverage, the rates by model and
//! by tool as bar charts (and the groups of `--by`), the undeclared keys
//! most calls carried with their causes and suggestions, and every warning
//! with its hints.
//!
//! Every name and key comes from a log, so from a model: each is escaped
//! for HTML (after [`Printable`] has made its control characters visible),
//! and the page's Content-Security-Policy forbids any script or fetch
//! besides, so a tool named `<img src=x onerror=alert(1)>` is text.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::groups::{Dimension, Group};
use crate::report::{Pair, Report};
use mcp_unknown_keys::audit::{Cause, Hint, Printable, Warning};

use super::text::{plural, shown_id, why};

/// The most groups a chart shows; the rest are counted below it.
const SHOWN_GROUPS: usize = 30;

/// The most undeclared keys the table of keys shows.
const SHOWN_KEYS: usize = 50;

/// The most warnings listed, and the most keys and hints shown of each:
/// a page that lists a million warnings (172 MB) is one no browser opens.
/// With names shown at most 64 characters, the page stays under 5 MB
/// whatever the report holds; the rest is counted.
const SHOWN_WARNINGS: usize = 300;
const SHOWN_PER_WARNING: usize = 20;

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1d1d1f;background:#fff}\
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #eee;vertical-align:top}\
th{background:#f5f5f7}td.n{text-align:right;font-variant-numeric:tabular-nums}code{font-family:ui-monospace,monospace;background:#f5f5f7;padding:0 .2em;border-radius:3px;word-break:break-all}\
.figures{display:flex;gap:1em;flex-wrap:wrap;margin-bottom:1em}.figure{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;min-width:9em}.figure b{display:block;font-size:1.6em}\
.bar{background:#f0f0f2;border-radius:3px;height:1.1em;min-width:12em}.bar span{display:block;height:100%;background:#d9480f;border-radius:3px}\
.warn{color:#b00020}.ok{color:#1b7f3b}.muted{color:#666}li{margin:.2em 0}";

/// Writes the page.
pub fn write(report: &Report, by: &[Dimension], out: &mut impl Write) -> io::Result<()> {
    let mut page = String::new();
    page_of(report, by, &mut page).expect("writing to a String cannot fail");
    out.write_all(page.as_bytes())
}

/// Opens a page titled `title`: its head, the style, and a
/// Content-Security-Policy that allows no script and no fetch.
pub(super) fn open_page(page: &mut String, title: &str) -> std::fmt::Result {
    write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    )
}

fn page_of(report: &Report, by: &[Dimension], page: &mut String) -> std::fmt::Result {
    open_page(page, "mcp-unknown-keys audit")?;
    page.push_str("<h1>Undeclared tool-call keys</h1>\n");
    page.push_str(
        "<p class=\"muted\">Keys the tools' schemas never declared, in the tool calls the logs hold \
(<code>mcp-unknown-keys audit</code>). Rates are calls carrying an undeclared key per 1000 audited calls.</p>\n",
    );
    coverage(report, page)?;
    for dimension in [Dimension::Model, Dimension::Tool] {
        let groups = report.groups(&[dimension]).unwrap_or_default();
        chart(&format!("Rates by {dimension}"), &groups, page)?;
    }
    let asked = !by.is_empty() && ![&[Dimension::Model][..], &[Dimension::Tool]].contains(&by);
    if asked {
        let names: Vec<&str> = by.iter().map(|dimension| dimension.as_str()).collect();
        let groups = report.groups(by).unwrap_or_default();
        chart(&format!("Rates by {}", names.join(", ")), &groups, page)?;
    }
    keys(report, &report.pairs(), page)?;
    warnings(&report.warnings, page)?;
    page.push_str("</body></html>\n");
    Ok(())
}

fn coverage(report: &Report, page: &mut String) -> std::fmt::Result {
    let coverage = &report.coverage;
    page.push_str("<h2>Coverage</h2>\n<div class=\"figures\">");
    let unaudited = coverage.unaudited_calls();
    let figures = [
        ("calls found", coverage.calls, ""),
        ("audited", coverage.audited, "ok"),
        ("unaudited", unaudited, if unaudited > 0 { "warn" } else { "" }),
        ("warnings", report.warnings.len() as u64, ""),
        ("undeclared keys", report.pairs().len() as u64, ""),
    ];
    for (label, count, class) in figures {
        write!(
            page,
            "<div class=\"figure\"><b class=\"{class}\">{count}</b>{label}</div>"
        )?;
    }
    page.push_str("</div>\n");
    if report.incomplete_inputs > 0 {
        writeln!(
            page,
            "<p class=\"warn\">{} input(s) read only in part (cut short, or failing partway): calls past the cut are missing.</p>",
            report.incomplete_inputs
        )?;
    }
    if !coverage.unaudited.is_empty() {
        page.push_str("<table><tr><th>not audited</th><th>calls</th><th>why</th></tr>\n");
        for (skip, calls) in &coverage.unaudited {
            writeln!(
                page,
                "<tr><td><code>{}</code></td><td class=\"n\">{calls}</td><td>{}</td></tr>",
                skip.as_str(),
                escape(why(*skip))
            )?;
        }
        page.push_str("</table>\n");
    }
    if !coverage.unlisted_tools.is_empty() {
        let mut unlisted: Vec<(&String, &u64)> = coverage.unlisted_tools.iter().collect();
        unlisted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        page.push_str("<p>Tools in no catalogue: ");
        let shown: Vec<String> = unlisted
            .iter()
            .take(SHOWN_GROUPS)
            .map(|(tool, calls)| format!("<code>{}</code> ({calls})", text(tool)))
            .collect();
        page.push_str(&shown.join(", "));
        if unlisted.len() > SHOWN_GROUPS {
            write!(page, " and {} more", unlisted.len() - SHOWN_GROUPS)?;
        }
        page.push_str("</p>\n");
    }
    Ok(())
}

/// A bar chart of the groups' rates, highest first.
fn chart(title: &str, groups: &[Group], page: &mut String) -> std::fmt::Result {
    writeln!(page, "<h2>{}</h2>", escape(title))?;
    if groups.is_empty() {
        page.push_str("<p class=\"muted\">No call found.</p>\n");
        return Ok(());
    }
    let highest = groups
        .iter()
        .filter_map(Group::per_1000_audited)
        .fold(0.0f64, f64::max);
    page.push_str(
        "<table><tr><th>group</th><th>rate</th><th>per 1000 audited</th><th>calls</th><th>audited</th><th>with undeclared keys</th></tr>\n",
    );
    for group in groups.iter().take(SHOWN_GROUPS) {
        let name: Vec<String> = group
            .values
            .iter()
            .map(|(_, value)| format!("<code>{}</code>", text(value)))
            .collect();
        let (rate, width) = match group.per_1000_audited() {
            Some(rate) if highest > 0.0 => (format!("{rate:.1}"), rate / highest * 100.0),
            Some(rate) => (format!("{rate:.1}"), 0.0),
            None => ("–".to_owned(), 0.0),
        };
        writeln!(
            page,
            "<tr><td>{}</td><td><div class=\"bar\"><span style=\"width:{width:.1}%\"></span></div></td>\
<td class=\"n\">{rate}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            name.join(" · "),
            group.calls,
            group.audited,
            group.calls_with_unknown_keys
        )?;
    }
    page.push_str("</table>\n");
    if groups.len() > SHOWN_GROUPS {
        writeln!(
            page,
            "<p class=\"muted\">… and {} more group(s).</p>",
            groups.len() - SHOWN_GROUPS
        )?;
    }
    Ok(())
}

/// The undeclared keys most calls carried, with their causes and what the
/// model probably meant.
fn keys(report: &Report, pairs: &[Pair<'_>], page: &mut String) -> std::fmt::Result {
    page.push_str("<h2>Undeclared keys</h2>\n");
    if pairs.is_empty() {
        page.push_str("<p class=\"muted\">None in the calls audited.</p>\n");
        return Ok(());
    }
    let mut sorted: Vec<&Pair<'_>> = pairs.iter().collect();
    sorted.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then(a.tool.cmp(b.tool))
            .then(a.key.cmp(b.key))
    });
    page.push_str(
        "<table><tr><th>tool</th><th>key</th><th>calls</th><th>cause</th><th>suggestion</th><th>first call</th></tr>\n",
    );
    for pair in sorted.iter().take(SHOWN_KEYS) {
        let hint = report
            .warnings
            .iter()
            .filter(|warning| warning.tool == pair.tool)
            .find_map(|warning| warning.hint(pair.key));
        let cause = match (pair.cause, pair.nested) {
            (Some(cause), _) => cause.as_str(),
            (None, true) => "nested",
            (None, false) => "not diagnosed",
        };
        writeln!(
            page,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td class=\"n\">{}</td><td>{cause}</td><td>{}</td><td>{}</td></tr>",
            text(pair.tool),
            text(pair.key),
            pair.calls,
            hint.map(suggestion).unwrap_or_default(),
            text(&shown_id(pair.first_id)),
        )?;
    }
    page.push_str("</table>\n");
    if sorted.len() > SHOWN_KEYS {
        writeln!(
            page,
            "<p class=\"muted\">… and {} more key(s).</p>",
            sorted.len() - SHOWN_KEYS
        )?;
    }
    Ok(())
}

/// Every warning, in order, with its hints.
fn warnings(warnings: &[Warning], page: &mut String) -> std::fmt::Result {
    write!(
        page,
        "<h2>Warnings</h2>\n<p class=\"muted\">{} warning(s): each undeclared key said once, at the first call that carried it.</p>\n<ol>\n",
        warnings.len()
    )?;
    for warning in warnings.iter().take(SHOWN_WARNINGS) {
        let all = warning.unknown_keys.len() + warning.unknown_paths.len();
        let keys: Vec<String> = warning
            .unknown_keys
            .iter()
            .chain(&warning.unknown_paths)
            .take(SHOWN_PER_WARNING)
            .map(|key| format!("<code>{}</code>", text(key)))
            .collect();
        write!(
            page,
            "<li><code>{}</code> was called with undeclared {} {}{} (call {})",
            text(&warning.tool),
            plural(all as u64, "key", "keys"),
            keys.join(", "),
            more(all, SHOWN_PER_WARNING),
            text(&shown_id(&warning.id)),
        )?;
        if !warning.hints.is_empty() {
            page.push_str("<ul>");
            for hint in warning.hints.iter().take(SHOWN_PER_WARNING) {
                write!(
                    page,
                    "<li><code>{}</code>: {} — {}{}</li>",
                    text(&hint.key),
                    hint.cause.as_str(),
                    escape(meaning(hint.cause)),
                    match suggestion(hint) {
                        shown if shown.is_empty() => String::new(),
                        shown => format!("; {shown}"),
                    }
                )?;
            }
            page.push_str("</ul>");
        }
        page.push_str("</li>\n");
    }
    page.push_str("</ol>\n");
    if warnings.len() > SHOWN_WARNINGS {
        writeln!(
            page,
            "<p class=\"muted\">… and {} more warning(s): <code>--format jsonl</code> lists them all.</p>",
            warnings.len() - SHOWN_WARNINGS
        )?;
    }
    Ok(())
}

/// ` … and N more` when `all` exceeds `shown`.
fn more(all: usize, shown: usize) -> String {
    match all.checked_sub(shown) {
        Some(left) if left > 0 => format!(" … and {left} more"),
        _ => String::new(),
    }
}

/// What a hint points to: the declared key meant, or the tool declaring it.
fn suggestion(hint: &Hint) -> String {
    match (&hint.suggestion, &hint.declared_by, hint.seen_on_tools) {
        (Some(key), _, _) => format!("did you mean <code>{}</code>?", text(key)),
        (None, Some(tool), _) => format!("declared by <code>{}</code>", text(tool)),
        (None, None, Some(tools)) => format!("seen undeclared on {tools} tools"),
        (None, None, None) => String::new(),
    }
}

/// What a cause means, in a few words.
pub(super) fn meaning(cause: Cause) -> &'static str {
    match cause {
        Cause::CaseVariant => "a declared key in another case",
        Cause::Plural => "the plural or singular of a declared key",
        Cause::Abbreviation => "a declared key shortened",
        Cause::Truncated => "a declared key cut short",
        Cause::NearMiss => "a typo of a declared key",
        Cause::Fragment => "a piece of text, not a key",
        Cause::OtherTool => "a key of another tool",
        Cause::Injected => "added by a host or middleware",
        Cause::Invented => "made up by the model",
        _ => "not diagnosed",
    }
}

/// A name from a log, made printable then escaped for HTML.
pub(super) fn text(value: &str) -> String {
    escape(&Printable(value).to_string())
}

/// `value` escaped for HTML text and attribute values.
pub(super) fn escape(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_of_any_number_of_warnings_stays_small_and_counts_the_rest() {
        let long = |n: usize| format!("{n}{}", "k".repeat(200));
        let warnings: Vec<Warning> = (0..400)
            .map(|n| {
                let keys: Vec<String> = (0..100).map(|k| long(n * 1_000 + k)).collect();
                let mut warning = Warning::new(long(n), keys, (0..50).map(long).collect(), n.to_string());
                warning.unknown_paths = (0..100).map(|k| format!("o.{}", long(k))).collect();
                warning
            })
            .collect();
        let mut page = String::new();
        super::warnings(&warnings, &mut page).unwrap();
        // What the cap allows at most: 300 warnings of 40 names of 64
        // characters (each escaped at most 6 bytes a character).
        assert!(page.len() < 5 << 20, "{} bytes", page.len());
        assert!(page.contains("… and 100 more warning(s)"));
        assert!(page.contains(" … and 180 more"));
    }

    #[test]
    fn markup_in_a_name_is_text() {
        assert_eq!(
            text("<img src=x onerror=alert(1)>"),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(text("a\"b'c&d"), "a&quot;b&#39;c&amp;d");
        assert_eq!(text("line\nbreak"), "line\\nbreak");
    }
}
