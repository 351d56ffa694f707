// The addon's classes and reports, typed from the Rust (`native.d.ts`).
export {
  Auditor,
  Session,
  AuditorOptions,
  SessionOptions,
  Warning,
  Hint,
  MissingKey,
  Coverage,
  Verdict,
  Page,
  CatalogNote,
} from './native.js'
