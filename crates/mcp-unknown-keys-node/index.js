'use strict'
// The package's CommonJS entry: the addon's classes (`native.js`, written
// with `native.d.ts` by the install script from the Rust).
const native = require('./native.js')

/**
 * The addon's `Auditor`, with `audit` called as a plain function of the
 * auditor's slot (the same audit, without the bookkeeping napi-rs does for
 * a method's `this`), and an object's top-level keys read here: JavaScript
 * reads them faster than N-API hands them out one by one.
 */
class Auditor extends native.Auditor {
  #slot

  constructor(options) {
    super(options)
    this.#slot = super.__slot
  }

  audit(tool, args, id) {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return native.__auditInSlot(this.#slot, tool, args, id)
    }
    const keys = topLevelKeys(args)
    return keys === undefined
      ? native.__auditInSlot(this.#slot, tool, args, id)
      : native.__auditInSlot(this.#slot, tool, args, id, keys.joined, keys.count)
  }
}

/**
 * The keys `JSON.stringify` writes of an object (its own enumerable string
 * keys, but those whose value is `undefined`, a function or a symbol),
 * joined by NUL; `undefined` when reading them throws (a getter, a proxy),
 * which the addon then finds for itself.
 */
function topLevelKeys(object) {
  try {
    let keys = Object.keys(object)
    for (let i = 0; i < keys.length; i++) {
      const type = typeof object[keys[i]]
      if (type === 'undefined' || type === 'function' || type === 'symbol') {
        keys = keys.filter((key) => !absent(object[key]))
        break
      }
    }
    // `join` makes one flat string, which the addon reads in one copy.
    return { joined: keys.join('\0'), count: keys.length }
  } catch {
    return undefined
  }
}

/** Whether JSON leaves a member with this value out. */
function absent(value) {
  const type = typeof value
  return type === 'undefined' || type === 'function' || type === 'symbol'
}

module.exports = { Auditor, Session: native.Session }
