//! The integration tests, one binary: each file beside this one is a
//! module (as ripgrep gathers its tests), sharing the support modules.
//! Files kept as binaries of their own are named in Cargo.toml.

mod common;

mod bounds;
mod cause_lists;
mod concurrency;
mod diagnosis;
mod missing_required;
mod nested_keys;
mod reasons;
mod registry;
mod schema_budget;
mod schemas;
mod transparency;
mod unknown_keys;
