//! The integration tests, one binary: each file beside this one is a
//! module, sharing the support modules. The core's test toolkit (a
//! recording provider, `block_on`) is compiled from the core's tests, so
//! there is one of it.

#[path = "../../mcp-unknown-keys/tests/common/mod.rs"]
mod common;
mod policy_support;

mod examples;
mod policy;
mod policy_command;
mod policy_config;
mod policy_decomposer;
mod policy_floor;
mod policy_grants;
mod policy_host;
mod stack;
