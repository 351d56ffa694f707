//! One tap per upstream session: a catalogue, and the said-once memory,
//! per session.
//!
//! A request that carries `Mcp-Session-Id` (2025 era) belongs to that
//! session. One without (2026-07-28, which has no sessions, or a 2025
//! server that assigns none) belongs to its credentials: the tool set may
//! vary by authorisation, so each distinct `Authorization` value gets its
//! own catalogue (kept as a keyed hash, never as the secret). A session
//! ends when the server accepts its DELETE, when it is the oldest of too
//! many, or when the proxy stops; its summary is written then. Each tap's
//! log lines carry `upstream_session`: the keyed hash of its key, which
//! tells sessions apart without writing their ids or credentials.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::header::{AUTHORIZATION, HeaderMap};

use crate::proxy::tap::Tap;

/// The most sessions tapped at once; the oldest ends beyond it.
const MAX_SESSIONS: usize = 1024;

/// Which catalogue a request belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// The upstream session, by its `Mcp-Session-Id`.
    Session(Vec<u8>),
    /// No session: the credentials, hashed.
    Credentials(u64),
}

/// The taps of the sessions seen.
pub struct Sessions {
    new_tap: Box<dyn Fn(String) -> Tap + Send + Sync>,
    summarise: Box<dyn Fn(&Tap) + Send + Sync>,
    hasher: RandomState,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    taps: HashMap<Key, Arc<Tap>>,
    /// Oldest first.
    order: VecDeque<Key>,
}

impl Sessions {
    /// Sessions whose taps come from `new_tap` (given the hash of the
    /// session's key, as 16 hex digits) and are handed to `summarise` when
    /// they end.
    pub fn new(
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
    pub fn key(&self, headers: &HeaderMap) -> Key {
        match headers.get(super::SESSION_ID) {
            Some(id) => Key::Session(id.as_bytes().to_vec()),
            None => Key::Credentials(
                self.hasher
                    .hash_one(headers.get(AUTHORIZATION).map(|v| v.as_bytes())),
            ),
        }
    }

    /// The tap of a session, opened on its first request.
    pub fn tap(&self, key: &Key) -> Arc<Tap> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tap) = open.taps.get(key) {
            return tap.clone();
        }
        let hash = match key {
            Key::Session(id) => self.hasher.hash_one(id),
            Key::Credentials(hash) => *hash,
        };
        let tap = Arc::new((self.new_tap)(format!("{hash:016x}")));
        open.taps.insert(key.clone(), tap.clone());
        open.order.push_back(key.clone());
        let evicted = if open.order.len() > MAX_SESSIONS {
            open.order.pop_front().and_then(|old| open.taps.remove(&old))
        } else {
            None
        };
        drop(open);
        if let Some(old) = evicted {
            self.summary(&old);
        }
        tap
    }

    /// A session is over: its summary is written.
    pub fn end(&self, key: &Key) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(tap) = open.taps.remove(key) else { return };
        open.order.retain(|k| k != key);
        drop(open);
        self.summary(&tap);
    }

    /// The proxy stops: every session's summary is written, oldest first.
    pub fn end_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        let Open { mut taps, order } = open;
        let taps: Vec<Arc<Tap>> = order.iter().filter_map(|key| taps.remove(key)).collect();
        for tap in taps {
            self.summary(&tap);
        }
    }

    /// A session's summary, when it saw any call.
    fn summary(&self, tap: &Tap) {
        tap.settle(Some(crate::proxy::SETTLE_AT_EXIT));
        if tap.coverage().calls > 0 || !tap.findings().is_empty() {
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
        assert!(Arc::ptr_eq(&sessions.tap(&alice), &sessions.tap(&alice)));
        assert!(!Arc::ptr_eq(&sessions.tap(&alice), &sessions.tap(&bob)));
    }

    #[test]
    fn the_oldest_session_ends_beyond_the_bound() {
        let sessions = sessions();
        let first = sessions.tap(&Key::Credentials(0));
        for n in 1..=MAX_SESSIONS as u64 {
            sessions.tap(&Key::Credentials(n));
        }
        assert!(!Arc::ptr_eq(&first, &sessions.tap(&Key::Credentials(0))));
        assert!(sessions.open.lock().unwrap().taps.len() <= MAX_SESSIONS);
    }
}
