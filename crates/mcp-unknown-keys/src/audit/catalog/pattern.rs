//! `patternProperties` patterns: ECMA-262 regular expressions, as JSON
//! Schema says, matched in time linear in the key whenever ECMA-262 allows.
//!
//! A server writes the pattern and a model writes the key, so the match
//! must not take exponential time: a backtracking engine answers
//! `^(a+)+$` against forty `a`s and a `!` only after hours, and patterns
//! such as `^([a-zA-Z0-9]+\s?)*$` are written in earnest. So a pattern is
//! checked to be ECMA-262 by regress (the ECMA-262 engine of the boa
//! JavaScript engine), then written again in the syntax of `regex-lite`,
//! whose searches take `O(pattern × key)` time, with ECMA-262's meaning
//! spelt out: `\d`, `\w` and `\b` in ASCII, `\s` and `.` with ECMA-262's
//! own sets, every literal character by its code point. A pattern using
//! what no linear-time engine matches — lookaround, backreferences — or a
//! Unicode property class (`\p{Lu}`, for which `regex-lite` has no tables),
//! or one too large for `regex-lite`, is never run against a key: no
//! bound on a backtracking engine's steps is safe when both the pattern and
//! the key are written by others. It is taken to match every key, so that
//! it never causes a false warning, and the catalogue says so once.

use std::fmt::Write as _;
use std::iter::Peekable;
use std::str::Chars;

/// A set of characters, as sorted ranges of code points.
type Set = &'static [(u32, u32)];

/// ECMA-262's `\d`.
const DIGIT: Set = &[(0x30, 0x39)];

/// ECMA-262's `\w`.
const WORD: Set = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];

/// ECMA-262's `\s`: WhiteSpace and LineTerminator.
const SPACE: Set = &[
    (0x9, 0xD),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];

/// ECMA-262's line terminators, which `.` does not match.
const LINE_TERMINATORS: Set = &[(0xA, 0xA), (0xD, 0xD), (0x2028, 0x2029)];

/// How deep a pattern's groups may nest for `regex-lite`, which parses and
/// compiles on the heap: deeper than any pattern a schema writes in earnest,
/// shallow enough to bound the work of reading one.
const NEST_LIMIT: u32 = 1_000;

/// A compiled pattern.
#[derive(Clone, Debug)]
pub(crate) enum Matcher {
    /// Matched in time linear in the key.
    Linear(regex_lite::Regex),
    /// Lookaround, a backreference, a Unicode property class, or too large:
    /// not matched in linear time, so never run; taken to match every key.
    Unmatched,
}

impl Matcher {
    /// Whether the pattern matches somewhere in `key` (it is not anchored
    /// unless it says so); `true` for a pattern that is never run.
    pub(crate) fn is_match(&self, key: &str) -> bool {
        match self {
            Matcher::Linear(regex) => regex.is_match(key),
            Matcher::Unmatched => true,
        }
    }

    /// Whether the pattern is matched at all (rather than taken to match
    /// every key).
    pub(crate) fn is_matched(&self) -> bool {
        matches!(self, Matcher::Linear(_))
    }
}

/// Compiles a pattern as ECMA-262 with Unicode, as JSON Schema says, or
/// without the `u` flag for a pattern only valid so (`\_`, which many
/// schemas write); `None` when it is not ECMA-262 either way.
pub(crate) fn compile(source: &str) -> Option<Matcher> {
    let unicode = regress::Flags {
        unicode: true,
        ..regress::Flags::default()
    };
    let unicode = match regress::Regex::with_flags(source, unicode) {
        Ok(_) => true,
        Err(_) => {
            regress::Regex::new(source).ok()?;
            false
        }
    };
    let linear = Translation::new(source, unicode).pattern().and_then(|written| {
        regex_lite::RegexBuilder::new(&written)
            .nest_limit(NEST_LIMIT)
            .build()
            .ok()
    });
    Some(linear.map_or(Matcher::Unmatched, Matcher::Linear))
}

/// An ECMA-262 pattern, already known to be valid, written again for
/// `regex-lite`; `None` at the first construct it cannot match so.
struct Translation<'a> {
    chars: Peekable<Chars<'a>>,
    unicode: bool,
    out: String,
}

/// What an escape stands for.
enum Atom {
    Char(char),
    /// A class escape (`\d`, `\S`…): a set, or all but a set.
    Class {
        set: Set,
        negated: bool,
    },
    /// `\b` or `\B`, outside a class.
    Boundary(char),
}

impl<'a> Translation<'a> {
    fn new(source: &'a str, unicode: bool) -> Translation<'a> {
        Translation {
            chars: source.chars().peekable(),
            unicode,
            out: String::with_capacity(source.len() * 4),
        }
    }

    fn pattern(mut self) -> Option<String> {
        while let Some(c) = self.chars.next() {
            match c {
                '\\' => match self.escape()? {
                    Atom::Char(c) => self.literal(c),
                    Atom::Class { set, negated } => {
                        self.out.push_str(if negated { "[^" } else { "[" });
                        self.members(set, false);
                        self.out.push(']');
                    }
                    Atom::Boundary(c) => {
                        self.out.push('\\');
                        self.out.push(c);
                    }
                },
                '[' => self.class()?,
                '(' => self.group()?,
                '.' => {
                    self.out.push_str("[^");
                    self.members(LINE_TERMINATORS, false);
                    self.out.push(']');
                }
                ')' | '|' | '^' | '$' | '*' | '+' | '?' => self.out.push(c),
                '{' => self.brace(),
                c => self.literal(c),
            }
        }
        Some(self.out)
    }

    /// A character matched as itself.
    fn literal(&mut self, c: char) {
        if c.is_ascii_alphanumeric() {
            self.out.push(c);
        } else {
            let _ = write!(self.out, r"\x{{{:X}}}", u32::from(c));
        }
    }

    /// `{`: a quantifier when it reads as one, else (without the `u` flag)
    /// the character itself.
    fn brace(&mut self) {
        let rest: String = self.chars.clone().take_while(|c| *c != '}').collect();
        let (low, high) = rest.split_once(',').unwrap_or((&rest, &rest));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let closed = self.chars.clone().nth(rest.chars().count()) == Some('}');
        if closed && digits(low) && (high.is_empty() || digits(high)) {
            self.out.push('{');
            self.out.push_str(&rest);
            self.out.push('}');
            self.chars.nth(rest.chars().count());
        } else {
            self.literal('{');
        }
    }

    /// After `(`: a group, or a construct not matched here.
    fn group(&mut self) -> Option<()> {
        if self.chars.peek() != Some(&'?') {
            self.out.push('(');
            return Some(());
        }
        self.chars.next();
        match self.chars.next()? {
            ':' => self.out.push_str("(?:"),
            // A named group: its name matters only to backreferences.
            '<' if !matches!(self.chars.peek(), Some('=' | '!')) => {
                self.chars.by_ref().find(|c| *c == '>')?;
                self.out.push_str("(?:");
            }
            // Lookahead, lookbehind, modifiers.
            _ => return None,
        }
        Some(())
    }

    /// After `\` outside or inside a class: what it stands for.
    fn escape(&mut self) -> Option<Atom> {
        let class = |set, negated| Atom::Class { set, negated };
        let c = self.chars.next()?;
        Some(match c {
            'd' | 'D' => class(DIGIT, c == 'D'),
            'w' | 'W' => class(WORD, c == 'W'),
            's' | 'S' => class(SPACE, c == 'S'),
            't' => Atom::Char('\t'),
            'n' => Atom::Char('\n'),
            'v' => Atom::Char('\u{b}'),
            'f' => Atom::Char('\u{c}'),
            'r' => Atom::Char('\r'),
            '0' if !self.chars.peek().is_some_and(char::is_ascii_digit) => Atom::Char('\0'),
            // Backreferences, and octal escapes without the `u` flag.
            '0'..='9' | 'k' => return None,
            // Unicode property classes.
            'p' | 'P' if self.unicode => return None,
            'c' => {
                let letter = self.chars.next().filter(char::is_ascii_alphabetic)?;
                Atom::Char(char::from(letter as u8 % 32))
            }
            'x' => match self.hex(2) {
                Some(code) => Atom::Char(char::from_u32(code)?),
                None if self.unicode => return None,
                None => Atom::Char('x'),
            },
            'u' => match self.unicode_escape()? {
                Some(c) => Atom::Char(c),
                None => Atom::Char('u'),
            },
            // `\b` and `\B` are word boundaries outside a class (a class
            // reads `\b` itself).
            'b' | 'B' => Atom::Boundary(c),
            c => Atom::Char(c),
        })
    }

    /// After `\u`: the character of `XXXX` (a surrogate pair joined), or of
    /// `{X…}` with the `u` flag; `Some(None)` for `\u` as a mere `u`
    /// (without the `u` flag); `None` for a lone surrogate.
    fn unicode_escape(&mut self) -> Option<Option<char>> {
        if self.unicode && self.chars.peek() == Some(&'{') {
            self.chars.next();
            let digits: String = self.chars.by_ref().take_while(|c| *c != '}').collect();
            return Some(Some(char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?));
        }
        let Some(high) = self.hex(4) else {
            return if self.unicode { None } else { Some(None) };
        };
        if !(0xD800..0xDC00).contains(&high) {
            return Some(Some(char::from_u32(high)?));
        }
        let mut ahead = self.chars.clone();
        if ahead.next() != Some('\\') || ahead.next() != Some('u') {
            return None;
        }
        self.chars.nth(1);
        let low = self.hex(4).filter(|low| (0xDC00..0xE000).contains(low))?;
        Some(Some(char::from_u32(
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00),
        )?))
    }

    /// `count` hex digits, consumed only when all are there.
    fn hex(&mut self, count: usize) -> Option<u32> {
        let digits: String = self.chars.clone().take(count).collect();
        if digits.len() != count || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.chars.nth(count - 1);
        u32::from_str_radix(&digits, 16).ok()
    }

    /// After `[`: a class, its members written each by code point.
    fn class(&mut self) -> Option<()> {
        let negated = self.chars.next_if_eq(&'^').is_some();
        if self.chars.next_if_eq(&']').is_some() {
            // `[^]` is any character; `[]` matches nothing, as a boundary
            // that is also none never does.
            self.out.push_str(if negated { "(?s:.)" } else { r"(?:\b\B)" });
            return Some(());
        }
        self.out.push_str(if negated { "[^" } else { "[" });
        loop {
            let atom = match self.chars.next()? {
                ']' => break,
                '\\' => match self.chars.peek() {
                    Some('b') => {
                        self.chars.next();
                        Atom::Char('\u{8}')
                    }
                    Some('-') => {
                        self.chars.next();
                        Atom::Char('-')
                    }
                    _ => self.escape()?,
                },
                c => Atom::Char(c),
            };
            match atom {
                // `regex-lite` nests no class: a class escape's members, or
                // those of its complement, are written in place.
                Atom::Class { set, negated } => self.members(set, negated),
                // Without the `u` flag, `\B` in a class is a `B`.
                Atom::Boundary(c) => self.member(c),
                Atom::Char(low) => {
                    let range = self.chars.peek() == Some(&'-')
                        && self.chars.clone().nth(1).is_some_and(|c| c != ']');
                    self.member(low);
                    if range {
                        self.chars.next();
                        let high = match self.chars.next()? {
                            '\\' => self.escape()?,
                            c => Atom::Char(c),
                        };
                        match high {
                            Atom::Char(high) => {
                                self.out.push('-');
                                self.member(high);
                            }
                            // `a-\d` without the `u` flag: `a`, `-` and the class.
                            Atom::Class { set, negated } => {
                                self.member('-');
                                self.members(set, negated);
                            }
                            Atom::Boundary(c) => {
                                self.member('-');
                                self.member(c);
                            }
                        }
                    }
                }
            }
        }
        self.out.push(']');
        Some(())
    }

    /// One character of a class, by code point.
    fn member(&mut self, c: char) {
        let _ = write!(self.out, r"\x{{{:X}}}", u32::from(c));
    }

    /// The ranges of `set` as members of a class, or those of every other
    /// character when `negated`.
    fn members(&mut self, set: Set, negated: bool) {
        let mut range = |(low, high): (u32, u32)| {
            let _ = write!(self.out, r"\x{{{low:X}}}-\x{{{high:X}}}");
        };
        if !negated {
            set.iter().copied().for_each(range);
            return;
        }
        let mut next = 0;
        for &(low, high) in set {
            if low > next {
                range((next, low - 1));
            }
            next = high + 1;
        }
        range((next, char::MAX.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(pattern: &str) -> regex_lite::Regex {
        match compile(pattern) {
            Some(Matcher::Linear(regex)) => regex,
            other => panic!("{pattern}: {other:?}"),
        }
    }

    fn matches(pattern: &str, key: &str) -> bool {
        linear(pattern).is_match(key)
    }

    #[test]
    fn a_pattern_that_backtracks_exponentially_answers_at_once() {
        // A backtracking engine takes about 2^n steps here: n = 64 would
        // outlast the test run by far. A thread keeps a regression from
        // hanging the run: it fails after a generous while instead.
        let (sent, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let key = format!("{}!", "a".repeat(64));
            let nested = ["^(a+)+$", "^(a|a)*$", "^([a-zA-Z0-9]+\\s?)*$", "(x+x+)+y"];
            let _ = sent.send(nested.map(|pattern| matches(pattern, &key)));
        });
        let answers = answered
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("answered in linear time");
        assert_eq!(answers, [false; 4]);
    }

    #[test]
    fn ecma_262_meanings_are_kept() {
        for (pattern, key, expected) in [
            (r"^x-", "x-trace", true),
            (r"^x-", "a-x-", false),
            (r"^\d+$", "١٢", false), // ECMA-262's \d is ASCII
            (r"^\d{2,3}$", "123", true),
            (r"^\w+$", "é", false),
            (r"^\s$", "\u{a0}", true), // and its \s is not
            (r"^\s$", "\u{feff}", true),
            (r"^.$", "\n", false),
            (r"^.$", "\u{2028}", false),
            (r"^.$", "😀", true),
            (r"^[^]$", "\n", true),
            (r"^\u0041\x42\u{1F600}$", "AB😀", true),
            (r"^\uD83D\uDE00$", "😀", true),
            (r"^[a-c\d_-]+$", "ab1_-", true),
            (r"^[\s\S]$", "x", true),
            (r"^[^\D]$", "7", true),
            (r"\bword\b", "a word", true),
            (r"^[\b]$", "\u{8}", true),
            (r"^a{2}$", "aa", true),
            (r"^a{,2}$", "a{,2}", true), // not a quantifier without the u flag
            (r"^\_$", "_", true),        // valid without the u flag only
            (r"^(?<name>a)(?:b)$", "ab", true),
            (r"^[.*+?]$", "*", true),
            (r"^\cJ$", "\n", true),
            (r"a&&b", "a&&b", true),
            (r"^[&&]$", "&", true),
        ] {
            assert_eq!(matches(pattern, key), expected, "{pattern} on {key:?}");
        }
    }

    #[test]
    fn what_no_linear_engine_matches_is_never_run_and_the_rest_is_no_pattern() {
        assert!(compile("([").is_none());
        // Nested far past regex-lite's default limit, but still read by it.
        let deep = format!("^{}(a+)+{}$", "(".repeat(120), ")".repeat(120));
        assert!(matches(&deep, "aaa"));
        assert!(!matches(&deep, &format!("{}!", "a".repeat(64))));
        // What no linear-time engine matches (and a pattern too large for
        // regex-lite) is never run: taken to match any key.
        for pattern in [
            r"^n(?=\d)\d+$",
            r"(?<!a)b",
            r"^(a)\1$",
            r"^\p{Lu}{2}$",
            r"^(?<n>a)\k<n>$",
            r"^(?=(a+)+$)",
            r"^(a{1000}){1000}$",
        ] {
            let matcher = compile(pattern).unwrap_or_else(|| panic!("not ECMA-262: {pattern:.40}"));
            assert!(!matcher.is_matched(), "{pattern}");
            assert!(matcher.is_match(&format!("{}!", "a".repeat(64))), "{pattern}");
        }
        // `[]` matches nothing, as in ECMA-262.
        for key in ["a", "ab", "a ", ""] {
            assert!(!matches("a[]", key), "{key:?}");
        }
    }
}
