// The server side of the MCP TypeScript SDK, in process: an `McpServer`
// whose zod schemas strip undeclared keys, and a real `Client` calling it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { auditServer, auditorOf } from 'mcp-unknown-keys/mcp'
import { collecting } from './helpers.mjs'

/** A server with a `search` tool that records what its handler received. */
function searchServer(received) {
  const server = new McpServer({ name: 'search', version: '1.0.0' })
  server.registerTool(
    'search',
    { inputSchema: { query: z.string(), limit: z.number().optional() } },
    async (args) => {
      received.push(args)
      return { content: [{ type: 'text', text: `found ${args.query}` }] }
    },
  )
  return server
}

async function connect(server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: 'host', version: '1.0.0' })
  await Promise.all([server.connect(serverSide), client.connect(clientSide)])
  return client
}

test('auditServer: the server author sees the keys zod strips, the handler gets what it did before', async (t) => {
  const received = []
  const plainReceived = []
  const { auditor, warnings } = collecting()
  const server = auditServer(searchServer(received), { auditor })
  assert.equal(auditorOf(server), auditor)
  const client = await connect(server)
  const plain = await connect(searchServer(plainReceived))
  t.after(() => Promise.all([client.close(), plain.close()]))

  const call = { name: 'search', arguments: { query: 'cats', limt: 5, filters: { lang: 'en' } } }
  const answer = await client.callTool(call)
  const plainAnswer = await plain.callTool(structuredClone(call))
  await client.callTool({ name: 'search', arguments: { query: 'dogs', limt: 1 } })
  await client.callTool({ name: 'search', arguments: { query: 'owls' } })

  assert.deepEqual(answer, plainAnswer)
  assert.deepEqual(received, [{ query: 'cats' }, { query: 'dogs' }, { query: 'owls' }])
  assert.deepEqual(received[0], plainReceived[0])
  assert.deepEqual(warnings.map((w) => w.unknown_keys), [['filters', 'limt']])
  assert.deepEqual(warnings[0].declared_keys, ['limit', 'query'])
  assert.equal(warnings[0].id, '1', 'the request id the client sent')
  assert.deepEqual(auditor.coverage(), { calls: 3, audited: 3, unaudited: {}, unlisted_tools: {}, is_complete: true })
})

test('auditServer: a tool registered later is listed again and audited', async (t) => {
  const { auditor, warnings } = collecting()
  const server = auditServer(searchServer([]), { auditor })
  const client = await connect(server)
  t.after(() => client.close())
  await client.callTool({ name: 'search', arguments: { query: 'a' } })
  server.registerTool('fetch', { inputSchema: { url: z.string() } }, async () => ({ content: [] }))
  await client.callTool({ name: 'fetch', arguments: { url: 'u', timeout: 3 } })
  assert.deepEqual(warnings.map((w) => [w.tool, w.unknown_keys]), [['fetch', ['timeout']]])
  assert.deepEqual(auditor.tools, ['fetch', 'search'])
})

test('auditServer: arguments that are not an object are counted, and the server answers as before', async (t) => {
  const { auditor } = collecting()
  const server = auditServer(searchServer([]), { auditor })
  const client = await connect(server)
  t.after(() => client.close())
  const answer = await client.request(
    { method: 'tools/call', params: { name: 'search', arguments: [1, 2] } },
    (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
  ).catch((error) => ({ error: String(error) }))
  assert.ok(answer.isError || answer.error)
  await client.callTool({ name: 'nope', arguments: {} }).catch(() => {})
  assert.deepEqual(auditor.coverage().unaudited, { unreadable_arguments: 1, unlisted_tool: 1 })
})

test('auditServer: a low-level Server whose listing comes in pages is read page by page', async (t) => {
  const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } })
  const pages = [
    [{ name: 'one', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } }],
    [{ name: 'two', inputSchema: { type: 'object', properties: { b: { type: 'string' } } } }],
  ]
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const page = Number(request.params?.cursor ?? 0)
    return { tools: pages[page], ...(page + 1 < pages.length ? { nextCursor: String(page + 1) } : {}) }
  })
  const received = []
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    received.push(request.params.arguments)
    return { content: [] }
  })
  const { auditor, warnings } = collecting()
  const client = await connect(auditServer(server, { auditor }))
  t.after(() => client.close())
  await client.callTool({ name: 'two', arguments: { b: 'x', bb: 1 } })
  await client.callTool({ name: 'one', arguments: { a: 'x' } })
  assert.deepEqual(auditor.tools, ['one', 'two'])
  assert.deepEqual(warnings.map((w) => [w.tool, w.unknown_keys]), [['two', ['bb']]])
  assert.deepEqual(received, [{ b: 'x', bb: 1 }, { a: 'x' }], 'the low-level handler gets the arguments as sent')
})

/** A low-level `Server` with a `search` tool whose listing `list` answers. */
function listedBy(list) {
  const server = new Server({ name: 'slow', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, list)
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: `got ${request.params.name}` }] }))
  return server
}

const searchTool = { name: 'search', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }

/** What `step` writes on stderr, the lines that name mcp-unknown-keys. */
async function stderrOf(step) {
  const written = []
  const write = process.stderr.write
  process.stderr.write = function (chunk, ...rest) {
    if (String(chunk).startsWith('mcp-unknown-keys:')) written.push(String(chunk))
    else return write.call(this, chunk, ...rest)
    return true
  }
  try {
    await step()
  } finally {
    process.stderr.write = write
  }
  return written
}

const settle = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('auditServer: a listing that fails is said once; its calls are answered, and counted as unaudited', async (t) => {
  const { auditor } = collecting()
  const client = await connect(auditServer(listedBy(() => { throw new Error('listing down') }), { auditor }))
  t.after(() => client.close())
  const said = await stderrOf(async () => {
    for (const query of ['a', 'b', 'c']) {
      const answer = await client.callTool({ name: 'search', arguments: { query, extra: 1 } })
      assert.equal(answer.content[0].text, 'got search')
    }
    await settle(10)
  })
  assert.deepEqual(auditor.coverage(), { calls: 3, audited: 0, unaudited: { no_catalogue: 3 }, unlisted_tools: { search: 3 }, is_complete: false })
  assert.deepEqual(said, ["mcp-unknown-keys: the server's own tools/list failed; its calls go on unaudited (no_catalogue) until its tools change\n"])
})

test('auditServer: a listing that never settles is said once; calls wait a bounded time, and are counted', async (t) => {
  const { auditor, warnings } = collecting()
  let answer
  const client = await connect(auditServer(listedBy(() => new Promise((resolve) => { answer = resolve })), { auditor, listingTimeout: 50 }))
  t.after(() => client.close())
  const said = await stderrOf(async () => {
    await client.callTool({ name: 'search', arguments: { query: 'a', extra: 1 } })
    await client.callTool({ name: 'search', arguments: { query: 'b', extra: 1 } })
    assert.equal(auditor.coverage().calls, 0, 'waiting for the listing')
    await settle(150)
    assert.deepEqual(auditor.coverage(), { calls: 2, audited: 0, unaudited: { no_catalogue: 2 }, unlisted_tools: { search: 2 }, is_complete: false })
    // The listing answers at last: calls from then on are audited.
    answer({ tools: [searchTool] })
    await settle(10)
    await client.callTool({ name: 'search', arguments: { query: 'c', extra: 1 } })
    await settle(10)
  })
  assert.deepEqual(said, ["mcp-unknown-keys: the server's own tools/list has not answered in 50 ms; its calls go on unaudited (no_catalogue) until it does\n"])
  assert.equal(auditor.coverage().audited, 1)
  assert.deepEqual(warnings.map((w) => w.unknown_keys), [['extra']])
})

test('auditServer: at most 1000 calls await the listing; the rest go on unaudited, counted, said once', async (t) => {
  const { auditor } = collecting()
  const client = await connect(auditServer(listedBy(() => new Promise(() => {})), { auditor, listingTimeout: 60_000 }))
  t.after(() => client.close())
  const said = await stderrOf(async () => {
    const calls = Array.from({ length: 1005 }, (_, i) => client.callTool({ name: 'search', arguments: { query: String(i) } }))
    const answers = await Promise.all(calls)
    assert.equal(answers.length, 1005)
  })
  assert.deepEqual(auditor.coverage().unaudited, { no_catalogue: 5 })
  assert.deepEqual(said, ["mcp-unknown-keys: 1000 calls await the server's own tools/list; further calls go on unaudited (no_catalogue) until it answers\n"])
})
