//! The floor's checks: what a command removes, writes and runs, read from
//! what it shows.
//!
//! Paths are compared lexically, with case folded (on a case-insensitive
//! file system `/HOME/DEV` is the home directory, and over-matching only
//! ever asks or denies more).

use crate::policy::Dir;
use crate::policy::checks::Tristate;
use crate::policy::command::{Command, Unreadable};

/// Directories that hold an agent's configuration, wherever they are.
const AGENT_DIRS: &[&str] = &[".claude", ".codex", ".cursor", ".gemini"];

/// Files that hold an agent's configuration, wherever they are.
const AGENT_FILES: &[&str] = &[".mcp.json"];

/// Shell startup files: code written there runs later, elsewhere.
const RC_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
    ".login",
    "config.fish",
];

/// Programs that run code they read from their input when given no script.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "python", "perl", "ruby", "node", "php",
];

/// Git's options before the subcommand that take the next word as value.
const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
    "--shallow-file",
    "--exec-path",
];

/// A path placed lexically: absolute or not, its parts folded.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Place {
    absolute: bool,
    parts: Vec<String>,
}

/// Where the floor's directories are.
#[derive(Clone, Debug)]
pub(super) struct Places {
    home: Place,
    agent_config: Vec<Place>,
}

impl Places {
    pub(super) fn new(home: &Dir, agent_config: &[Dir]) -> Places {
        let plain = |dir: &Dir| place_without_home(dir.as_str());
        let home = plain(home);
        let agent_config = agent_config.iter().map(plain).collect();
        Places { home, agent_config }
    }

    /// A path with `~` and `~USER` (for this home's user) made the home
    /// directory, `.`, empty parts and `..` collapsed, case folded; `None`
    /// for another user's `~`.
    fn place(&self, path: &str) -> Option<Place> {
        let Some(after_tilde) = path.strip_prefix('~') else {
            return Some(place_without_home(path));
        };
        let (user, rest) = after_tilde.split_at(after_tilde.find('/').unwrap_or(after_tilde.len()));
        let home_user = self.home.parts.last().map_or("", String::as_str);
        if !user.is_empty() && user.to_lowercase() != home_user {
            return None;
        }
        let mut place = self.home.clone();
        collapse_onto(&mut place.parts, rest);
        Some(place)
    }

    /// Whether removing `path` removes `/`, the home directory (or a
    /// directory above it), or any user's home.
    fn is_catastrophic(&self, path: &str) -> bool {
        let Some(place) = self.place(path).filter(|place| place.absolute) else {
            return false;
        };
        let any_home = matches!(
            place
                .parts
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
            ["root"] | ["home" | "users", _]
        );
        any_home || (self.home.absolute && self.home.parts.starts_with(&place.parts))
    }

    /// Whether an unreadable word, as written, names `/` or a home: `$HOME`
    /// or `${HOME}`, or a glob whose directory is one (`/*`, `~/*`).
    fn is_catastrophic_pattern(&self, raw: &str) -> bool {
        let text: String = raw.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        let text = ["${HOME}", "$HOME"]
            .iter()
            .find_map(|home| text.strip_prefix(home).map(|rest| format!("~{rest}")))
            .unwrap_or(text);
        match text.find(['*', '?', '[', '{']) {
            Some(glob) => match text[..glob].rfind('/') {
                Some(slash) => self.is_catastrophic(&text[..=slash]),
                None => false,
            },
            None => !text.contains('$') && self.is_catastrophic(&text),
        }
    }

    /// Whether `path` lies in the agent's configuration.
    fn is_agent_config(&self, path: &str) -> bool {
        let Some(place) = self.place(path) else {
            return false;
        };
        place.parts.iter().any(|part| AGENT_DIRS.contains(&part.as_str()))
            || place
                .parts
                .last()
                .is_some_and(|last| AGENT_FILES.contains(&last.as_str()))
            || self
                .agent_config
                .iter()
                .any(|dir| dir.absolute == place.absolute && place.parts.starts_with(&dir.parts))
    }
}

fn place_without_home(path: &str) -> Place {
    let mut parts = Vec::new();
    collapse_onto(&mut parts, path);
    Place {
        absolute: path.starts_with('/'),
        parts,
    }
}

/// Appends the parts of `path` to `parts`, folded, `..` removing one.
fn collapse_onto(parts: &mut Vec<String>, path: &str) {
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part.to_lowercase()),
        }
    }
}

/// The command's program, folded, when it can be read.
fn name(command: &Command) -> Option<String> {
    command.name().map(str::to_lowercase)
}

fn is(command: &Command, program: &str) -> bool {
    name(command).as_deref() == Some(program)
}

/// The arguments that are not options (all of them after `--`).
fn operands(args: &[String]) -> Vec<&str> {
    let mut operands = Vec::new();
    let mut options = true;
    for arg in args {
        match arg.as_str() {
            "--" if options => options = false,
            arg if options && arg.starts_with('-') && arg != "-" => {}
            arg => operands.push(arg),
        }
    }
    operands
}

fn is_recursive(args: &[String]) -> bool {
    args.iter().take_while(|arg| *arg != "--").any(|arg| {
        arg == "--recursive" || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains(['r', 'R']))
    })
}

/// Deny: `rm -r` of `/`, the home directory or above it, or any home.
pub(super) fn removes_root_or_home(places: &Places, command: &Command) -> Tristate {
    let removes = is(command, "rm")
        && is_recursive(&command.args)
        && (operands(&command.args)
            .iter()
            .any(|path| places.is_catastrophic(path))
            || command
                .unread
                .iter()
                .any(|raw| places.is_catastrophic_pattern(raw)));
    Tristate::unless_unsure(removes, false)
}

/// Ask: `rm` with a target that cannot be read.
pub(super) fn removes_unreadable(_: &Places, command: &Command) -> Tristate {
    Tristate::unless_unsure(is(command, "rm") && !command.is_complete(), false)
}

/// Ask: a command whose program cannot be read.
pub(super) fn unreadable(_: &Places, command: &Command) -> Tristate {
    Tristate::unless_unsure(command.program.is_none(), false)
}

/// The files a command writes that can be read, and whether it may write
/// others that cannot.
fn written(command: &Command) -> (Vec<&str>, bool) {
    let mut targets: Vec<&str> = command.writes.iter().map(String::as_str).collect();
    let mut unsure = command.program.is_none() || command.unreadable == Some(Unreadable::Redirection);
    let args = &command.args;
    let by_program = match name(command).as_deref() {
        Some(
            "tee" | "touch" | "truncate" | "mkdir" | "rmdir" | "rm" | "unlink" | "shred" | "chmod" | "chown"
            | "chgrp" | "chattr" | "setfacl" | "mv",
        ) => Some(operands(args)),
        Some("sed" | "perl")
            if args
                .iter()
                .any(|arg| arg.starts_with("-i") || arg.starts_with("--in-place")) =>
        {
            Some(operands(args))
        }
        Some("cp" | "install" | "ln" | "rsync" | "scp") => {
            Some(match option_value(args, "-t", "--target-directory") {
                Some(directory) => vec![directory],
                None => operands(args).last().copied().into_iter().collect(),
            })
        }
        Some("dd") => Some(args.iter().filter_map(|arg| arg.strip_prefix("of=")).collect()),
        Some("curl") => Some(option_value(args, "-o", "--output").into_iter().collect()),
        Some("wget") => Some(
            option_value(args, "-O", "--output-document")
                .into_iter()
                .collect(),
        ),
        _ => None,
    };
    if let Some(paths) = by_program {
        targets.extend(paths);
        unsure |= !command.is_complete();
    }
    (targets, unsure)
}

/// The value of a short (`-o FILE`, `-oFILE`) or long (`--output FILE`,
/// `--output=FILE`) option.
fn option_value<'a>(args: &'a [String], short: &str, long: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(index, arg)| {
        let next = || args.get(index + 1).map(String::as_str);
        match arg.as_str() {
            arg if arg == short || arg == long => next(),
            arg => arg
                .strip_prefix(long)
                .and_then(|rest| rest.strip_prefix('='))
                .or_else(|| {
                    arg.strip_prefix(short)
                        .filter(|rest| !rest.is_empty() && !arg.starts_with("--"))
                }),
        }
    })
}

/// Deny: a write into the agent's configuration.
pub(super) fn writes_agent_config(places: &Places, command: &Command) -> Tristate {
    let (targets, _) = written(command);
    Tristate::unless_unsure(targets.iter().any(|path| places.is_agent_config(path)), false)
}

/// Ask: a write to a shell startup file or into a `.git` directory, or a
/// write that cannot be placed.
pub(super) fn writes_rc_or_git(places: &Places, command: &Command) -> Tristate {
    let (targets, unsure) = written(command);
    let sensitive = targets.iter().any(|path| {
        let place = places.place(path).unwrap_or_else(|| place_without_home(path));
        place.parts.iter().any(|part| part == ".git")
            || place
                .parts
                .last()
                .is_some_and(|last| RC_FILES.contains(&last.as_str()))
    });
    Tristate::unless_unsure(sensitive, unsure)
}

/// Ask: `git push --force` (`-f`, `--force-with-lease`, `--mirror`, a `+`
/// refspec) or `git reset --hard`, past git's own options.
pub(super) fn rewrites_git_history(_: &Places, command: &Command) -> Tristate {
    if !is(command, "git") {
        return Tristate::No;
    }
    let args = &command.args;
    let mut index = 0;
    while let Some(arg) = args.get(index).filter(|arg| arg.starts_with('-')) {
        index += if GIT_VALUED.contains(&arg.as_str()) { 2 } else { 1 };
    }
    let rest = args.get(index + 1..).unwrap_or_default();
    let rewrites = match args.get(index).map(String::as_str) {
        Some("push") => rest.iter().any(|arg| {
            arg == "--force"
                || arg == "--mirror"
                || arg.starts_with("--force-with-lease")
                || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('f'))
                || (arg.starts_with('+') && arg.len() > 1)
        }),
        Some("reset") => rest.iter().any(|arg| arg == "--hard"),
        Some(_) => return Tristate::No,
        None => false,
    };
    Tristate::unless_unsure(rewrites, !command.is_complete())
}

/// Ask: an interpreter given no script, so running what it reads from its
/// input (`curl … | sh`), or told to (`-s`, `-`).
pub(super) fn runs_input(_: &Places, command: &Command) -> Tristate {
    let Some(name) = name(command) else {
        return Tristate::No;
    };
    let interpreter = INTERPRETERS.contains(&name.as_str()) || name.starts_with("python");
    if !interpreter {
        return Tristate::No;
    }
    let reads_input =
        operands(&command.args).is_empty() || command.args.iter().any(|arg| arg == "-s" || arg == "-");
    Tristate::unless_unsure(reads_input, !command.is_complete())
}
