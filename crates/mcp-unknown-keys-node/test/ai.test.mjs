// The Vercel AI SDK, end to end: `generateText` with a model that calls
// tools (the SDK's own mock model: no network), over the tools of
// `@ai-sdk/mcp`'s client to the example server and a zod tool of its own.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateText, tool, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { createMCPClient } from '@ai-sdk/mcp'
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio'
import { z } from 'zod'
import { auditTools, auditorOf } from 'mcp-unknown-keys/ai'
import { collecting, exampleServer } from './helpers.mjs'

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
}

/** A model that calls each of `calls` ([name, input]) in turn, then stops. */
function callingModel(calls) {
  const steps = calls.map(([toolName, input], i) => ({
    content: [{ type: 'tool-call', toolCallId: `call_${i}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  }))
  steps.push({ content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] })
  return new MockLanguageModelV4({ doGenerate: steps })
}

test('auditTools: the tools @ai-sdk/mcp returns, audited as the model calls them', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'muk-node-'))
  writeFileSync(join(root, 'notes.txt'), 'one\ntwo\n')
  const { command, args } = exampleServer()
  const mcp = await createMCPClient({ transport: new Experimental_StdioMCPTransport({ command, args: [...args, '--root', root] }) })
  t.after(() => mcp.close())
  const { auditor, warnings } = collecting()
  const tools = auditTools(await mcp.tools(), { auditor })
  assert.equal(auditorOf(tools), auditor)

  const result = await generateText({
    model: callingModel([
      ['read', { path: 'notes.txt', ffset: 1 }],
      ['read', { path: 'notes.txt', ffset: 0 }],
      ['list', { path: '.', recursive: true }],
    ]),
    tools,
    prompt: 'read the notes',
    stopWhen: stepCountIs(5),
  })
  const outputs = result.steps.flatMap((step) => step.toolResults)
  assert.equal(outputs.length, 3)
  assert.match(JSON.stringify(outputs[0].output), /one/, 'the server read the file')
  assert.deepEqual(warnings.map((w) => [w.tool, w.unknown_keys]), [['read', ['ffset']], ['list', ['recursive']]])
  assert.deepEqual(auditor.coverage(), { calls: 3, audited: 3, unaudited: {}, unlisted_tools: {}, is_complete: true })
})

test('auditTools: a zod tool is audited before zod strips the keys; execute gets what it did before', async () => {
  const received = []
  const weather = tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string(), unit: z.enum(['c', 'f']).optional() }),
    execute: async (input) => {
      received.push(input)
      return { temperature: 20 }
    },
  })
  const plainReceived = []
  const plain = { weather: { ...weather, execute: async (input) => { plainReceived.push(input); return { temperature: 20 } } } }
  const { auditor, warnings } = collecting()
  const provided = { type: 'provider', id: 'some.tool', args: {} }
  const tools = auditTools({ weather, provided }, { auditor, ai: await import('ai') })
  assert.equal(tools.provided, provided, 'a tool with no schema of its own is left as it is')
  delete tools.provided
  const calls = [['weather', { city: 'Oslo', units: 'c' }], ['weather', { city: 'Oslo', units: 'f' }]]
  await generateText({ model: callingModel(calls), tools, prompt: 'weather', stopWhen: stepCountIs(5) })
  await generateText({ model: callingModel(calls), tools: plain, prompt: 'weather', stopWhen: stepCountIs(5) })
  assert.deepEqual(received, plainReceived)
  assert.deepEqual(received, [{ city: 'Oslo' }, { city: 'Oslo' }])
  assert.deepEqual(warnings.map((w) => w.unknown_keys), [['units']])
  assert.equal(warnings[0].hints[0].suggestion, 'unit')
  assert.equal(auditor.coverage().audited, 2)
})

/**
 * What a model's tool calls came to, as `generateText` reports them: each
 * call, result and error (an error as its name and message).
 */
async function outcomes(tools, calls) {
  const result = await generateText({ model: callingModel(calls), tools, prompt: 'go', stopWhen: stepCountIs(calls.length + 1) })
  return result.steps.flatMap((step) =>
    step.content
      .filter((part) => part.type.startsWith('tool-'))
      .map(({ type, toolName, input, output, error, invalid }) => ({
        type,
        toolName,
        input,
        output,
        invalid,
        error: error === undefined ? undefined : `${error.name}: ${error.message}`,
      })),
  )
}

/** A tool whose `execute` is on its class's prototype and reads a private field. */
class Weather {
  #unit = 'c'
  description = 'The weather in a city'
  inputSchema = z.object({ city: z.string() })
  async execute({ city }) {
    if (city === 'Atlantis') throw new Error('no such city')
    return { city, temperature: 20, unit: this.#unit }
  }
}

/** Tools the AI SDK runs with and without `auditTools`, made anew for each run. */
const kinds = {
  'a class instance': () => new Weather(),
  'a non-enumerable execute': () => {
    const made = tool({ description: 'd', inputSchema: z.object({ city: z.string() }) })
    Object.defineProperty(made, 'execute', { value: async ({ city }) => ({ city, hidden: true }), enumerable: false })
    return made
  },
  'a getter whose execute changes after wrapping': () => {
    let execute = async () => ({ version: 1 })
    const made = {
      inputSchema: z.object({ city: z.string() }),
      get execute() {
        return execute
      },
    }
    made.swap = () => {
      execute = async ({ city }) => ({ city, version: 2 })
    }
    return made
  },
  'a frozen tool': () => Object.freeze(tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, frozen: true }) })),
  'a schema given by a getter on the prototype': () =>
    new (class {
      get inputSchema() {
        return z.object({ city: z.string() })
      }
      execute({ city }) {
        return { city, via: 'getter' }
      }
    })(),
}

for (const [kind, make] of Object.entries(kinds)) {
  test(`auditTools: ${kind} runs exactly as it does without auditTools, results and errors alike`, async () => {
    const calls = [
      ['weather', { city: 'Oslo', units: 'c' }],
      ['weather', { city: 'Atlantis' }],
      ['weather', { town: 'Oslo' }],
    ]
    const plainTool = make()
    const auditedTool = make()
    const { auditor, warnings } = collecting()
    const tools = auditTools({ weather: auditedTool }, { auditor, ai: await import('ai') })
    plainTool.swap?.()
    auditedTool.swap?.()
    const plain = await outcomes({ weather: plainTool }, calls)
    const audited = await outcomes(tools, calls)
    assert.deepEqual(audited, plain)
    assert.ok(plain.some((part) => part.type === 'tool-result'), 'the tool ran')
    assert.ok(tools.weather instanceof Object.getPrototypeOf(auditedTool).constructor)
    assert.deepEqual(warnings.map((w) => w.unknown_keys), [['units'], ['town']])
    assert.equal(auditor.coverage().audited, 3)
  })
}
