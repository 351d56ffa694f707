import type { Auditor } from '../index.js'
import type { AdapterOptions } from './mcp.js'

/**
 * The same tools, each one's input audited against its `inputSchema` (or
 * `parameters`) when the AI SDK validates it, before a zod schema strips
 * undeclared keys. Each tool is a `Proxy` that delegates to the original
 * (prototype, non-enumerable members and getters included; methods called
 * on the tool): `execute` and validation are unchanged.
 */
export declare function auditTools<T extends Record<string, object>>(
  tools: T,
  options?: AdapterOptions & {
    /** The `ai` module that made the tools (default: the one the running project resolves). */
    ai?: { asSchema: (schema: any) => any; jsonSchema: (schema: any, options?: any) => any }
  },
): T

/** The auditor attached to an audited tools record. */
export declare function auditorOf(target: object): Auditor | undefined
