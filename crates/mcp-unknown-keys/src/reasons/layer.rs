use std::sync::{Arc, RwLock};

use tower_layer::Layer;

use super::{DEFAULT_DESCRIPTION, OnReason, Reasons};

/// Wraps providers in [`Reasons`], as a [`tower_layer::Layer`].
///
/// ```
/// use mcp_unknown_keys::ReasonsLayer;
/// use mcp_unknown_keys::reasons::Reason;
///
/// let layer = ReasonsLayer::new()
///     .description("Why you are making this call, in one sentence.")
///     .on_reason(|reason: &Reason| eprintln!("{}: {}", reason.tool, reason.reason));
/// # drop(layer);
/// ```
#[derive(Clone)]
pub struct ReasonsLayer {
    description: Arc<str>,
    on_reason: Option<Arc<dyn OnReason>>,
}

impl ReasonsLayer {
    /// A layer that publishes [`DEFAULT_DESCRIPTION`] and hands the reasons
    /// to no one.
    pub fn new() -> ReasonsLayer {
        ReasonsLayer {
            description: DEFAULT_DESCRIPTION.into(),
            on_reason: None,
        }
    }

    /// Publishes the `reason` property with this description instead.
    pub fn description(mut self, description: impl Into<String>) -> ReasonsLayer {
        self.description = description.into().into();
        self
    }

    /// Hands each reason taken out of a call to `on_reason` (a closure
    /// taking `&Reason`), in call order, before the batch is forwarded.
    pub fn on_reason(mut self, on_reason: impl OnReason) -> ReasonsLayer {
        self.on_reason = Some(Arc::new(on_reason));
        self
    }

    pub(super) fn wrap<P>(&self, inner: P) -> Reasons<P> {
        Reasons {
            inner,
            description: self.description.clone(),
            on_reason: self.on_reason.clone(),
            augmented: RwLock::default(),
        }
    }
}

impl Default for ReasonsLayer {
    fn default() -> Self {
        ReasonsLayer::new()
    }
}

impl<P> Layer<P> for ReasonsLayer {
    type Service = Reasons<P>;

    fn layer(&self, inner: P) -> Reasons<P> {
        self.wrap(inner)
    }
}

impl std::fmt::Debug for ReasonsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReasonsLayer")
            .field("description", &self.description)
            .field("on_reason", &self.on_reason.is_some())
            .finish()
    }
}
