import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { CLI, startKeygate } from '../support/processes.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'

/**
 * What each process loads, as users start it: `keygate <command>` through the package's bin, with a module
 * tracer preloaded (test/support/module-trace.mjs). The verifier sidecar must load no control-plane module and
 * no management-only plugin; the control plane, traced the same way, shows that the tracer sees both.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TRACER = fileURLToPath(new URL('../support/module-trace.mjs', import.meta.url))
const MANAGEMENT_PLUGINS = ['@fastify/swagger', '@fastify/swagger-ui', '@fastify/rate-limit']

/** A module as a path relative to the repository (dist/…, node_modules/…), whether traced as a URL or a path. */
function relative(traced: string): string {
  const path = traced.startsWith('file:') ? fileURLToPath(traced) : traced
  return path.startsWith(ROOT) ? path.slice(ROOT.length).replace(/^\/+/, '') : path
}

const redis = useRedisServer()
let traces: string

beforeAll(() => {
  traces = mkdtempSync(join(tmpdir(), 'keygate-modules-'))
})
afterAll(() => {
  rmSync(traces, { recursive: true, force: true })
})

/** Runs `keygate <args>` to readiness, calls it, stops it, and answers the modules it loaded. */
async function modulesOf(args: string[], exercise: (url: string) => Promise<void>): Promise<Set<string>> {
  const trace = join(traces, `${args.join('-').replace(/[^\w-]/g, '_')}.trace`)
  const process = await startKeygate(args, {
    REDIS_URL: redis.url,
    KEYGATE_ROOT_KEY: TEST_ROOT_KEY,
    NODE_OPTIONS: `--import=${pathToFileURL(TRACER).href}`,
    KEYGATE_MODULE_TRACE: trace,
  })
  try {
    await exercise(process.url)
  } finally {
    expect(await process.stop()).toBe(0)
  }
  return new Set(readFileSync(trace, 'utf8').split('\n').filter(Boolean).map(relative))
}

const plugin = (modules: Set<string>, name: string) => [...modules].some((m) => m.includes(`node_modules/${name}/`))

describe('the modules each process loads', () => {
  it('runs the package bin', () => {
    const bin = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { keygate: string } }).bin
    expect(resolve(ROOT, bin.keygate)).toBe(CLI)
  })

  it('keygate verifier: no control-plane module, no management-only plugin, no proxy client', async () => {
    const modules = await modulesOf(['verifier', '--any-api'], async (url) => {
      const headers = { 'content-type': 'application/json' }
      const verified = await fetch(`${url}/v1/keys.verifyKey`, { method: 'POST', headers, body: '{"key":"sk_none"}' })
      expect(verified.status).toBe(200)
      expect((await fetch(`${url}/v1/authorize`, { headers: { 'x-api-key': 'sk_none' } })).status).toBe(401)
      expect((await fetch(`${url}/metrics`)).status).toBe(200)
    })
    // It did trace the verifier's own code, through the bin and its command module:
    expect(modules).toContain('dist/cli/keygate.js')
    expect(modules).toContain('dist/cli/verifier-command.js')
    expect(modules).toContain('dist/verifier/key-verifier.js')
    expect([...modules].filter((m) => m.startsWith('dist/control-plane/'))).toEqual([])
    expect([...modules].filter((m) => /^dist\/cli\/(control-plane|dev|root-key)/.test(m))).toEqual([])
    expect(MANAGEMENT_PLUGINS.filter((name) => plugin(modules, name))).toEqual([])
    // The reverse proxy's client only in reverse-proxy mode (cli/assemble-verifier.ts), and neither it nor Node's own
    // bundled undici, which an ES import of node:http loads on Node 24 (shared/http/node-http.ts).
    expect(modules).not.toContain('dist/verifier/proxy-server.js')
    expect(plugin(modules, 'undici')).toBe(false)
    expect(modules).not.toContain('node:internal/deps/undici/undici')
  })

  it('keygate verifier --upstream (reverse-proxy mode): no control-plane module, no management-only plugin', async () => {
    const upstream = await startEchoUpstream()
    const proxyPort = await freePort()
    try {
      const args = ['verifier', '--upstream', upstream.url, '--proxy-port', String(proxyPort), '--any-api']
      const modules = await modulesOf(args, async () => {
        expect((await fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { 'x-api-key': 'sk_none' } })).status).toBe(
          401,
        )
      })
      expect(modules).toContain('dist/verifier/proxy-server.js')
      expect(plugin(modules, 'undici')).toBe(true)
      // The tracer sees Node's own modules too: undici's cookie module loads Node's bundled undici.
      expect(modules).toContain('node:internal/deps/undici/undici')
      expect([...modules].filter((m) => m.startsWith('dist/control-plane/'))).toEqual([])
      expect(MANAGEMENT_PLUGINS.filter((name) => plugin(modules, name))).toEqual([])
    } finally {
      await upstream.stop()
    }
  })

  it('keygate control-plane, traced the same way, loads the management code and plugins', async () => {
    const modules = await modulesOf(['control-plane', '--management-rate-limit', '100'], async (url) => {
      expect((await fetch(`${url}/openapi.json`)).status).toBe(200)
    })
    expect(modules).toContain('dist/control-plane/app.js')
    expect(modules).toContain('dist/cli/control-plane-command.js')
    expect(MANAGEMENT_PLUGINS.filter((name) => plugin(modules, name))).toEqual(MANAGEMENT_PLUGINS)
  })
})
