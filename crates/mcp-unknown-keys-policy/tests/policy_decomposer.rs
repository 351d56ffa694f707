//! The command decomposer, a pure function: what a shell line or an argv
//! runs, simple command by simple command, and what it cannot read.

use mcp_unknown_keys_policy::command::{Command, Unreadable, decompose_argv, decompose_line};
use proptest::prelude::*;

/// Each command as `name arg…`, `?` for a program that cannot be read.
fn shown(commands: &[Command]) -> Vec<String> {
    commands
        .iter()
        .map(|command| {
            let mut words = vec![command.name().unwrap_or("?").to_owned()];
            words.extend(command.args.iter().cloned());
            words.join(" ")
        })
        .collect()
}

fn line(text: &str) -> Vec<String> {
    shown(&decompose_line(text))
}

fn argv(words: &[&str]) -> Vec<String> {
    shown(&decompose_argv(words))
}

/// Why each command could not be read in full (`None` when it could).
fn unreadable(text: &str) -> Vec<Option<Unreadable>> {
    decompose_line(text).iter().map(|c| c.unreadable).collect()
}

// --- Lists and pipelines ---

#[test]
fn lists_and_pipelines_are_split_into_simple_commands() {
    for text in [
        "git status && rm -rf /",
        "git status || rm -rf /",
        "git status; rm -rf /",
        "git status | rm -rf /",
        "git status |& rm -rf /",
        "git status & rm -rf /",
        "git status\nrm -rf /",
        "git status&&rm -rf /",
        "git status;rm -rf /",
        "git status|rm -rf /",
    ] {
        assert_eq!(line(text), ["git status", "rm -rf /"], "{text:?}");
    }
    assert_eq!(line("a | b && c; d || e & f"), ["a", "b", "c", "d", "e", "f"]);
}

#[test]
fn operators_inside_quotes_or_escaped_do_not_split() {
    assert_eq!(
        line(r#"git commit -m "a && b || c; d | e > f""#),
        ["git commit -m a && b || c; d | e > f"]
    );
    assert_eq!(line("grep 'foo|bar;baz' src"), ["grep foo|bar;baz src"]);
    assert_eq!(
        line(r"find . -name x -exec rm {} \; -print"),
        ["find . -name x -exec rm {} ; -print", "rm {}"]
    );
    assert_eq!(line(r"echo a\&\&b"), ["echo a&&b"]);
    assert_eq!(line(r#"echo "it's" 'say "hi"'"#), [r#"echo it's say "hi""#]);
}

#[test]
fn blank_lines_and_comments_run_nothing() {
    assert!(decompose_line("").is_empty());
    assert!(decompose_line("  \t\n ; ").is_empty());
    assert!(decompose_line("# rm -rf /").is_empty());
    assert_eq!(line("ls # && rm -rf /"), ["ls"]);
    assert_eq!(line("ls #comment\nrm -rf /"), ["ls", "rm -rf /"]);
    assert_eq!(line("echo a#b"), ["echo a#b"], "a # inside a word is a character");
}

#[test]
fn a_line_continuation_joins_lines() {
    assert_eq!(line("git \\\n push --force"), ["git push --force"]);
    assert_eq!(line("git pu\\\nsh"), ["git push"]);
}

// --- Wrappers ---

#[test]
fn each_wrapper_is_stripped_to_the_command_it_runs() {
    let cases: &[(&str, &str)] = &[
        ("env GIT_PAGER=cat git log", "git log"),
        ("env -i -u HOME -C /tmp PATH=/bin git log", "git log"),
        ("env - A=1 git log", "git log"),
        ("env --unset=HOME --chdir=/tmp git log", "git log"),
        ("timeout 30 git push", "git push"),
        ("timeout -s KILL -k 5 30s git push", "git push"),
        ("timeout --signal=TERM --preserve-status 1m git push", "git push"),
        ("nice git gc", "git gc"),
        ("nice -n 10 git gc", "git gc"),
        ("nice -10 git gc", "git gc"),
        ("nohup git fetch", "git fetch"),
        ("time git status", "git status"),
        ("time -p git status", "git status"),
        ("stdbuf -oL git log", "git log"),
        ("ionice -c 3 git gc", "git gc"),
        ("setsid -f git fetch", "git fetch"),
        ("exec git status", "git status"),
        ("exec -a name git status", "git status"),
        ("command git status", "git status"),
        ("command -p git status", "git status"),
        ("builtin cd /tmp", "cd /tmp"),
        ("busybox rm -rf /", "rm -rf /"),
        (
            "/usr/bin/env A=1 /usr/bin/timeout 5 nice -n 1 git status",
            "git status",
        ),
        ("ENV A=1 git status", "git status"),
    ];
    for (text, runs) in cases {
        assert_eq!(line(text), [*runs], "{text:?}");
    }
}

#[test]
fn a_wrapper_with_nothing_to_run_is_the_command() {
    assert_eq!(line("env"), ["env"]);
    assert_eq!(line("env A=1"), ["env A=1"]);
    assert_eq!(line("timeout 5"), ["timeout 5"]);
    assert_eq!(
        line("command -v git"),
        ["command -v git"],
        "command -v runs nothing"
    );
}

#[test]
fn xargs_runs_its_command_with_arguments_from_its_input() {
    let commands = decompose_line("find . -name '*.o' | xargs -0 -n 1 rm -f");
    assert_eq!(shown(&commands), ["find . -name *.o", "rm -f"]);
    assert_eq!(commands[1].unreadable, Some(Unreadable::FromInput));
    assert_eq!(line("xargs -I{} cp {} /tmp"), ["cp {} /tmp"]);
    assert_eq!(line("xargs -I {} cp {} /tmp"), ["cp {} /tmp"]);
    assert_eq!(line("xargs"), ["xargs"]);
}

#[test]
fn a_wrapper_option_it_does_not_know_leaves_the_program_unknown() {
    let commands = decompose_line("timeout --bogus 5 rm -rf /");
    assert_eq!(commands[0].program, None);
    assert_eq!(commands[0].unreadable, Some(Unreadable::WrapperOption));
    assert_eq!(commands[0].unread, ["timeout", "--bogus", "5", "rm", "-rf", "/"]);
    assert_eq!(unreadable("timeout $T rm -rf /"), [Some(Unreadable::Expansion)]);
    assert_eq!(line("timeout $T rm -rf /"), ["?"]);
}

#[test]
fn env_split_string_is_never_seen_through() {
    for text in [
        "env -S 'rm -rf /'",
        "env -iS 'rm -rf /'",
        "env --split-string='rm -rf /'",
    ] {
        assert_eq!(unreadable(text), [Some(Unreadable::SplitString)], "{text:?}");
        assert_eq!(line(text), ["?"]);
    }
}

#[test]
fn sudo_doas_and_pkexec_stay_visible_with_what_they_run() {
    assert_eq!(line("sudo rm -rf /"), ["sudo rm -rf /", "rm -rf /"]);
    assert_eq!(
        line("sudo -u root -E git status"),
        ["sudo -u root -E git status", "git status"]
    );
    assert_eq!(line("doas -u root rm x"), ["doas -u root rm x", "rm x"]);
    assert_eq!(
        line("pkexec --user root rm x"),
        ["pkexec --user root rm x", "rm x"]
    );
    assert_eq!(line("sudo -l"), ["sudo -l"]);
    let odd = decompose_line("sudo --bogus rm x");
    assert_eq!(shown(&odd), ["sudo --bogus rm x", "?"]);
}

#[test]
fn su_and_eval_run_their_command_strings() {
    assert_eq!(line("su -c 'rm -rf /' root"), ["su -c rm -rf / root", "rm -rf /"]);
    assert_eq!(
        line("su root --command='git status; ls'"),
        ["su root --command=git status; ls", "git status", "ls"]
    );
    assert_eq!(line("su -lc 'rm x'"), ["su -lc rm x", "rm x"]);
    assert_eq!(line("su root"), ["su root"]);
    assert_eq!(line("eval 'rm -rf /'"), ["rm -rf /"]);
    assert_eq!(line("eval git status '&&' rm -rf /"), ["git status", "rm -rf /"]);
    assert_eq!(line("eval"), ["eval"]);
    assert_eq!(unreadable("eval $CMD"), [Some(Unreadable::Expansion)]);
}

#[test]
fn find_stays_visible_with_what_its_exec_runs() {
    let commands = decompose_line("find . -name '*.tmp' -exec rm -f {} \\; -o -execdir echo {} +");
    assert_eq!(
        shown(&commands),
        [
            "find . -name *.tmp -exec rm -f {} ; -o -execdir echo {} +",
            "rm -f {}",
            "echo {}"
        ]
    );
    assert_eq!(
        commands[1].unreadable,
        Some(Unreadable::FromInput),
        "it gets the files found"
    );
    assert_eq!(line("find . -name x -delete"), ["find . -name x -delete"]);
    assert!(
        decompose_line("find . $ACTION")
            .iter()
            .any(|c| c.program.is_none()),
        "an unreadable word may be an -exec"
    );
}

#[test]
fn the_variables_set_for_a_command_are_named() {
    let commands = decompose_line("PATH=/tmp/evil GIT_PAGER='less -R' git log; env -i LD_PRELOAD=x.so ls");
    assert_eq!(commands[0].assigns, ["PATH", "GIT_PAGER"]);
    assert_eq!(commands[1].assigns, ["LD_PRELOAD"]);
    assert_eq!(commands[0].to_string(), "PATH=… GIT_PAGER=… git log");
    assert!(decompose_line("git log").iter().all(|c| c.assigns.is_empty()));
}

// --- Shells ---

#[test]
fn a_shell_command_string_is_read_as_a_line() {
    assert_eq!(line("bash -c 'git status; rm -rf /'"), ["git status", "rm -rf /"]);
    assert_eq!(
        line("sh -c \"git status && rm -rf /\""),
        ["git status", "rm -rf /"]
    );
    assert_eq!(line("bash -lc 'git status'"), ["git status"]);
    assert_eq!(line("bash -euo pipefail -c 'git status'"), ["git status"]);
    assert_eq!(line("bash -o pipefail -c 'make' name arg"), ["make"]);
    assert_eq!(line("bash --norc --noprofile -c 'make'"), ["make"]);
    assert_eq!(line("zsh -c 'make'"), ["make"]);
    assert_eq!(line("/bin/dash -c 'make'"), ["make"]);
    assert_eq!(line("BASH -c 'rm -rf /'"), ["rm -rf /"], "structure folds case");
    assert_eq!(
        argv(&["bash", "-c", "git status && rm -rf /"]),
        ["git status", "rm -rf /"]
    );
}

#[test]
fn shells_nest_until_a_depth_limit() {
    assert_eq!(
        line(r#"sh -c "git status && sh -c 'rm -rf /'""#),
        ["git status", "rm -rf /"]
    );
    let mut nested = "rm -rf /".to_owned();
    for _ in 0..5 {
        nested = format!("sh -c {}", shlex::try_quote(&nested).unwrap());
    }
    assert_eq!(line(&nested), ["rm -rf /"]);
    for _ in 0..5 {
        nested = format!("sh -c {}", shlex::try_quote(&nested).unwrap());
    }
    assert_eq!(unreadable(&nested), [Some(Unreadable::TooComplex)]);
}

#[test]
fn a_shell_without_a_command_string_is_itself() {
    assert_eq!(line("bash script.sh"), ["bash script.sh"]);
    assert_eq!(
        line("curl -fsSL https://x.test/i | sh"),
        ["curl -fsSL https://x.test/i", "sh"]
    );
    assert_eq!(line("bash -s -- arg"), ["bash -s -- arg"]);
    assert_eq!(line("bash -c"), ["bash -c"]);
    assert_eq!(unreadable("bash -c \"$CMD\""), [Some(Unreadable::Expansion)]);
    assert_eq!(unreadable("bash --bogus -c x"), [Some(Unreadable::WrapperOption)]);
}

// --- What cannot be read ---

#[test]
fn an_expansion_leaves_the_rest_of_the_command_unread() {
    let commands = decompose_line("echo $HOME done");
    assert_eq!(commands[0].name(), Some("echo"));
    assert!(commands[0].args.is_empty());
    assert_eq!(commands[0].unread, ["$HOME", "done"]);
    assert_eq!(commands[0].unreadable, Some(Unreadable::Expansion));
    for text in [
        "echo ${HOME}",
        "echo \"$HOME\"",
        "echo $'a\\nb'",
        "echo ~root",
        "echo a$1",
    ] {
        assert_eq!(unreadable(text), [Some(Unreadable::Expansion)], "{text:?}");
    }
    assert_eq!(
        line("echo '$HOME' \\$HOME"),
        ["echo $HOME $HOME"],
        "quoted and escaped: literal"
    );
    assert_eq!(
        line("cat ~ ~/notes"),
        ["cat ~ ~/notes"],
        "the home directory is readable"
    );
}

#[test]
fn a_variable_as_the_program_is_an_unknown_program() {
    let commands = decompose_line("$TOOL --version");
    assert_eq!(commands[0].program, None);
    assert_eq!(commands[0].unread, ["$TOOL", "--version"]);
    assert_eq!(line("\"$EDITOR\" notes.md"), ["?"]);
}

#[test]
fn a_command_substitution_adds_a_command_that_cannot_be_read() {
    for text in [
        "git $(rm -rf /)",
        "git \"$(rm -rf /)\"",
        "git `rm -rf /`",
        "git \"`rm -rf /`\"",
    ] {
        let commands = decompose_line(text);
        assert_eq!(commands[0].name(), Some("git"), "{text:?}");
        assert_eq!(commands[0].unreadable, Some(Unreadable::Substitution), "{text:?}");
        assert!(
            commands
                .iter()
                .any(|c| c.program.is_none() && c.unreadable == Some(Unreadable::Substitution)),
            "{text:?}: {commands:?}"
        );
    }
    let assigned = decompose_line("X=$(rm -rf /) git status");
    assert!(
        assigned.iter().any(|c| c.program.is_none()),
        "an assignment's substitution runs too"
    );
    assert!(shown(&assigned).contains(&"git status".to_owned()));
}

#[test]
fn globs_and_braces_cannot_be_read_but_brackets_and_braces_alone_can() {
    for text in ["ls *.rs", "ls file?", "ls [ab].txt", "echo {a,b}", "rm{,x} -rf /"] {
        assert!(
            unreadable(text).contains(&Some(Unreadable::Glob)),
            "{text:?}: {:?}",
            decompose_line(text)
        );
    }
    assert_eq!(line("[ -f x ]"), ["[ -f x ]"]);
    assert_eq!(line("echo {} {x} -I{}"), ["echo {} {x} -I{}"]);
    assert!(unreadable("echo {1..3}").contains(&Some(Unreadable::Glob)));
    assert_eq!(line("find . -exec ls {} +"), ["find . -exec ls {} +", "ls {}"]);
    assert_eq!(line("ls '*.rs' \"?\""), ["ls *.rs ?"], "quoted: literal");
    assert_eq!(
        argv(&["rm", "-rf", "/*"]),
        ["rm -rf /*"],
        "an argv is not globbed"
    );
}

#[test]
fn an_unbalanced_quote_leaves_the_rest_unreadable() {
    for text in [
        "echo \"unterminated",
        "echo 'unterminated",
        "git status; echo 'a; rm -rf /",
        "echo \\",
    ] {
        let commands = decompose_line(text);
        let last = commands.last().unwrap();
        assert_eq!(last.program, None, "{text:?}");
        assert_eq!(last.unreadable, Some(Unreadable::UnbalancedQuote), "{text:?}");
    }
    assert_eq!(line("git status; echo 'a; rm -rf /"), ["git status", "?"]);
}

#[test]
fn redirections_name_the_files_written() {
    let writes =
        |text: &str| -> Vec<Vec<String>> { decompose_line(text).into_iter().map(|c| c.writes).collect() };
    assert_eq!(writes("echo x > out.txt"), [["out.txt"]]);
    assert_eq!(writes("echo x>>~/.bashrc"), [["~/.bashrc"]]);
    assert_eq!(writes("make 2>&1 > build.log"), [["build.log"]]);
    assert_eq!(writes("make &> all.log"), [["all.log"]]);
    assert_eq!(writes("make &>> all.log"), [["all.log"]]);
    assert_eq!(
        writes("make >| forced.log 2> err.log"),
        [["forced.log", "err.log"]]
    );
    assert_eq!(writes("make >& both.log"), [["both.log"]]);
    assert_eq!(writes("sort < in.txt"), [Vec::<String>::new()]);
    assert_eq!(writes("cat <<< 'text'"), [Vec::<String>::new()]);
    assert_eq!(
        line("echo x 2>err 1>out y"),
        ["echo x y"],
        "descriptors are not arguments"
    );
    assert_eq!(
        writes("> truncated"),
        [["truncated"]],
        "a redirection alone still writes"
    );
    assert_eq!(line("> truncated"), ["?"]);
}

#[test]
fn redirections_it_cannot_place_are_unreadable() {
    for text in [
        "cat <<EOF\nhello\nEOF",
        "diff <(ls a) b",
        "tee >(rm x)",
        "echo x > $OUT",
        "echo x >",
        "echo x > > y",
    ] {
        assert_eq!(
            decompose_line(text)[0].unreadable,
            Some(Unreadable::Redirection),
            "{text:?}: {:?}",
            decompose_line(text)
        );
    }
}

#[test]
fn keywords_and_assignments_before_a_command_are_dropped() {
    assert_eq!(line("FOO=1 BAR=2 git status"), ["git status"]);
    assert_eq!(
        line("if rm -rf /; then git pull; else ls; fi"),
        ["rm -rf /", "git pull", "ls"]
    );
    assert_eq!(line("while true; do make; done"), ["true", "make"]);
    assert_eq!(line("! rm x"), ["rm x"]);
    assert_eq!(line("{ git status; rm -rf /; }"), ["git status", "rm -rf /"]);
    assert_eq!(line("(git status; rm -rf /)"), ["git status", "rm -rf /"]);
    assert_eq!(
        line("'FOO=1' git"),
        ["FOO=1 git"],
        "a quoted assignment is a program name"
    );
}

#[test]
fn compound_commands_cannot_be_read() {
    for text in [
        "for f in *; do rm $f; done",
        "case $x in a) rm -rf /;; esac",
        "[[ -f x ]] && ls",
        "function f { rm x; }",
    ] {
        assert!(
            decompose_line(text).iter().any(|c| c.program.is_none()),
            "{text:?}: {:?}",
            decompose_line(text)
        );
    }
}

#[test]
fn a_nul_cannot_be_read() {
    assert_eq!(unreadable("ls\0; rm -rf /"), [Some(Unreadable::Nul)]);
    let commands = decompose_argv(&["git\0x", "status"]);
    assert_eq!(commands[0].program, None);
    assert_eq!(commands[0].unreadable, Some(Unreadable::Nul));
}

#[test]
fn lexing_work_is_bounded_and_running_out_is_unreadable() {
    // Each quoted blank of one long word is asked about from the word's
    // start: past the line's budget, the word is too costly to read.
    let costly = format!("x{}", "' '".repeat(20_000));
    assert_eq!(unreadable(&costly), [Some(Unreadable::TooComplex)]);
    let long_but_cheap = format!("echo '{}'", "a ".repeat(32_000));
    assert_eq!(unreadable(&long_but_cheap), [None]);
    assert_eq!(decompose_line(&"true;".repeat(10_000)).len(), 10_000);
}

#[test]
fn commands_show_as_shell_lines() {
    let commands = decompose_line("git commit -m 'a b' > log; $X y");
    let shown: Vec<String> = commands.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["git commit -m 'a b' > log", "? $X y"]);
}

// --- Properties ---

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Nothing in a line makes the decomposer panic.
    #[test]
    fn no_line_makes_it_panic(text in any::<String>()) {
        decompose_line(&text);
    }

    /// Nor a line made of the characters the shell cares about.
    #[test]
    fn no_shell_line_makes_it_panic(text in r#"[a-z \t\n;&|()<>$`*?\[\]{}~#'"\\=!0-9/-]{0,80}"#) {
        for command in decompose_line(&text) {
            let _ = command.to_string();
        }
    }

    /// Nor an argv.
    #[test]
    fn no_argv_makes_it_panic(words in proptest::collection::vec(any::<String>(), 0..6)) {
        decompose_argv(&words);
    }

    /// Any text quoted as one word stays one word: quoting never splits.
    #[test]
    fn a_quoted_word_is_one_argument(text in "[^\0]{0,40}") {
        let quoted = shlex::try_quote(&text).unwrap();
        let commands = decompose_line(&format!("printf {quoted}"));
        prop_assert_eq!(commands.len(), 1);
        prop_assert_eq!(&commands[0].args, &[text]);
    }

    /// Plain words joined by operators come apart into those commands, in
    /// order.
    #[test]
    fn operators_split_plain_commands(
        commands in proptest::collection::vec(proptest::collection::vec("[a-z][a-z0-9._-]{0,6}", 1..4), 1..5),
        operators in proptest::collection::vec(prop_oneof![
            Just(" && "), Just(" || "), Just(";"), Just(" | "), Just("&"), Just("\n"), Just("|&")
        ], 4),
    ) {
        let keyword = |word: &String| ["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "in", "select", "function", "coproc", "time", "env", "nice", "nohup", "exec", "command", "builtin", "busybox", "xargs", "timeout", "stdbuf", "ionice", "setsid", "eval", "sudo", "doas", "pkexec", "su", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"].contains(&word.as_str());
        prop_assume!(commands.iter().all(|words| !keyword(&words[0])));
        let text: String = commands.iter().enumerate().map(|(index, words)| {
            let separator = if index == 0 { "" } else { operators[index - 1] };
            format!("{separator}{}", words.join(" "))
        }).collect();
        let expected: Vec<String> = commands.iter().map(|words| words.join(" ")).collect();
        prop_assert_eq!(line(&text), expected);
    }
}
