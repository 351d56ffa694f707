// What the tests share: the project's example server (the CLI binary's
// `example-server`), and an auditor whose warnings are collected.
import { existsSync } from 'node:fs'
import { Auditor } from 'mcp-unknown-keys'

/** The CLI binary; a test that needs it fails, saying how to get it. */
export function cliBinary() {
  const binary = process.env.MCP_UNKNOWN_KEYS_BIN
  if (!binary || !existsSync(binary)) {
    throw new Error(
      'the example server needs the CLI binary: run scripts/test-node (it builds it), ' +
        'or `cargo build -p mcp-unknown-keys-cli` and set MCP_UNKNOWN_KEYS_BIN to target/debug/mcp-unknown-keys',
    )
  }
  return binary
}

/** How the example server is started over stdio. */
export function exampleServer() {
  return { command: cliBinary(), args: ['example-server'] }
}

/** An auditor and the warnings it said, in order. */
export function collecting(options = {}) {
  const warnings = []
  const auditor = new Auditor({ ...options, onWarn: (warning) => warnings.push(warning) })
  return { auditor, warnings }
}
