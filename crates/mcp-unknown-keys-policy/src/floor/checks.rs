//! The floor's checks: what a command removes, writes and runs, read from
//! what it shows.
//!
//! Paths are compared lexically, with case folded (on a case-insensitive
//! file system `/HOME/DEV` is the home directory, and over-matching only
//! ever asks or denies more).

use super::options::{self, Arg, Named};
use crate::checks::Tristate;
use crate::command::{Command, Unreadable, base_name};
use crate::patterns::Dir;

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

/// The paths through which a program reads its own input: an interpreter
/// given one as its script runs what it is piped (`curl … | sh /dev/stdin`).
const STDIN_PATHS: &[&[&str]] = &[
    &["dev", "stdin"],
    &["dev", "fd", "0"],
    &["proc", "self", "fd", "0"],
];

/// Programs that edit their files in place when given this option
/// (`sed -i`, `sed -Ei`, `perl -pi`, `perl -0pi`).
const IN_PLACE: &[(&str, Named)] = &[("sed", ('i', "in-place")), ("perl", ('i', ""))];

/// Programs that write to the files (or into the folders) these options
/// name: a download's output, its headers, its cookies, its log.
const WRITES_TO: &[(&str, &[Named])] = &[
    (
        "curl",
        &[
            ('o', "output"),
            ('\0', "output-dir"),
            ('D', "dump-header"),
            ('c', "cookie-jar"),
            ('\0', "trace"),
            ('\0', "trace-ascii"),
            ('\0', "stderr"),
        ],
    ),
    (
        "wget",
        &[
            ('O', "output-document"),
            ('o', "output-file"),
            ('a', "append-output"),
            ('P', "directory-prefix"),
        ],
    ),
];

/// `rm`'s options that make it recursive.
const RM_RECURSIVE: &[Named] = &[('r', "recursive"), ('R', "recursive")];

/// `find`'s options before its starting points that take no value (`-D
/// debugopts` and `-Olevel` are read apart).
const FIND_LEADING: &[&str] = &["-H", "-L", "-P"];

/// `find`'s actions that remove what it finds.
const FIND_REMOVES: &[&str] = &["-delete"];

/// `find`'s actions that run a command on what it finds.
const FIND_RUNS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];

/// Programs that remove the files `find -exec` gives them.
const REMOVERS: &[&str] = &["rm"];

/// `find`'s tests that choose what it finds by name, time, size, owner or
/// content: an expression with one may remove only part of a tree (`find ~
/// -name '*.pyc' -delete`). Depth options and `-type` do not count: they
/// still leave the whole tree, or every file in it. (`-newerXY`, such as
/// `-newermt`, is told by its start.)
const FIND_TESTS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-anewer",
    "-cnewer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-nouser",
    "-nogroup",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
    "-context",
    "-readable",
    "-writable",
    "-executable",
    "-false",
    "-prune",
    "-quit",
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

/// The command's arguments read with its program's grammar, when the
/// floor has one.
fn read(command: &Command) -> Option<(&'static options::Grammar, Vec<Arg<'_>>)> {
    let grammar = options::grammar(&name(command)?)?;
    Some((grammar, grammar.read(&command.args)))
}

/// Deny: `rm -r` of `/`, the home directory or above it, or any home. The
/// options are read as `rm` reads them (`-fr`, `--recursive`, `--rec`).
pub(super) fn removes_root_or_home(places: &Places, command: &Command) -> Tristate {
    let Some((grammar, args)) = read(command).filter(|_| is(command, "rm")) else {
        return Tristate::No;
    };
    let recursive = args
        .iter()
        .any(|arg| RM_RECURSIVE.iter().any(|&named| arg.is(named)));
    let removes = recursive
        && (grammar
            .files(&args)
            .iter()
            .any(|path| places.is_catastrophic(path))
            || command
                .unread
                .iter()
                .any(|raw| places.is_catastrophic_pattern(raw)));
    Tristate::unless_unsure(removes, false)
}

/// Deny: `find` removing what it finds (`-delete`, `-exec rm`) from `/`,
/// the home directory or above it, or any home, with no test that chooses
/// part of it (see [`FIND_TESTS`]).
pub(super) fn find_removes_root_or_home(places: &Places, command: &Command) -> Tristate {
    if !is(command, "find") {
        return Tristate::No;
    }
    // The words as written from the first that cannot be read: a start
    // such as `$HOME` is placed as a pattern.
    let words: Vec<(&str, bool)> = command
        .args
        .iter()
        .map(|arg| (arg.as_str(), true))
        .chain(command.unread.iter().map(|raw| (raw.as_str(), false)))
        .collect();
    let mut index = 0;
    while let Some(&(word, _)) = words.get(index) {
        match word {
            "-D" => index += 2,
            word if FIND_LEADING.contains(&word) || word.starts_with("-O") => index += 1,
            "--" => {
                index += 1;
                break;
            }
            _ => break,
        }
    }
    let starts = words[index.min(words.len())..]
        .iter()
        .take_while(|(word, _)| !word.starts_with('-') && !matches!(*word, "(" | "!" | "\\(" | "\\!"));
    let mut catastrophic = false;
    for &(word, readable) in starts.clone() {
        catastrophic |= match readable {
            true => places.is_catastrophic(word),
            false => places.is_catastrophic_pattern(word),
        };
    }
    let expression = &words[(index + starts.count()).min(words.len())..];
    let mut removes = false;
    let mut chooses = false;
    let mut at = 0;
    while let Some(&(word, _)) = expression.get(at) {
        at += 1;
        if FIND_RUNS.contains(&word) {
            let program = expression.get(at).map_or("", |(program, _)| base_name(program));
            removes |= REMOVERS.contains(&program.to_lowercase().as_str());
            // The command's words are not find's expression.
            at += expression[at..]
                .iter()
                .position(|(word, _)| matches!(*word, ";" | "+" | "\\;"))
                .map_or(expression.len(), |end| end + 1);
            continue;
        }
        removes |= FIND_REMOVES.contains(&word);
        chooses |= FIND_TESTS.contains(&word) || word.starts_with("-newer");
    }
    Tristate::unless_unsure(catastrophic && removes && !chooses, false)
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
        Some(program) if IN_PLACE.iter().any(|(name, _)| *name == program) => edited_in_place(command),
        Some("cp" | "install" | "ln" | "rsync" | "scp") => {
            Some(match option_value(args, "-t", "--target-directory") {
                Some(directory) => vec![directory],
                None => operands(args).last().copied().into_iter().collect(),
            })
        }
        Some("dd") => Some(args.iter().filter_map(|arg| arg.strip_prefix("of=")).collect()),
        Some(program) if WRITES_TO.iter().any(|(name, _)| *name == program) => written_to(command),
        _ => None,
    };
    if let Some(paths) = by_program {
        targets.extend(paths);
        unsure |= !command.is_complete();
    }
    (targets, unsure)
}

/// The files an in-place editor edits, when it is told to (see
/// [`IN_PLACE`]).
fn edited_in_place(command: &Command) -> Option<Vec<&str>> {
    let program = name(command)?;
    let (_, named) = IN_PLACE.iter().find(|(name, _)| *name == program)?;
    let (grammar, args) = read(command)?;
    args.iter()
        .any(|arg| arg.is(*named))
        .then(|| grammar.files(&args))
}

/// The files (and folders) a program's options tell it to write (see
/// [`WRITES_TO`]).
fn written_to(command: &Command) -> Option<Vec<&str>> {
    let program = name(command)?;
    let (_, named) = WRITES_TO.iter().find(|(name, _)| *name == program)?;
    let (_, args) = read(command)?;
    Some(
        args.iter()
            .filter_map(|arg| named.iter().find_map(|&option| arg.value_of(option)))
            .collect(),
    )
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
    let operands = operands(&command.args);
    let stdin = |path: &&str| {
        let place = place_without_home(path);
        place.absolute
            && STDIN_PATHS
                .iter()
                .any(|stdin| place.parts.iter().eq(stdin.iter()))
    };
    let reads_input = operands.is_empty()
        || command.args.iter().any(|arg| arg == "-s" || arg == "-")
        || operands.iter().any(stdin);
    Tristate::unless_unsure(reads_input, !command.is_complete())
}
