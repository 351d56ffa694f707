'use strict'
// This machine's platform as napi-rs names its packages (linux-x64-gnu,
// linux-x64-musl, darwin-arm64, win32-x64-msvc): required by the
// `mcp-unknown-keys` command, and printed when run (scripts/build-npm).
function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

module.exports = { platformSuffix }
if (require.main === module) console.log(platformSuffix())
