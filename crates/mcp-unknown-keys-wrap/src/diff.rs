//! The unified diff `--dry-run` prints. The edits already say which bytes
//! change, so no general diff algorithm is needed: each edit's lines become
//! a change, and changes close together share a hunk with three lines of
//! context, as `diff -u` prints them.
//!
//! The lines are found on the real texts, and printed from the texts as
//! they may be shown ([`Shown`]: their secrets out of sight, line for
//! line), so no byte of the real text is ever printed.

use std::ops::Range;

use super::edit::{Edit, apply};
use super::jsonc::Span;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// What stands for a line a shown text lacks (never so when it is made
/// line for line from the real one).
const MISSING_LINE: &str = "…\n";

/// The texts before and after the edits as they may be shown: each line of
/// the real text in its place, its secrets replaced.
pub(crate) struct Shown<'a> {
    /// The text before.
    pub old: &'a str,
    /// The text after.
    pub new: &'a str,
}

/// A run of old lines and the new lines that replace them (line indices
/// in the texts before and after).
struct Change {
    old: Range<usize>,
    new: Range<usize>,
}

/// The unified diff of `text` and `text` with `edits` made, its lines
/// printed from `shown`; empty when the edits change nothing.
pub(crate) fn unified(label: &str, text: &str, edits: &[Edit], shown: &Shown) -> String {
    let changes = changes(text, &line_starts(text), edits);
    let mut out = String::new();
    if changes.is_empty() {
        return out;
    }
    let old = lines(shown.old);
    let new = lines(shown.new);
    let lines = Lines {
        old: &old,
        new: &new,
        count: line_starts(text).len() - 1,
    };
    out.push_str(&format!("--- {label}\n+++ {label}\n"));
    let mut first = 0;
    while first < changes.len() {
        let mut last = first;
        while last + 1 < changes.len() && changes[last + 1].old.start - changes[last].old.end <= 2 * CONTEXT {
            last += 1;
        }
        hunk(&mut out, &lines, &changes[first..=last]);
        first = last + 1;
    }
    out
}

/// The lines a diff prints from, and how many lines the real text has.
struct Lines<'a> {
    old: &'a [&'a str],
    new: &'a [&'a str],
    count: usize,
}

/// Writes one hunk.
fn hunk(out: &mut String, lines: &Lines, changes: &[Change]) {
    let start = changes[0].old.start.saturating_sub(CONTEXT);
    let end = (changes[changes.len() - 1].old.end + CONTEXT).min(lines.count);
    let new_len: usize = (end - start) - changes.iter().map(|c| c.old.len()).sum::<usize>()
        + changes.iter().map(|c| c.new.len()).sum::<usize>();
    let new_start = changes[0].new.start - (changes[0].old.start - start);
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        range_label(start, end - start),
        range_label(new_start, new_len)
    ));
    let mut at = start;
    for change in changes {
        push_lines(out, ' ', lines.old, at..change.old.start);
        push_lines(out, '-', lines.old, change.old.clone());
        push_lines(out, '+', lines.new, change.new.clone());
        at = change.old.end;
    }
    push_lines(out, ' ', lines.old, at..end);
}

/// `start,count` with 1-based lines, as `diff -u` writes it.
fn range_label(start: usize, count: usize) -> String {
    let first = if count == 0 { start } else { start + 1 };
    format!("{first},{count}")
}

fn push_lines(out: &mut String, mark: char, lines: &[&str], range: Range<usize>) {
    for at in range {
        out.push(mark);
        let line = lines.get(at).copied().unwrap_or(MISSING_LINE);
        match line.strip_suffix('\n') {
            Some(line) => {
                out.push_str(line);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

/// The lines of `text`, each with its line end, as [`line_starts`] cuts them.
fn lines(text: &str) -> Vec<&str> {
    let starts = line_starts(text);
    starts.windows(2).map(|pair| &text[pair[0]..pair[1]]).collect()
}

/// The offset of each line's start, and the text's length last.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(|&i| i < text.len()),
    );
    starts.push(text.len());
    starts
}

/// The index of the line holding byte `offset`.
fn line_of(starts: &[usize], offset: usize) -> usize {
    let lines = starts.len() - 1;
    starts
        .partition_point(|&start| start <= offset)
        .saturating_sub(1)
        .min(lines - 1)
}

/// Groups the edits by the lines they touch (touching the same or adjacent
/// lines: one change), and says which lines of the text after the edits
/// replace them.
fn changes(text: &str, starts: &[usize], edits: &[Edit]) -> Vec<Change> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|edit| edit.span.start);
    let mut groups: Vec<(Range<usize>, Vec<&Edit>)> = Vec::new();
    for edit in sorted {
        let first = line_of(starts, edit.span.start);
        let last = line_of(starts, edit.span.end.saturating_sub(1).max(edit.span.start));
        match groups.last_mut() {
            Some((lines, group)) if first <= lines.end => {
                lines.end = lines.end.max(last + 1);
                group.push(edit);
            }
            _ => groups.push((first..last + 1, vec![edit])),
        }
    }
    // How many lines the text after the edits has gained so far.
    let mut gained: isize = 0;
    let mut changes = Vec::new();
    for (lines, group) in groups {
        let from = starts[lines.start];
        let to = starts[lines.end.min(starts.len() - 1)];
        let shifted: Vec<Edit> = group
            .iter()
            .map(|edit| {
                Edit::replace(
                    Span {
                        start: edit.span.start - from,
                        end: edit.span.end - from,
                    },
                    edit.text.clone(),
                )
            })
            .collect();
        let old = &text[from..to];
        let new = apply(old, &shifted);
        if new == old {
            continue;
        }
        let new_start = lines.start.saturating_add_signed(gained);
        let (change, new_lines) = trimmed(lines.clone(), new_start, old, &new);
        gained += new_lines as isize - lines.len() as isize;
        changes.push(change);
    }
    changes
}

/// The change from `old` (the text of lines `lines`) to `new` (from line
/// `new_start` of the text after the edits), without the lines they begin
/// or end with alike; and how many lines `new` has.
fn trimmed(lines: Range<usize>, new_start: usize, old: &str, new: &str) -> (Change, usize) {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let shortest = old.len().min(new.len());
    let prefix = old
        .iter()
        .zip(&new)
        .take_while(|(a, b)| a == b)
        .count()
        .min(shortest);
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let change = Change {
        old: lines.start + prefix..lines.end - suffix,
        new: new_start + prefix..new_start + new.len() - suffix,
    };
    (change, new.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diff with every line shown as it is.
    fn plain(label: &str, text: &str, edits: &[Edit]) -> String {
        let new = apply(text, edits);
        unified(label, text, edits, &Shown { old: text, new: &new })
    }

    #[test]
    fn lines_are_printed_as_shown_never_as_they_are() {
        let text = "{\n  \"k\": \"secret\",\n  \"a\": 1\n}\n";
        let at = text.find('1').unwrap();
        let edits = [Edit::replace(
            Span {
                start: at,
                end: at + 1,
            },
            "2,\n  \"b\": \"new secret\"",
        )];
        let old = text.replace("secret", "***");
        let new = apply(text, &edits).replace("secret", "***");
        let diff = unified("f", text, &edits, &Shown { old: &old, new: &new });
        assert_eq!(
            diff,
            "--- f\n+++ f\n@@ -1,4 +1,5 @@\n {\n   \"k\": \"***\",\n-  \"a\": 1\n+  \"a\": 2,\n+  \"b\": \"new ***\"\n }\n"
        );
    }

    #[test]
    fn a_change_gets_three_lines_of_context() {
        let text = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let at = text.find('e').unwrap();
        let edit = Edit::replace(
            Span {
                start: at,
                end: at + 1,
            },
            "E\nE2",
        );
        assert_eq!(
            plain("f.json", text, &[edit]),
            "--- f.json\n+++ f.json\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+E\n+E2\n f\n g\n h\n"
        );
    }

    #[test]
    fn distant_changes_get_their_own_hunks_and_line_numbers_follow() {
        let text: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let two = text.find("2\n").unwrap();
        let eighteen = text.find("18\n").unwrap();
        let edits = [
            Edit::insert(two, "1.5\n"),
            Edit::replace(
                Span {
                    start: eighteen,
                    end: eighteen + 2,
                },
                "XVIII",
            ),
        ];
        let diff = plain("f", &text, &edits);
        assert!(diff.contains("@@ -1,4 +1,5 @@\n 1\n+1.5\n 2\n 3\n 4\n"), "{diff}");
        assert!(
            diff.contains("@@ -15,6 +16,6 @@\n 15\n 16\n 17\n-18\n+XVIII\n 19\n 20\n"),
            "{diff}"
        );
    }

    #[test]
    fn a_missing_final_newline_is_marked_and_no_change_prints_nothing() {
        let text = "{\"a\": 1}";
        let edit = Edit::replace(Span { start: 6, end: 7 }, "2");
        assert_eq!(
            plain("f", text, &[edit]),
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-{\"a\": 1}\n\\ No newline at end of file\n+{\"a\": 2}\n\\ No newline at end of file\n"
        );
        let same = Edit::replace(Span { start: 6, end: 7 }, "1");
        assert_eq!(plain("f", text, &[same]), "");
    }
}
