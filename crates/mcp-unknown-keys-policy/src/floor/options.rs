//! The options of the programs whose writes and removals the floor reads,
//! read as those programs read them: short options bundled (`-fsSLo FILE`,
//! `-Ei`, `-0pi`), a value attached or in the next word, and GNU long
//! options by any unambiguous prefix (`--recur`).
//!
//! Each program is one [`Grammar`] in [`grammar`]; what its options mean to
//! the floor (which one writes where) is in the checks' tables. A word
//! these grammars do not know is read as an option without a value: the
//! word after it is then an operand, which can only place more paths, and
//! so ask or deny more.

/// How one program reads its arguments.
pub(super) struct Grammar {
    /// Short options whose value is the rest of the word or, when nothing
    /// follows in the word, the next word (`-o FILE`, `-oFILE`).
    valued: &'static str,
    /// Short options whose value, when given, is the rest of the word
    /// (`sed -i.bak`, `perl -MPOSIX`).
    optional: &'static str,
    /// Short options followed by digits in the same word (`perl -0777`).
    digits: &'static str,
    /// Long options by full name; a name ending in `=` takes a value (the
    /// rest after `=`, or the next word), one ending in `?` takes one only
    /// after `=`.
    long: &'static [&'static str],
    /// Whether a long option may be shortened to any unambiguous prefix
    /// (GNU `getopt_long`; curl reads only whole names).
    prefixes: bool,
    /// Whether options end at the first operand (perl reads its switches
    /// before the script; GNU programs read options anywhere).
    stop_at_operand: bool,
    /// The options that give the program's script, without which its first
    /// operand is the script (`sed 's/a/b/' FILE`), not a file it edits.
    script: &'static [Named],
}

/// One argument, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg<'a> {
    /// A short option (`o` for `-o`), with its value when it has one.
    Short(char, Option<&'a str>),
    /// A long option by its full name (`recursive` for `--rec`), with its
    /// value when it has one.
    Long(&'static str, Option<&'a str>),
    /// A long option the grammar does not know, or an ambiguous prefix,
    /// as written.
    Unknown(&'a str),
    /// A word that is not an option.
    Operand(&'a str),
}

/// An option by its short and long names (`'\0'` or `""` for none).
pub(super) type Named = (char, &'static str);

impl<'a> Arg<'a> {
    /// Whether it is the option `named`.
    pub(super) fn is(&self, (short, long): Named) -> bool {
        match *self {
            Arg::Short(letter, _) => letter == short,
            Arg::Long(name, _) => !long.is_empty() && name == long,
            Arg::Unknown(_) | Arg::Operand(_) => false,
        }
    }

    /// Its value, when it is the option `named` and has one.
    pub(super) fn value_of(&self, named: Named) -> Option<&'a str> {
        match *self {
            Arg::Short(_, value) | Arg::Long(_, value) if self.is(named) => value,
            _ => None,
        }
    }
}

/// The grammar of a program, by base name (folded), when the floor reads
/// its options.
pub(super) fn grammar(name: &str) -> Option<&'static Grammar> {
    Some(match name {
        "rm" => &Grammar {
            valued: "",
            optional: "",
            digits: "",
            long: &[
                "force",
                "interactive?",
                "one-file-system",
                "no-preserve-root",
                "preserve-root?",
                "recursive",
                "dir",
                "verbose",
                "help",
                "version",
            ],
            prefixes: true,
            stop_at_operand: false,
            script: &[],
        },
        "sed" => &Grammar {
            valued: "efl",
            optional: "i",
            digits: "",
            long: &[
                "expression=",
                "file=",
                "in-place?",
                "line-length=",
                "quiet",
                "silent",
                "null-data",
                "zero-terminated",
                "regexp-extended",
                "separate",
                "sandbox",
                "unbuffered",
                "binary",
                "debug",
                "posix",
                "follow-symlinks",
                "help",
                "version",
            ],
            prefixes: true,
            stop_at_operand: false,
            script: &[('e', "expression"), ('f', "file")],
        },
        "perl" => &Grammar {
            valued: "eEI",
            optional: "iMmxdDCF",
            digits: "0l",
            long: &["help", "version"],
            prefixes: false,
            stop_at_operand: true,
            script: &[('e', ""), ('E', "")],
        },
        "curl" => &Grammar {
            valued: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
            optional: "",
            digits: "",
            long: &[
                "output=",
                "dump-header=",
                "cookie-jar=",
                "trace=",
                "trace-ascii=",
                "stderr=",
                "output-dir=",
                "header=",
                "data=",
                "user=",
                "request=",
                "url=",
            ],
            prefixes: false,
            stop_at_operand: false,
            script: &[],
        },
        "wget" => &Grammar {
            // `-n` takes one letter after it (`-nv`, `-nc`, `-np`).
            valued: "eoaiBtOTwQPlARDIXUn",
            optional: "",
            digits: "",
            long: &[
                "output-document=",
                "output-file=",
                "append-output=",
                "directory-prefix=",
                "input-file=",
                "execute=",
                "user-agent=",
                "header=",
                "post-data=",
                "post-file=",
                "tries=",
                "timeout=",
                "quiet",
                "verbose",
                "no-verbose",
                "continue",
                "recursive",
                "level=",
            ],
            prefixes: true,
            stop_at_operand: false,
            script: &[],
        },
        _ => return None,
    })
}

impl Grammar {
    /// Reads `args` as the program does.
    pub(super) fn read<'a>(&self, args: &'a [String]) -> Vec<Arg<'a>> {
        let mut read = Vec::new();
        let mut options = true;
        let mut index = 0;
        while let Some(word) = args.get(index) {
            index += 1;
            let next = args.get(index).map(String::as_str);
            if !options || word == "-" || !word.starts_with('-') {
                read.push(Arg::Operand(word));
                options &= !self.stop_at_operand;
                continue;
            }
            if word == "--" {
                options = false;
                continue;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (long, None),
                };
                read.push(match self.long_option(name) {
                    Some((full, true)) if value.is_none() => {
                        index += usize::from(next.is_some());
                        Arg::Long(full, next)
                    }
                    Some((full, _)) => Arg::Long(full, value),
                    None => Arg::Unknown(word),
                });
                continue;
            }
            index += self.short_options(&word[1..], next, &mut read);
        }
        read
    }

    /// Reads one bundle of short options (`fsSLo`, after its dash), and
    /// says how many more words it took (its value, when it is the next
    /// word).
    fn short_options<'a>(&self, mut rest: &'a str, next: Option<&'a str>, read: &mut Vec<Arg<'a>>) -> usize {
        while let Some(letter) = rest.chars().next() {
            rest = &rest[letter.len_utf8()..];
            if self.valued.contains(letter) {
                if rest.is_empty() {
                    read.push(Arg::Short(letter, next));
                    return usize::from(next.is_some());
                }
                read.push(Arg::Short(letter, Some(rest)));
                return 0;
            }
            if self.optional.contains(letter) {
                read.push(Arg::Short(letter, (!rest.is_empty()).then_some(rest)));
                return 0;
            }
            if self.digits.contains(letter) {
                // Octal, or hexadecimal after `x` (`-0777`, `-0x1FF`).
                let digits = match rest.strip_prefix('x') {
                    Some(hex) => 1 + hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len()),
                    None => rest
                        .find(|c: char| !('0'..='7').contains(&c))
                        .unwrap_or(rest.len()),
                };
                read.push(Arg::Short(letter, (digits > 0).then_some(&rest[..digits])));
                rest = &rest[digits..];
                continue;
            }
            read.push(Arg::Short(letter, None));
        }
        0
    }

    /// The full name of a long option (`recursive` for `rec`), and whether
    /// it takes the next word as its value; `None` for a name it does not
    /// know or that is ambiguous.
    fn long_option(&self, name: &str) -> Option<(&'static str, bool)> {
        let bare = |spec: &'static str| spec.trim_end_matches(['=', '?']);
        let exact = self.long.iter().find(|spec| bare(spec) == name);
        let spec = exact.or_else(|| {
            let mut matching = self
                .long
                .iter()
                .filter(|spec| self.prefixes && !name.is_empty() && bare(spec).starts_with(name));
            let first = matching.next();
            first.filter(|_| matching.next().is_none())
        })?;
        Some((bare(spec), spec.ends_with('=')))
    }

    /// The operands the program reads as files: all of them, less its
    /// script when no option gave one.
    pub(super) fn files<'a>(&self, read: &[Arg<'a>]) -> Vec<&'a str> {
        let scripted = self.script.is_empty()
            || read
                .iter()
                .any(|arg| self.script.iter().any(|&named| arg.is(named)));
        read.iter()
            .filter_map(|arg| match arg {
                Arg::Operand(word) => Some(*word),
                _ => None,
            })
            .skip(usize::from(!scripted))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(program: &str, line: &str) -> Vec<Arg<'static>> {
        let args: Vec<String> = line.split(' ').map(str::to_owned).collect();
        let args: &'static [String] = Vec::leak(args);
        grammar(program).unwrap().read(args)
    }

    #[test]
    fn bundles_are_read_letter_by_letter_up_to_a_value() {
        use Arg::*;
        assert_eq!(
            read("curl", "-fsSLo out https://x"),
            [
                Short('f', None),
                Short('s', None),
                Short('S', None),
                Short('L', None),
                Short('o', Some("out")),
                Operand("https://x")
            ]
        );
        assert_eq!(read("curl", "-Hox"), [Short('H', Some("ox"))]);
        assert_eq!(
            read("wget", "-nv -qO-"),
            [Short('n', Some("v")), Short('q', None), Short('O', Some("-"))]
        );
        assert_eq!(
            read("sed", "-ni.bak p"),
            [Short('n', None), Short('i', Some(".bak")), Operand("p")]
        );
        assert_eq!(
            read("perl", "-0777pi -e s"),
            [
                Short('0', Some("777")),
                Short('p', None),
                Short('i', None),
                Short('e', Some("s"))
            ]
        );
        assert_eq!(read("perl", "-0e s"), [Short('0', None), Short('e', Some("s"))]);
    }

    #[test]
    fn perl_reads_no_switch_after_its_script() {
        use Arg::*;
        assert_eq!(
            read("perl", "x.pl -i f"),
            [Operand("x.pl"), Operand("-i"), Operand("f")]
        );
        assert_eq!(
            read("sed", "p -i f"),
            [Operand("p"), Short('i', None), Operand("f")]
        );
    }

    #[test]
    fn long_options_are_read_by_an_unambiguous_prefix() {
        use Arg::*;
        assert_eq!(read("rm", "--rec"), [Long("recursive", None)]);
        assert_eq!(read("rm", "--v"), [Unknown("--v")], "verbose or version");
        assert_eq!(read("wget", "--output-d f"), [Long("output-document", Some("f"))]);
        assert_eq!(
            read("curl", "--out f"),
            [Unknown("--out"), Operand("f")],
            "curl takes whole names"
        );
        assert_eq!(
            read("sed", "--in-place=.b -- -i"),
            [Long("in-place", Some(".b")), Operand("-i")]
        );
    }

    #[test]
    fn the_script_is_not_a_file_unless_an_option_gave_one() {
        let files = |program: &str, line: &str| grammar(program).unwrap().files(&read(program, line));
        assert_eq!(files("sed", "-i s/a/b/ f g"), ["f", "g"]);
        assert_eq!(files("sed", "-i -e s/a/b/ f"), ["f"]);
        assert_eq!(files("perl", "-pi -e s f"), ["f"]);
        assert_eq!(files("rm", "-rf a b"), ["a", "b"]);
    }
}
