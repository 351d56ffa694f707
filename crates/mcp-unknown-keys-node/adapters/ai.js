'use strict'
// The Vercel AI SDK (`ai`): a `tools` record, hand-written or the one
// `@ai-sdk/mcp`'s client returns, with each tool's input audited against its
// `inputSchema` (or `parameters`) as the SDK validates it: before a zod
// schema strips what it does not declare. `execute` receives what it did
// before; the validation's result is the original schema's. Each tool is
// a `Proxy` of the original, not a copy: class-based tools, members on a
// prototype, non-enumerable ones and getters are the tool's own, live.
const { auditorFor, auditorOf, auditors, quietly } = require('./common.js')

/**
 * A record of the same tools, each audited; the catalogue is their schemas
 * (read once, here).
 * @param {Record<string, object>} tools
 */
function auditTools(tools, options = {}) {
  const { asSchema, jsonSchema } = options.ai ?? hostAi()
  const auditor = auditorFor(options)
  // A tool with no schema of its own (a provider's tool, say) is left as it is.
  const schemas = Object.entries(tools)
    .filter(([, tool]) => (tool?.inputSchema ?? tool?.parameters) != null)
    .map(([name, tool]) => [name, tool.inputSchema ?? tool.parameters])
    .map(([name, schema]) => [name, schema, asSchema(schema)])
  const ready = Promise.all(
    schemas.map(async ([name, , schema]) => ({ name, inputSchema: await schema.jsonSchema })),
  ).then(
    (declared) => quietly(() => auditor.replaceCatalog(declared)),
    () => undefined,
  )
  /** `schema`, the AI SDK's form of a tool's schema, its input audited as it is validated. */
  const audited = (name, schema) =>
    jsonSchema(() => schema.jsonSchema, {
      validate: async (value) => {
        await ready
        quietly(() => auditor.audit(name, value))
        return schema.validate ? schema.validate(value) : { success: true, value }
      },
    })
  const record = { ...tools }
  for (const [name, original, schema] of schemas) {
    const tool = tools[name]
    const key = 'parameters' in tool && !('inputSchema' in tool) ? 'parameters' : 'inputSchema'
    const made = new WeakMap([[original, audited(name, schema)]])
    // The schema as the tool holds it now (a getter may give another one).
    const auditedNow = (current) => {
      if (current === null || (typeof current !== 'object' && typeof current !== 'function')) return current
      if (!made.has(current)) {
        try {
          made.set(current, audited(name, asSchema(current)))
        } catch {
          return current // the AI SDK will say what is wrong with it
        }
      }
      return made.get(current)
    }
    record[name] = delegating(tool, key, auditedNow)
  }
  auditors.set(record, auditor)
  return record
}

/**
 * `tool` with its `key` member read through `through`, and nothing copied:
 * a `Proxy` that reads every member from the tool itself when it is read
 * (its own, its prototype's, non-enumerable ones; a getter runs then, on
 * the tool), and calls each method on the tool, so that a class's private
 * fields are there. Writes go to the tool.
 */
function delegating(tool, key, through) {
  const onTool = new WeakMap()
  const proxy = new Proxy(Object.create(null), {
    get(_, property) {
      const value = Reflect.get(tool, property, tool)
      if (property === key) return through(value)
      return typeof value === 'function' ? calledOnTool(value) : value
    },
    has: (_, property) => Reflect.has(tool, property),
    ownKeys: () => Reflect.ownKeys(tool),
    getOwnPropertyDescriptor(_, property) {
      const descriptor = Reflect.getOwnPropertyDescriptor(tool, property)
      if (descriptor === undefined) return undefined
      if (property === key && 'value' in descriptor) descriptor.value = through(descriptor.value)
      // A proxy may not say non-configurable of what its own target lacks.
      return { ...descriptor, configurable: true }
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(tool),
    set: (_, property, value) => Reflect.set(tool, property, value, tool),
    defineProperty: (_, property, descriptor) => Reflect.defineProperty(tool, property, descriptor),
    deleteProperty: (_, property) => Reflect.deleteProperty(tool, property),
  })
  /** `method`, called on the tool when it is called on the proxy. */
  function calledOnTool(method) {
    let called = onTool.get(method)
    if (called === undefined) {
      called = function (...args) {
        return Reflect.apply(method, this === proxy ? tool : this, args)
      }
      Object.defineProperties(called, {
        name: { value: method.name, configurable: true },
        length: { value: method.length, configurable: true },
      })
      onTool.set(method, called)
    }
    return called
  }
  return proxy
}

/**
 * The host's own `ai`, which made these schemas: looked for from the
 * project being run first (a package installed from a directory is a link,
 * and Node resolves from where a link points), then beside this package.
 */
function hostAi() {
  try {
    return require(require.resolve('ai', { paths: [process.cwd()] }))
  } catch {
    return require('ai')
  }
}

module.exports = { auditTools, auditorOf }
