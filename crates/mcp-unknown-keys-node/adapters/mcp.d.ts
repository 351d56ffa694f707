import type { Auditor, AuditorOptions } from '../index.js'

/** Options of an adapter: an `Auditor`'s, or the auditor to use. */
export interface AdapterOptions extends AuditorOptions {
  /** An auditor to share (its options are then its own). */
  auditor?: Auditor
}

/**
 * Audits an MCP SDK `Client`'s `callTool` against what its `listTools`
 * returned (every page; `list_changed` forgets it). Returns the same client;
 * calls are sent unchanged.
 */
export declare function auditClient<C extends object>(client: C, options?: AdapterOptions): C

/**
 * Audits each `tools/call` an MCP SDK `McpServer` or `Server` receives
 * against its own listing, before its schemas strip undeclared keys. Returns
 * the same server; handlers receive what they did before. A listing that
 * fails or does not answer in time is said once, and the calls meanwhile
 * are counted as unaudited (`no_catalogue`).
 */
export declare function auditServer<S extends object>(
  server: S,
  options?: AdapterOptions & {
    /** How long calls await the server's own listing, in milliseconds (default 5000). */
    listingTimeout?: number
  },
): S

/** The auditor an adapter attached to a client or a server. */
export declare function auditorOf(target: object): Auditor | undefined
