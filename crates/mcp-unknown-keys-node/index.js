'use strict'
// The package's CommonJS entry: the addon's classes (`native.js`, written
// with `native.d.ts` by the install script from the Rust).
const { Auditor, Session } = require('./native.js')

module.exports = { Auditor, Session }
