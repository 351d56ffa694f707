import adapter from './ai.js'

export const { auditTools, auditorOf } = adapter
