//! The option grammars of the programs that run another command: where
//! their own options end and the command they run begins.
//!
//! A grammar names every option it accepts. An option it does not know
//! leaves the start of the wrapped command unknown, and so the command is
//! unreadable: stripping a wrapper may only ever expose the program it
//! runs, never hide it.

use super::Unreadable;
use super::lex::{Word, is_assignment};

/// A wrapper's options.
pub(super) struct Grammar {
    /// Options without a value (a long one may carry `=value`).
    flags: &'static [&'static str],
    /// Options whose value is the rest of the word, or the next word.
    valued: &'static [&'static str],
    /// Short options whose value, when given, is the rest of the word.
    optional: &'static [&'static str],
    /// Options after which it runs nothing (`command -v`).
    inert: &'static [&'static str],
    /// Options that take a command as one string (`env -S`).
    hidden: &'static [&'static str],
    /// Whether `-10` is an option (`nice`).
    numeric: bool,
    /// Whether `NAME=value` words follow the options (`env`).
    assignments: bool,
    /// Words between the options and the command (`timeout`'s duration).
    operands: usize,
}

const BARE: Grammar = Grammar {
    flags: &[],
    valued: &[],
    optional: &[],
    inert: &[],
    hidden: &[],
    numeric: false,
    assignments: false,
    operands: 0,
};

const HELP: &[&str] = &["--help", "--version"];

/// The grammar of a wrapper that runs its command unchanged, by base name.
pub(super) fn transparent(name: &str) -> Option<&'static Grammar> {
    Some(match name {
        "env" => &Grammar {
            flags: &[
                "-",
                "-i",
                "-0",
                "-v",
                "--ignore-environment",
                "--null",
                "--debug",
                "--block-signal",
                "--default-signal",
                "--ignore-signal",
                "--list-signal-handling",
            ],
            valued: &["-u", "-C", "--unset", "--chdir"],
            inert: HELP,
            hidden: &["-S", "--split-string"],
            assignments: true,
            ..BARE
        },
        "timeout" => &Grammar {
            flags: &["-v", "--verbose", "--preserve-status", "--foreground"],
            valued: &["-s", "-k", "--signal", "--kill-after"],
            inert: HELP,
            operands: 1,
            ..BARE
        },
        "nice" => &Grammar {
            valued: &["-n", "--adjustment"],
            inert: HELP,
            numeric: true,
            ..BARE
        },
        "nohup" => &Grammar { inert: HELP, ..BARE },
        "time" => &Grammar {
            flags: &[
                "-p",
                "-a",
                "-v",
                "-q",
                "--portability",
                "--append",
                "--verbose",
                "--quiet",
            ],
            valued: &["-f", "-o", "--format", "--output"],
            inert: HELP,
            ..BARE
        },
        "xargs" => &Grammar {
            flags: &[
                "-0",
                "-o",
                "-p",
                "-r",
                "-t",
                "-x",
                "--null",
                "--open-tty",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--show-limits",
            ],
            valued: &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            optional: &["-e", "-i", "-l", "--eof", "--replace", "--max-lines"],
            inert: HELP,
            ..BARE
        },
        "stdbuf" => &Grammar {
            valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
            inert: HELP,
            ..BARE
        },
        "ionice" => &Grammar {
            flags: &["-t", "--ignore"],
            valued: &[
                "-c",
                "-n",
                "-p",
                "-P",
                "-u",
                "--class",
                "--classdata",
                "--pid",
                "--pgid",
                "--uid",
            ],
            inert: HELP,
            ..BARE
        },
        "setsid" => &Grammar {
            flags: &["-c", "-f", "-w", "--ctty", "--fork", "--wait"],
            inert: HELP,
            ..BARE
        },
        "exec" => &Grammar {
            flags: &["-c", "-l"],
            valued: &["-a"],
            ..BARE
        },
        "command" => &Grammar {
            flags: &["-p"],
            inert: &["-v", "-V"],
            ..BARE
        },
        "builtin" => &BARE,
        "busybox" => &Grammar {
            inert: &["--list", "--list-full", "--install", "--help"],
            ..BARE
        },
        _ => return None,
    })
}

/// The grammar of `sudo`, `doas` or `pkexec`.
pub(super) fn elevating(name: &str) -> &'static Grammar {
    match name {
        "doas" => &Grammar {
            flags: &["-n", "-s", "-L"],
            valued: &["-u", "-a", "-C"],
            ..BARE
        },
        "pkexec" => &Grammar {
            flags: &["--disable-internal-agent", "--keep-cwd"],
            valued: &["--user"],
            inert: HELP,
            ..BARE
        },
        _ => &Grammar {
            flags: &[
                "-A",
                "-B",
                "-b",
                "-E",
                "-H",
                "-i",
                "-K",
                "-k",
                "-l",
                "-n",
                "-P",
                "-S",
                "-s",
                "-V",
                "-v",
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--version",
                "--validate",
            ],
            valued: &[
                "-C",
                "-D",
                "-g",
                "-h",
                "-p",
                "-R",
                "-r",
                "-T",
                "-t",
                "-U",
                "-u",
                "--close-from",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--command-timeout",
                "--type",
                "--other-user",
                "--user",
            ],
            inert: &["-e", "--edit", "--help"],
            ..BARE
        },
    }
}

/// Where a wrapper's own words end.
pub(super) enum Skip {
    /// At this index (the command, when there is one).
    To(usize),
    /// It runs nothing.
    Inert,
    /// It cannot be told.
    Refuse(Unreadable),
}

/// Where the command a wrapper runs begins.
pub(super) fn skip(grammar: &Grammar, words: &[Word]) -> Skip {
    let mut index = 1;
    while let Some(word) = words.get(index) {
        let text = match word.readable() {
            Ok(text) => text,
            Err(problem) => return Skip::Refuse(problem),
        };
        if text == "--" {
            index += 1;
            break;
        }
        if !grammar.flags.contains(&text) && (!text.starts_with('-') || text == "-") {
            break;
        }
        match option(grammar, text) {
            OptionWord::Width(width) => index += width,
            OptionWord::Inert => return Skip::Inert,
            OptionWord::Hidden => return Skip::Refuse(Unreadable::SplitString),
            OptionWord::Unknown => return Skip::Refuse(Unreadable::WrapperOption),
        }
    }
    if grammar.assignments {
        index += words[index.min(words.len())..]
            .iter()
            .take_while(|word| is_assignment(&word.raw))
            .count();
    }
    for _ in 0..grammar.operands {
        match words.get(index).map(Word::readable) {
            Some(Ok(_)) => index += 1,
            Some(Err(problem)) => return Skip::Refuse(problem),
            None => break,
        }
    }
    Skip::To(index)
}

/// What one option word is.
enum OptionWord {
    /// An option and its value, this many words long.
    Width(usize),
    Inert,
    Hidden,
    Unknown,
}

fn option(grammar: &Grammar, text: &str) -> OptionWord {
    let among = |list: &[&str], option: &str| list.contains(&option);
    if text.starts_with("--") {
        let (name, value) = text
            .split_once('=')
            .map_or((text, None), |(name, value)| (name, Some(value)));
        return match name {
            _ if among(grammar.hidden, name) => OptionWord::Hidden,
            _ if among(grammar.inert, name) => OptionWord::Inert,
            _ if among(grammar.flags, name) || among(grammar.optional, name) => OptionWord::Width(1),
            _ if among(grammar.valued, name) => OptionWord::Width(if value.is_some() { 1 } else { 2 }),
            _ => OptionWord::Unknown,
        };
    }
    if grammar.numeric && text.len() > 1 && text[1..].bytes().all(|b| b.is_ascii_digit()) {
        return OptionWord::Width(1);
    }
    // A cluster of short options: flags, then at most one option with a
    // value, which is the rest of the word or the next word.
    for (offset, letter) in text.char_indices().skip(1) {
        let short = format!("-{letter}");
        let rest_of_word = offset + letter.len_utf8() < text.len();
        match short.as_str() {
            short if among(grammar.hidden, short) => return OptionWord::Hidden,
            short if among(grammar.inert, short) => return OptionWord::Inert,
            short if among(grammar.valued, short) => {
                return OptionWord::Width(if rest_of_word { 1 } else { 2 });
            }
            short if among(grammar.optional, short) => return OptionWord::Width(1),
            short if among(grammar.flags, short) => {}
            _ => return OptionWord::Unknown,
        }
    }
    OptionWord::Width(1)
}

/// The shells whose `-c` command string is read as a shell line.
pub(super) fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash")
}

/// Long options of those shells; `--rcfile` and `--init-file` take a value.
const SHELL_LONG: &[&str] = &[
    "login",
    "norc",
    "noprofile",
    "posix",
    "restricted",
    "verbose",
    "noediting",
    "debugger",
    "dump-strings",
    "dump-po-strings",
    "help",
    "version",
    "pretty-print",
    "protected",
];

/// The command string a shell is given with `-c` (in any cluster: `-lc`),
/// or `None` when it runs a script or its input.
pub(super) fn shell_payload(words: &[Word]) -> Result<Option<&str>, Unreadable> {
    let mut index = 1;
    let mut command_string = false;
    while let Some(word) = words.get(index) {
        let text = word.readable()?;
        if text == "--" || text == "-" {
            index += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            index += match long {
                "rcfile" | "init-file" => 2,
                _ if SHELL_LONG.contains(&long) => 1,
                _ => return Err(Unreadable::WrapperOption),
            };
            continue;
        }
        let Some(letters) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break;
        };
        command_string |= text.starts_with('-') && letters.contains('c');
        // `-o name` and `-O name` take the next word, wherever they sit in
        // a cluster (`-euo pipefail`).
        index += 1 + letters.matches(['o', 'O']).count();
    }
    match (command_string, words.get(index)) {
        (true, Some(word)) => word.readable().map(Some),
        _ => Ok(None),
    }
}

/// The command string `su` is given with `-c` or `--command`.
pub(super) fn su_command(words: &[Word]) -> Result<Option<&str>, Unreadable> {
    let mut index = 1;
    while let Some(word) = words.get(index) {
        let text = word.readable()?;
        let next = || words.get(index + 1).map(Word::readable).transpose();
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(name, value)| (name, Some(value)));
            match (name, value) {
                ("command" | "session-command", Some(value)) => return Ok(Some(value)),
                ("command" | "session-command", None) => return next(),
                ("shell" | "group" | "supp-group" | "whitelist-environment", None) => index += 2,
                _ => index += 1,
            }
            continue;
        }
        if let Some(letters) = text.strip_prefix('-') {
            if let Some(at) = letters.find('c') {
                let glued = &letters[at + 1..];
                return if glued.is_empty() { next() } else { Ok(Some(glued)) };
            }
            index += if letters.ends_with(['s', 'g', 'G', 'w']) {
                2
            } else {
                1
            };
            continue;
        }
        index += 1; // the user, after which options may still come
    }
    Ok(None)
}
