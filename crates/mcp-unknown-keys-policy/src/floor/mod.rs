//! The danger floor: the operations dangerous whoever asks, as plain rules
//! marked `severity: danger`, each with a note saying why.

mod checks;
mod options;

use serde::{Deserialize, Serialize};

use super::checks::Checks;
use super::patterns::Dir;
use super::rules::{Decision, Rule};

/// The danger floor: rules no grant lifts, for the shell commands that
/// destroy work, hand over the machine or let an agent rewrite its own
/// permissions.
///
/// What it reads: the command of a call, where the policy finds commands —
/// the `command` argument (with `args`) of any tool, or the arguments a
/// [`PolicyConfig`](super::PolicyConfig) names for a tool — decomposed into
/// simple commands (see [`command`](super::command)). It reads nothing
/// else: a command in an argument the policy was not told of, a file
/// written by a tool that takes a path (an `fs_write` of
/// `.claude/settings.json`: write a `deny … under` rule for that), or code
/// an interpreter runs (`python -c`, `node -e`) is not seen. It is an
/// approval layer, not a sandbox.
///
/// Denied, whatever the rest of the policy allows and whatever a grant
/// says (a deny rule outranks every allow, and no grant lifts one):
///
/// - `rm` with a recursive flag whose target, as written, is `/`, the home
///   directory or a directory above it, or any user's home (`/root`,
///   `/home/NAME`, `/Users/NAME`); the target is placed lexically, with
///   `//`, `/.` and `..` collapsed, `~` and `~USER` (for the home's user)
///   expanded, case folded, and `$HOME`, `${HOME}` and globs whose
///   directory is one of those (`/*`, `~/*`) recognised. A relative target
///   is not placed (`cd / && rm -rf .` is not denied), nor is any other
///   variable;
/// - `find` from such a starting point removing what it finds (`-delete`,
///   or `-exec rm`/`-execdir rm`) with no test that chooses part of it
///   (`-name`, `-mtime`, `-size`, …; depth options and `-type` do not
///   choose). A `find` with such a test, or one handing the removal to a
///   shell (`-exec sh -c 'rm …'`), is not seen;
/// - a write to a path with a `.claude`, `.codex`, `.cursor` or `.gemini`
///   directory in it, an `.mcp.json`, or under a directory given with
///   [`agent_config`](DangerFloor::agent_config), by a redirection
///   (`> file`) or by a program known to write its operands or the file an
///   option names (`tee`, `cp`, `mv`, `sed -i`, `perl -pi`, `dd of=`,
///   `curl -o`, `wget -O`, …), with its target written out. A download
///   that names its file from the URL (`curl -O`, `wget URL`) is not seen.
///
/// The options of `rm`, `sed`, `perl`, `curl` and `wget` are read as those
/// programs read them: short options bundled, with a value attached or in
/// the next word (`sed -Ei`, `perl -0pi -e …`, `curl -fsSLo FILE`,
/// `wget -qO FILE`), and GNU long options by any unambiguous prefix
/// (`rm --recur`).
///
/// Asked about, marked a danger, every time (no grant answers it; a human
/// can): a force-push or `git reset --hard`; `sudo`, `su`, `doas`,
/// `pkexec`, `run0`; shutting down or restarting; `mkfs`, `dd`, `wipefs`;
/// an interpreter reading its input (`curl … | sh`, or given `/dev/stdin`,
/// `/dev/fd/0` or `/proc/self/fd/0` as its script); a write to a shell
/// startup file (`~/.bashrc`) or into a `.git` directory, or a write whose
/// target cannot be read; an `rm` whose target cannot be read; and a
/// command whose program cannot be read (`$(…)`, `$CMD`).
///
/// The floor acts only in a policy given it
/// ([`PolicyLayer::danger_floor`](super::PolicyLayer::danger_floor), or
/// `danger_floor` in a [`PolicyConfig`](super::PolicyConfig)).
///
/// ```
/// use mcp_unknown_keys_policy::{DangerFloor, Dir, Policy, PolicyConfig};
///
/// let floor = DangerFloor::new(Dir::new("/home/dev").unwrap());
/// assert!(floor.rules().iter().all(|rule| rule.is_danger() && rule.note.is_some()));
/// assert_eq!(Policy::danger_floor(Dir::new("/home/dev").unwrap()), floor.rules());
///
/// // In a configuration file, the floor and its checks come together:
/// let config = PolicyConfig::from_json(r#"{"danger_floor": {"home": "/home/dev"}}"#).unwrap();
/// assert_eq!(config.danger_floor, Some(floor));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DangerFloor {
    /// The user's home directory: what `~` means in a command, and what a
    /// recursive removal must not take.
    pub home: Dir,
    /// More directories holding the agent's own configuration (its policy,
    /// its grants).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_config: Vec<Dir>,
}

/// The names of the floor's checks.
const REMOVES_ROOT_OR_HOME: &str = "danger.removes_root_or_home";
const FIND_REMOVES_ROOT_OR_HOME: &str = "danger.find_removes_root_or_home";
const WRITES_AGENT_CONFIG: &str = "danger.writes_agent_config";
const UNREADABLE: &str = "danger.unreadable";
const REMOVES_UNREADABLE: &str = "danger.removes_unreadable";
const REWRITES_GIT_HISTORY: &str = "danger.rewrites_git_history";
const RUNS_INPUT: &str = "danger.runs_input";
const WRITES_RC_OR_GIT: &str = "danger.writes_shell_rc_or_git";

impl DangerFloor {
    /// The floor for the user whose home is `home` (an absolute path).
    pub fn new(home: Dir) -> DangerFloor {
        DangerFloor {
            home,
            agent_config: Vec::new(),
        }
    }

    /// The same floor, guarding one more directory of the agent's own
    /// configuration.
    pub fn agent_config(mut self, dir: Dir) -> DangerFloor {
        self.agent_config.push(dir);
        self
    }

    /// Its rules, about every tool (`*`), each `severity: danger` with a
    /// note. They name the floor's own checks: a policy given the floor
    /// ([`PolicyLayer::danger_floor`](super::PolicyLayer::danger_floor), or
    /// `danger_floor` in a [`PolicyConfig`](super::PolicyConfig)) has them;
    /// in a policy without them, those rules fail closed.
    pub fn rules(&self) -> Vec<Rule> {
        let rule = |decision: Decision, note: &str| -> Rule {
            Rule::new(decision, "*")
                .expect("`*` is a tool pattern")
                .danger()
                .note(note)
        };
        let deny = |note: &str| rule(Decision::Deny, note);
        let ask = |note: &str| rule(Decision::Ask, note);
        let elevated = "runs a command as another user, with more privileges";
        let power = "shuts down or restarts the machine";
        let erase = "can erase a disk or a file system";
        let built: Result<Vec<Rule>, _> = [
            deny("recursive removal of `/` or the home directory")
                .command("rm")
                .and_then(|rule| rule.check(REMOVES_ROOT_OR_HOME)),
            deny("recursive removal of `/` or the home directory, by `find`")
                .command("find")
                .and_then(|rule| rule.check(FIND_REMOVES_ROOT_OR_HOME)),
            deny("writes to the agent's own configuration").check(WRITES_AGENT_CONFIG),
            // First among the asks, so its note is the one shown when a
            // command cannot be read at all.
            ask("a command that could not be read").check(UNREADABLE),
            ask("`rm` of a target that could not be read")
                .command("rm")
                .and_then(|rule| rule.check(REMOVES_UNREADABLE)),
            ask("rewrites git history (a force-push or `reset --hard`)")
                .command("git")
                .and_then(|rule| rule.check(REWRITES_GIT_HISTORY)),
            ask(elevated).command("sudo"),
            ask(elevated).command("su"),
            ask(elevated).command("doas"),
            ask(elevated).command("pkexec"),
            ask(elevated).command("run0"),
            ask(power).command("shutdown"),
            ask(power).command("reboot"),
            ask(power).command("halt"),
            ask(power).command("poweroff"),
            ask(power)
                .command("systemctl")
                .and_then(|rule| rule.args_any(["poweroff", "reboot", "halt", "kexec"])),
            ask(power)
                .command("init")
                .and_then(|rule| rule.args_any(["0", "6"])),
            ask(erase).command("mkfs*"),
            ask(erase).command("dd"),
            ask(erase).command("wipefs"),
            ask("runs code read from its input, as `curl … | sh` does").check(RUNS_INPUT),
            ask("writes to a shell startup file or a `.git` directory, where code runs later")
                .check(WRITES_RC_OR_GIT),
        ]
        .into_iter()
        .collect();
        built.expect("the floor's rules are valid")
    }

    /// The checks its rules name.
    pub(super) fn checks(&self) -> Checks {
        let places = checks::Places::new(&self.home, &self.agent_config);
        let mut checks = Checks::default();
        let with = |check: fn(&checks::Places, &super::command::Command) -> super::Tristate| {
            let places = places.clone();
            move |command: &super::command::Command| check(&places, command)
        };
        checks.insert(REMOVES_ROOT_OR_HOME, with(checks::removes_root_or_home));
        checks.insert(FIND_REMOVES_ROOT_OR_HOME, with(checks::find_removes_root_or_home));
        checks.insert(WRITES_AGENT_CONFIG, with(checks::writes_agent_config));
        checks.insert(UNREADABLE, with(checks::unreadable));
        checks.insert(REMOVES_UNREADABLE, with(checks::removes_unreadable));
        checks.insert(REWRITES_GIT_HISTORY, with(checks::rewrites_git_history));
        checks.insert(RUNS_INPUT, with(checks::runs_input));
        checks.insert(WRITES_RC_OR_GIT, with(checks::writes_rc_or_git));
        checks
    }
}
