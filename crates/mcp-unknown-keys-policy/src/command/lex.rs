//! A shell line split into pieces — one per simple command — of words and
//! redirections.
//!
//! `shlex` lexes every word, and it also settles every question of quoting:
//! whether a character that means something to the shell (a blank, `;`,
//! `|`, `&`, `<`, `>`, `(`, `)`, `$`, a backtick, a glob character, a
//! comment's `#`, a tilde) stands outside quotes is asked of `shlex` by
//! lexing the word up to it. So this file holds no quoting rules of its
//! own: it only decides what an unquoted character does, and a word is
//! read by the lexer that found its quotes.

use super::Unreadable;

/// How many bytes `shlex` may lex while one line is read (nested shells
/// included). A line that needs more is unreadable: quoting questions cost
/// a word's length each, so only a long word full of quoted blanks comes
/// near it.
pub(super) const LINE_BUDGET: usize = 1 << 22;

/// One word of a command.
#[derive(Clone, Debug)]
pub(crate) struct Word {
    /// The word as the program receives it (when it can be read).
    pub(crate) text: String,
    /// The word as written.
    pub(crate) raw: String,
    /// Why the shell would not pass it on as written.
    pub(crate) problem: Option<Unreadable>,
}

impl Word {
    /// A word of an argv, which no shell expands.
    pub(crate) fn literal(text: &str) -> Word {
        Word {
            text: text.to_owned(),
            raw: text.to_owned(),
            problem: text.contains('\0').then_some(Unreadable::Nul),
        }
    }

    /// An argv item that is not a string.
    pub(crate) fn not_text(raw: String) -> Word {
        Word {
            text: String::new(),
            raw,
            problem: Some(Unreadable::NotText),
        }
    }

    /// The word, when it can be read.
    pub(super) fn readable(&self) -> Result<&str, Unreadable> {
        match self.problem {
            None => Ok(&self.text),
            Some(problem) => Err(problem),
        }
    }

    /// Whether it was written without quotes or escapes.
    pub(super) fn is_bare(&self) -> bool {
        self.problem.is_none() && self.raw == self.text
    }
}

/// One simple command, as written.
#[derive(Debug, Default)]
pub(super) struct Piece {
    pub(super) words: Vec<Word>,
    /// The files its redirections write.
    pub(super) writes: Vec<String>,
    /// A redirection it could not place, or a case clause.
    pub(super) problem: Option<Unreadable>,
    /// A problem that leaves nothing of it readable.
    pub(super) broken: Option<Unreadable>,
    /// How many of its words run a command substitution.
    pub(super) substitutions: usize,
}

impl Piece {
    fn is_empty(&self) -> bool {
        self.words.is_empty()
            && self.writes.is_empty()
            && self.problem.is_none()
            && self.broken.is_none()
            && self.substitutions == 0
    }
}

/// Splits a line into pieces, charging `budget` for each byte lexed.
pub(super) fn lex(line: &str, budget: &mut usize) -> Vec<Piece> {
    let mut lexer = Lexer {
        src: line,
        budget,
        pieces: Vec::new(),
        piece: Piece::default(),
        word: None,
        redirect: None,
        scratch: String::new(),
    };
    lexer.run();
    lexer.pieces
}

/// Where a character stands, as `shlex` reads the word up to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoting {
    /// Outside quotes: it means what it means to the shell.
    Outside,
    /// Right after a backslash: it is itself.
    Escaped,
    Single,
    Double,
}

/// What the word being read has seen so far.
struct Open {
    start: usize,
    problem: Option<Unreadable>,
    runs_code: bool,
    glob: bool,
    brace: bool,
    tilde: bool,
}

/// What a redirection does with the word after it.
#[derive(Clone, Copy)]
enum Target {
    Write,
    Read,
    /// `>&2` duplicates a descriptor; `>&file` writes a file.
    Descriptor {
        write: bool,
    },
}

struct Lexer<'s, 'b> {
    src: &'s str,
    budget: &'b mut usize,
    pieces: Vec<Piece>,
    piece: Piece,
    word: Option<Open>,
    redirect: Option<Target>,
    scratch: String,
}

/// Whether a word holds a brace expansion: a `{` with a `,` or `..` before
/// a later `}` (`{a,b}`, `{1..3}`; `{}` and `{x}` stay as written).
fn is_brace_expansion(raw: &str) -> bool {
    raw.match_indices('{').any(|(open, _)| {
        let after = &raw[open + 1..];
        after
            .find('}')
            .is_some_and(|close| after[..close].contains(',') || after[..close].contains(".."))
    })
}

/// The bytes that may mean something to the shell; every other byte is
/// part of a word (quotes and backslashes included: `shlex` reads them).
fn is_special(byte: u8) -> bool {
    b" \t\n#;&|()<>$`*?[{~".contains(&byte)
}

impl Lexer<'_, '_> {
    fn run(&mut self) {
        let bytes = self.src.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            if !is_special(byte) {
                self.open(at);
                at += 1;
                continue;
            }
            let start = self.word.as_ref().map_or(at, |word| word.start);
            let next = match self.quoting(start, at, byte) {
                Ok(Quoting::Outside) => Ok(self.outside(byte, at)),
                Ok(Quoting::Escaped) => Ok(self.escaped(byte, at)),
                Ok(quote) => self.close_quote(start, at, quote),
                Err(problem) => Err(problem),
            };
            match next {
                Ok(next) => at = next,
                Err(problem) => return self.fail(problem),
            }
        }
        self.end_word(bytes.len());
        self.end_piece();
    }

    /// Where the character at `at` stands in the word that began at
    /// `start`, asked of `shlex`: the word up to it lexes whole when it is
    /// outside quotes; with it, when a backslash escapes it; with a `'`
    /// added, when it is inside single quotes.
    fn quoting(&mut self, start: usize, at: usize, byte: u8) -> Result<Quoting, Unreadable> {
        if start == at || self.lexes(start, at, b"")? {
            Ok(Quoting::Outside)
        } else if self.lexes(start, at, &[byte])? {
            Ok(Quoting::Escaped)
        } else if self.lexes(start, at, b"'")? {
            Ok(Quoting::Single)
        } else {
            Ok(Quoting::Double)
        }
    }

    /// Whether `src[start..end]` followed by `probe` lexes without an open
    /// quote or a trailing backslash.
    fn lexes(&mut self, start: usize, end: usize, probe: &[u8]) -> Result<bool, Unreadable> {
        let cost = end - start + probe.len();
        *self.budget = self.budget.checked_sub(cost).ok_or(Unreadable::TooComplex)?;
        self.scratch.clear();
        self.scratch.push_str(&self.src[start..end]);
        self.scratch
            .push_str(std::str::from_utf8(probe).unwrap_or_default());
        let mut lexer = shlex::bytes::Shlex::new(self.scratch.as_bytes());
        lexer.by_ref().for_each(drop);
        Ok(!lexer.had_error)
    }

    /// The end of a quoted stretch the character at `at` lies in: the
    /// first closing quote after which the word lexes whole. Inside double
    /// quotes, `$` and backticks still expand.
    fn close_quote(&mut self, start: usize, at: usize, quote: Quoting) -> Result<usize, Unreadable> {
        let closer = if quote == Quoting::Single { b'\'' } else { b'"' };
        let bytes = self.src.as_bytes();
        let mut from = at;
        while let Some(offset) = bytes[from..].iter().position(|&b| b == closer) {
            let end = from + offset + 1;
            if self.lexes(start, end, b"")? {
                if quote == Quoting::Double {
                    for index in at..end {
                        match bytes[index] {
                            b'$' => self.expansion(bytes.get(index + 1) == Some(&b'(')),
                            b'`' => self.expansion(true),
                            _ => {}
                        }
                    }
                }
                return Ok(end);
            }
            from = end;
        }
        Err(Unreadable::UnbalancedQuote)
    }

    /// A character a backslash escapes; an escaped newline joins lines.
    fn escaped(&mut self, byte: u8, at: usize) -> usize {
        let only_the_backslash = self.word.as_ref().is_some_and(|word| word.start + 1 == at);
        if byte == b'\n' && only_the_backslash {
            self.word = None;
        }
        at + 1
    }

    /// What an unquoted special character does; the index to read on from.
    fn outside(&mut self, byte: u8, at: usize) -> usize {
        let next = self.src.as_bytes().get(at + 1).copied();
        match byte {
            b' ' | b'\t' => self.end_word(at),
            b'\n' | b'(' | b')' => self.separate(at),
            b'#' if self.word.is_none() => {
                // A comment runs to the end of the line.
                return self.src[at..]
                    .find('\n')
                    .map_or(self.src.len(), |offset| at + offset);
            }
            b';' if matches!(next, Some(b';' | b'&')) => {
                // `;;` and `;&` end a case clause.
                self.piece.problem.get_or_insert(Unreadable::Compound);
                self.separate(at);
                return at + 2;
            }
            b';' => self.separate(at),
            b'&' if next == Some(b'>') => {
                self.end_word(at);
                let append = self.src.as_bytes().get(at + 2) == Some(&b'>');
                return self.redirect(Target::Write, at + 2 + usize::from(append));
            }
            b'&' | b'|' => {
                self.separate(at);
                if matches!((byte, next), (b'&', Some(b'&')) | (b'|', Some(b'|' | b'&'))) {
                    return at + 2;
                }
            }
            b'<' | b'>' => return self.redirection(at),
            b'$' => {
                self.open(at);
                self.expansion(next == Some(b'('));
            }
            b'`' => {
                self.open(at);
                self.expansion(true);
            }
            b'~' if self.word.is_none() => {
                self.open(at);
                self.set(|word| word.tilde = true);
            }
            b'*' | b'?' | b'[' => {
                self.open(at);
                self.set(|word| word.glob = true);
            }
            b'{' => {
                self.open(at);
                self.set(|word| word.brace = true);
            }
            _ => self.open(at), // a `#` or `~` inside a word
        }
        at + 1
    }

    /// A redirection operator at `at`; a run of digits just before it is
    /// the descriptor it redirects (`2>`), not a word.
    fn redirection(&mut self, at: usize) -> usize {
        let descriptor = self
            .word
            .as_ref()
            .is_some_and(|word| self.src.as_bytes()[word.start..at].iter().all(u8::is_ascii_digit));
        if descriptor {
            self.word = None;
        } else {
            self.end_word(at);
        }
        let bytes = self.src.as_bytes();
        let (next, after) = (bytes.get(at + 1).copied(), bytes.get(at + 2).copied());
        let (target, width) = match (bytes[at], next, after) {
            (b'>', Some(b'>' | b'|'), _) => (Target::Write, 2),
            (b'>', Some(b'&'), _) => (Target::Descriptor { write: true }, 2),
            (b'>', ..) => (Target::Write, 1),
            (b'<', Some(b'<'), Some(b'<')) => (Target::Read, 3),
            (b'<', Some(b'<'), _) => {
                // A here-document: its body is on the lines that follow,
                // which this reader would take for commands.
                self.piece.problem.get_or_insert(Unreadable::Redirection);
                (Target::Read, if after == Some(b'-') { 3 } else { 2 })
            }
            (b'<', Some(b'&'), _) => (Target::Descriptor { write: false }, 2),
            (b'<', Some(b'>'), _) => (Target::Write, 2),
            _ => (Target::Read, 1),
        };
        self.redirect(target, at + width)
    }

    fn redirect(&mut self, target: Target, next: usize) -> usize {
        if self.redirect.replace(target).is_some() {
            // The previous redirection had no target word.
            self.piece.problem.get_or_insert(Unreadable::Redirection);
        }
        next
    }

    fn expansion(&mut self, runs_code: bool) {
        self.set(|word| {
            word.runs_code |= runs_code;
            let problem = if runs_code {
                Unreadable::Substitution
            } else {
                Unreadable::Expansion
            };
            word.problem.get_or_insert(problem);
        });
    }

    fn set(&mut self, change: impl FnOnce(&mut Open)) {
        if let Some(word) = &mut self.word {
            change(word);
        }
    }

    fn open(&mut self, at: usize) {
        self.word.get_or_insert(Open {
            start: at,
            problem: None,
            runs_code: false,
            glob: false,
            brace: false,
            tilde: false,
        });
    }

    fn end_word(&mut self, end: usize) {
        let Some(open) = self.word.take() else { return };
        let raw = &self.src[open.start..end];
        let mut problem = open.problem;
        if (open.glob && !matches!(raw, "[" | "[[")) || (open.brace && is_brace_expansion(raw)) {
            problem.get_or_insert(Unreadable::Glob);
        }
        if open.tilde && raw != "~" && !raw.starts_with("~/") {
            problem.get_or_insert(Unreadable::Expansion); // `~user`
        }
        if open.runs_code {
            self.piece.substitutions += 1;
        }
        let text = match shlex::split(raw) {
            Some(mut words) if words.len() == 1 => words.remove(0),
            _ => {
                // An open quote (or a lone backslash) at the end of the line.
                self.piece.broken = Some(Unreadable::UnbalancedQuote);
                return;
            }
        };
        let word = Word {
            text,
            raw: raw.to_owned(),
            problem,
        };
        match self.redirect.take() {
            None => self.piece.words.push(word),
            Some(target) => self.target(target, word),
        }
    }

    /// The word after a redirection.
    fn target(&mut self, target: Target, word: Word) {
        let writes = match target {
            Target::Write => true,
            Target::Read => false,
            Target::Descriptor { write } => {
                write && !(word.text == "-" || word.text.bytes().all(|b| b.is_ascii_digit()))
            }
        };
        match (writes, word.problem) {
            (true, None) => self.piece.writes.push(word.text),
            (true, Some(_)) => {
                self.piece.problem.get_or_insert(Unreadable::Redirection);
            }
            (false, _) => {}
        }
    }

    /// Ends the word and the simple command.
    fn separate(&mut self, at: usize) {
        self.end_word(at);
        self.end_piece();
    }

    fn end_piece(&mut self) {
        if self.redirect.take().is_some() {
            self.piece.problem.get_or_insert(Unreadable::Redirection);
        }
        let piece = std::mem::take(&mut self.piece);
        if !piece.is_empty() {
            self.pieces.push(piece);
        }
    }

    /// Stops reading: the rest of the line, from the current command on,
    /// cannot be read.
    fn fail(&mut self, problem: Unreadable) {
        self.word = None;
        self.redirect = None;
        self.piece.broken = Some(problem);
        self.end_piece();
    }
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
