import adapter from './mcp.js'

export const { auditClient, auditServer, auditorOf } = adapter
