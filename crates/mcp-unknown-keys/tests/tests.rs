//! The integration tests, one binary: each file beside this one is a
//! module (as ripgrep gathers its tests), sharing the support modules.
//! Files kept as binaries of their own are named in Cargo.toml.

mod common;
mod policy_support;

mod concurrency;
mod diagnosis;
mod examples;
mod nested_keys;
mod policy;
mod policy_command;
mod policy_config;
mod policy_decomposer;
mod policy_floor;
mod policy_grants;
mod policy_host;
mod reasons;
mod registry;
mod schema_budget;
mod schemas;
mod stack;
mod transparency;
mod unknown_keys;
