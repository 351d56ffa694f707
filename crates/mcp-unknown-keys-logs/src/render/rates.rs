//! The rates `--by` asks for, as the text report's table: one row per
//! group, highest rate first.

use std::io::{self, Write};

use crate::groups::{Dimension, Group};
use crate::report::Report;
use mcp_unknown_keys::audit::Printable;

/// The widest a value's column grows, in characters: a longer name is cut.
const MAX_COLUMN: usize = 40;

/// The most keys named in a row.
const TOP_KEYS: usize = 3;

/// Writes the table of the groups by `by`; nothing when `by` is empty.
pub(crate) fn write(report: &Report, by: &[Dimension], out: &mut impl Write) -> io::Result<()> {
    let Some(groups) = report.groups(by).filter(|_| !by.is_empty()) else {
        return Ok(());
    };
    let names: Vec<&str> = by.iter().map(|dimension| dimension.as_str()).collect();
    writeln!(
        out,
        "Rates by {} (calls with undeclared keys per 1000 audited)",
        names.join(", ")
    )?;
    if groups.is_empty() {
        return writeln!(out, "  no call found\n");
    }
    let cells: Vec<Vec<String>> = groups.iter().map(values).collect();
    let widths: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(at, name)| {
            let widest = cells.iter().map(|row| row[at].chars().count()).max().unwrap_or(0);
            widest.max(name.len())
        })
        .collect();
    let mut header = String::from(" ");
    for (name, width) in names.iter().zip(&widths) {
        header += &format!(" {name:<width$}");
    }
    header += "     calls   audited  with keys  per 1000  top keys";
    writeln!(out, "{header}")?;
    for (group, row) in groups.iter().zip(&cells) {
        let mut line = String::from(" ");
        for (value, width) in row.iter().zip(&widths) {
            line += &format!(" {value:<width$}");
        }
        let rate = match group.per_1000_audited() {
            Some(rate) => format!("{rate:.1}"),
            None => "-".to_owned(),
        };
        line += &format!(
            " {:>9} {:>9} {:>10} {rate:>9}  {}",
            group.calls,
            group.audited,
            group.calls_with_unknown_keys,
            top_keys(group)
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    if by.iter().any(|dimension| !dimension.is_one_per_call()) {
        writeln!(
            out,
            "  A call is counted under each key (or cause) it carried, and under (none) when it carried none."
        )?;
    }
    if groups.iter().any(|group| group.from_proxy_log) {
        writeln!(
            out,
            "  (proxy log): calls a proxy's log counted, which it does not say the keys of: no rate."
        )?;
    }
    writeln!(out)
}

/// A group's values, escaped and cut to [`MAX_COLUMN`].
fn values(group: &Group) -> Vec<String> {
    group
        .values
        .iter()
        .map(|(_, value)| {
            let shown = Printable(value).to_string();
            if shown.chars().count() <= MAX_COLUMN {
                shown
            } else {
                let cut: String = shown.chars().take(MAX_COLUMN - 1).collect();
                format!("{cut}…")
            }
        })
        .collect()
}

/// The keys most calls of the group carried, with their calls.
pub(crate) fn top_keys(group: &Group) -> String {
    let mut keys: Vec<(&String, &u64)> = group.unknown_keys.iter().collect();
    keys.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut shown: Vec<String> = keys
        .iter()
        .take(TOP_KEYS)
        .map(|(key, calls)| format!("{} ({calls})", Printable(key)))
        .collect();
    if keys.len() > TOP_KEYS {
        shown.push(format!("+{} more", keys.len() - TOP_KEYS));
    }
    shown.join(", ")
}
