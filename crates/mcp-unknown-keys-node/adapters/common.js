'use strict'
// What every adapter shares: the auditor it uses, and the rule that the
// alarm never throws into the host or the server.
const { Auditor } = require('../index.js')

/** Each adapted client, server or tools record, with its auditor. */
const auditors = new WeakMap()

/** The auditor an adapter uses: `options.auditor`, or one made of `options`. */
function auditorFor(options = {}) {
  return options.auditor ?? new Auditor(options)
}

/** The auditor an adapter attached to `target` (or `undefined`). */
function auditorOf(target) {
  return auditors.get(target)
}

/**
 * Runs the alarm's part of a call. What it throws (a listing the host could
 * not have sent either, a callback's bug) is said on stderr once per kind,
 * never thrown into the call.
 */
function quietly(step) {
  try {
    return step()
  } catch (error) {
    const kind = error?.name ?? 'Error'
    if (!quietly.said.has(kind)) {
      quietly.said.add(kind)
      process.stderr.write(`mcp-unknown-keys: the alarm could not read a listing (${kind}); calls go on unchanged\n`)
    }
    return undefined
  }
}
quietly.said = new Set()

module.exports = { auditorFor, auditorOf, auditors, quietly }
