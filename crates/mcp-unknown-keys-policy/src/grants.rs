//! The grants a human's "always" answers leave behind, in a store that
//! several policies can share.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::rules::Rule;

/// A grant store: the rules a human's "always" answers remembered, shared
/// by every [`Policy`](super::Policy) given a clone of it.
///
/// A grant belongs to the human, not to the agent that asked: give one
/// store to every policy of a fleet ([`PolicyLayer::grant_store`](super::PolicyLayer::grant_store))
/// and an answer given to one agent is in force for all of them at their
/// very next call. Policies read it live, never a copy made when they were
/// built.
///
/// It holds its lock only to copy or append (never while a rule is
/// evaluated, a check runs or a callback is called), and it reads and
/// writes as a JSON array of rules, so a session can be saved and resumed.
///
/// A grant is consulted only for a call the rules would ask about: it never
/// lifts a `deny` rule, nor an ask marked a danger (see
/// [`DangerFloor`](super::DangerFloor)).
///
/// ```
/// use mcp_unknown_keys_policy::{Grants, Rule};
///
/// let grants = Grants::default();
/// let shared = grants.clone(); // the same store
/// shared.add(Rule::allow("fs_write").unwrap().under("notes").unwrap());
/// assert_eq!(grants.len(), 1);
///
/// let saved = serde_json::to_string(&grants).unwrap();
/// assert_eq!(saved, r#"[{"tool":"fs_write","decision":"allow","under":"notes"}]"#);
/// let resumed: Grants = serde_json::from_str(&saved).unwrap();
/// assert_eq!(resumed.list(), grants.list());
/// ```
#[derive(Clone, Default)]
pub struct Grants {
    /// Copied on write, so a reader's snapshot costs one reference count.
    rules: Arc<Mutex<Arc<Vec<Rule>>>>,
}

impl Grants {
    /// A store holding these grants.
    pub fn new(grants: Vec<Rule>) -> Grants {
        Grants {
            rules: Arc::new(Mutex::new(Arc::new(grants))),
        }
    }

    /// Every grant, in the order they were made.
    pub fn list(&self) -> Vec<Rule> {
        self.snapshot().as_ref().clone()
    }

    /// How many grants it holds.
    pub fn len(&self) -> usize {
        self.snapshot().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.snapshot().is_empty()
    }

    /// Adds a grant (one no human was asked about: a preset, say).
    pub fn add(&self, grant: Rule) {
        self.push(grant);
    }

    /// The grants as they are now, cheaply.
    pub(super) fn snapshot(&self) -> Arc<Vec<Rule>> {
        self.locked(|rules| rules.clone())
    }

    /// Adds a grant and answers every grant as they stood right after.
    pub(super) fn push(&self, grant: Rule) -> Arc<Vec<Rule>> {
        self.locked(|rules| {
            Arc::make_mut(rules).push(grant);
            rules.clone()
        })
    }

    fn locked<T>(&self, with: impl FnOnce(&mut Arc<Vec<Rule>>) -> T) -> T {
        with(&mut self.rules.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl PartialEq for Grants {
    fn eq(&self, other: &Grants) -> bool {
        self.snapshot() == other.snapshot()
    }
}

impl fmt::Debug for Grants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.snapshot().iter()).finish()
    }
}

impl Serialize for Grants {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.snapshot().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Grants {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Grants, D::Error> {
        Vec::<Rule>::deserialize(deserializer).map(Grants::new)
    }
}
