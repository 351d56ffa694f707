//! The one error a rule, pattern or configuration gives: what every other
//! module of the policy imports, and which imports none of them.

use std::fmt;

/// A rule, pattern, directory or configuration that cannot be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    message: String,
}

impl RuleError {
    pub(crate) fn new(message: impl Into<String>) -> RuleError {
        RuleError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuleError {}
