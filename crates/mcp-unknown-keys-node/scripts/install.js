'use strict'
// The install script: builds the addon from source with cargo, through
// @napi-rs/cli (nothing prebuilt is fetched), writing `native.js` and
// `native.d.ts` (the TypeScript types, from the Rust) beside it.
//
// `npm install ./crates/mcp-unknown-keys-node` links the package and runs
// this before (or without) installing the package's own dependencies, so
// the CLI is looked for here and in the project being installed into; when
// neither has it, npm fetches the pinned version to run it once.
const { spawnSync } = require('node:child_process')
const { dirname, join } = require('node:path')
const { dependencies } = require('../package.json')

const pkg = join(__dirname, '..')
const args = ['build', '--platform', '--release', '--js', 'native.js', '--dts', 'native.d.ts']

function localCli() {
  try {
    const manifest = require.resolve('@napi-rs/cli/package.json', { paths: [pkg, process.env.INIT_CWD ?? pkg] })
    const bin = require(manifest).bin
    return join(dirname(manifest), typeof bin === 'string' ? bin : bin.napi)
  } catch {
    return undefined
  }
}

const cli = localCli()
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const run = cli
  ? spawnSync(process.execPath, [cli, ...args], { cwd: pkg, stdio: 'inherit' })
  : spawnSync(npm, ['exec', '--yes', `--package=@napi-rs/cli@${dependencies['@napi-rs/cli']}`, '--', 'napi', ...args], {
      cwd: pkg,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    })
if (run.error) console.error(`mcp-unknown-keys: could not run the build (${run.error.message}); it needs Node >= 20, npm and Rust's cargo`)
process.exit(run.status ?? 1)
