// Compiled, not run, by types.test.mjs: the package's types (generated from
// the Rust, and the adapters') as a TypeScript host uses them.
import { Auditor, Session, type Warning, type Coverage } from 'mcp-unknown-keys'
import { auditClient, auditServer, auditorOf } from 'mcp-unknown-keys/mcp'
import { auditTools } from 'mcp-unknown-keys/ai'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'

const auditor = new Auditor({ onWarn: (w: Warning) => console.log(w.unknown_keys.join()), allow: ['x'], topLevelOnly: false })
auditor.replaceCatalog({ tools: [] })
auditor.listPage([], { first: true, more: false })
const w: Warning | null = auditor.audit('t', { a: 1 }, 3)
const c: Coverage = auditor.coverage()
const s = new Session({ onVerdict: (v) => console.log(v.verdict) })
s.fromHost('{}')
const client: Client = auditClient(new Client({ name: 'h', version: '1' }), { auditor })
const server: McpServer = auditServer(new McpServer({ name: 's', version: '1' }))
const tools = auditTools({ a: { inputSchema: {} } })
console.log(w, c, client, server, tools, auditorOf(client)?.tools)
