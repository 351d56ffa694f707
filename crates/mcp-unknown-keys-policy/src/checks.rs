//! Checks: functions a host supplies, by name, for what rules cannot say.

use std::collections::BTreeMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::command::Command;

/// A check's answer about one command: yes, no, or cannot tell.
///
/// Cannot tell fails closed, as every unknown in a policy does: a `deny` or
/// `ask` rule with the check matches, an `allow` rule does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tristate {
    /// The command is one the check is about.
    Yes,
    /// It is not.
    No,
    /// It cannot be told.
    Unknown,
}

impl Tristate {
    /// Whether a rule deciding `allow` (`exact`) or `deny`/`ask` matches on
    /// this answer.
    pub(super) fn fires(self, allow: bool) -> bool {
        match self {
            Tristate::Yes => true,
            Tristate::No => false,
            Tristate::Unknown => !allow,
        }
    }

    /// Both must hold: a no is no, then a cannot tell is cannot tell.
    pub(super) fn and(self, other: Tristate) -> Tristate {
        match (self, other) {
            (Tristate::No, _) | (_, Tristate::No) => Tristate::No,
            (Tristate::Unknown, _) | (_, Tristate::Unknown) => Tristate::Unknown,
            _ => Tristate::Yes,
        }
    }

    /// Yes when `yes`, otherwise no, or cannot tell when `unsure`.
    pub(super) fn unless_unsure(yes: bool, unsure: bool) -> Tristate {
        match (yes, unsure) {
            (true, _) => Tristate::Yes,
            (false, true) => Tristate::Unknown,
            (false, false) => Tristate::No,
        }
    }
}

type CheckFn = dyn Fn(&Command) -> Tristate + Send + Sync;

/// The checks a policy can name, by name.
#[derive(Clone, Default)]
pub(super) struct Checks(BTreeMap<String, Arc<CheckFn>>);

impl Checks {
    pub(super) fn insert(
        &mut self,
        name: impl Into<String>,
        check: impl Fn(&Command) -> Tristate + Send + Sync + 'static,
    ) {
        self.0.insert(name.into(), Arc::new(check));
    }

    /// Adds `other`'s checks, replacing those of the same names.
    pub(super) fn extend(&mut self, other: Checks) {
        self.0.extend(other.0);
    }

    /// The named check's answer about `command`; cannot tell when there is
    /// no such check, or it panics.
    pub(super) fn run(&self, name: &str, command: &Command) -> Tristate {
        match self.0.get(name) {
            Some(check) => catch_unwind(AssertUnwindSafe(|| check(command))).unwrap_or(Tristate::Unknown),
            None => Tristate::Unknown,
        }
    }
}

impl fmt::Debug for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}
