// The package's TypeScript types, generated from the Rust at install, and
// the adapters' declarations: a TypeScript host's use of them type-checks
// under `strict`, library declarations included.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

test('a TypeScript host type-checks against the generated types', () => {
  const require = createRequire(import.meta.url)
  let tsc
  try {
    tsc = require.resolve('typescript/bin/tsc')
  } catch {
    assert.fail('typescript is missing: run scripts/test-node (npm ci installs the pinned test dependencies)')
  }
  const file = fileURLToPath(new URL('types/check.mts', import.meta.url))
  const run = spawnSync(
    process.execPath,
    [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', file],
    { encoding: 'utf8' },
  )
  assert.equal(run.status, 0, run.stdout + run.stderr)
})
