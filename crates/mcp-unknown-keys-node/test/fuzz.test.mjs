// A property test of how an object's keys are read: random arguments
// (nested objects and arrays, getters, toJSON, members JSON leaves out,
// non-enumerable members, class instances, proxies, revoked proxies, deep
// nesting, many keys, keys that are not well-formed text), each audited
// against a schema made from what `JSON.parse(JSON.stringify(args))` holds
// with some keys left undeclared. The auditor must report exactly the keys
// and paths that copy holds undeclared (to the depth the core audits), with
// the diagnosis the call's JSON text gets, count as unreadable what has no
// JSON object form, and never throw. Seeded, so a
// failure names the case that reproduces it.
import test from 'node:test'
import assert from 'node:assert/strict'
import { Auditor } from 'mcp-unknown-keys'

const SEED = Number(process.env.FUZZ_SEED ?? 20260)
const CASES = Number(process.env.FUZZ_CASES ?? 1500)
/** How deep the core audits nested keys (MAX_NESTED_DEPTH). */
const MAX_NESTED_DEPTH = 64
/** How many undeclared keys and paths the core reads of one call (limits::MAX_UNDECLARED_PER_CALL). */
const MAX_UNDECLARED_PER_CALL = 1024
/** A key every generated object schema declares and no value carries, so that every object is audited. */
const DECLARED = '~declared~'

/** mulberry32: a small seeded generator of numbers in [0, 1). */
function generator(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Random arguments, and how to make the schema for them. */
class Maker {
  constructor(random) {
    this.random = random
  }

  below(n) {
    return Math.floor(this.random() * n)
  }

  pick(items) {
    return items[this.below(items.length)]
  }

  chance(p) {
    return this.random() < p
  }

  key() {
    const parts = ['a', 'path', 'x', 'ünï', 'k', '1', '0', '', '.', '[', ']', '"', '\\', '\n', '\u0000', '\u007f', '\ud800', '\udc00', '😀', ' ', 'toJSON', 'length', 'constructor']
    let key = ''
    const length = 1 + this.below(3)
    for (let i = 0; i < length; i++) key += this.pick(parts)
    // Keys JSON.parse and an object literal read differently, and the keys
    // the auditor tolerates or the schema declares, are left to other tests.
    return ['__proto__', 'reason', DECLARED].includes(key) ? 'plain' : key
  }

  scalar() {
    return this.pick([
      () => 'text',
      () => '',
      () => this.below(1000),
      () => -0.5,
      () => NaN,
      () => Infinity,
      () => true,
      () => null,
      () => new Date(this.below(1e12)),
      () => new String('boxed'),
      () => new Number(7),
      () => new Boolean(false),
    ])()
  }

  /** A value `depth` levels below the top; hazards (what JSON refuses) only where `hazards`. */
  value(depth, hazards, holders) {
    if (depth > 6) return this.scalar()
    const roll = this.random()
    if (roll < 0.3) return this.scalar()
    if (roll < 0.55) return this.object(depth, hazards, holders)
    if (roll < 0.7) return this.array(depth, hazards, holders)
    if (roll < 0.75) return this.pick([undefined, () => 1, Symbol('s')])
    if (roll < 0.8) return this.withToJSON(depth, hazards, holders)
    if (roll < 0.84) return new Proxy(this.object(depth, hazards, holders), {})
    if (roll < 0.87) return this.instance(depth, hazards, holders)
    if (roll < 0.88) return this.deep(hazards)
    if (hazards && roll < 0.9) return this.hazard(holders)
    return this.scalar()
  }

  object(depth, hazards, holders) {
    const object = {}
    holders = [...holders, object]
    const count = this.chance(0.01) ? 2000 + this.below(2000) : this.below(6)
    for (let i = 0; i < count; i++) {
      const key = count > 100 ? `k${i}${this.key()}` : this.key()
      const value = count > 100 ? this.scalar() : this.value(depth + 1, hazards, holders)
      const kind = this.random()
      if (kind < 0.1) Object.defineProperty(object, key, { value, enumerable: false, configurable: true })
      else if (kind < 0.2) Object.defineProperty(object, key, { get: () => value, enumerable: true, configurable: true })
      else Object.defineProperty(object, key, { value, enumerable: true, configurable: true, writable: true })
    }
    return object
  }

  array(depth, hazards, holders) {
    const array = []
    holders = [...holders, array]
    const count = this.below(4)
    for (let i = 0; i < count; i++) array.push(this.value(depth + 1, hazards, holders))
    return array
  }

  withToJSON(depth, hazards, holders) {
    const sent = this.value(depth + 1, hazards, holders)
    const object = this.object(depth, false, holders)
    const toJSON = this.chance(0.5) ? () => sent : (key) => ({ [`sent_as_${key}`]: 1, sent })
    return Object.defineProperty(object, 'toJSON', { value: toJSON, enumerable: this.chance(0.5), configurable: true })
  }

  instance(depth, hazards, holders) {
    const member = this.value(depth + 1, hazards, holders)
    class Entity {
      own = member
      get computed() {
        return 'on the prototype, not sent'
      }
    }
    return new Entity()
  }

  /** A chain nested past the depth the core audits, with nothing JSON refuses in it. */
  deep() {
    let value = { leaf: 1, other: 2 }
    const depth = MAX_NESTED_DEPTH - 5 + this.below(40)
    for (let i = 0; i < depth; i++) value = this.chance(0.7) ? { [this.pick(['a', 'b'])]: value, s: 1 } : [value, 1]
    return value
  }

  hazard(holders) {
    return this.pick([
      () => 10n,
      () => this.pick(holders),
      () => {
        const { proxy, revoke } = Proxy.revocable({ a: 1 }, {})
        revoke()
        return proxy
      },
      () => Object.defineProperty({}, 'boom', { enumerable: true, get: () => { throw new Error('getter') } }),
      () => ({ toJSON: () => { throw new Error('toJSON') } }),
    ])()
  }

  /** Arguments: most often an object, sometimes what JSON writes as no object. */
  args() {
    const roll = this.random()
    if (roll < 0.03) return this.pick([[1, { a: 1 }], { toJSON: () => 'text' }, new Date(0), () => 1])
    return this.object(0, this.chance(0.15), [])
  }

  /**
   * A schema for the values found at one place of the arguments' JSON: an
   * object's keys, each declared (with its own schema) or not, and an
   * array's items.
   */
  schema(values) {
    const schema = {}
    const objects = values.filter((value) => typeof value === 'object' && value !== null && !Array.isArray(value))
    const arrays = values.filter(Array.isArray)
    if (objects.length > 0) {
      schema.properties = { [DECLARED]: {} }
      // Each key as the auditor reads it, with every value it holds here.
      const found = new Map()
      for (const object of objects) {
        for (const [own, value] of Object.entries(object)) {
          const key = wellFormed(own)
          if (!found.has(key)) found.set(key, [])
          found.get(key).push(value)
        }
      }
      for (const [key, values] of found) {
        if (this.chance(0.6)) schema.properties[key] = this.schema(values)
      }
    }
    if (arrays.length > 0) schema.items = this.schema(arrays.flat(1))
    return schema
  }
}

/** A key as the auditor reads it: each lone surrogate U+FFFD. */
const wellFormed = (key) => key.toWellFormed()

/** A key of a path as the core writes it (its `path.rs`). */
function step(key) {
  return /^$|[.[\]"\\\u0000-\u001f\u007f-\u009f]/.test(key) ? `[${JSON.stringify(key)}]` : `.${key}`
}

/** The undeclared keys and paths the core's scan finds in `json` (its `nested.rs`):
 * in the order it meets them, repeats included, the first MAX_UNDECLARED_PER_CALL. */
function undeclared(json, schema) {
  const met = []
  const meet = (kind, text) => {
    if (met.length < MAX_UNDECLARED_PER_CALL) met.push([kind, text])
  }
  const declared = (properties, key) => Object.hasOwn(properties, key)
  const visit = (value, shape, path, depth) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && shape.properties) {
      for (const own of Object.keys(value)) {
        const key = wellFormed(own)
        if (!declared(shape.properties, key)) meet('path', (path + step(key)).replace(/^\./, ''))
        else if (depth < MAX_NESTED_DEPTH) visit(value[own], shape.properties[key], path + step(key), depth + 1)
      }
    }
    if (Array.isArray(value) && shape.items && depth < MAX_NESTED_DEPTH) {
      for (const item of value) visit(item, shape.items, `${path}[]`, depth + 1)
    }
  }
  for (const own of Object.keys(json)) {
    const key = wellFormed(own)
    if (!declared(schema.properties, key)) meet('key', key)
    else visit(json[own], schema.properties[key], step(key), 1)
  }
  const of = (kind) => [...new Set(met.filter(([k]) => k === kind).map(([, text]) => text))].sort()
  return { keys: of('key'), paths: of('path') }
}

/** What `JSON.stringify` makes of `args`: the object a host sends, or `undefined`. */
function sent(args) {
  try {
    const json = JSON.parse(JSON.stringify(args) ?? 'null')
    return typeof json === 'object' && json !== null && !Array.isArray(json) ? json : undefined
  } catch {
    return undefined
  }
}

test(`the keys audited are the keys JSON.parse(JSON.stringify(args)) holds (seed ${SEED}, ${CASES} cases)`, () => {
  const maker = new Maker(generator(SEED))
  let readable = 0
  for (let n = 0; n < CASES; n++) {
    const args = maker.args()
    const json = sent(args)
    const schema = maker.schema(json === undefined ? [{}] : [json])
    const warnings = []
    const auditor = new Auditor({ onWarn: (warning) => warnings.push(warning) })
    auditor.replaceCatalog([{ name: 'tool', inputSchema: schema }])
    let returned
    assert.doesNotThrow(() => {
      returned = auditor.audit('tool', args)
    }, `case ${n}`)
    const coverage = auditor.coverage()
    if (json === undefined) {
      assert.deepEqual(coverage.unaudited, { unreadable_arguments: 1 }, `case ${n}: no JSON object form`)
      assert.equal(returned, null)
      continue
    }
    readable++
    assert.equal(coverage.audited, 1, `case ${n}: audited`)
    const expected = undeclared(json, schema)
    const found = { keys: [...(returned?.unknown_keys ?? [])].sort(), paths: [...(returned?.unknown_paths ?? [])].sort() }
    assert.deepEqual(found, expected, `case ${n}`)
    assert.deepEqual(warnings, returned === null ? [] : [returned])
    // The warning, its diagnosis included (read from the values the reader
    // kept), is the one the same call's JSON text raises, where the core
    // reads that text (serde_json refuses a lone surrogate).
    const text = JSON.stringify(args)
    if (!/\\u[dD][89a-fA-F]/.test(text)) {
      const fromText = new Auditor({ onWarn() {} })
      fromText.replaceCatalog([{ name: 'tool', inputSchema: schema }])
      assert.deepEqual(fromText.audit('tool', text), returned, `case ${n}: as its JSON text`)
    }
  }
  assert.ok(readable > CASES * 0.6 && readable < CASES, `${readable} of ${CASES} cases readable: both kinds are tried`)
})
