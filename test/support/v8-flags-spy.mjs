// Preloaded (NODE_OPTIONS=--import=…) into a keygate process by test/e2e/allocation-site-pretenuring.test.ts: wraps
// v8.setFlagsFromString so that every V8 flag the process sets is written to stderr, and says it was loaded (so that
// no line about a flag means none was set, not that the spy was missing).
import { createRequire, syncBuiltinESMExports } from 'node:module'

const v8 = createRequire(import.meta.url)('node:v8')
const setFlags = v8.setFlagsFromString
v8.setFlagsFromString = (flags) => {
  process._rawDebug(`v8 flags set: ${flags}`)
  return setFlags(flags)
}
// ES imports of node:v8 (keygate's) see the wrapped function too.
syncBuiltinESMExports()
process._rawDebug('v8 flags spy: loaded')
