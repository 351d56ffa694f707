//! What a shell tool call would run: its command taken apart into the simple
//! commands it runs, without running or expanding anything.
//!
//! A command arrives as a shell line (`"git status && rm -rf /"`) or as an
//! argv (`["bash", "-c", "…"]`). [`decompose_line`] and [`decompose_argv`]
//! return every simple command it runs: lists and pipelines (`&&`, `||`,
//! `;`, `|`, `&`, newlines) are split, wrappers that run another command
//! unchanged (`env` with its assignments, `timeout`, `nice`, `nohup`,
//! `time`, `xargs`, `stdbuf`, `ionice`, `setsid`, `exec`, `command`,
//! `builtin`, `busybox`) are stripped, and the payload of `sh -c` (`bash`,
//! `zsh`, `dash`, `ksh`…), `su -c` and `eval` is read in turn. `sudo`,
//! `doas`, `pkexec` and `find` (its `-exec`) stay visible: the command is
//! listed, and so is the command it runs. Other programs that run commands
//! of their own (`watch`, `ssh`, `git -c core.sshCommand=…`, `python -c`)
//! are not read into.
//!
//! It never guesses. Words are lexed by [`shlex`], which also decides every
//! question of quoting; what the shell would expand — `$VAR`, `$(…)`,
//! backticks, a glob or brace pattern, `~user` — cannot be read, and
//! neither can an unbalanced quote, a here-document or a redirection whose
//! target cannot be read. Such a [`Command`] says what it could not read
//! ([`Command::unreadable`]); a command substitution adds a command whose
//! program is unknown, since it runs code the policy cannot see.
//!
//! ```
//! use mcp_unknown_keys_policy::command::{Unreadable, decompose_line};
//!
//! let commands = decompose_line("cd src && timeout 30 git status | grep -q 'a b'; echo $HOME");
//! let programs: Vec<_> = commands.iter().map(|c| c.name().unwrap_or("?")).collect();
//! assert_eq!(programs, ["cd", "git", "grep", "echo"]);
//! assert_eq!(commands[2].args, ["-q", "a b"]);
//! assert_eq!(commands[3].unreadable, Some(Unreadable::Expansion));
//!
//! let hidden = decompose_line("bash -c 'git status; rm -rf /'");
//! assert_eq!(hidden[1].name(), Some("rm"));
//! ```

pub(crate) mod argv;
pub(crate) mod lex;
mod wrappers;

use std::fmt;

use serde::Serialize;

/// One simple command a call would run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The program as written (`git`, `/usr/bin/git`), or `None` when it
    /// cannot be read.
    pub program: Option<String>,
    /// Its arguments, as the program receives them, up to the first that
    /// cannot be read.
    pub args: Vec<String>,
    /// The words from the first unreadable argument on, as written.
    pub unread: Vec<String>,
    /// The files its redirections write (`> file`, `>> file`), as read.
    pub writes: Vec<String>,
    /// The variables set for it (`NAME=value cmd`, `env NAME=value cmd`),
    /// by name. A variable can change what a program runs (`PATH`,
    /// `LD_PRELOAD`, `GIT_SSH_COMMAND`); rules name programs, so a host
    /// that cares writes a check over these.
    pub assigns: Vec<String>,
    /// What could not be read, when something could not.
    pub unreadable: Option<Unreadable>,
}

impl Command {
    /// A command of which nothing can be read.
    pub fn unknown(why: Unreadable) -> Command {
        Command {
            program: None,
            args: Vec::new(),
            unread: Vec::new(),
            writes: Vec::new(),
            assigns: Vec::new(),
            unreadable: Some(why),
        }
    }

    /// The program's base name: `git` for `/usr/bin/git`.
    pub fn name(&self) -> Option<&str> {
        self.program.as_deref().map(base_name)
    }

    /// Whether every part of it could be read: its program, every argument
    /// and every redirection.
    pub fn is_complete(&self) -> bool {
        self.unreadable.is_none()
    }
}

impl fmt::Display for Command {
    /// The command as a shell line on one line: `git commit -m 'a b'`, with
    /// `?` for a program that cannot be read and the unread words as
    /// written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for name in &self.assigns {
            write!(f, "{}=… ", visible(name))?;
        }
        f.write_str(&self.program.as_deref().map_or_else(|| "?".to_owned(), quote))?;
        for arg in &self.args {
            write!(f, " {}", quote(arg))?;
        }
        for raw in &self.unread {
            write!(f, " {}", visible(raw))?;
        }
        for path in &self.writes {
            write!(f, " > {}", quote(path))?;
        }
        Ok(())
    }
}

/// A word quoted for a shell line, control characters escaped.
fn quote(word: &str) -> String {
    match shlex::try_quote(word) {
        Ok(quoted) => visible(&quoted),
        Err(_) => visible(word),
    }
}

/// Text with its control characters escaped, so it stays on one line.
fn visible(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c.is_control() {
            true => c.escape_default().collect::<Vec<_>>(),
            false => vec![c],
        })
        .collect()
}

/// What made a command unreadable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unreadable {
    /// A parameter expansion: `$VAR`, `${…}`, `$'…'`, `~user`.
    Expansion,
    /// A command substitution, `$(…)` or backticks: code of its own.
    Substitution,
    /// A glob or brace pattern, which the shell expands to file names.
    Glob,
    /// A quote that is never closed.
    UnbalancedQuote,
    /// A redirection it cannot place: a here-document, a process
    /// substitution, or a target that cannot be read.
    Redirection,
    /// A compound command (`for`, `case`, `select`, `[[`, `function`).
    Compound,
    /// A command hidden in a string it does not split (`env -S`).
    SplitString,
    /// A wrapper's option it does not know, so where the wrapped command
    /// starts is not known.
    WrapperOption,
    /// Arguments a program reads from its input (`xargs`).
    FromInput,
    /// A command string given with separate arguments, which could be read
    /// either as a program's name or as a shell line.
    Ambiguous,
    /// A part that is not a string.
    NotText,
    /// A NUL character, where the program would be cut short.
    Nul,
    /// Nesting too deep, or a line too long, to read.
    TooComplex,
    /// The call's arguments are not a JSON object.
    UnreadableArguments,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unreadable::Expansion => "a `$` or `~` expansion",
            Unreadable::Substitution => "a command substitution (`$(…)` or backticks)",
            Unreadable::Glob => "a glob or brace pattern",
            Unreadable::UnbalancedQuote => "an unbalanced quote",
            Unreadable::Redirection => "a redirection it cannot place",
            Unreadable::Compound => "a compound command (`for`, `case`, `[[`, a function)",
            Unreadable::SplitString => "a command inside a string (`env -S`)",
            Unreadable::WrapperOption => "a wrapper option it does not know",
            Unreadable::FromInput => "arguments read from input (`xargs`)",
            Unreadable::Ambiguous => "a command string with separate arguments",
            Unreadable::NotText => "a part that is not a string",
            Unreadable::Nul => "a NUL character",
            Unreadable::TooComplex => "nesting too deep or a line too long",
            Unreadable::UnreadableArguments => "arguments that are not a JSON object",
        })
    }
}

/// How deep `sh -c`, `su -c` and `eval` may nest before the command is
/// unreadable.
const MAX_DEPTH: usize = 8;

/// The simple commands a shell line runs, in order.
///
/// Nothing in `line` can make it panic; it answers [`Command::unknown`]
/// for what it cannot read. A line of only blanks and comments runs
/// nothing.
pub fn decompose_line(line: &str) -> Vec<Command> {
    argv::Reader::default().line(line, 0)
}

/// The simple commands an argv runs when it is executed directly, without
/// a shell: `["git", "status"]` is one command; `["bash", "-c", "a; b"]`
/// is `a` and `b`.
pub fn decompose_argv<S: AsRef<str>>(argv: &[S]) -> Vec<Command> {
    let words = argv
        .iter()
        .map(|word| lex::Word::literal(word.as_ref()))
        .collect();
    argv::Reader::default().argv(words, 0)
}

/// The base name of a program: what follows its last `/`.
pub(crate) fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}
