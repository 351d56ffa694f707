//! The Claude Code hook in a settings file (`~/.claude/settings.json`, a
//! project's `.claude/settings.json`): the `PostToolUse` entry that runs
//! `mcp-unknown-keys hook claude-code` after every MCP tool, added by
//! `wrap --claude-code-hook` and taken out by `unwrap`, as text edits (no
//! I/O here, so every decision is tested on text).
//!
//! The entry is the plugin's (`plugins/claude-code/hooks/hooks.json`), with
//! the program as `wrap` writes the proxy's and `--state-dir DIR` named, so
//! that the hook reads where the proxies write whatever environment Claude
//! Code starts with:
//!
//! ```json
//! {"matcher": "mcp__.*", "hooks": [{"type": "command",
//!  "command": "PROGRAM hook claude-code --state-dir DIR", "timeout": 10}]}
//! ```
//!
//! The command is one shell line, each word quoted for `sh` where it needs
//! to be (`'/home/me/my tools/mcp-unknown-keys'`): every Claude Code runs
//! that form. The `args` array (the command run without a shell) came in
//! Claude Code 2.1.139; an older one ignores it and would run the program
//! alone, whose usage error (exit 2) Claude Code hands the model after
//! every MCP call.
//!
//! A hook is wrap's when it has exactly that shape: these three members,
//! its command's words ending `hook claude-code --state-dir DIR` after
//! this tool's launch. Adding it again when one is there changes nothing; `unwrap`
//! takes out such hooks only, then the group, `PostToolUse` and `hooks`
//! that were left empty by it. Every other hook, and every other byte,
//! stays.

use super::edit::{Edit, json_string, remove_item, separator_before};
use super::entry::{find, launch_at};
use super::jsonc::{self, Span, Unreadable, Value};

/// The event the hook runs on: after a tool call succeeded.
pub const EVENT: &str = "PostToolUse";

/// The tools it runs after: every MCP tool (`mcp__SERVER__TOOL`).
pub const MATCHER: &str = "mcp__.*";

/// The seconds Claude Code gives it, as the plugin does: it reads one small
/// file and answers at once; a hung disk should not hold the session.
pub const TIMEOUT_SECONDS: u32 = 10;

/// The hook's arguments after the program's own, before the state
/// directory.
const SUBCOMMAND: [&str; 3] = ["hook", "claude-code", "--state-dir"];

/// The hook wrap installs: how Claude Code runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    /// The program, as `wrap` writes the proxy's.
    pub program: String,
    /// The program's arguments before `hook` (a launcher's).
    pub program_args: Vec<String>,
    /// The directory the proxies keep their catalogues in.
    pub state_dir: String,
}

impl Hook {
    /// Every argument, the program's own first.
    fn args(&self) -> Vec<String> {
        let mut args = self.program_args.clone();
        args.extend(SUBCOMMAND.iter().map(|arg| (*arg).to_owned()));
        args.push(self.state_dir.clone());
        args
    }

    /// The shell line Claude Code runs.
    fn command_line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args())
            .map(|word| quoted(word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `word` as `sh` reads it back: as it is when it holds only characters no
/// shell treats specially, else in single quotes (a `'` in it as `'\''`).
fn quoted(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The words of a shell line as [`quoted`] writes them: `None` for any
/// other line (one with variables, escapes, globs, or two spaces running).
fn words(line: &str) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        let word = words.last_mut()?;
        match c {
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => word.push(c),
                }
            },
            '\\' if chars.next()? == '\'' => word.push('\''),
            ' ' if !word.is_empty() => words.push(String::new()),
            c if is_plain(c) => word.push(c),
            _ => return None,
        }
    }
    (!words.last()?.is_empty()).then_some(words)
}

/// A character no shell reads as anything but itself.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./=:@%+,".contains(c)
}

/// What became of the hook in one settings file.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// Added.
    Installed,
    /// One of wrap's was there: left as it is.
    AlreadyInstalled,
    /// Taken out (this many hooks of wrap's).
    Removed(usize),
    /// None of wrap's was there.
    NotInstalled,
}

/// The edits for one settings file, and what they do.
#[derive(Debug)]
pub struct HookPlan {
    /// The edits (none: leave the file alone).
    pub edits: Vec<Edit>,
    /// What they do.
    pub change: Change,
}

/// Adds `hook` to the settings `text` (empty: a file to create), unless one
/// of wrap's is there already.
pub fn install(text: &str, hook: &Hook) -> Result<HookPlan, Unreadable> {
    let layout = Layout::of(text);
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        let settings = Json::Object(vec![("hooks", hooks_object(hook))]);
        let created = format!("{}{}", settings.render(0, &layout), layout.newline);
        let edit = Edit::replace(span(0, text.len()), created);
        return Ok(planned(vec![edit], Change::Installed));
    }
    let root = jsonc::parse(text)?;
    let members = object(&root, "the settings")?;
    let Some(hooks) = find(members, "hooks")? else {
        let edit = add_member(text, &root, "hooks", &hooks_object(hook), &layout);
        return Ok(planned(vec![edit], Change::Installed));
    };
    let hooks = &members[hooks].value;
    let events = object(hooks, "hooks")?;
    let Some(event) = find(events, EVENT)? else {
        let edit = add_member(text, hooks, EVENT, &Json::Array(vec![group(hook)]), &layout);
        return Ok(planned(vec![edit], Change::Installed));
    };
    let groups = array(&events[event].value, "hooks.PostToolUse")?;
    if groups.iter().any(|group| !wraps(group).is_empty()) {
        return Ok(planned(Vec::new(), Change::AlreadyInstalled));
    }
    let edit = add_element(text, &events[event].value, &group(hook), &layout);
    Ok(planned(vec![edit], Change::Installed))
}

/// Takes every hook of wrap's out of the settings `text`, and what it
/// leaves empty: its group, `PostToolUse`, `hooks`.
pub fn remove(text: &str) -> Result<HookPlan, Unreadable> {
    if text.trim_start_matches('\u{feff}').trim().is_empty() {
        return Ok(planned(Vec::new(), Change::NotInstalled));
    }
    let root = jsonc::parse(text)?;
    let members = object(&root, "the settings")?;
    let Some(hooks) = find(members, "hooks")? else {
        return Ok(planned(Vec::new(), Change::NotInstalled));
    };
    let events = object(&members[hooks].value, "hooks")?;
    let Some(event) = find(events, EVENT)? else {
        return Ok(planned(Vec::new(), Change::NotInstalled));
    };
    let groups = array(&events[event].value, "hooks.PostToolUse")?;
    let mut edits = Vec::new();
    let mut emptied = Vec::new();
    let mut removed = 0;
    for (index, group) in groups.iter().enumerate() {
        let ours = wraps(group);
        removed += ours.len();
        let Some(list) = group_hooks(group) else {
            continue;
        };
        if ours.is_empty() {
            continue;
        }
        if ours.len() == list.len() && is_plain_group(group) {
            emptied.push(index);
        } else {
            edits.extend(remove_items(
                text,
                &list.iter().map(|h| h.span).collect::<Vec<_>>(),
                &ours,
            ));
        }
    }
    if removed == 0 {
        return Ok(planned(Vec::new(), Change::NotInstalled));
    }
    if emptied.len() < groups.len() {
        let spans: Vec<Span> = groups.iter().map(|g| g.span).collect();
        edits.extend(remove_items(text, &spans, &emptied));
    } else {
        // Every group was wrap's: take out the member holding them, and
        // its object too when that leaves it empty.
        let holders = [(&root, hooks), (&members[hooks].value, event)];
        edits.extend(remove_emptied(text, &holders));
    }
    Ok(planned(edits, Change::Removed(removed)))
}

fn planned(edits: Vec<Edit>, change: Change) -> HookPlan {
    HookPlan { edits, change }
}

/// The edits that take out `holders`' innermost member (an object and the
/// index of its member, outermost first), or, when that is its object's
/// only member, that object's own member, and so on; the settings' root
/// is left `{}` at worst.
fn remove_emptied(text: &str, holders: &[(&Value, usize)]) -> Vec<Edit> {
    for (object, index) in holders.iter().rev() {
        let members = object.as_object().unwrap_or_default();
        if members.len() > 1 {
            let spans: Vec<Span> = members.iter().map(jsonc::Member::span).collect();
            return remove_item(text, &spans, *index);
        }
    }
    let root = holders[0].0;
    vec![Edit::replace(root.span, "{}")]
}

/// The edits that take out `items[indices]` (in order) from an object or
/// array, with the separators that joined them. A lone item keeps the
/// comments around it; every item taken: the container left `[]`/`{}`.
fn remove_items(text: &str, items: &[Span], indices: &[usize]) -> Vec<Edit> {
    if indices.is_empty() {
        return Vec::new();
    }
    if indices.len() == items.len() {
        let container = span(items[0].start, items[items.len() - 1].end);
        return vec![Edit::delete(widen_to_brackets(text, container))];
    }
    let mut edits = Vec::new();
    let mut at = 0;
    while at < indices.len() {
        let first = indices[at];
        let mut last = first;
        while at + 1 < indices.len() && indices[at + 1] == last + 1 {
            at += 1;
            last += 1;
        }
        at += 1;
        if first == last {
            edits.extend(remove_item(text, items, first));
        } else if first > 0 {
            edits.push(Edit::delete(span(items[first - 1].end, items[last].end)));
        } else {
            edits.push(Edit::delete(span(items[0].start, items[last + 1].start)));
        }
    }
    edits
}

/// From just after the `[` or `{` before `inner` to just before the `]` or
/// `}` after it: what an emptied container held.
fn widen_to_brackets(text: &str, inner: Span) -> Span {
    let start = text[..inner.start]
        .rfind(['[', '{'])
        .map_or(inner.start, |at| at + 1);
    let end = text[inner.end..]
        .find([']', '}'])
        .map_or(inner.end, |at| inner.end + at);
    span(start, end)
}

/// The indices, in the group's `hooks`, of the hooks that are wrap's.
fn wraps(group: &Value) -> Vec<usize> {
    let matcher = group
        .as_object()
        .and_then(|members| members.iter().find(|m| m.key == "matcher"))
        .and_then(|m| m.value.as_str());
    if matcher != Some(MATCHER) {
        return Vec::new();
    }
    group_hooks(group)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter(|(_, hook)| is_wraps(hook))
        .map(|(i, _)| i)
        .collect()
}

/// A group's `hooks` array.
fn group_hooks(group: &Value) -> Option<&[Value]> {
    group
        .as_object()?
        .iter()
        .find(|member| member.key == "hooks")?
        .value
        .as_array()
}

/// Whether a group holds nothing but `matcher` and `hooks`, as wrap writes
/// it: a group with more is the user's, and stays.
fn is_plain_group(group: &Value) -> bool {
    group
        .as_object()
        .is_some_and(|members| members.iter().all(|m| m.key == "matcher" || m.key == "hooks"))
}

/// Whether `hook` is one wrap writes: `type`, `command` and `timeout`
/// only, the command's words ending `hook claude-code --state-dir DIR`
/// after this tool's launch.
fn is_wraps(hook: &Value) -> bool {
    let Some(members) = hook.as_object() else {
        return false;
    };
    let member = |key: &str| members.iter().find(|m| m.key == key).map(|m| &m.value);
    let keys_are_wraps = members.len() == 3
        && ["type", "command", "timeout"]
            .iter()
            .all(|key| member(key).is_some());
    let (Some(kind), Some(line)) = (
        member("type").and_then(Value::as_str),
        member("command").and_then(Value::as_str),
    ) else {
        return false;
    };
    let Some(words) = words(line) else {
        return false;
    };
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ends_as_wraps = launch_at(program, &args, SUBCOMMAND[0]).is_some_and(|at| {
        args.len() == at + SUBCOMMAND.len() + 1 && args[at..at + SUBCOMMAND.len()] == SUBCOMMAND
    });
    keys_are_wraps && kind == "command" && ends_as_wraps
}

fn object<'v>(value: &'v Value, what: &str) -> Result<&'v [jsonc::Member], Unreadable> {
    value.as_object().ok_or_else(|| Unreadable {
        offset: value.span.start,
        message: format!("{what} should be an object, not {}", value.describe()),
    })
}

fn array<'v>(value: &'v Value, what: &str) -> Result<&'v [Value], Unreadable> {
    value.as_array().ok_or_else(|| Unreadable {
        offset: value.span.start,
        message: format!("{what} should be an array, not {}", value.describe()),
    })
}

fn span(start: usize, end: usize) -> Span {
    Span { start, end }
}

/// `{"PostToolUse": [GROUP]}`.
fn hooks_object(hook: &Hook) -> Json {
    Json::Object(vec![(EVENT, Json::Array(vec![group(hook)]))])
}

/// The group wrap adds to `PostToolUse`.
fn group(hook: &Hook) -> Json {
    let handler = Json::Object(vec![
        ("type", Json::String("command".to_owned())),
        ("command", Json::String(hook.command_line())),
        ("timeout", Json::Number(TIMEOUT_SECONDS)),
    ]);
    Json::Object(vec![
        ("matcher", Json::String(MATCHER.to_owned())),
        ("hooks", Json::Array(vec![handler])),
    ])
}

/// What wrap writes, its members in the order written (serde_json's map
/// would sort them).
enum Json {
    Object(Vec<(&'static str, Json)>),
    Array(Vec<Json>),
    String(String),
    Number(u32),
}

impl Json {
    /// The value at nesting `depth`, laid out as `layout` says.
    fn render(&self, depth: usize, layout: &Layout) -> String {
        let (open, close, items): (&str, &str, Vec<String>) = match self {
            Json::String(text) => return json_string(text),
            Json::Number(n) => return n.to_string(),
            Json::Object(members) => (
                "{",
                "}",
                members
                    .iter()
                    .map(|(key, value)| format!("{}: {}", json_string(key), value.render(depth + 1, layout)))
                    .collect(),
            ),
            Json::Array(elements) => (
                "[",
                "]",
                elements.iter().map(|e| e.render(depth + 1, layout)).collect(),
            ),
        };
        match &layout.indent {
            None => format!("{open}{}{close}", items.join(", ")),
            Some(unit) => {
                let inner = format!("{}{}", layout.newline, unit.repeat(depth + 1));
                format!(
                    "{open}{inner}{}{}{}{close}",
                    items.join(&format!(",{inner}")),
                    layout.newline,
                    unit.repeat(depth)
                )
            }
        }
    }
}

/// How the settings file is laid out, for what wrap adds to look like the
/// rest.
struct Layout {
    /// One level's indentation; `None`: all on one line.
    indent: Option<String>,
    newline: &'static str,
}

impl Layout {
    /// `text`'s: the indentation of its first indented line (two spaces
    /// in a new file), its line breaks.
    fn of(text: &str) -> Layout {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        // An empty file or object holds no layout to follow: Claude Code's.
        let blank = matches!(text.trim_start_matches('\u{feff}').trim(), "" | "{}");
        let indent = text.lines().skip(1).find_map(|line| {
            let unit = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
            (!unit.is_empty()).then(|| unit.to_owned())
        });
        let indent = match (blank, indent) {
            (true, _) => Some("  ".to_owned()),
            (false, indent) if text.trim_end().contains('\n') => indent.or(Some("  ".to_owned())),
            (false, _) => None,
        };
        Layout { indent, newline }
    }
}

/// The nesting depth of the item starting at `at`, told by its line's
/// indentation in `layout`'s unit; `None` when it does not begin a line.
fn depth_at(text: &str, at: usize, layout: &Layout) -> Option<usize> {
    let unit = layout.indent.as_deref()?;
    let separator = separator_before(text, at);
    let indent = separator.trim_start_matches(',').trim_start_matches(['\r', '\n']);
    (separator != ", ").then(|| indent.len() / unit.len().max(1))
}

/// The edit that adds `"key": value` to `object`, after its last member (or
/// in it, when empty).
fn add_member(text: &str, object: &Value, key: &str, value: &Json, layout: &Layout) -> Edit {
    let members = object.as_object().unwrap_or_default();
    let Some(last) = members.last() else {
        let depth = container_depth(text, object.span.start, layout);
        let member = format!("{}: {}", json_string(key), value.render(depth + 1, layout));
        return Edit::replace(object.span, fill(("{", "}"), &member, depth, layout));
    };
    let depth = depth_at(text, last.key_span.start, layout).unwrap_or(1);
    let layout = layout_for(text, last.key_span.start, layout);
    Edit::insert(
        last.value.span.end,
        format!(
            "{}{}: {}",
            separator_before(text, last.key_span.start),
            json_string(key),
            value.render(depth, &layout)
        ),
    )
}

/// The edit that adds `value` to `array`, after its last element (or in
/// it, when empty).
fn add_element(text: &str, array: &Value, value: &Json, layout: &Layout) -> Edit {
    let elements = array.as_array().unwrap_or_default();
    let Some(last) = elements.last() else {
        let depth = container_depth(text, array.span.start, layout);
        let element = value.render(depth + 1, layout);
        return Edit::replace(array.span, fill(("[", "]"), &element, depth, layout));
    };
    let depth = depth_at(text, last.span.start, layout).unwrap_or(1);
    let layout = layout_for(text, last.span.start, layout);
    Edit::insert(
        last.span.end,
        format!(
            "{}{}",
            separator_before(text, last.span.start),
            value.render(depth, &layout)
        ),
    )
}

/// An object or array that was empty (at `depth`), holding `item` now.
fn fill((open, close): (&str, &str), item: &str, depth: usize, layout: &Layout) -> String {
    match &layout.indent {
        Some(unit) => format!(
            "{open}{nl}{}{item}{nl}{}{close}",
            unit.repeat(depth + 1),
            unit.repeat(depth),
            nl = layout.newline
        ),
        None => format!("{open}{item}{close}"),
    }
}

/// The depth of a container that starts at `at`: its line's indentation.
fn container_depth(text: &str, at: usize, layout: &Layout) -> usize {
    let unit = layout.indent.as_deref().unwrap_or("  ");
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = text[line_start..at].len() - text[line_start..at].trim_start_matches([' ', '\t']).len();
    indent / unit.len().max(1)
}

/// The layout for what is added next to the item at `at`: on one line when
/// its neighbours are.
fn layout_for(text: &str, at: usize, layout: &Layout) -> Layout {
    let inline = separator_before(text, at) == ", ";
    Layout {
        indent: if inline { None } else { layout.indent.clone() },
        newline: layout.newline,
    }
}

#[cfg(test)]
mod tests {
    use super::super::edit::apply;
    use super::*;

    fn hook() -> Hook {
        Hook {
            program: "mcp-unknown-keys".to_owned(),
            program_args: Vec::new(),
            state_dir: "/home/me/.local/state/mcp-unknown-keys".to_owned(),
        }
    }

    fn installed(text: &str) -> String {
        let plan = install(text, &hook()).unwrap();
        assert_eq!(plan.change, Change::Installed, "{text}");
        apply(text, &plan.edits)
    }

    fn removed(text: &str) -> String {
        let plan = remove(text).unwrap();
        apply(text, &plan.edits)
    }

    const GROUP: &str = r#"{
      "matcher": "mcp__.*",
      "hooks": [
        {
          "type": "command",
          "command": "mcp-unknown-keys hook claude-code --state-dir /home/me/.local/state/mcp-unknown-keys",
          "timeout": 10
        }
      ]
    }"#;

    #[test]
    fn a_new_file_gets_the_hook_laid_out() {
        let text = installed("");
        let expected = format!(
            "{{\n  \"hooks\": {{\n    \"PostToolUse\": [\n      {}\n    ]\n  }}\n}}\n",
            GROUP.replace("\n", "\n  ")
        );
        assert_eq!(text, expected);
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
        assert_eq!(removed(&text), "{}\n");
        assert_eq!(installed("{}\n"), expected, "what unwrap left is laid out alike");
    }

    #[test]
    fn settings_without_hooks_get_a_member_and_lose_it_again() {
        let original = "{\n  \"model\": \"opus\",\n  // mine\n  \"env\": {\"A\": \"1\"}\n}\n";
        let text = installed(original);
        assert!(text.starts_with("{\n  \"model\": \"opus\",\n  // mine\n  \"env\": {\"A\": \"1\"},\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\""), "{text}");
        assert!(jsonc::parse(&text).is_ok());
        assert_eq!(removed(&text), original);
        let plan = install(&text, &hook()).unwrap();
        assert_eq!(plan.change, Change::AlreadyInstalled);
        assert!(plan.edits.is_empty());
    }

    #[test]
    fn other_hooks_stay_and_ours_joins_them() {
        let original = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check"}]}], "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]}}"#;
        let text = installed(original);
        assert!(
            text.contains(r#"{"type": "command", "command": "fmt"}]}, {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir /home/me/.local/state/mcp-unknown-keys", "timeout": 10}]}]"#),
            "{text}"
        );
        assert_eq!(removed(&text), original);
        let with_event = r#"{"hooks": {"PreToolUse": []}}"#;
        let text = installed(with_event);
        assert!(
            text.starts_with(r#"{"hooks": {"PreToolUse": [], "PostToolUse": [{"matcher""#),
            "{text}"
        );
        assert_eq!(removed(&text), with_event);
    }

    #[test]
    fn an_empty_list_of_groups_is_filled() {
        let original = "{\n  \"hooks\": {\n    \"PostToolUse\": []\n  }\n}";
        let text = installed(original);
        assert!(
            text.contains("\"PostToolUse\": [\n      {\n        \"matcher\": \"mcp__.*\""),
            "{text}"
        );
        assert!(jsonc::parse(&text).is_ok());
        assert_eq!(removed(&text), "{}");
    }

    #[test]
    fn a_hook_added_to_wraps_group_by_hand_stays() {
        let text = r#"{"hooks": {"PostToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "log-it"}, {"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir /s", "timeout": 10}]}]}}"#;
        let plan = remove(text).unwrap();
        assert_eq!(plan.change, Change::Removed(1));
        assert_eq!(
            apply(text, &plan.edits),
            r#"{"hooks": {"PostToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "log-it"}]}]}}"#
        );
    }

    #[test]
    fn hooks_not_of_wraps_shape_are_not_taken_out() {
        for hook in [
            // The plugin's own, hand-copied: no --state-dir.
            r#"{"type": "command", "command": "mcp-unknown-keys hook claude-code", "timeout": 10}"#,
            r#"{"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir /s"}"#,
            r#"{"type": "command", "command": "other run hook claude-code --state-dir /s", "timeout": 10}"#,
            r#"{"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir /s", "timeout": 10, "async": true}"#,
            // A shell line of the user's: more than words.
            r#"{"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir $HOME/s", "timeout": 10}"#,
            r#"{"type": "command", "command": "mcp-unknown-keys hook claude-code --state-dir /s | tee log", "timeout": 10}"#,
            // The exec form Claude Code 2.1.139 reads.
            r#"{"type": "command", "command": "mcp-unknown-keys", "args": ["hook", "claude-code", "--state-dir", "/s"], "timeout": 10}"#,
        ] {
            let text =
                format!(r#"{{"hooks": {{"PostToolUse": [{{"matcher": "mcp__.*", "hooks": [{hook}]}}]}}}}"#);
            assert_eq!(remove(&text).unwrap().change, Change::NotInstalled, "{hook}");
        }
    }

    #[test]
    fn a_launcher_form_is_wraps() {
        let text = r#"{"hooks": {"PostToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "npx -y mcp-unknown-keys@1.2.3 hook claude-code --state-dir '/my state'", "timeout": 10}]}]}}"#;
        assert_eq!(install(text, &hook()).unwrap().change, Change::AlreadyInstalled);
        assert_eq!(removed(text), "{}");
    }

    #[test]
    fn a_command_line_reads_back_as_the_words_it_was_made_of() {
        for words_written in [
            vec!["mcp-unknown-keys", "hook", "claude-code", "--state-dir", "/s"],
            vec![
                "/home/me/my tools/mcp-unknown-keys",
                "hook",
                "--state-dir",
                "/it's $HOME; `x`",
            ],
            vec!["C:\\Program Files\\m.exe", "'", "''", "a b  c"],
        ] {
            let line: Vec<String> = words_written.iter().map(|word| quoted(word)).collect();
            let line = line.join(" ");
            let read: Vec<String> = words(&line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(read, words_written, "{line}");
        }
        assert_eq!(quoted("/usr/bin/mcp-unknown-keys"), "/usr/bin/mcp-unknown-keys");
        assert_eq!(quoted("/it's here"), r"'/it'\''s here'");
        for line in ["a  b", " a", "a ", "a $B", "a 'b", r"a \x", "a;b", ""] {
            assert_eq!(words(line), None, "{line:?}");
        }
    }

    #[test]
    fn settings_of_another_shape_are_refused_where_they_go_wrong() {
        for (text, at, message) in [
            ("[]", "[", "the settings should be an object"),
            (r#"{"hooks": []}"#, "[", "hooks should be an object"),
            (
                r#"{"hooks": {"PostToolUse": {}}}"#,
                "{}",
                "hooks.PostToolUse should be an array",
            ),
            (r#"{"hooks": {"PostToolUse": [}}"#, "}}", "expected"),
        ] {
            for fault in [install(text, &hook()).unwrap_err(), remove(text).unwrap_err()] {
                assert_eq!(fault.offset, text.rfind(at).unwrap(), "{text}: {fault}");
                assert!(fault.message.contains(message), "{text}: {fault}");
            }
        }
    }

    #[test]
    fn crlf_and_tabs_are_followed() {
        let original = "{\r\n\t\"model\": \"opus\"\r\n}\r\n";
        let text = installed(original);
        assert!(
            text.contains(",\r\n\t\"hooks\": {\r\n\t\t\"PostToolUse\": [\r\n\t\t\t{\r\n"),
            "{text:?}"
        );
        assert_eq!(removed(&text), original);
    }
}
