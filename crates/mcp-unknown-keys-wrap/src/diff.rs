//! The unified diff `--dry-run` prints. The edits already say which bytes
//! change, so no general diff algorithm is needed: each edit's lines become
//! a change, and changes close together share a hunk with three lines of
//! context, as `diff -u` prints them.

use std::ops::Range;

use super::edit::{Edit, apply};
use super::jsonc::Span;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// A run of old lines and the new lines that replace them.
struct Change {
    old: Range<usize>,
    new: Vec<String>,
}

/// The unified diff of `text` and `text` with `edits` made; empty when the
/// edits change nothing.
pub fn unified(label: &str, text: &str, edits: &[Edit]) -> String {
    let starts = line_starts(text);
    let changes = changes(text, &starts, edits);
    let lines: Vec<&str> = (0..starts.len() - 1)
        .map(|i| &text[starts[i]..starts[i + 1]])
        .collect();
    let mut out = String::new();
    if changes.is_empty() {
        return out;
    }
    out.push_str(&format!("--- {label}\n+++ {label}\n"));
    let mut delta: isize = 0;
    let mut first = 0;
    while first < changes.len() {
        let mut last = first;
        while last + 1 < changes.len() && changes[last + 1].old.start - changes[last].old.end <= 2 * CONTEXT {
            last += 1;
        }
        delta = hunk(&mut out, &lines, &changes[first..=last], delta);
        first = last + 1;
    }
    out
}

/// Writes one hunk; returns the line-count difference so far.
fn hunk(out: &mut String, lines: &[&str], changes: &[Change], mut delta: isize) -> isize {
    let start = changes[0].old.start.saturating_sub(CONTEXT);
    let end = (changes[changes.len() - 1].old.end + CONTEXT).min(lines.len());
    let new_len: usize = (end - start) - changes.iter().map(|c| c.old.len()).sum::<usize>()
        + changes.iter().map(|c| c.new.len()).sum::<usize>();
    let new_start = start as isize + delta;
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        range_label(start, end - start),
        range_label(new_start as usize, new_len)
    ));
    let mut at = start;
    for change in changes {
        push_lines(out, ' ', &lines[at..change.old.start]);
        push_lines(out, '-', &lines[change.old.clone()]);
        let new: Vec<&str> = change.new.iter().map(String::as_str).collect();
        push_lines(out, '+', &new);
        delta += change.new.len() as isize - change.old.len() as isize;
        at = change.old.end;
    }
    push_lines(out, ' ', &lines[at..end]);
    delta
}

/// `start,count` with 1-based lines, as `diff -u` writes it.
fn range_label(start: usize, count: usize) -> String {
    let first = if count == 0 { start } else { start + 1 };
    format!("{first},{count}")
}

fn push_lines(out: &mut String, mark: char, lines: &[&str]) {
    for line in lines {
        out.push(mark);
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
/// lines: one change), and says what those lines become.
fn changes(text: &str, starts: &[usize], edits: &[Edit]) -> Vec<Change> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|edit| edit.span.start);
    let mut changes: Vec<(Range<usize>, Vec<&Edit>)> = Vec::new();
    for edit in sorted {
        let first = line_of(starts, edit.span.start);
        let last = line_of(starts, edit.span.end.saturating_sub(1).max(edit.span.start));
        match changes.last_mut() {
            Some((lines, group)) if first <= lines.end => {
                lines.end = lines.end.max(last + 1);
                group.push(edit);
            }
            _ => changes.push((first..last + 1, vec![edit])),
        }
    }
    changes
        .into_iter()
        .filter_map(|(lines, group)| {
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
            (new != old).then(|| trimmed(lines, old, &new))
        })
        .collect()
}

/// The change from `old` (the text of lines `lines`) to `new`, without the
/// lines they begin or end with alike.
fn trimmed(lines: Range<usize>, old: &str, new: &str) -> Change {
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
    Change {
        old: lines.start + prefix..lines.end - suffix,
        new: new[prefix..new.len() - suffix]
            .iter()
            .map(|line| (*line).to_owned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            unified("f.json", text, &[edit]),
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
        let diff = unified("f", &text, &edits);
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
            unified("f", text, &[edit]),
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-{\"a\": 1}\n\\ No newline at end of file\n+{\"a\": 2}\n\\ No newline at end of file\n"
        );
        let same = Edit::replace(Span { start: 6, end: 7 }, "1");
        assert_eq!(unified("f", text, &[same]), "");
    }
}
