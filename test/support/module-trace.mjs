// Preloaded with `--import` (through NODE_OPTIONS) into a process under test: records every module it loads
// into the file named by KEYGATE_MODULE_TRACE, one path or URL per line. ES modules are seen by a resolve hook
// (module-trace-hooks.mjs); CommonJS modules required from inside packages are read from require's cache when
// the process exits, and Node's own modules from its load list.
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'

const file = process.env.KEYGATE_MODULE_TRACE
if (!file) throw new Error('module-trace.mjs: set KEYGATE_MODULE_TRACE to the file to write')

register('./module-trace-hooks.mjs', import.meta.url, { data: { file } })
process.on('exit', () => {
  const required = Object.keys(createRequire(import.meta.url).cache)
  // Node's own modules as `node:internal/…` (its bundled undici is `node:internal/deps/undici/undici`).
  const internal = process.moduleLoadList
    .filter((entry) => entry.startsWith('NativeModule '))
    .map((entry) => `node:${entry.slice('NativeModule '.length)}`)
  appendFileSync(file, [...required, ...internal].map((path) => `${path}\n`).join(''))
})
