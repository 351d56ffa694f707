#!/usr/bin/env node
'use strict'
// The `mcp-unknown-keys` command of the npm package (`npx mcp-unknown-keys
// proxy -- …`): runs the binary of this platform's package
// (mcp-unknown-keys-linux-x64-gnu, …, installed by npm as an optional
// dependency whose os/cpu/libc match), passing the arguments, the standard
// streams and the exit status through. Signals the host sends this process
// go on to the binary, so that a proxy stopped by its host stops its server.
const { spawn } = require('node:child_process')
const { join } = require('node:path')
const { platformSuffix } = require('./platform.js')

function binaryPath() {
  const suffix = platformSuffix()
  const name = `mcp-unknown-keys${process.platform === 'win32' ? '.exe' : ''}`
  try {
    return join(require.resolve(`mcp-unknown-keys-${suffix}/package.json`).slice(0, -'package.json'.length), name)
  } catch {
    console.error(
      `mcp-unknown-keys: no prebuilt binary for ${suffix} (the package mcp-unknown-keys-${suffix} is not installed). ` +
        'Install without --no-optional / --omit=optional, or build it: cargo install mcp-unknown-keys-cli',
    )
    process.exit(1)
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit' })
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal))
}
child.on('error', (error) => {
  console.error(`mcp-unknown-keys: could not run the binary (${error.message})`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  } else {
    process.exit(code ?? 1)
  }
})
