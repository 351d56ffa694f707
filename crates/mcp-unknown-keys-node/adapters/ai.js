'use strict'
// The Vercel AI SDK (`ai`): a `tools` record, hand-written or the one
// `@ai-sdk/mcp`'s client returns, with each tool's input audited against its
// `inputSchema` (or `parameters`) as the SDK validates it: before a zod
// schema strips what it does not declare. `execute` receives what it did
// before; the validation's result is the original schema's.
const { auditorFor, auditorOf, auditors, quietly } = require('./common.js')

/**
 * A record of the same tools, each audited; the catalogue is their schemas.
 * @param {Record<string, object>} tools
 */
function auditTools(tools, options = {}) {
  const { asSchema, jsonSchema } = options.ai ?? hostAi()
  const auditor = auditorFor(options)
  // A tool with no schema of its own (a provider's tool, say) is left as it is.
  const schemas = Object.entries(tools)
    .filter(([, tool]) => (tool?.inputSchema ?? tool?.parameters) != null)
    .map(([name, tool]) => [name, asSchema(tool.inputSchema ?? tool.parameters)])
  const ready = Promise.all(
    schemas.map(async ([name, schema]) => ({ name, inputSchema: await schema.jsonSchema })),
  ).then(
    (declared) => quietly(() => auditor.replaceCatalog(declared)),
    () => undefined,
  )
  const audited = { ...tools }
  for (const [name, schema] of schemas) {
    const tool = tools[name]
    const inputSchema = jsonSchema(() => schema.jsonSchema, {
      validate: async (value) => {
        await ready
        quietly(() => auditor.audit(name, value))
        return schema.validate ? schema.validate(value) : { success: true, value }
      },
    })
    audited[name] = 'parameters' in tool && !('inputSchema' in tool) ? { ...tool, parameters: inputSchema } : { ...tool, inputSchema }
  }
  auditors.set(audited, auditor)
  return audited
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
