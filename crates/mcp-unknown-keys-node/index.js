'use strict'
// The package's CommonJS entry: the addon's classes (`native.js`, written
// with `native.d.ts` by the install script from the Rust).
const { types } = require('node:util')
const native = require('./native.js')

// The addon's `audit` as a plain N-API function of an auditor's slot.
const auditInSlot = native.__auditFunction()

/**
 * The addon's `Auditor`, with `audit` called as a plain function of the
 * auditor's slot (the same audit, without the bookkeeping napi-rs does for
 * a method's `this`), and an object's keys read here: JavaScript reads them
 * several times faster than N-API hands them out one by one.
 */
class Auditor extends native.Auditor {
  #slot

  constructor(options) {
    super(options)
    this.#slot = super.__slot
  }

  audit(tool, args, id) {
    if (args === null || (typeof args !== 'object' && typeof args !== 'function')) {
      return auditInSlot(this.#slot, tool, args, id)
    }
    const read = readArguments(args)
    return read === undefined
      ? auditInSlot(this.#slot, tool, undefined, id)
      : auditInSlot(this.#slot, tool, undefined, id, read.joined, read.keys.length, read.shape, read.keys, read.scalars)
  }
}

/**
 * A call's arguments read once, as `JSON.stringify` reads them to write
 * what a host sends: each value read once, `toJSON` honoured at every
 * level, a boxed primitive read as its value, a member whose value is
 * `undefined`, a function or a symbol left out. `undefined` when they have
 * no JSON object form (`JSON.stringify` would throw, or write no object):
 * the call is counted with reason `unreadable_arguments`. Otherwise:
 *
 * - `keys`: the top-level keys JSON writes, and `joined`, the same joined
 *   by NUL (one flat string, which the addon reads in one copy);
 * - `shape`, when a value is an object or an array: the arguments' JSON
 *   with every scalar written `0` (so that no value is in it), nothing
 *   below the depth the core reads, for the core's scan of nested keys;
 * - `scalars`: the scalars themselves, in the order they are written (in
 *   `shape`, or beside `keys`), which the addon reads only for a warning's
 *   diagnosis, so that no value is read twice.
 */
function readArguments(args) {
  try {
    const object = jsonValue(args, '')
    if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined
    return readObject(object)
  } catch {
    return undefined
  }
}

/** The top level of the arguments: see `readArguments`. */
function readObject(object) {
  const keys = Object.keys(object)
  const scalars = []
  let written = keys
  let walk
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    let value = object[key]
    let type = typeof value
    if (type === 'object' ? value !== null : type === 'function' || type === 'bigint') {
      value = jsonValue(value, key)
      type = typeof value
    }
    if (type === 'object' && value !== null) {
      walk ??= startShape(object, written === keys ? keys.slice(0, i) : written, scalars)
      walk.shape += (walk.shape.length > 1 ? ',' : '') + quoted(key) + ':' + shapeText(value, 1, walk)
    } else if (type === 'string' || type === 'number' || type === 'boolean' || value === null) {
      scalars.push(value)
      if (walk !== undefined) walk.shape += (walk.shape.length > 1 ? ',' : '') + quoted(key) + ':0'
    } else if (type === 'bigint') {
      throw new TypeError('a BigInt has no JSON form')
    } else {
      // Left out of the JSON: the keys written are those before, then each kept.
      if (written === keys) written = keys.slice(0, i)
      continue
    }
    if (written !== keys) written.push(key)
  }
  return { keys: written, joined: written.join('\0'), shape: walk === undefined ? undefined : walk.shape + '}', scalars }
}

/**
 * The value JSON writes for `value`, the member `key` of its holder: what
 * its `toJSON` returns, if it has one, and a boxed primitive's value.
 */
function jsonValue(value, key) {
  const toJSON = value.toJSON
  if (typeof toJSON === 'function') value = Reflect.apply(toJSON, value, [key])
  return typeof value === 'object' && value !== null ? unboxed(value) : value
}

/**
 * A `Number`, `String`, `Boolean` or `BigInt` object's value, as JSON
 * reads it; any other object as it is. Plain objects and arrays are told
 * apart by their prototype (for a `Proxy`, its `getPrototypeOf` trap runs)
 * before the slower check of every other object.
 */
function unboxed(object) {
  const prototype = Object.getPrototypeOf(object)
  if (prototype === Object.prototype || prototype === Array.prototype || prototype === null) return object
  if (!types.isBoxedPrimitive(object)) return object
  if (types.isNumberObject(object)) return Number(object)
  if (types.isStringObject(object)) return String(object)
  if (types.isBooleanObject(object)) return Reflect.apply(Boolean.prototype.valueOf, object, [])
  if (types.isBigIntObject(object)) return Reflect.apply(BigInt.prototype.valueOf, object, [])
  return object // a Symbol object, which JSON writes as {}
}

/** How deep below the top level the core reads keys: nothing deeper is read. */
const MAX_NESTED_DEPTH = native.MAX_NESTED_DEPTH
/** The most values one call's nested values may hold: past it, the call is unreadable. */
const MAX_SHAPE_VALUES = 1_000_000
/** Keys that JSON writes as they are, between quotes. */
const PLAIN_KEY = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/
/** Each key as JSON writes it, for the keys calls repeat (bounded). */
const quotedKeys = new Map()
const MAX_QUOTED_KEYS = 4096

/**
 * The shape of the arguments, begun at their first nested value: the keys
 * written before it, whose values were all scalars.
 */
function startShape(object, before, scalars) {
  const walk = {
    shape: '{' + before.map((key) => quoted(key) + ':0').join(','),
    scalars,
    budget: MAX_SHAPE_VALUES,
    // Objects and arrays being read, outermost first: JSON refuses a cycle.
    holders: [object],
  }
  return walk
}

/**
 * A nested object's or array's shape, at `depth` below the top level.
 * Below the depth the core reads, nothing is read (`null`).
 */
function shapeText(value, depth, walk) {
  if (depth > MAX_NESTED_DEPTH) return 'null'
  if (walk.holders.includes(value)) throw new TypeError('an object that holds itself has no JSON form')
  walk.holders.push(value)
  let text
  if (Array.isArray(value)) {
    text = '['
    const length = value.length
    for (let i = 0; i < length; i++) {
      if (i > 0) text += ','
      text += memberText(value[i], i, depth, walk) ?? 'null'
    }
    text += ']'
  } else {
    text = '{'
    const keys = Object.keys(value)
    for (let i = 0; i < keys.length; i++) {
      const member = memberText(value[keys[i]], keys[i], depth, walk)
      if (member === undefined) continue
      if (text.length > 1) text += ','
      text += quoted(keys[i]) + ':' + member
    }
    text += '}'
  }
  walk.holders.pop()
  return text
}

/** A member's shape (`undefined` when JSON leaves it out); a scalar is kept. */
function memberText(value, key, depth, walk) {
  if (--walk.budget < 0) throw new RangeError('too many values to read')
  let type = typeof value
  if (type === 'object' ? value !== null : type === 'function' || type === 'bigint') {
    value = jsonValue(value, String(key))
    type = typeof value
  }
  if (type === 'string' || type === 'number' || type === 'boolean' || value === null) {
    walk.scalars.push(value)
    return '0'
  }
  if (type === 'object') return shapeText(value, depth + 1, walk)
  if (type === 'bigint') throw new TypeError('a BigInt has no JSON form')
  return undefined
}

/**
 * A key as JSON writes it; a key that is not well-formed text as the addon
 * reads it, each lone surrogate U+FFFD.
 */
function quoted(key) {
  let text = quotedKeys.get(key)
  if (text !== undefined) return text
  text = PLAIN_KEY.test(key) ? '"' + key + '"' : JSON.stringify(key.toWellFormed())
  if (quotedKeys.size >= MAX_QUOTED_KEYS) quotedKeys.clear()
  quotedKeys.set(key, text)
  return text
}

module.exports = { Auditor, Session: native.Session }
