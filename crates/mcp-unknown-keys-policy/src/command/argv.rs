//! From words to the commands they run: assignments and keywords dropped,
//! wrappers stripped, and the command strings of shells, `su` and `eval`
//! read in turn.

use super::lex::{self, LINE_BUDGET, Piece, Word, is_assignment};
use super::wrappers::{self, Skip};
use super::{Command, MAX_DEPTH, Unreadable, base_name};

/// Reads commands, sharing one lexing budget across everything a line
/// nests.
pub(crate) struct Reader {
    budget: usize,
}

impl Default for Reader {
    fn default() -> Self {
        Reader { budget: LINE_BUDGET }
    }
}

/// Reserved words that open or close a compound command around simple
/// commands (`if rm x; then …; fi`): dropped, exposing the command.
const KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "elif", "else", "fi", "while", "until", "do", "done",
];

/// Reserved words of compound commands whose words are not a command.
const COMPOUND: &[&str] = &[
    "for", "case", "esac", "select", "function", "coproc", "[[", "]]", "in",
];

impl Reader {
    /// The commands a shell line runs.
    pub(crate) fn line(&mut self, line: &str, depth: usize) -> Vec<Command> {
        if depth >= MAX_DEPTH {
            return vec![Command::unknown(Unreadable::TooComplex)];
        }
        if line.contains('\0') {
            return vec![Command::unknown(Unreadable::Nul)];
        }
        lex::lex(line, &mut self.budget)
            .into_iter()
            .flat_map(|piece| self.piece(piece, depth))
            .collect()
    }

    /// The commands one simple command of a line runs: itself (or what it
    /// wraps), then one unknown command per command substitution.
    fn piece(&mut self, piece: Piece, depth: usize) -> Vec<Command> {
        let (mut commands, assigns) = match (piece.broken, strip_leading(piece.words)) {
            (Some(problem), _) | (None, Err(problem)) => (vec![Command::unknown(problem)], Vec::new()),
            (None, Ok((words, assigns))) if words.is_empty() => {
                match (&piece.problem, piece.writes.is_empty()) {
                    // Redirections alone (`> file`) still write.
                    (None, true) => (Vec::new(), assigns),
                    (problem, _) => (
                        vec![Command::unknown(problem.unwrap_or(Unreadable::Redirection))],
                        assigns,
                    ),
                }
            }
            (None, Ok((words, assigns))) => (self.argv(words, depth), assigns),
        };
        // The assignments and redirections belong to the command the piece
        // runs.
        for command in &mut commands {
            command.assigns.splice(0..0, assigns.iter().cloned());
            command.writes.extend(piece.writes.iter().cloned());
            if command.unreadable.is_none() {
                command.unreadable = piece.problem;
            }
        }
        commands.extend((0..piece.substitutions).map(|_| Command::unknown(Unreadable::Substitution)));
        commands
    }

    /// The commands an argv runs.
    pub(crate) fn argv(&mut self, mut words: Vec<Word>, depth: usize) -> Vec<Command> {
        // The variables `env` sets for the command it runs.
        let mut assigns = Vec::new();
        let mut commands = loop {
            let Some(first) = words.first() else {
                break Vec::new();
            };
            let program = match first.readable() {
                Ok(program) => program,
                Err(problem) => break vec![unknown(problem, &words)],
            };
            // Structure is found with case folded: on a case-insensitive
            // file system `BASH` is bash, and reading its payload can only
            // show more.
            let name = base_name(program).to_ascii_lowercase();
            if let Some(grammar) = wrappers::transparent(&name) {
                match wrappers::skip(grammar, &words) {
                    Skip::To(index) if index < words.len() => {
                        let set = words[1..index].iter().filter(|word| is_assignment(&word.raw));
                        assigns.extend(set.map(assigned_name));
                        words.drain(..index);
                        if name == "xargs" {
                            break self.with_input(words, depth);
                        }
                    }
                    Skip::To(_) | Skip::Inert => break vec![plain(&words)],
                    Skip::Refuse(problem) => break vec![unknown(problem, &words)],
                }
                continue;
            }
            break match name.as_str() {
                "sudo" | "doas" | "pkexec" => self.elevated(&name, words, depth),
                "su" => self.su(words, depth),
                "eval" => self.eval(&words, depth),
                "find" => self.find(&words, depth),
                _ if wrappers::is_shell(&name) => match wrappers::shell_payload(&words) {
                    Ok(Some(line)) => self.line(line, depth + 1),
                    Ok(None) => vec![plain(&words)],
                    Err(problem) => vec![unknown(problem, &words)],
                },
                _ => vec![plain(&words)],
            };
        };
        for command in &mut commands {
            command.assigns.splice(0..0, assigns.iter().cloned());
        }
        commands
    }

    /// `find` stays visible, and so does each command its `-exec`,
    /// `-execdir`, `-ok` and `-okdir` run (given the files it finds).
    fn find(&mut self, words: &[Word], depth: usize) -> Vec<Command> {
        let mut commands = vec![plain(words)];
        let starts = |word: &Word| {
            word.problem.is_some() || matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
        };
        let mut rest = &words[1..];
        while let Some(start) = rest.iter().position(starts) {
            if let Some(problem) = rest[start].problem {
                // It might be an `-exec`.
                commands.push(Command::unknown(problem));
                break;
            }
            let run = &rest[start + 1..];
            let end = run
                .iter()
                .position(|word| word.problem.is_none() && matches!(word.text.as_str(), ";" | "+"))
                .unwrap_or(run.len());
            commands.extend(self.with_input(run[..end].to_vec(), depth));
            rest = run.get(end + 1..).unwrap_or_default();
        }
        commands
    }

    /// `xargs`' command: it gets more arguments from the input.
    fn with_input(&mut self, words: Vec<Word>, depth: usize) -> Vec<Command> {
        let mut commands = self.argv(words, depth);
        if let Some(first) = commands.first_mut() {
            first.unreadable.get_or_insert(Unreadable::FromInput);
        }
        commands
    }

    /// `sudo` and its kind stay visible, and so does what they run.
    fn elevated(&mut self, name: &str, mut words: Vec<Word>, depth: usize) -> Vec<Command> {
        let mut commands = vec![plain(&words)];
        match wrappers::skip(wrappers::elevating(name), &words) {
            Skip::To(index) if index < words.len() => {
                words.drain(..index);
                commands.extend(self.argv(words, depth));
            }
            Skip::To(_) | Skip::Inert => {}
            Skip::Refuse(problem) => commands.push(Command::unknown(problem)),
        }
        commands
    }

    /// `su` stays visible, and so does the command string of its `-c`.
    fn su(&mut self, words: Vec<Word>, depth: usize) -> Vec<Command> {
        let mut commands = vec![plain(&words)];
        match wrappers::su_command(&words) {
            Ok(Some(line)) => commands.extend(self.line(line, depth + 1)),
            Ok(None) => {}
            Err(problem) => commands.push(Command::unknown(problem)),
        }
        commands
    }

    /// `eval` runs its arguments, joined by blanks, as a shell line.
    fn eval(&mut self, words: &[Word], depth: usize) -> Vec<Command> {
        let arguments: Result<Vec<&str>, Unreadable> = words[1..].iter().map(Word::readable).collect();
        match arguments {
            Ok(arguments) if arguments.is_empty() => vec![plain(words)],
            Ok(arguments) => self.line(&arguments.join(" "), depth + 1),
            Err(problem) => vec![unknown(problem, words)],
        }
    }
}

/// Drops the assignments (`NAME=value`) and the keywords before a command,
/// and names the variables assigned; fails on a compound command that is
/// not one.
fn strip_leading(mut words: Vec<Word>) -> Result<(Vec<Word>, Vec<String>), Unreadable> {
    let mut skip = 0;
    let mut assigns = Vec::new();
    for word in &words {
        if word.is_bare() && COMPOUND.contains(&word.text.as_str()) {
            return Err(Unreadable::Compound);
        }
        if is_assignment(&word.raw) {
            assigns.push(assigned_name(word));
        } else if !(word.is_bare() && KEYWORDS.contains(&word.text.as_str())) {
            break;
        }
        skip += 1;
    }
    words.drain(..skip);
    Ok((words, assigns))
}

/// The variable an assignment word sets.
fn assigned_name(word: &Word) -> String {
    word.raw.split('=').next().unwrap_or_default().to_owned()
}

/// A command as its words say: the program, the arguments up to the first
/// that cannot be read, and the rest as written.
fn plain(words: &[Word]) -> Command {
    let (first, arguments) = words.split_first().expect("a command has a program word");
    let readable = arguments.iter().take_while(|word| word.problem.is_none()).count();
    Command {
        program: Some(first.text.clone()),
        args: arguments[..readable]
            .iter()
            .map(|word| word.text.clone())
            .collect(),
        unread: arguments[readable..]
            .iter()
            .map(|word| word.raw.clone())
            .collect(),
        writes: Vec::new(),
        assigns: Vec::new(),
        unreadable: arguments.get(readable).and_then(|word| word.problem),
    }
}

/// A command whose program cannot be read.
fn unknown(problem: Unreadable, words: &[Word]) -> Command {
    Command {
        unread: words.iter().map(|word| word.raw.clone()).collect(),
        ..Command::unknown(problem)
    }
}
