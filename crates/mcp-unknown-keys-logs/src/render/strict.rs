//! The strict-readiness report (`audit --strict-preview`): what a server
//! that rejects undeclared keys would have refused, per tool, who wrote the
//! keys, and what to adopt first; as text, one JSON line, or an HTML page.

use std::fmt::Write as _;
use std::io::{self, Write};

use mcp_unknown_keys::audit::{Printable, verdicts_text};

use crate::strict::{Origin, StrictKey, StrictPreview, StrictTool};

use super::html::{escape, open_page, text as html_text};

/// The most tools listed with their keys; the rest are counted.
const SHOWN_TOOLS: usize = 200;
/// The most keys listed for one tool; the rest are counted.
const SHOWN_KEYS: usize = 20;
/// The most names of tools that would refuse nothing listed.
const SHOWN_CLEAN: usize = 25;

/// Writes the preview as one JSON line: `{"strict_preview":{…}}`.
pub fn write_json(preview: &StrictPreview, out: &mut impl Write) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        strict_preview: &'a StrictPreview,
    }
    let line = serde_json::to_string(&Line {
        strict_preview: preview,
    })
    .map_err(io::Error::other)?;
    writeln!(out, "{line}")
}

/// Writes what to adopt as JSON: `{"allow":[…],"aliases":{…}}`, pretty.
/// Characters past ASCII are written as `\uXXXX` escapes.
pub fn write_adopt(preview: &StrictPreview, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}", adopt_json(preview))
}

/// Writes the readable preview.
pub fn write_text(preview: &StrictPreview, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "Strict preview: {}", headline(preview))?;
    if preview.refused > 0 {
        writeln!(
            out,
            "  {} for keys the model wrote, {} only for keys a host added (allow those first)",
            preview.refused_for_model_keys, preview.refused_for_host_keys_only
        )?;
    }
    let (refusing, clean) = split(preview);
    for tool in refusing.iter().take(SHOWN_TOOLS) {
        writeln!(out)?;
        writeln!(out, "{}", tool_line(tool))?;
        for key in tool.keys.iter().take(SHOWN_KEYS) {
            writeln!(out, "  {}", key_line(key))?;
        }
        if tool.keys.len() > SHOWN_KEYS {
            writeln!(out, "  … and {} more key(s)", tool.keys.len() - SHOWN_KEYS)?;
        }
    }
    if refusing.len() > SHOWN_TOOLS {
        writeln!(out, "\n… and {} more tool(s)", refusing.len() - SHOWN_TOOLS)?;
    }
    if !clean.is_empty() {
        let names: Vec<String> = clean
            .iter()
            .take(SHOWN_CLEAN)
            .map(|tool| Printable(&tool.tool).to_string())
            .collect();
        let more = clean.len().saturating_sub(SHOWN_CLEAN);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        writeln!(
            out,
            "\n{} tool(s) would refuse none of their calls: {}{more}",
            clean.len(),
            names.join(", ")
        )?;
    }
    writeln!(out, "\nAdopt before going strict (what --adopt writes):")?;
    write_adopt(preview, out)
}

/// Writes the preview as one self-contained page.
pub fn write_html(preview: &StrictPreview, out: &mut impl Write) -> io::Result<()> {
    let mut page = String::new();
    page_of(preview, &mut page).expect("writing to a String cannot fail");
    out.write_all(page.as_bytes())
}

fn page_of(preview: &StrictPreview, page: &mut String) -> std::fmt::Result {
    open_page(page, "mcp-unknown-keys strict preview")?;
    page.push_str("<h1>Strict preview</h1>\n");
    writeln!(page, "<p>{}.</p>", escape(&headline(preview)))?;
    if preview.refused > 0 {
        writeln!(
            page,
            "<p>{} for keys the model wrote, {} only for keys a host added (allow those first).</p>",
            preview.refused_for_model_keys, preview.refused_for_host_keys_only
        )?;
    }
    let (refusing, clean) = split(preview);
    page.push_str(
        "<table><tr><th>server</th><th>tool</th><th>audited</th><th>refused</th><th>per 1000</th>\
<th>model keys</th><th>host keys only</th><th>answered today</th></tr>\n",
    );
    for tool in refusing.iter().take(SHOWN_TOOLS) {
        writeln!(
            page,
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
<td class=\"n\">{:.2}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            tool.server.as_deref().map(html_text).unwrap_or_default(),
            html_text(&tool.tool),
            tool.audited,
            tool.refused,
            tool.per_1000_audited,
            tool.model,
            tool.host_only,
            escape(verdicts_text(&tool.verdicts).trim_start_matches(" — ")),
        )?;
        let keys: Vec<String> = tool
            .keys
            .iter()
            .take(SHOWN_KEYS)
            .map(|key| format!("<li>{}</li>", escape(&key_line(key))))
            .collect();
        writeln!(
            page,
            "<tr><td></td><td colspan=\"7\"><ul>{}</ul></td></tr>",
            keys.join("")
        )?;
    }
    page.push_str("</table>\n");
    if refusing.len() > SHOWN_TOOLS {
        writeln!(
            page,
            "<p class=\"muted\">… and {} more tool(s).</p>",
            refusing.len() - SHOWN_TOOLS
        )?;
    }
    if !clean.is_empty() {
        writeln!(
            page,
            "<p class=\"ok\">{} tool(s) would refuse none of their calls.</p>",
            clean.len()
        )?;
    }
    page.push_str("<h2>Adopt before going strict</h2>\n<pre><code>");
    page.push_str(&escape(&adopt_json(preview)));
    page.push_str("</code></pre>\n</body></html>\n");
    Ok(())
}

/// `2 of 3 calls audited would have been refused (666.67 per 1000)`.
fn headline(preview: &StrictPreview) -> String {
    let rate = if preview.audited == 0 {
        0.0
    } else {
        preview.refused as f64 * 1000.0 / preview.audited as f64
    };
    format!(
        "a server that rejects undeclared keys would have refused {} of {} calls audited ({rate:.2} per 1000)",
        preview.refused, preview.audited
    )
}

/// The tools that would refuse calls, and those that would refuse none.
fn split(preview: &StrictPreview) -> (Vec<&StrictTool>, Vec<&StrictTool>) {
    preview.tools.iter().partition(|tool| tool.refused > 0)
}

/// `fs_read (server fs): 2 of 3 refused (666.67 per 1000); model keys 1, host keys only 1 — ignored 2`.
fn tool_line(tool: &StrictTool) -> String {
    let server = tool
        .server
        .as_deref()
        .map(|server| format!(" (server {})", Printable(server)))
        .unwrap_or_default();
    format!(
        "{}{server}: {} of {} refused ({:.2} per 1000); model keys {}, host keys only {}{}",
        Printable(&tool.tool),
        tool.refused,
        tool.audited,
        tool.per_1000_audited,
        tool.model,
        tool.host_only,
        verdicts_text(&tool.verdicts)
    )
}

/// `ffset: 1 call, model, truncated → offset`.
fn key_line(key: &StrictKey) -> String {
    let origin = match key.origin {
        Origin::Host => "host",
        Origin::Model => "model",
    };
    let cause = match (key.cause, key.nested) {
        (Some(cause), _) => format!(", {cause}"),
        (None, true) => ", nested".to_owned(),
        (None, false) => String::new(),
    };
    let suggestion = key
        .suggestion
        .as_deref()
        .map(|declared| format!(" → {}", Printable(declared)))
        .unwrap_or_default();
    let calls = if key.calls == 1 { "call" } else { "calls" };
    format!(
        "{}: {} {calls}, {origin}{cause}{suggestion}",
        Printable(&key.key),
        key.calls
    )
}

/// What to adopt, as pretty JSON whose every character past ASCII is
/// written `\uXXXX`: the keys come from models, and a key holding a
/// bidi override or a zero-width space must not rewrite a terminal's line
/// or hide in a file an author copies from. The JSON reads back the same.
fn adopt_json(preview: &StrictPreview) -> String {
    let text = serde_json::to_string_pretty(&preview.adopt).expect("an adopt is plain strings");
    let mut ascii = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(ascii, "\\u{unit:04x}");
            }
        }
    }
    ascii
}
