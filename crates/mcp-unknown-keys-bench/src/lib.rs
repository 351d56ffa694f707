//! The core's benchmarks (`benches/`: the audit, the registry, the
//! diagnosis, with criterion) and instruction counts (`examples/`, under
//! callgrind), apart from the core so that what only they use is not
//! built for its tests. BENCHMARKS.md tells how each is run and what it
//! measured.

#![forbid(unsafe_code)]

pub mod calls;
