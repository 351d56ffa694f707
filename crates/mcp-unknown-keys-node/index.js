'use strict'
// The package's CommonJS entry: the addon's classes (`native.js`, written
// with `native.d.ts` by the install script from the Rust).
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
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return auditInSlot(this.#slot, tool, args, id)
    }
    const read = readKeys(args)
    return read === undefined
      ? auditInSlot(this.#slot, tool, args, id)
      : auditInSlot(this.#slot, tool, args, id, read.joined, read.count, read.shape)
  }
}

/**
 * The keys `JSON.stringify` writes of an object (its own enumerable string
 * keys, but those whose value is `undefined`, a function or a symbol),
 * joined by NUL, and, when a value is an object, the object's shape.
 * `undefined` when reading throws (a getter, a proxy): the addon then
 * reads the object itself, and finds it unreadable.
 */
function readKeys(object) {
  try {
    let keys = Object.keys(object)
    let nests = false
    for (let i = 0; i < keys.length; i++) {
      const value = object[keys[i]]
      const type = typeof value
      if (type === 'object') nests ||= value !== null
      else if (type === 'undefined' || type === 'function' || type === 'symbol') {
        keys = keys.filter((key) => !absent(object[key]))
        break
      }
    }
    // `join` makes one flat string, which the addon reads in one copy.
    return { joined: keys.join('\0'), count: keys.length, shape: nests ? shapeOf(object) : undefined }
  } catch {
    return undefined
  }
}

/** Whether JSON leaves a member with this value out. */
function absent(value) {
  const type = typeof value
  return type === 'undefined' || type === 'function' || type === 'symbol'
}

/** The most values `shapeOf` visits: an object that holds itself twice doubles at each level. */
const MAX_SHAPE_VALUES = 100_000
/** Keys that JSON writes as they are, between quotes. */
const PLAIN_KEY = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/
/** Each key as JSON writes it, for the keys calls repeat (bounded). */
const quotedKeys = new Map()
const MAX_QUOTED_KEYS = 4096

/** Thrown to give up a shape: the addon then walks the object itself. */
class GiveUp extends Error {}

/**
 * An object's shape, for the core's scan of nested keys: its JSON with
 * every scalar written `0` (so no value is in it), each array's items and
 * each object's members as JSON writes them, nothing below the depth the
 * core reads (an object that holds itself ends there). `undefined` when it
 * would visit too many values, or a key is not well-formed text.
 */
function shapeOf(object) {
  const walk = { budget: MAX_SHAPE_VALUES, limit: native.__MAX_NESTED_DEPTH + 1 }
  try {
    return shapeText(object, 0, walk)
  } catch (error) {
    if (error instanceof GiveUp) return undefined
    throw error
  }
}

function shapeText(value, depth, walk) {
  if (--walk.budget < 0) throw new GiveUp()
  if (typeof value !== 'object' || value === null || depth >= walk.limit || typeof value.toJSON === 'function') return '0'
  if (Array.isArray(value)) {
    let text = '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ','
      const item = value[i]
      text += absent(item) ? '0' : shapeText(item, depth + 1, walk)
    }
    return text + ']'
  }
  let text = '{'
  const keys = Object.keys(value)
  for (let i = 0; i < keys.length; i++) {
    const member = value[keys[i]]
    if (absent(member)) continue
    if (text.length > 1) text += ','
    text += quoted(keys[i]) + ':' + shapeText(member, depth + 1, walk)
  }
  return text + '}'
}

/** A key as JSON writes it; a key that is not well-formed text has no exact JSON form. */
function quoted(key) {
  let text = quotedKeys.get(key)
  if (text !== undefined) return text
  if (PLAIN_KEY.test(key)) text = '"' + key + '"'
  else if (key.isWellFormed()) text = JSON.stringify(key)
  else throw new GiveUp()
  if (quotedKeys.size >= MAX_QUOTED_KEYS) quotedKeys.clear()
  quotedKeys.set(key, text)
  return text
}

module.exports = { Auditor, Session: native.Session }
