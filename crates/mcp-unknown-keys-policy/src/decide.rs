//! One call's way through a policy: rules, grants, the human; and what the
//! model is told when it was refused.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::Policy;
use super::ask::{Answer, Question};
use super::evaluate::{self, Source};
use super::facts::Facts;
use super::paths::Unknown;
use super::patterns::{Dir, ToolPattern};
use super::rules::{Decision, Rule};
use mcp_unknown_keys::ToolCall;
use mcp_unknown_keys::reasons::REASON_PARAMETER;

/// What became of one call.
pub(super) enum Outcome {
    Run,
    Refuse(String),
}

impl<P> Policy<P> {
    /// Decides one call: rules, then grants, then the human.
    pub(super) async fn decide(&self, call: &ToolCall) -> Outcome {
        let Some(tool) = call.name() else {
            return Outcome::Refuse("This call was not run: it names no tool.".to_owned());
        };
        let question = {
            let facts = Facts::read(call, tool, &self.config);
            let grants = self.grants.snapshot();
            let verdict = evaluate::decide(&self.config.rules, &grants, &facts, &self.config.checks);
            match (verdict.decision, verdict.source) {
                (Decision::Allow, _) => return Outcome::Run,
                (Decision::Deny, Source::Rules) => {
                    let rule = verdict.rule.expect("a deny comes from a rule");
                    let why = match &rule.note {
                        Some(note) => format!("the permission policy denies it ({rule}): {note}"),
                        None => format!("the permission policy denies it ({rule})"),
                    };
                    return refuse(tool, &why, Some((&facts, Some(rule))));
                }
                (Decision::Deny, Source::Grant) => {
                    return refuse(tool, "the user has denied calls like it", Some((&facts, None)));
                }
                (Decision::Ask, _) if self.asker.is_nobody() => {
                    let why = "it needs the user's approval, and no one is here to give it";
                    return refuse(tool, why, Some((&facts, verdict.rule)));
                }
                (Decision::Ask, _) => question(call, &facts, verdict.rule),
            }
        };
        self.ask(question).await
    }

    /// Asks the human, and remembers what they said "always" to.
    async fn ask(&self, question: Question) -> Outcome {
        let tool = question.tool.clone();
        let suggested = question.suggested_grant.clone();
        match self.asker.ask(question).await {
            Some(Answer::AllowOnce) => Outcome::Run,
            Some(Answer::DenyOnce) => refuse(&tool, "the user declined it", None),
            Some(Answer::AlwaysAllow(grant)) => {
                self.remember(grant.or(suggested), Decision::Allow);
                Outcome::Run
            }
            Some(Answer::AlwaysDeny(grant)) => {
                self.remember(grant.or(suggested), Decision::Deny);
                refuse(&tool, "the user declined it", None)
            }
            None => refuse(&tool, "asking the user for approval failed", None),
        }
    }

    /// Adds a grant to the store, then tells `on_grant`, the store's lock
    /// released.
    fn remember(&self, grant: Option<Rule>, decision: Decision) {
        let Some(grant) = grant else { return };
        let grant = Rule { decision, ..grant };
        let all = self.grants.push(grant.clone());
        if let Some(on_grant) = &self.on_grant {
            // A host's bookkeeping must not change what the call does.
            let _ = catch_unwind(AssertUnwindSafe(|| on_grant(&grant, &all)));
        }
    }
}

/// The question about a call: what it is, the `ask` rule that matched, what
/// it names, and a grant that would cover calls like it.
fn question(call: &ToolCall, facts: &Facts<'_>, rule: Option<&Rule>) -> Question {
    let paths = &facts.paths;
    Question {
        tool: facts.tool.to_owned(),
        id: call.id_text(),
        arguments: paths.arguments.clone().into_owned(),
        reason: paths
            .arguments
            .get(REASON_PARAMETER)
            .and_then(|reason| reason.as_str())
            .map(str::to_owned),
        rule: rule.cloned(),
        paths: paths.named.iter().map(|path| path.to_argument()).collect(),
        urls: facts.url_arguments(),
        commands: facts.commands.clone(),
        suggested_grant: suggested_grant(facts),
    }
}

/// The narrowest grant that covers calls like this one: its tool under the
/// directory holding its paths; else on the one host its URLs name; else
/// running the one program its commands run; else the tool.
fn suggested_grant(facts: &Facts<'_>) -> Option<Rule> {
    // A name that reads as a prefix (`fs_*`) or is no pattern at all must
    // not become a grant for other tools.
    let exact = ToolPattern::new(facts.tool).ok().filter(ToolPattern::is_exact)?;
    let tool = Rule::new(Decision::Allow, exact.as_str()).ok()?;
    let narrowed = if let Some(dir) = facts
        .paths
        .suggested_dir(facts.root)
        .and_then(|dir| Dir::new(dir.to_string()).ok())
    {
        tool.clone().under(dir.as_str())
    } else if let Some(host) = facts.single_host() {
        tool.clone().host(host)
    } else if let Some(program) = facts.single_program() {
        tool.clone().command(program)
    } else {
        Ok(tool.clone())
    };
    Some(narrowed.unwrap_or(tool))
}

/// A refusal the model can act on: what was refused and why, and, when
/// something the rules asked about could not be read, which argument and
/// what to do about it.
fn refuse(tool: &str, why: &str, read: Option<(&Facts<'_>, Option<&Rule>)>) -> Outcome {
    let mut message = format!("{tool} was not run: {why}.");
    if let Some(hint) = read.and_then(|(facts, rule)| hint(facts, rule)) {
        message.push(' ');
        message.push_str(&hint);
    }
    Outcome::Refuse(message)
}

/// What could not be read in a call: its paths first, then (when the rule
/// was about them) its URLs or its commands.
fn hint(facts: &Facts<'_>, rule: Option<&Rule>) -> Option<String> {
    match facts.paths.first_unknown() {
        Some((_, Unknown::Unreadable)) => {
            return Some("Its arguments could not be checked: they are not a JSON object.".to_owned());
        }
        Some((argument, unknown)) => {
            return Some(format!(
                "Its `{argument}` could not be checked ({unknown}); a plain relative path may be allowed."
            ));
        }
        None => {}
    }
    let about_hosts = rule.is_none_or(|rule| rule.narrowing.host.is_some());
    if let Some((argument, problem)) = facts.first_unreadable_url().filter(|_| about_hosts) {
        return Some(format!(
            "Its `{argument}` could not be checked ({problem}); a plain http(s) URL may be allowed."
        ));
    }
    let about_commands =
        rule.is_none_or(|rule| rule.narrowing.command.is_some() || rule.narrowing.check.is_some());
    let command = facts.first_unreadable_command().filter(|_| about_commands)?;
    let why = command.unreadable.expect("an unreadable command says why");
    let shown = match command.unread.first() {
        Some(word) => format!(" in `{}`", word.escape_debug()),
        None => String::new(),
    };
    Some(format!(
        "Its command could not be read in full: {why}{shown}. A command written out plainly, without it, may be allowed."
    ))
}
