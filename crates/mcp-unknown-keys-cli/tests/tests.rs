//! The integration tests, one binary: each file beside this one is a
//! module (as ripgrep gathers its tests), sharing the support modules.
//! Files kept as binaries of their own are named in Cargo.toml.

mod audit_support;
mod support;
mod wrap_support;

mod audit_coverage;
mod audit_envelopes;
mod audit_files;
mod audit_html;
mod audit_inputs;
mod audit_logs;
mod audit_names;
mod audit_rates;
mod audit_schemas;
mod audit_shapes;
mod audit_verdicts;
mod demo;
mod differential;
mod example_server;
mod example_server_limits;
mod hook_claude_code;
mod mcp_server;
mod proxy_attribution;
mod proxy_bytes;
mod proxy_flood;
mod proxy_http_bridge;
mod proxy_http_bridge_answers;
mod proxy_http_bridge_ends;
mod proxy_http_connections;
mod proxy_http_reverse;
mod proxy_http_reverse_limits;
mod proxy_http_reverse_scripted;
mod proxy_lifecycle;
mod proxy_listing;
mod proxy_log;
mod proxy_messages;
mod proxy_otlp;
mod proxy_output;
mod proxy_schemas;
mod proxy_sdk;
mod proxy_signals;
mod proxy_summary;
mod proxy_tap;
mod proxy_unaudited;
mod proxy_verdicts;
mod session_replay;
mod stack;
mod third_party;
mod version;
mod wrap;
mod wrap_files;
mod wrap_hosts;
mod wrap_secrets;
mod wrap_url;
