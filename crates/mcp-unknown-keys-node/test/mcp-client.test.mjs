// The host side of the MCP TypeScript SDK, end to end: a real `Client`
// over stdio to the project's example server.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { auditClient, auditorOf } from 'mcp-unknown-keys/mcp'
import { collecting, exampleServer } from './helpers.mjs'

async function connected(root) {
  const client = new Client({ name: 'mcp-unknown-keys-test', version: '1.0.0' })
  const { command, args } = exampleServer()
  await client.connect(new StdioClientTransport({ command, args: [...args, '--root', root], stderr: 'ignore' }))
  return client
}

test('auditClient: calls are audited against the listing and sent unchanged', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'muk-node-'))
  writeFileSync(join(root, 'notes.txt'), 'one\ntwo\nthree\n')
  const plain = await connected(root)
  const { auditor, warnings } = collecting()
  const client = auditClient(await connected(root), { auditor })
  t.after(() => Promise.all([plain.close(), client.close()]))
  assert.equal(auditorOf(client), auditor)

  const before = await client.callTool({ name: 'read', arguments: { path: 'notes.txt' } })
  assert.deepEqual(auditor.coverage().unaudited, { no_catalogue: 1 })

  const listed = await client.listTools()
  assert.deepEqual(listed.tools.map((tool) => tool.name).sort(), auditor.tools)

  const args = { path: 'notes.txt', ffset: 1, limit: 1 }
  const audited = await client.callTool({ name: 'read', arguments: args })
  const unaudited = await plain.callTool({ name: 'read', arguments: { path: 'notes.txt', ffset: 1, limit: 1 } })
  assert.deepEqual(audited, unaudited, 'the server answered the same call the same way')
  assert.deepEqual(args, { path: 'notes.txt', ffset: 1, limit: 1 })
  await client.callTool({ name: 'read', arguments: { path: 'notes.txt', ffset: 2 } })
  await client.callTool({ name: 'list', arguments: { path: '.', recursive: true } })
  await client.callTool({ name: 'list', arguments: {} })

  assert.deepEqual(
    warnings.map((w) => [w.tool, w.unknown_keys]),
    [['read', ['ffset']], ['list', ['recursive']]],
  )
  assert.equal(warnings[0].hints[0].suggestion, 'offset')
  assert.deepEqual(auditor.coverage(), {
    calls: 5,
    audited: 4,
    unaudited: { no_catalogue: 1 },
    unlisted_tools: { read: 1 },
    is_complete: false,
  })
  assert.ok(before.content.length > 0)
})

test('auditClient: every page of a listing feeds the catalogue; list_changed forgets it until the next listing', async (t) => {
  // A low-level SDK server whose listing comes in two pages, then grows.
  const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  const schema = (key) => ({ type: 'object', properties: { [key]: { type: 'string' } } })
  let pages = [[{ name: 'one', inputSchema: schema('a') }], [{ name: 'two', inputSchema: schema('b') }]]
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const page = Number(request.params?.cursor ?? 0)
    return { tools: pages[page], ...(page + 1 < pages.length ? { nextCursor: String(page + 1) } : {}) }
  })
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const { auditor, warnings } = collecting()
  const client = auditClient(new Client({ name: 'host', version: '1.0.0' }), { auditor })
  await Promise.all([server.connect(serverSide), client.connect(clientSide)])
  t.after(() => client.close())

  let listed = await client.listTools()
  assert.deepEqual(auditor.tools, ['one'], 'a first page with more to come')
  listed = await client.listTools({ cursor: listed.nextCursor })
  assert.deepEqual(auditor.tools, ['one', 'two'])
  await client.callTool({ name: 'two', arguments: { b: 'x', c: 'y' } })
  // A host's own request is audited too.
  await client.request({ method: 'tools/call', params: { name: 'one', arguments: { a: 'x', z: 1 } } }, CallToolResultSchema)
  assert.deepEqual(warnings.map((w) => [w.tool, w.unknown_keys]), [['two', ['c']], ['one', ['z']]])

  pages = [[{ name: 'three', inputSchema: schema('d') }]]
  const changed = new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, resolve))
  await server.sendToolListChanged()
  await changed
  await client.callTool({ name: 'three', arguments: { d: 'x' } })
  assert.deepEqual(auditor.coverage().unaudited, { no_catalogue: 1 }, 'the old catalogue is forgotten')
  await client.listTools()
  await client.callTool({ name: 'three', arguments: { d: 'x', e: 1 } })
  assert.deepEqual(warnings.map((w) => [w.tool, w.unknown_keys]).at(-1), ['three', ['e']])
})
