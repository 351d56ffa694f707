// The host's callbacks never end the host nor change a call, whatever they
// do: throw, return a promise that rejects, call the alarm back 10,000 deep.
// Each case runs in a process of its own, where an unhandled rejection or a
// stack overflow would end it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

/** Runs `script` (an ES module) in a Node of its own, beside this package. */
function run(script) {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('.', import.meta.url),
    env: { ...process.env, MCP_UNKNOWN_KEYS_BIN: process.env.MCP_UNKNOWN_KEYS_BIN ?? '' },
  })
  return { status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr }
}

/** How many stderr lines match `pattern`. */
const count = (stderr, pattern) => stderr.split('\n').filter((line) => pattern.test(line)).length

const listing = JSON.stringify([
  { name: 'fs_read', inputSchema: { type: 'object', properties: { path: { type: 'string' }, remote: { $ref: 'https://example.com/schema.json' } } } },
])

test('a callback whose promise rejects is said once, without its message; the host stays up', () => {
  const child = run(`
    import { Auditor, Session } from 'mcp-unknown-keys'
    const fail = async () => { throw new Error('SECRET-in-the-message') }
    const auditor = new Auditor({ onWarn: fail, onNote: fail })
    auditor.replaceCatalog(${JSON.stringify(listing)})
    const warnings = [auditor.audit('fs_read', { path: 'a', one: 1 }), auditor.audit('fs_read', { path: 'a', two: 2 })]
    const session = new Session({ onWarn: fail, onVerdict: () => Promise.reject(new Error('SECRET-verdict')) })
    session.fromHost({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    session.fromServer({ jsonrpc: '2.0', id: 1, result: { tools: JSON.parse(${JSON.stringify(listing)}) } })
    for (const id of [2, 3]) {
      session.fromHost({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fs_read', arguments: { ['k' + id]: 1 } } })
      session.fromServer({ jsonrpc: '2.0', id, result: { content: [] } })
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
    console.log(JSON.stringify({ keys: warnings.map((w) => w.unknown_keys), calls: auditor.coverage().calls, verdicts: session.verdicts.length }))`)
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), { keys: [['one'], ['two']], calls: 2, verdicts: 2 })
  assert.ok(!child.stderr.includes('SECRET'), child.stderr)
  for (const name of ['onWarn', 'onNote', 'onVerdict']) {
    assert.equal(count(child.stderr, new RegExp(`host's ${name} callback returned a promise that rejected`)), 1, child.stderr)
  }
})

test('a callback that throws is said once per callback, without its message', () => {
  const child = run(`
    import { Auditor } from 'mcp-unknown-keys'
    const auditor = new Auditor({ onWarn: () => { throw new Error('SECRET-thrown') } })
    auditor.replaceCatalog(${JSON.stringify(listing)})
    auditor.audit('fs_read', { one: 1 })
    auditor.audit('fs_read', { two: 2 })
    console.log(auditor.coverage().audited)`)
  assert.equal(child.status, 0, child.stderr)
  assert.equal(child.stdout.trim(), '2')
  assert.ok(!child.stderr.includes('SECRET'))
  assert.equal(count(child.stderr, /host's onWarn callback threw/), 1, child.stderr)
})

test('auditServer: a log service that fails does not take the MCP server down', () => {
  const child = run(`
    import { z } from 'zod'
    import { Client } from '@modelcontextprotocol/sdk/client/index.js'
    import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
    import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
    import { auditServer } from 'mcp-unknown-keys/mcp'
    const server = auditServer(new McpServer({ name: 'search', version: '1.0.0' }), {
      onWarn: async () => { throw new Error('SECRET-log-service-down') },
    })
    server.registerTool('search', { inputSchema: { query: z.string() } }, async ({ query }) => ({ content: [{ type: 'text', text: 'found ' + query }] }))
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const client = new Client({ name: 'host', version: '1.0.0' })
    await Promise.all([server.connect(serverSide), client.connect(clientSide)])
    const answers = []
    for (const extra of ['limt', 'page']) answers.push(await client.callTool({ name: 'search', arguments: { query: extra, [extra]: 1 } }))
    await new Promise((resolve) => setTimeout(resolve, 50))
    answers.push(await client.callTool({ name: 'search', arguments: { query: 'after' } }))
    console.log(JSON.stringify(answers.map((answer) => answer.content[0].text)))
    await client.close()`)
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), ['found limt', 'found page', 'found after'])
  assert.ok(!child.stderr.includes('SECRET'))
  assert.equal(count(child.stderr, /host's onWarn callback returned a promise that rejected/), 1, child.stderr)
})

test('a callback that calls the auditor back 10,000 deep: no crash, every call audited and its warning delivered', () => {
  const child = run(`
    import { Auditor } from 'mcp-unknown-keys'
    const levels = 10_000
    let delivered = 0
    const auditor = new Auditor({
      onWarn: (warning) => {
        delivered++
        if (delivered <= levels) auditor.audit('fs_read', { ['k' + delivered]: 1 })
      },
    })
    auditor.replaceCatalog(${JSON.stringify(listing)})
    const first = auditor.audit('fs_read', { path: 'a', k0: 0 })
    const { calls, audited } = auditor.coverage()
    console.log(JSON.stringify({ first: first.unknown_keys, delivered, calls, audited }))`)
  assert.equal(child.signal, null, `ended by ${child.signal}`)
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), { first: ['k0'], delivered: 10_001, calls: 10_001, audited: 10_001 })
  assert.equal(count(child.stderr, /called the alarm back more than 16 deep/), 1, child.stderr)
})

test('a Session whose onVerdict calls it back 10,000 deep: no crash', () => {
  const child = run(`
    import { Session } from 'mcp-unknown-keys'
    const levels = 10_000
    let verdicts = 0
    const call = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'fs_read', arguments: { ['k' + id]: 1 } } })
    const session = new Session({
      onWarn() {},
      onVerdict: () => {
        verdicts++
        if (verdicts < levels) {
          session.fromHost(call(verdicts + 1))
          session.fromServer({ jsonrpc: '2.0', id: verdicts + 1, result: { content: [] } })
        }
      },
    })
    session.fromHost({ jsonrpc: '2.0', id: 0, method: 'tools/list' })
    session.fromServer({ jsonrpc: '2.0', id: 0, result: { tools: JSON.parse(${JSON.stringify(listing)}) } })
    session.fromHost(call(1))
    session.fromServer({ jsonrpc: '2.0', id: 1, result: { content: [] } })
    console.log(JSON.stringify({ verdicts, calls: session.coverage().calls }))`)
  assert.equal(child.signal, null, `ended by ${child.signal}`)
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), { verdicts: 10_000, calls: 10_000 })
})
