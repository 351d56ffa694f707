//! The decision about one call: the rules, then the grants, asked about
//! each simple command it runs.

use super::checks::{Checks, Tristate};
use super::command::Command;
use super::facts::Facts;
use super::paths::Case;
use super::rules::{Decision, Rule};

/// Who decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// A rule (or no rule matched: ask).
    Rules,
    /// A grant, remembered from a human's "always".
    Grant,
}

/// The decision about a call, and the rule or grant that gave it (`None`
/// when nothing matched, which means ask).
#[derive(Clone, Copy, Debug)]
pub(super) struct Verdict<'r> {
    pub(super) decision: Decision,
    pub(super) rule: Option<&'r Rule>,
    pub(super) source: Source,
}

impl Verdict<'_> {
    /// Deny over ask over allow; among equals, a danger rule first, so a
    /// danger is never hidden behind a plain ask.
    fn rank(&self) -> (Decision, bool) {
        (self.decision, self.rule.is_some_and(Rule::is_danger))
    }
}

/// Decides a call: each simple command it runs (or the call once, when it
/// runs none) by the rules, and by the grants where the rules say ask; the
/// strongest decision wins.
///
/// A grant answers only for a plain ask: it never lifts a deny rule, nor an
/// ask marked a danger (only a deny grant may still refuse one).
pub(super) fn decide<'r>(
    rules: &'r [Rule],
    grants: &'r [Rule],
    facts: &Facts<'_>,
    checks: &Checks,
) -> Verdict<'r> {
    let commands: Vec<Option<&Command>> = match facts.commands.is_empty() {
        true => vec![None],
        false => facts.commands.iter().map(Some).collect(),
    };
    let mut strongest: Option<Verdict<'r>> = None;
    for command in commands {
        let by_rules = strongest_rule(rules, facts, command, checks);
        let verdict = match by_rules.decision {
            Decision::Ask => {
                let by_grants = strongest_rule(grants, facts, command, checks);
                let danger = by_rules.rule.is_some_and(Rule::is_danger);
                let answers = match by_grants.decision {
                    Decision::Deny => true,
                    Decision::Allow => !danger,
                    Decision::Ask => false, // a grant that asks changes nothing
                };
                match answers {
                    true => Verdict {
                        source: Source::Grant,
                        ..by_grants
                    },
                    false => by_rules,
                }
            }
            _ => by_rules,
        };
        if strongest.is_none_or(|so_far| verdict.rank() > so_far.rank()) {
            strongest = Some(verdict);
        }
    }
    strongest.expect("a call is decided at least once")
}

/// The strongest of the rules matching a call and one of its commands, and
/// the first rule giving it; ask and `None` when none matches.
fn strongest_rule<'r>(
    rules: &'r [Rule],
    facts: &Facts<'_>,
    command: Option<&Command>,
    checks: &Checks,
) -> Verdict<'r> {
    let none = Verdict {
        decision: Decision::Ask,
        rule: None,
        source: Source::Rules,
    };
    rules
        .iter()
        .filter(|rule| matches(rule, facts, command, checks))
        .map(|rule| Verdict {
            decision: rule.decision,
            rule: Some(rule),
            source: Source::Rules,
        })
        .fold(None, |strongest: Option<Verdict<'r>>, verdict| match strongest {
            Some(so_far) if so_far.rank() >= verdict.rank() => Some(so_far),
            _ => Some(verdict),
        })
        .unwrap_or(none)
}

/// Whether `rule` is about this call and command. Every member it has must
/// hold; for each, cannot tell keeps an allow rule from matching and makes
/// an ask or deny rule match.
fn matches(rule: &Rule, facts: &Facts<'_>, command: Option<&Command>, checks: &Checks) -> bool {
    if !rule.tool.matches(facts.tool) {
        return false;
    }
    let allow = rule.decision == Decision::Allow;
    if let Some(under) = &rule.under {
        let dir = under.lexical().resolve(facts.root);
        let case = if allow { Case::Exact } else { Case::Folded };
        let placement = facts.paths.placement(&dir, case);
        let fires = match allow {
            true => placement.all_within && !placement.unknown,
            false => placement.any_within || placement.unknown,
        };
        if !fires {
            return false;
        }
    }
    if let Some(host) = &rule.narrowing.host {
        let verdicts = facts.urls.iter().map(|url| match &url.host {
            Ok(name) => Tristate::unless_unsure(host.matches(name), false),
            Err(_) => Tristate::Unknown,
        });
        let fires = match facts.paths.readable {
            true => !facts.urls.is_empty() && fold(verdicts, allow),
            false => !allow,
        };
        if !fires {
            return false;
        }
    }
    if rule.narrowing.command.is_some() || rule.narrowing.check.is_some() {
        // A call that names no command is not about one.
        let Some(command) = command else { return false };
        let mut verdict = command_verdict(rule, command);
        if let Some(check) = &rule.narrowing.check {
            verdict = verdict.and(checks.run(check, command));
        }
        if !verdict.fires(allow) {
            return false;
        }
    }
    true
}

/// An allow rule needs every answer yes; a deny or ask rule, any answer
/// yes or cannot tell.
fn fold(mut verdicts: impl Iterator<Item = Tristate>, allow: bool) -> bool {
    match allow {
        true => verdicts.all(|verdict| verdict == Tristate::Yes),
        false => verdicts.any(|verdict| verdict != Tristate::No),
    }
}

/// Whether a command runs the rule's program with its arguments. An allow
/// rule compares exactly and needs the whole command read; a deny or ask
/// rule folds case, and cannot tell past what could be read.
fn command_verdict(rule: &Rule, command: &Command) -> Tristate {
    let allow = rule.decision == Decision::Allow;
    let narrowing = &rule.narrowing;
    let Some(pattern) = &narrowing.command else {
        return Tristate::Yes;
    };
    let Some(name) = command.name() else {
        return Tristate::Unknown;
    };
    if !pattern.matches(name, !allow) {
        return Tristate::No;
    }
    let unsure = !command.is_complete();
    let same = |arg: &String, want: &String| match allow {
        true => arg == want,
        false => arg.to_lowercase() == want.to_lowercase(),
    };
    let prefix = narrowing
        .args
        .iter()
        .enumerate()
        .try_fold(Tristate::Yes, |_, (index, want)| match command.args.get(index) {
            Some(arg) if same(arg, want) => Ok(Tristate::Yes),
            Some(_) => Err(Tristate::No),
            None => Err(Tristate::unless_unsure(false, unsure)),
        });
    let prefix = prefix.unwrap_or_else(|stop| stop);
    let any = match narrowing.args_any.is_empty() {
        true => Tristate::Yes,
        false => {
            let found = command
                .args
                .iter()
                .any(|arg| narrowing.args_any.iter().any(|want| same(arg, want)));
            Tristate::unless_unsure(found, unsure)
        }
    };
    // An allow rule allows only what it read in full.
    let whole = if allow && unsure {
        Tristate::Unknown
    } else {
        Tristate::Yes
    };
    whole.and(prefix).and(any)
}
