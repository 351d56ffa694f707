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
/**
 * What `audit` hands the addon for arguments with no JSON object form (an
 * array, a cycle, a revoked Proxy): a value the addon reads as no
 * arguments it can audit (`unreadable_arguments`), where `undefined` is a
 * call sent with no arguments at all (`emptied` when the tool requires
 * keys).
 */
const NO_JSON_OBJECT = 0n

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
      ? auditInSlot(this.#slot, tool, NO_JSON_OBJECT, id)
      : auditInSlot(this.#slot, tool, undefined, id, read.joined, read.keys.length, read.shape, read.keys, read.scalars)
  }
}

/**
 * A call's arguments read once, as `JSON.stringify` reads them to write
 * what a host sends: each value read once, `toJSON` honoured at every
 * level, a boxed primitive read as its value (see `unboxed`), a member
 * whose value is `undefined`, a function or a symbol left out. `undefined` when they have
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
    const keys = Object.keys(object)
    // A boxed primitive is written as its value: not an object.
    return unboxed(object, keys) === NOT_BOXED ? readObject(object, keys) : undefined
  } catch {
    return undefined
  }
}

/** The top level of the arguments, and its keys: see `readArguments`. */
function readObject(object, keys) {
  const scalars = []
  let written = keys
  let walk
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    const value = object[key]
    const type = typeof value
    let member
    if (type === 'string' || type === 'number' || type === 'boolean' || value === null) {
      scalars.push(value)
      member = '0'
    } else if (type !== 'undefined' && type !== 'symbol') {
      // An object, a function or a BigInt: what JSON writes of it may nest.
      walk ??= startShape(object, written, written === keys ? i : written.length, scalars)
      walk.key = key
      member = shapeText(value, 1, walk)
    }
    if (member === undefined) {
      // Left out of the JSON: the keys written are those before, then each kept.
      if (written === keys) written = keys.slice(0, i)
      continue
    }
    if (walk !== undefined) walk.shape += (walk.shape.length > 1 ? ',' : '') + quoted(key) + ':' + member
    if (written !== keys) written.push(key)
  }
  return { keys: written, joined: written.join('\0'), shape: walk === undefined ? undefined : walk.shape + '}', scalars }
}

/**
 * What JSON writes for `value`, the member `key` of its holder, when it
 * has a `toJSON`: what that returns.
 */
function jsonValue(value, key) {
  const toJSON = value.toJSON
  return typeof toJSON === 'function' ? Reflect.apply(toJSON, value, [String(key)]) : value
}

/** What `unboxed` gives for an object that is not a boxed primitive. */
const NOT_BOXED = Symbol('not boxed')

/**
 * A `Number`, `String`, `Boolean` or `BigInt` object's value, as JSON
 * reads it, given the object's own keys; `NOT_BOXED` for any other object
 * (a `Symbol` object too: JSON writes it as an object). Only an object with
 * no keys or a string's indices is looked at further: a box given keys of
 * its own besides is read as an object. The keys have been read first, as
 * JSON reads them after unboxing: for a box, reading them runs no code.
 */
function unboxed(object, keys) {
  if ((keys.length > 0 && keys[0] !== '0') || !types.isBoxedPrimitive(object)) return NOT_BOXED
  if (types.isNumberObject(object)) return Number(object)
  if (types.isStringObject(object)) return String(object)
  if (types.isBooleanObject(object)) return Reflect.apply(Boolean.prototype.valueOf, object, [])
  if (types.isBigIntObject(object)) return Reflect.apply(BigInt.prototype.valueOf, object, [])
  return NOT_BOXED
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
 * The shape of the arguments, begun at their first member that may nest:
 * the first `count` keys of `written` before it, whose values are scalars.
 */
function startShape(object, written, count, scalars) {
  let shape = '{'
  for (let i = 0; i < count; i++) shape += (i > 0 ? ',' : '') + quoted(written[i]) + ':0'
  return {
    shape,
    scalars,
    // The key of the member being read, for its `toJSON`.
    key: '',
    budget: MAX_SHAPE_VALUES,
    // Objects and arrays being read, outermost first: JSON refuses a cycle.
    holders: [object],
  }
}

/**
 * A nested value's shape, at `depth` below the top level (`undefined` when
 * JSON leaves it out; a scalar is kept). Below the depth the core reads,
 * nothing is read (`null`).
 */
function shapeText(value, depth, walk) {
  if (--walk.budget < 0) throw new RangeError('too many values to read')
  let type = typeof value
  if (type === 'object' ? value !== null : type === 'function' || type === 'bigint') {
    value = jsonValue(value, walk.key)
    type = typeof value
  }
  if (type === 'object' && value !== null) {
    if (depth > MAX_NESTED_DEPTH) return 'null'
    if (walk.holders.includes(value)) throw new TypeError('an object that holds itself has no JSON form')
    if (Array.isArray(value)) {
      walk.holders.push(value)
      const text = arrayText(value, depth, walk)
      walk.holders.pop()
      return text
    }
    const keys = Object.keys(value)
    const box = unboxed(value, keys)
    if (box === NOT_BOXED) {
      walk.holders.push(value)
      const text = objectText(value, keys, depth, walk)
      walk.holders.pop()
      return text
    }
    value = box
    type = typeof value
  }
  if (type === 'string' || type === 'number' || type === 'boolean' || value === null) {
    walk.scalars.push(value)
    return '0'
  }
  if (type === 'bigint') throw new TypeError('a BigInt has no JSON form')
  return undefined
}

/** An array's shape: each item's, `null` for one JSON writes as null. */
function arrayText(array, depth, walk) {
  let text = '['
  const length = array.length
  for (let i = 0; i < length; i++) {
    if (i > 0) text += ','
    walk.key = i
    text += shapeText(array[i], depth + 1, walk) ?? 'null'
  }
  return text + ']'
}

/** An object's shape, of the `keys` it was read with. */
function objectText(object, keys, depth, walk) {
  let text = '{'
  for (let i = 0; i < keys.length; i++) {
    walk.key = keys[i]
    const member = shapeText(object[keys[i]], depth + 1, walk)
    if (member === undefined) continue
    if (text.length > 1) text += ','
    text += quoted(keys[i]) + ':' + member
  }
  return text + '}'
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
