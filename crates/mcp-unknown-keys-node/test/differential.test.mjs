// The recorded sessions every door is held to (the CLI's
// tests/fixtures/sessions/, their format in that folder's README), fed to
// the Node `Session`: it says what every other door says (the corpus's
// expected.json, which the Rust differential test holds equal to the
// library's `Session` and every door).
import test from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Session } from 'mcp-unknown-keys'

const corpus = fileURLToPath(new URL('../../mcp-unknown-keys-cli/tests/fixtures/sessions/', import.meta.url))
const prefixes = { '{"from":"host","message":': 'host', '{"from":"server","message":': 'server' }

/** A session's options, and its messages with their side, each as the text that travelled. */
function read(file) {
  let options = {}
  const messages = []
  readFileSync(corpus + file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .forEach((line, n) => {
      if (n === 0 && line.startsWith('{"options":')) {
        options = JSON.parse(line).options
        return
      }
      const prefix = Object.keys(prefixes).find((prefix) => line.startsWith(prefix))
      assert.ok(prefix && line.endsWith('}'), `${file}:${n + 1} is not in the corpus's one form`)
      const text = line.slice(prefix.length, -1)
      assert.deepEqual(JSON.parse(line).message, JSON.parse(text))
      messages.push([prefixes[prefix], text])
    })
  return { options, messages }
}

const sessions = readdirSync(corpus).filter((file) => file.endsWith('.jsonl')).sort()
const expected = JSON.parse(readFileSync(corpus + 'expected.json', 'utf8'))

test('the corpus is there', () => {
  assert.ok(sessions.length >= 30, `${corpus} holds ${sessions.length} sessions`)
})

for (const file of sessions) {
  test(`the session says what every door says: ${file}`, () => {
    const { options, messages } = read(file)
    const said = []
    const handed = []
    const session = new Session({
      onWarn: (warning) => said.push(warning),
      onVerdict: (verdict) => handed.push(verdict),
      allow: options.allow,
      topLevelOnly: options.top_level_only ?? false,
    })
    const returned = []
    for (const [side, text] of messages) returned.push(...(side === 'host' ? session.fromHost(text) : session.fromServer(text)))
    session.finish()
    assert.deepEqual(returned, said)
    assert.deepEqual(handed, session.verdicts)

    const doors = expected[file.replace(/\.jsonl$/, '')]
    assert.deepEqual(returned, doors.warnings)
    // A verdict's `unknown_paths` is always an array here; the JSON line leaves an empty one out.
    assert.deepEqual(session.verdicts, doors.verdicts.map((verdict) => ({ unknown_paths: [], ...verdict })))
    const { is_complete: complete, ...coverage } = session.coverage()
    assert.deepEqual(coverage, doors.coverage)
    assert.equal(complete, coverage.calls === coverage.audited)
  })
}
