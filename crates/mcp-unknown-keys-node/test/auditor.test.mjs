// The Auditor and the Session on their own: the same contract as the
// Python package's, and bad input that never throws into the host.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { Auditor, Session } from 'mcp-unknown-keys'
import { collecting } from './helpers.mjs'

const native = createRequire(import.meta.url)('../native.js')

const listing = {
  tools: [
    { name: 'fs_read', inputSchema: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'integer', default: 0 } } } },
    {
      name: 'remember',
      inputSchema: {
        type: 'object',
        properties: { entities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } },
      },
    },
  ],
}

test('CommonJS and ES modules import the same classes', () => {
  const require = createRequire(import.meta.url)
  const cjs = require('mcp-unknown-keys')
  assert.equal(cjs.Auditor, Auditor)
  assert.equal(cjs.Session, Session)
})

test('a warning has every field, and each (tool, key) is said once', () => {
  const { auditor, warnings } = collecting()
  auditor.replaceCatalog(listing)
  const warning = auditor.audit('fs_read', { path: 'a', ffset: 12 }, 'call_1')
  assert.deepEqual(warning, {
    tool: 'fs_read',
    unknown_keys: ['ffset'],
    unknown_paths: [],
    declared_keys: ['offset', 'path'],
    id: 'call_1',
    hints: [{ key: 'ffset', cause: 'truncated', suggestion: 'offset' }],
    missing_keys: [{ key: 'offset', default: 0 }],
  })
  assert.equal(auditor.audit('fs_read', { path: 'b', ffset: 1 }), null)
  assert.equal(auditor.audit('fs_read', '{"path":"c","ffset":2}'), null)
  assert.deepEqual(auditor.audit('fs_read', '{"path":"c","lines":2}', 7)?.unknown_keys, ['lines'])
  assert.deepEqual(warnings.map((w) => w.unknown_keys), [['ffset'], ['lines']])
  assert.equal(warnings[1].id, '7')
  const nested = auditor.audit('remember', { entities: [{ name: 'x', age: 3 }] })
  assert.deepEqual(nested.unknown_paths, ['entities[].age'])
  assert.deepEqual(nested.unknown_keys, [])
})

test('coverage counts every call and why it was not audited', () => {
  const { auditor } = collecting()
  auditor.audit('fs_read', { path: 'a' })
  auditor.replaceCatalog([{ type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }])
  auditor.audit('fs_read', { path: 'a' })
  auditor.audit('nope', {})
  auditor.audit('fs_read', [1])
  assert.deepEqual(auditor.coverage(), {
    calls: 4,
    audited: 1,
    unaudited: { no_catalogue: 1, unlisted_tool: 1, unreadable_arguments: 1 },
    unlisted_tools: { fs_read: 1, nope: 1 },
    is_complete: false,
  })
  assert.deepEqual(auditor.tools, ['fs_read'])
  assert.deepEqual(auditor.auditedTools, ['fs_read'])
})

// The specification's standard catalogue (its reference tests UK-3, UK-7).
const standard = [
  { type: 'function', function: { name: 'fs_read', parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'integer' } } } } },
  { type: 'function', function: { name: 'fs_ping', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'fs_noop', parameters: { type: 'object', properties: {} } } },
]

test('auditedTools is the set the listing left behind, declaring nothing included', () => {
  const { auditor, warnings } = collecting()
  auditor.replaceCatalog(standard)
  assert.deepEqual(auditor.auditedTools, ['fs_noop', 'fs_ping', 'fs_read'])
  assert.equal(auditor.audit('fs_ping', { anything: 1 }), null)
  assert.equal(auditor.audit('fs_noop', { anything: 1 }), null)
  assert.deepEqual(auditor.coverage().unaudited, { declares_nothing: 2 })
  assert.equal(warnings.length, 0)
  auditor.replaceCatalog([{ name: 'lone', inputSchema: { type: 'object' } }, { name: 'null', inputSchema: { properties: null } }])
  assert.deepEqual(auditor.auditedTools, ['lone', 'null'])
})

test('auditedTools leaves out declarations it cannot read; the last of a name wins; a failed listing keeps the set', () => {
  const { auditor } = collecting()
  auditor.replaceCatalog([
    standard[0],
    'not an object',
    { weird: 1 },
    { type: 'function', function: 'fs_string' },
    { type: 'function', function: { name: 7, parameters: {} } },
    { type: 'function', function: { name: 'no_parameters' } },
    { type: 'function', function: { name: 'string_parameters', parameters: 'object' } },
    { name: 'nope', inputSchema: { properties: 'nope' } },
    { name: 'readable_then_not', inputSchema: { properties: { a: {} } } },
    { name: 'readable_then_not', inputSchema: 'unreadable' },
    { name: 'not_then_readable', inputSchema: { properties: 'nope' } },
    { name: 'not_then_readable', inputSchema: { type: 'object' } },
  ])
  assert.deepEqual(auditor.auditedTools, ['fs_read', 'not_then_readable'])
  assert.deepEqual(auditor.tools, ['fs_read', 'no_parameters', 'nope', 'not_then_readable', 'readable_then_not', 'string_parameters'])
  assert.throws(() => auditor.replaceCatalog(42))
  assert.deepEqual(auditor.auditedTools, ['fs_read', 'not_then_readable'])
})

test('pages assemble a listing; clearCatalog forgets it', () => {
  const { auditor } = collecting()
  auditor.listPage({ tools: [listing.tools[0]], nextCursor: 'p2' }, { first: true, more: true })
  auditor.listPage({ tools: [listing.tools[1]] }, { first: false, more: false })
  assert.deepEqual(auditor.tools, ['fs_read', 'remember'])
  auditor.clearCatalog()
  assert.equal(auditor.audit('fs_read', { zz: 1 }), null)
  assert.deepEqual(auditor.coverage().unaudited, { no_catalogue: 1 })
})

test('allow and topLevelOnly', () => {
  const { auditor } = collecting({ allow: ['trace_id'], topLevelOnly: true })
  auditor.replaceCatalog(listing)
  assert.equal(auditor.audit('fs_read', { path: 'a', trace_id: 't' }), null)
  assert.equal(auditor.audit('remember', { entities: [{ age: 1 }] }), null)
})

test('bad input never throws and never changes the arguments', () => {
  const { auditor, warnings } = collecting()
  auditor.replaceCatalog(listing)
  const cyclic = { path: 'a' }
  cyclic.self = cyclic
  const entities = [{ name: 'n' }]
  entities[0].loop = entities
  const throwing = { path: 'a' }
  Object.defineProperty(throwing, 'boom', { enumerable: true, get() { throw new Error('getter') } })
  const proxy = new Proxy({}, { ownKeys() { throw new Error('trap') } })
  let deep = { name: 'leaf' }
  for (let i = 0; i < 100_000; i++) deep = { entities: [deep] }
  const huge = { path: 'a' }
  for (let i = 0; i < 20_000; i++) huge[`k${i}`] = i
  const inputs = [cyclic, { entities }, throwing, proxy, { path: 'a', big: 10n }, { path: 'a', n: NaN, f() {}, u: undefined },
    deep, huge, null, undefined, 5, 'not json', '[1,2]', [1, 2], Symbol('s'), 10n, () => 1, new Date(0)]
  const before = inputs.map((input) => (typeof input === 'object' && input !== null && input !== proxy && input !== throwing ? Object.keys(input).length : null))
  const walked = new native.Auditor({ onWarn() {} })
  walked.replaceCatalog(listing)
  for (const input of inputs) {
    assert.doesNotThrow(() => auditor.audit('fs_read', input))
    assert.doesNotThrow(() => auditor.audit('remember', input))
    assert.doesNotThrow(() => walked.audit('remember', input))
  }
  inputs.forEach((input, i) => {
    if (before[i] !== null) assert.equal(Object.keys(input).length, before[i])
  })
  assert.equal(cyclic.self, cyclic)
  const said = new Set(warnings.flatMap((w) => w.unknown_keys.map((k) => `${w.tool}.${k}`)))
  assert.ok(!said.has('fs_read.self') && !said.has('fs_read.big'), 'a cycle and a BigInt have no JSON form: nothing is sent')
  assert.ok(said.has('fs_read.n'), 'NaN is sent as null: the key is sent')
  assert.ok(!said.has('fs_read.f') && !said.has('fs_read.u'), 'JSON leaves out functions and undefined')
  assert.ok(!warnings.some((w) => w.unknown_paths.includes('entities[].loop')))
  const coverage = auditor.coverage()
  assert.equal(coverage.calls, inputs.length * 2)
  // All but the three that JSON writes as an object: NaN's, the deep one, the huge one.
  assert.equal(coverage.unaudited.unreadable_arguments, 2 * (inputs.length - 3))
})

test('a callback that throws is said and the call goes on; it may call the auditor back', () => {
  const auditor = new Auditor({ onWarn: (w) => { auditor.audit('fs_read', { again: 1 }); throw new Error(w.tool) } })
  auditor.replaceCatalog(listing)
  assert.deepEqual(auditor.audit('fs_read', { once: 1 })?.unknown_keys, ['once'])
  assert.equal(auditor.coverage().calls, 3, "the callback's call, and its own callback's")
})

test('the default says one line on stderr per warning, with keys and never values', () => {
  const script = `
    const { Auditor } = require('mcp-unknown-keys')
    const a = new Auditor()
    a.replaceCatalog(${JSON.stringify(JSON.stringify(listing))})
    a.audit('fs_read', { path: 'SECRET-PATH', ffset: 'SECRET-VALUE' })
    a.audit('fs_read', { path: 'SECRET-PATH', ffset: 'SECRET-VALUE' })`
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: new URL('.', import.meta.url) })
  assert.equal(run.status, 0, run.stderr)
  const lines = run.stderr.trim().split('\n')
  assert.equal(lines.length, 1)
  assert.match(lines[0], /^mcp-unknown-keys: fs_read was called with undeclared argument\(s\) ffset/)
  assert.ok(!run.stderr.includes('SECRET'))
})

test('a listing with no JSON form throws a clear error and keeps the catalogue', () => {
  const { auditor } = collecting()
  auditor.replaceCatalog(listing)
  const cyclic = { tools: [] }
  cyclic.tools.push(cyclic)
  assert.throws(() => auditor.replaceCatalog(cyclic), /no JSON form/)
  assert.throws(() => auditor.replaceCatalog(42), /expected an array of tools/)
  assert.deepEqual(auditor.tools, ['fs_read', 'remember'])
})

test('a Session gives verdicts as the proxy does', () => {
  const verdicts = []
  const session = new Session({ onWarn() {}, onVerdict: (v) => verdicts.push(v) })
  session.fromHost({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  session.fromServer({ jsonrpc: '2.0', id: 1, result: listing })
  const said = session.fromHost({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fs_read', arguments: { path: 'a', ffset: 1 } } })
  assert.deepEqual(said.map((w) => w.unknown_keys), [['ffset']])
  session.fromServer('{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
  session.fromHost({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fs_read', arguments: { path: 'a', ffset: 1 } } })
  assert.deepEqual(session.finish().map((v) => v.verdict), ['unanswered'])
  assert.deepEqual(verdicts.map((v) => [v.verdict, v.id, v.unknown_keys]), [['ignored', '2', ['ffset']], ['unanswered', '3', ['ffset']]])
  assert.deepEqual(session.verdicts, verdicts)
  assert.equal(session.coverage().audited, 2)
  const cyclic = {}
  cyclic.self = cyclic
  assert.throws(() => session.fromHost(cyclic), /no JSON form/)
})

test('an object reads as its JSON text does: the same warnings, keys escaped, absent values left out', () => {
  const schema = {
    type: 'object',
    properties: {
      entities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } } } } } },
      options: { type: 'object', properties: { depth: { type: 'integer' } } },
    },
  }
  const calls = [
    { entities: [{ name: 'a', 'we"ird\nkey': 1, 'ünï': 2 }], options: { depth: 1, deepth: 2 } },
    { entities: [{ name: 'a', gone: undefined, fn() {}, tags: [{ k: 'x', kk: 1 }, null, 3, [1]] }] },
    { entities: [{ name: 'b', when: new Date(0) }, undefined], options: new Date(0) },
    { options: { depth: 1, nested: { deeper: { deepest: 1 } } }, extra: [{ a: 1 }] },
    { entities: [], options: {} },
  ]
  const fromObjects = collecting()
  const fromText = collecting()
  // The addon's own method: the object walked through N-API, as when the
  // package's reading of its keys gives up.
  const walked = { warnings: [] }
  walked.auditor = new native.Auditor({ onWarn: (w) => walked.warnings.push(w) })
  for (const { auditor } of [fromObjects, fromText, walked]) auditor.replaceCatalog([{ name: 'remember', inputSchema: schema }])
  for (const [i, call] of calls.entries()) {
    fromObjects.auditor.audit('remember', call, i)
    fromText.auditor.audit('remember', JSON.stringify(call), i)
    walked.auditor.audit('remember', call, i)
  }
  const said = ({ warnings }) => warnings.map((w) => [w.id, w.unknown_keys, w.unknown_paths])
  assert.deepEqual(said(fromObjects), said(fromText))
  assert.deepEqual(said(walked), said(fromText))
  assert.ok(fromObjects.warnings.some((w) => w.unknown_paths.includes('entities[]["we\\"ird\\nkey"]')))
  assert.ok(fromObjects.warnings.some((w) => w.unknown_paths.includes('entities[].tags[].kk')))
  assert.ok(!fromObjects.warnings.some((w) => w.unknown_paths.some((p) => p.includes('gone') || p.includes('fn'))))
})

test('objects that hold themselves many times, and keys that are not well-formed text, neither hang nor throw', () => {
  const { auditor, warnings } = collecting()
  auditor.replaceCatalog(listing)
  const fan = { name: 'x' }
  for (const key of ['a', 'b', 'c', 'd']) fan[key] = fan
  const entities = [fan, fan]
  fan.entities = entities
  let dag = { name: 'leaf' }
  for (let i = 0; i < 40; i++) dag = { name: 'n', a: dag, b: dag }
  assert.doesNotThrow(() => auditor.audit('remember', { entities }))
  assert.doesNotThrow(() => auditor.audit('remember', { entities: [dag] }))
  assert.doesNotThrow(() => auditor.audit('remember', { entities: [{ name: 'y', '\ud800': 1 }] }))
  assert.deepEqual(warnings.map((w) => w.unknown_paths), [['entities[].\ufffd']], 'a lone surrogate reads as U+FFFD')
  assert.deepEqual(auditor.coverage().unaudited, { unreadable_arguments: 2 }, 'a cycle, and 2^40 values, have no JSON form to read')
  assert.equal(auditor.coverage().audited, 1)
})

test('a tool whose schema nests too deep stays listed, declaring nothing, said once; the rest is audited', () => {
  let schema = { type: 'object', properties: { a: { type: 'string' } } }
  for (let i = 0; i < 300; i++) schema = { type: 'object', properties: { x: schema } }
  const notes = []
  const { auditor } = collecting({ onNote: (tool, text) => notes.push([tool, text]) })
  const listing = [{ name: 'deep', inputSchema: schema }, { name: 'ok', inputSchema: { type: 'object', properties: { p: {} } } }]
  auditor.replaceCatalog(listing)
  auditor.replaceCatalog(listing)
  assert.deepEqual(auditor.tools, ['deep', 'ok'])
  assert.deepEqual(auditor.auditedTools, ['ok'])
  assert.deepEqual(notes, [['deep', "its schema nests too deep to read: the tool's arguments are not audited"]])
  assert.equal(auditor.audit('deep', { x: 1 }), null)
  assert.deepEqual(auditor.coverage().unaudited, { declares_nothing: 1 })
})
