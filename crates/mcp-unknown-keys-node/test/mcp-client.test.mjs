// The host side of the MCP TypeScript SDK, end to end: a real `Client`
// over stdio to the project's example server.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
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

test('auditClient: list_changed forgets the catalogue until the next listing', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'muk-node-'))
  const { auditor } = collecting()
  const client = auditClient(await connected(root), { auditor })
  t.after(() => client.close())
  await client.listTools()
  client._onnotification({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })
  await client.callTool({ name: 'list', arguments: {} })
  assert.deepEqual(auditor.coverage().unaudited, { no_catalogue: 1 })
  await client.listTools()
  await client.callTool({ name: 'list', arguments: {} })
  assert.equal(auditor.coverage().audited, 1)
})
