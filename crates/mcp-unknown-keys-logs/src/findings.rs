//! The findings per (tool, key) pair, bounded: a hostile log carrying a
//! new key on every call would otherwise make them grow with the input.
//! Past the bound, the calls carrying new pairs are counted, their pairs
//! not remembered, and that is said once.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use mcp_unknown_keys::audit::{Call, Findings, Outcome};

/// The most distinct (tool, key) and (tool, path) pairs the report keeps
/// findings for: the core's bound on the pairs an auditor remembers having
/// said (`mcp_unknown_keys::limits::MAX_SAID_PAIRS`), so the report keeps
/// no pair the auditor could not have said.
pub const MAX_FINDINGS: usize = 65_536;

/// Which pairs the findings hold, as fingerprints: what tells a pair seen
/// before from a new one once the bound is reached.
#[derive(Debug, Default)]
pub(crate) struct Bounded {
    pairs: HashSet<u64>,
    hasher: RandomState,
}

impl Bounded {
    /// Counts what auditing `call` found in `findings`, as
    /// [`Findings::record`] does, keeping at most [`MAX_FINDINGS`] pairs:
    /// whether the call carried a pair past the bound, counted in no
    /// finding.
    pub(crate) fn record(&mut self, findings: &mut Findings, call: &Call<'_>, outcome: &Outcome) -> bool {
        let Outcome::Audited {
            undeclared,
            undeclared_paths,
            warning,
        } = outcome
        else {
            return false;
        };
        let mut past = false;
        let mut kept = |nested: bool, keys: &[String]| -> Vec<String> {
            let kept: Vec<String> = keys
                .iter()
                .filter(|key| {
                    let print = self.hasher.hash_one((call.tool, nested, key.as_str()));
                    let known = self.pairs.contains(&print)
                        || (self.pairs.len() < MAX_FINDINGS && self.pairs.insert(print));
                    past |= !known;
                    known
                })
                .cloned()
                .collect();
            kept
        };
        let undeclared = kept(false, undeclared);
        let undeclared_paths = kept(true, undeclared_paths);
        let outcome = Outcome::Audited {
            undeclared,
            undeclared_paths,
            warning: warning.clone(),
        };
        findings.record(call, &outcome);
        past
    }
}
