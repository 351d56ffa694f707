//! One tap per upstream session: a catalogue, and the said-once memory,
//! per session.
//!
//! A request that carries `Mcp-Session-Id` (2025 era) belongs to that
//! session. One without (2026-07-28, which has no sessions, or a 2025
//! server that assigns none) belongs to its credentials: the tool set may
//! vary by authorisation, so each distinct `Authorization` value gets its
//! own catalogue (kept as a keyed hash, never as the secret). A session
//! ends when the server accepts its DELETE or answers 404 to it, when it is
//! the least recently used of too many, or when the proxy stops; its
//! summary is written then, off the async runtime (the caller runs
//! [`Sessions::summary`] where blocking is allowed). Each tap's
//! log lines carry `upstream_session`: the keyed hash of its key, which
//! tells sessions apart without writing their ids or credentials.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::header::{AUTHORIZATION, HeaderMap};

use crate::tap::Tap;

/// The most sessions tapped at once; the least recently used ends beyond
/// it.
const MAX_SESSIONS: usize = 1024;

/// Which catalogue a request belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// The upstream session, by its `Mcp-Session-Id`.
    Session(Vec<u8>),
    /// No session: the credentials, hashed.
    Credentials(u64),
}

/// The taps of the sessions seen.
pub(crate) struct Sessions {
    new_tap: Box<dyn Fn(String) -> Tap + Send + Sync>,
    summarise: Box<dyn Fn(&Tap) + Send + Sync>,
    hasher: RandomState,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    /// Each session's tap, and when it was last used.
    taps: HashMap<Key, (Arc<Tap>, u64)>,
    /// The sessions by when they were last used, least recent first.
    order: BTreeMap<u64, Key>,
    /// The count of uses: the clock of `order`.
    uses: u64,
}

impl Open {
    /// Marks `key` used now.
    fn touch(&mut self, key: &Key) -> Option<Arc<Tap>> {
        self.uses += 1;
        let now = self.uses;
        let (tap, used) = self.taps.get_mut(key)?;
        self.order.remove(used);
        *used = now;
        self.order.insert(now, key.clone());
        Some(tap.clone())
    }

    fn remove(&mut self, key: &Key) -> Option<Arc<Tap>> {
        let (tap, used) = self.taps.remove(key)?;
        self.order.remove(&used);
        Some(tap)
    }
}

impl Sessions {
    /// Sessions whose taps come from `new_tap` (given the hash of the
    /// session's key, as 16 hex digits) and are handed to `summarise` when
    /// they end.
    pub(crate) fn new(
        new_tap: impl Fn(String) -> Tap + Send + Sync + 'static,
        summarise: impl Fn(&Tap) + Send + Sync + 'static,
    ) -> Sessions {
        Sessions {
            new_tap: Box::new(new_tap),
            summarise: Box::new(summarise),
            hasher: RandomState::new(),
            open: Mutex::default(),
        }
    }

    /// The key of a request, from its headers.
    pub(crate) fn key(&self, headers: &HeaderMap) -> Key {
        match headers.get(super::SESSION_ID) {
            Some(id) => Key::Session(id.as_bytes().to_vec()),
            None => Key::Credentials(
                self.hasher
                    .hash_one(headers.get(AUTHORIZATION).map(|v| v.as_bytes())),
            ),
        }
    }

    /// The tap of a session, opened on its first request; and the tap of
    /// the least recently used session, when opening this one ends it (its
    /// summary is the caller's to write, with [`Sessions::summary`]).
    pub(crate) fn tap(&self, key: &Key) -> (Arc<Tap>, Option<Arc<Tap>>) {
        let mut open = self.open();
        if let Some(tap) = open.touch(key) {
            return (tap, None);
        }
        let hash = match key {
            Key::Session(id) => self.hasher.hash_one(id),
            Key::Credentials(hash) => *hash,
        };
        let tap = Arc::new((self.new_tap)(format!("{hash:016x}")));
        open.taps.insert(key.clone(), (tap.clone(), 0));
        open.touch(key);
        let evicted = if open.taps.len() > MAX_SESSIONS {
            let oldest = open.order.first_key_value().map(|(_, key)| key.clone());
            oldest.and_then(|oldest| open.remove(&oldest))
        } else {
            None
        };
        (tap, evicted)
    }

    /// A session is over: its tap, whose summary is the caller's to write.
    pub(crate) fn end(&self, key: &Key) -> Option<Arc<Tap>> {
        self.open().remove(key)
    }

    /// The proxy stops: every session's summary is written, least recently
    /// used first.
    pub(crate) fn end_all(&self) {
        let Open { mut taps, order, .. } = std::mem::take(&mut *self.open());
        for key in order.values() {
            if let Some((tap, _)) = taps.remove(key) {
                self.summary(&tap);
            }
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A session's summary, when it saw any call (lines the audit has not
    /// reached yet may be calls: the summary counts them). Blocks (the
    /// summary settles the audit, then writes the log): call it off the
    /// async runtime. Only the summary waits for the audit, so that a stuck
    /// one costs a session's end one wait, not two.
    pub(crate) fn summary(&self, tap: &Tap) {
        let unsettled = tap.settle(Some(std::time::Duration::ZERO));
        if unsettled > 0 || tap.coverage().calls > 0 || !tap.findings().is_empty() {
            (self.summarise)(tap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn sessions() -> Sessions {
        Sessions::new(
            |_| Tap::new(mcp_unknown_keys::audit::Auditor::new().with_sink(())),
            |_| {},
        )
    }

    #[test]
    fn a_session_id_or_else_the_credentials_choose_the_catalogue() {
        let sessions = sessions();
        let mut headers = HeaderMap::new();
        let anonymous = sessions.key(&headers);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        let alice = sessions.key(&headers);
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer b"));
        let bob = sessions.key(&headers);
        assert!(anonymous != alice && alice != bob);
        headers.insert(super::super::SESSION_ID, HeaderValue::from_static("s1"));
        assert_eq!(sessions.key(&headers), Key::Session(b"s1".to_vec()));
        assert!(Arc::ptr_eq(&sessions.tap(&alice).0, &sessions.tap(&alice).0));
        assert!(!Arc::ptr_eq(&sessions.tap(&alice).0, &sessions.tap(&bob).0));
    }

    #[test]
    fn the_least_recently_used_session_ends_beyond_the_bound() {
        let sessions = sessions();
        let (first, _) = sessions.tap(&Key::Credentials(0));
        let (second, _) = sessions.tap(&Key::Credentials(1));
        let mut ended = Vec::new();
        for n in 2..=MAX_SESSIONS as u64 {
            // The first session stays in use; the second does not.
            assert!(Arc::ptr_eq(&first, &sessions.tap(&Key::Credentials(0)).0));
            ended.extend(sessions.tap(&Key::Credentials(n)).1);
        }
        assert_eq!(ended.len(), 1);
        assert!(Arc::ptr_eq(&ended[0], &second));
        assert!(Arc::ptr_eq(&first, &sessions.tap(&Key::Credentials(0)).0));
        assert_eq!(sessions.open().taps.len(), MAX_SESSIONS);
        assert!(Arc::ptr_eq(&sessions.end(&Key::Credentials(0)).unwrap(), &first));
        assert!(sessions.end(&Key::Credentials(0)).is_none());
    }
}
