//! From words to the commands they run: assignments and keywords dropped,
//! wrappers stripped, and the command strings of shells, `su` and `eval`
//! read in turn.

use super::lex::{self, LINE_BUDGET, Piece, Word};
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
        let mut commands = match (piece.broken, strip_leading(piece.words)) {
            (Some(problem), _) | (None, Err(problem)) => vec![Command::unknown(problem)],
            (None, Ok(words)) if words.is_empty() => match (&piece.problem, piece.writes.is_empty()) {
                // Redirections alone (`> file`) still write.
                (None, true) => Vec::new(),
                (problem, _) => vec![Command::unknown(problem.unwrap_or(Unreadable::Redirection))],
            },
            (None, Ok(words)) => self.argv(words, depth),
        };
        // The redirections belong to the command the piece runs.
        for command in &mut commands {
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
        loop {
            let Some(first) = words.first() else {
                return Vec::new();
            };
            let program = match first.readable() {
                Ok(program) => program,
                Err(problem) => return vec![unknown(problem, &words)],
            };
            // Structure is found with case folded: on a case-insensitive
            // file system `BASH` is bash, and reading its payload can only
            // show more.
            let name = base_name(program).to_ascii_lowercase();
            if let Some(grammar) = wrappers::transparent(&name) {
                match wrappers::skip(grammar, &words) {
                    Skip::To(index) if index < words.len() => {
                        words.drain(..index);
                        if name == "xargs" {
                            return self.with_input(words, depth);
                        }
                    }
                    Skip::To(_) | Skip::Inert => return vec![plain(&words)],
                    Skip::Refuse(problem) => return vec![unknown(problem, &words)],
                }
                continue;
            }
            return match name.as_str() {
                "sudo" | "doas" | "pkexec" => self.elevated(&name, words, depth),
                "su" => self.su(words, depth),
                "eval" => self.eval(&words, depth),
                _ if wrappers::is_shell(&name) => match wrappers::shell_payload(&words) {
                    Ok(Some(line)) => self.line(line, depth + 1),
                    Ok(None) => vec![plain(&words)],
                    Err(problem) => vec![unknown(problem, &words)],
                },
                _ => vec![plain(&words)],
            };
        }
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

/// Drops the assignments (`NAME=value`) and the keywords before a command;
/// fails on a compound command that is not one.
fn strip_leading(mut words: Vec<Word>) -> Result<Vec<Word>, Unreadable> {
    let mut skip = 0;
    for word in &words {
        if word.is_bare() && COMPOUND.contains(&word.text.as_str()) {
            return Err(Unreadable::Compound);
        }
        if !(is_assignment(&word.raw) || word.is_bare() && KEYWORDS.contains(&word.text.as_str())) {
            break;
        }
        skip += 1;
    }
    words.drain(..skip);
    Ok(words)
}

/// `NAME=…` with a bare name: the shell sets a variable, runs nothing.
pub(super) fn is_assignment(raw: &str) -> bool {
    let Some((name, _)) = raw.split_once('=') else {
        return false;
    };
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
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
