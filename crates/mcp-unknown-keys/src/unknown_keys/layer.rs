use std::sync::Arc;

use tower_layer::Layer;

use super::UnknownKeys;
use crate::audit::auditor::Auditor;
use crate::audit::sink::{Sink, StderrSink};

/// Wraps providers in [`UnknownKeys`], as a [`tower_layer::Layer`].
///
/// Each provider it wraps gets an auditor of its own, so "said once" holds
/// per stack, not across stacks.
///
/// ```
/// use mcp_unknown_keys::{UnknownKeysLayer, audit::Warning};
///
/// let layer = UnknownKeysLayer::new()
///     .on_warn(|warning: &Warning| eprintln!("{warning}"))
///     .allow("toolCallId");
/// # drop(layer);
/// ```
#[derive(Clone)]
pub struct UnknownKeysLayer {
    sink: Arc<dyn Sink>,
    allowed: Vec<String>,
    top_level_only: bool,
}

impl UnknownKeysLayer {
    /// A layer whose warnings go to stderr.
    pub fn new() -> UnknownKeysLayer {
        UnknownKeysLayer {
            sink: Arc::new(StderrSink),
            allowed: Vec::new(),
            top_level_only: false,
        }
    }

    /// Sends warnings to `sink` (a closure, [`TracingSink`](crate::audit::TracingSink), ...).
    pub fn on_warn(mut self, sink: impl Sink + 'static) -> UnknownKeysLayer {
        self.sink = Arc::new(sink);
        self
    }

    /// Tolerates `key` on every tool, beside `reason`; below the top
    /// level, a path such as `entities[].age`.
    pub fn allow(mut self, key: impl Into<String>) -> UnknownKeysLayer {
        self.allowed.push(key.into());
        self
    }

    /// With `true`, audits top-level keys only, as the specification's
    /// first version did ([`Auditor::top_level_only`]).
    pub fn top_level_only(mut self, top_level_only: bool) -> UnknownKeysLayer {
        self.top_level_only = top_level_only;
        self
    }
}

impl Default for UnknownKeysLayer {
    fn default() -> Self {
        UnknownKeysLayer::new()
    }
}

impl<P> Layer<P> for UnknownKeysLayer {
    type Service = UnknownKeys<P>;

    fn layer(&self, inner: P) -> UnknownKeys<P> {
        let auditor = Auditor::new()
            .with_shared_sink(self.sink.clone())
            .allow_all(self.allowed.iter().cloned())
            .top_level_only(self.top_level_only);
        UnknownKeys::with_auditor(inner, auditor)
    }
}

impl std::fmt::Debug for UnknownKeysLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnknownKeysLayer")
            .field("allowed", &self.allowed)
            .field("top_level_only", &self.top_level_only)
            .finish_non_exhaustive()
    }
}
