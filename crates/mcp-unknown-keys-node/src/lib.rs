//! The Node package `mcp-unknown-keys`: the alarm for arguments a tool
//! never declared, built from the Rust core rather than written again.
//!
//! This crate is the addon, built by `@napi-rs/cli` (see `package.json`),
//! which also writes its TypeScript types from these items; the package's
//! JavaScript side adds the adapters for the MCP TypeScript SDK (host and
//! server) and the Vercel AI SDK.
//!
//! - `auditor`: `Auditor`, over the core's [`Auditor`](mcp_unknown_keys::audit::Auditor);
//! - `session`: `JsSession` (`Session` in JavaScript), over the core's [`Session`](mcp_unknown_keys::session::Session),
//!   for hosts that see the server's answers too;
//! - `options`: what a host passes to build either;
//! - `arguments`: a call's object as `index.js` read it, once, as
//!   `JSON.stringify` reads it (the core's `HostObject`);
//! - `js`: one JavaScript value read through N-API, exceptions cleared;
//! - `listing`: the tools of a listing in any form a host gives it;
//! - `report`: `Warning`, `Coverage`, `Verdict`;
//! - `sink`: warnings to the host's callbacks or to stderr.
//! - `slots`: each live auditor by number, and `fast`: the `audit` `index.js`
//!   calls with an auditor's number, a plain N-API function;

// A test build registers nothing with Node, so what only JavaScript calls
// looks unused there.
#![cfg_attr(test, allow(dead_code))]

mod arguments;
mod auditor;
mod fast;
mod js;
mod listing;
mod options;
mod report;
mod session;
mod sink;
