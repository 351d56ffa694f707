//! The integration tests, one binary: each file beside this one is a
//! module (as ripgrep gathers its tests).
//! Files kept as binaries of their own are named in Cargo.toml.

mod api;
mod catalogues;
mod claude_code_otel;
mod cut_short;
mod gateway;
mod groups;
mod hostile_input;
mod listings;
mod lost_keys;
mod records;
mod repeats;
mod report_data;
mod shapes;
mod strict_preview;
mod support;
mod verdicts;
