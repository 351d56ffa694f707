// What auditing a call costs a Node host, side by side with what it already
// pays, in one process:
//
//   node crates/mcp-unknown-keys-node/bench/bench.mjs [--quick]
//
// after `scripts/test-node` (or `npm ci` in the package), which installs
// the pinned comparisons and builds the addon in release mode.
//
// Rows, each per call:
// - audit(object): `Auditor.audit(tool, args)` given the arguments as the
//   object a framework hands over: keys read in place, no JSON made;
// - audit(text): the same given the call's JSON text;
// - JSON.parse: parsing that text, which a host or server pays once per call;
// - ajv: a compiled ajv 8 validator of the tool's schema, closed with
//   `additionalProperties: false`, on the object;
// - zod: `safeParse` of the same schema as a zod 4 strict object.
//
// Every round times every row once, interleaved, so that the machine's load
// falls on all rows alike; the figure is the median of the rounds, with the
// spread (lowest–highest round). Every call is clean (all its keys
// declared), as nearly every call is: the cost the alarm adds to each call.
import Ajv from 'ajv'
import { z } from 'zod'
import { Auditor } from 'mcp-unknown-keys'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 5 : 15
const CALLS = quick ? 2_000 : 20_000

const cases = [
  {
    name: 'flat, 100 B',
    tool: 'fs_read',
    schema: {
      type: 'object',
      properties: { path: { type: 'string' }, offset: { type: 'integer' }, limit: { type: 'integer' }, encoding: { type: 'string' } },
      required: ['path'],
    },
    zod: z.strictObject({ path: z.string(), offset: z.number().int().optional(), limit: z.number().int().optional(), encoding: z.string().optional() }),
    args: { path: 'src/app/handlers/requests.rs', offset: 1200, limit: 40, encoding: 'utf-8' },
  },
  {
    name: 'flat, 2 KiB',
    tool: 'fs_write',
    schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' }, mode: { type: 'string' } },
      required: ['path', 'content'],
    },
    zod: z.strictObject({ path: z.string(), content: z.string(), mode: z.string().optional() }),
    args: { path: 'docs/notes/2026-12-01.md', content: 'All work and no play makes a long line. '.repeat(50), mode: 'overwrite' },
  },
  {
    name: 'nested, 100 B',
    tool: 'create_entities',
    schema: {
      type: 'object',
      properties: {
        entities: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, kind: { type: 'string' } }, additionalProperties: false },
        },
      },
    },
    zod: z.strictObject({ entities: z.array(z.strictObject({ name: z.string(), kind: z.string() })) }),
    args: { entities: [{ name: 'Ada Lovelace', kind: 'mathematician' }, { name: 'Rust lang', kind: 'language' }] },
  },
]

let warned = 0
const auditor = new Auditor({ onWarn: () => warned++ })
auditor.replaceCatalog(cases.map((c) => ({ name: c.tool, inputSchema: c.schema })))
const ajv = new Ajv({ strict: false })

/** The rows of one case: a name and one call of it. */
function rowsOf(c) {
  const text = JSON.stringify(c.args)
  const validate = ajv.compile({ ...c.schema, additionalProperties: false })
  return [
    ['audit(object)', () => auditor.audit(c.tool, c.args)],
    ['audit(text)', () => auditor.audit(c.tool, text)],
    ['JSON.parse', () => JSON.parse(text)],
    ['ajv', () => validate(c.args)],
    ['zod', () => c.zod.safeParse(c.args).success],
  ]
}

let sink = 0
function time(call) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < CALLS; i++) if (call()) sink++
  return Number(process.hrtime.bigint() - start) / CALLS
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ns = (x) => `${Math.round(x).toLocaleString('en')} ns`
const times = (x) => `${x.toFixed(x < 10 ? 2 : 0)}×`

console.log('| call | row | per call, median (lowest–highest round) | JSON.parse ÷ row, median of rounds (lowest–highest) |')
console.log('|---|---|---|---|')
for (const c of cases) {
  const rows = rowsOf(c)
  for (const [, call] of rows) time(call) // warm up: each row compiled before it is timed
  const rounds = rows.map(() => [])
  for (let round = 0; round < ROUNDS; round++) rows.forEach(([, call], i) => rounds[i].push(time(call)))
  const parse = rows.findIndex(([name]) => name === 'JSON.parse')
  const label = `${c.name} (${JSON.stringify(c.args).length} B)`
  rows.forEach(([name], i) => {
    // Each round's ratio compares rows timed moments apart, under the same load.
    const ratios = rounds[i].map((t, round) => rounds[parse][round] / t)
    const spread = `${ns(Math.min(...rounds[i]))}–${ns(Math.max(...rounds[i]))}`
    const ratio = i === parse ? '1' : `${times(median(ratios))} (${times(Math.min(...ratios))}–${times(Math.max(...ratios))})`
    console.log(`| ${label} | ${name} | ${ns(median(rounds[i]))} (${spread}) | ${ratio} |`)
  })
}
const coverage = auditor.coverage()
if (warned > 0 || coverage.audited !== coverage.calls) {
  console.error(`a clean call warned or went unaudited (${warned} warning(s)): the figures are not of clean calls`)
  process.exitCode = 1
}
console.log(`\n${coverage.calls} calls audited, ${coverage.audited} of them clean; node ${process.version}, ${ROUNDS} rounds of ${CALLS} calls each (sink ${sink > 0})`)
