//! The fields of the `tracing` events some code emits, written down one
//! `name=value` line each.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// Runs `emit` under a subscriber that writes down every event's fields.
pub fn traced(emit: impl FnOnce()) -> String {
    let fields = Arc::new(Mutex::new(String::new()));
    tracing::subscriber::with_default(Recorder(fields.clone()), emit);
    let fields = fields.lock().unwrap();
    fields.clone()
}

struct Recorder(Arc<Mutex<String>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        event.record(&mut Fields(&mut self.0.lock().unwrap()));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = writeln!(self.0, "{}={value:?}", field.name());
    }
}
