// The package's ES module entry: the same classes as the CommonJS one.
import native from './index.js'

export const { Auditor, Session } = native
export default native
