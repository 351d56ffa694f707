// An object's keys are read as `JSON.stringify` reads them to write what a
// host sends: once, `toJSON` honoured at every level; arguments with no JSON
// object form are counted, never thrown.
import test from 'node:test'
import assert from 'node:assert/strict'
import { collecting } from './helpers.mjs'

const nested = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    options: { type: 'object', properties: { depth: { type: 'integer' } } },
    entities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
  },
}

function auditor() {
  const collected = collecting()
  collected.auditor.replaceCatalog([{ name: 'tool', inputSchema: nested }])
  return collected
}

test('a revoked Proxy never throws, and the call is counted as unreadable', () => {
  const { auditor: alarm } = auditor()
  const { proxy, revoke } = Proxy.revocable({ path: 'a' }, {})
  revoke()
  const inner = Proxy.revocable({}, {})
  inner.revoke()
  assert.equal(alarm.audit('tool', proxy), null)
  assert.equal(alarm.audit('tool', { path: 'a', options: inner.proxy }), null)
  assert.deepEqual(alarm.coverage(), { calls: 2, audited: 0, unaudited: { unreadable_arguments: 2 }, unlisted_tools: {}, is_complete: false })
})

test('each getter runs once per call, a warning raised or not', () => {
  const { auditor: alarm, warnings } = auditor()
  let runs = 0
  const args = { entities: [{ name: 'n' }] }
  Object.defineProperty(args, 'path', { enumerable: true, get: () => (runs++, 'p') })
  Object.defineProperty(args.entities[0], 'age', { enumerable: true, get: () => (runs++, 3) })
  alarm.audit('tool', args)
  assert.equal(runs, 2, 'a warning is raised: each getter once')
  alarm.audit('tool', args)
  assert.equal(runs, 4, 'nothing new: each getter once')
  assert.deepEqual(warnings.map((w) => w.unknown_paths), [['entities[].age']])
})

test('toJSON is honoured at every level: the keys sent are audited, not those never sent', () => {
  const { auditor: alarm, warnings } = auditor()
  const top = { secret: 1, toJSON: () => ({ path: 'a', sent: 1 }) }
  alarm.audit('tool', top)
  const inner = { options: { hidden: 1, toJSON: (key) => ({ depth: 1, [`sent_as_${key}`]: 1 }) } }
  alarm.audit('tool', inner)
  const items = { entities: [{ name: 'x', toJSON: (key) => ({ name: 'x', [`item_${key}`]: 1 }) }] }
  alarm.audit('tool', items)
  assert.deepEqual(
    warnings.map((w) => [w.unknown_keys, w.unknown_paths]),
    [[['sent'], []], [[], ['options.sent_as_options']], [[], ['entities[].item_0']]],
  )
  assert.deepEqual(warnings.map((w) => JSON.stringify(w)).filter((w) => w.includes('secret') || w.includes('hidden')), [])
})

test('values JSON writes otherwise: a Date as text, a boxed string as its text, a toJSON that returns no object', () => {
  const { auditor: alarm, warnings } = auditor()
  alarm.audit('tool', { path: 'a', options: new Date(0) })
  alarm.audit('tool', { path: 'a', options: Object.assign(new String('ab'), { extra: 1 }) })
  alarm.audit('tool', { path: 'a', entities: [new Number(1), { name: 'x', at: new Date(0) }] })
  assert.deepEqual(warnings.map((w) => w.unknown_paths), [['entities[].at']])
  alarm.audit('tool', { toJSON: () => 'text' })
  alarm.audit('tool', new Date(0))
  alarm.audit('tool', { toJSON: () => [1] })
  assert.deepEqual(alarm.coverage().unaudited, { unreadable_arguments: 3 })
})

test('what JSON.stringify refuses is unreadable: a BigInt, a cycle, a getter or toJSON that throws', () => {
  const { auditor: alarm, warnings } = auditor()
  const cyclic = { path: 'a', options: {} }
  cyclic.options.back = cyclic
  const throwing = { path: 'a' }
  Object.defineProperty(throwing, 'boom', { enumerable: true, get() { throw new Error('getter') } })
  const inputs = [
    { path: 'a', big: 10n },
    cyclic,
    throwing,
    { path: 'a', options: { toJSON() { throw new Error('toJSON') } } },
    { path: 'a', entities: [{ name: 'x', big: 1n }] },
  ]
  for (const input of inputs) {
    assert.throws(() => JSON.stringify(input))
    assert.equal(alarm.audit('tool', input), null)
  }
  assert.equal(warnings.length, 0)
  assert.deepEqual(alarm.coverage().unaudited, { unreadable_arguments: inputs.length })
})

test('an object the same twice is not a cycle; a key holding NUL is read whole', () => {
  const { auditor: alarm, warnings } = auditor()
  const shared = { name: 'x', twice: 1 }
  alarm.audit('tool', { path: 'a', entities: [shared, shared], 'a\0b': 1 })
  assert.deepEqual(warnings.map((w) => [w.unknown_keys, w.unknown_paths]), [[['a\0b'], ['entities[].twice']]])
})

test('a warning diagnoses the values JSON writes: a key found in a value sent', () => {
  const text = collecting()
  const object = collecting()
  for (const { auditor: alarm } of [text, object]) alarm.replaceCatalog([{ name: 'tool', inputSchema: nested }])
  const call = { path: 'a', pat: 'the pat of a path', options: { depth: 1 } }
  object.auditor.audit('tool', { ...call, toJSON: undefined, options: { toJSON: () => call.options } })
  text.auditor.audit('tool', JSON.stringify(call))
  assert.deepEqual(object.warnings, text.warnings)
})
