import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runKeygate, startKeygate } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const KEEPER = new URL('../../dist/cli/tick-object-keeper.js', import.meta.url).href

/**
 * A preload that reads, from inside a keygate process, whether its tick object keeper holds one: the keeper's
 * module is the same instance keygate's entry imports (one URL, one module), so what it says is what keygate did.
 * It reports once the process has been up 500 ms, and again as it exits.
 */
const PROBE = `
const keeper = await import(${JSON.stringify(KEEPER)})
const report = (when) => process.stderr.write('tick object held ' + when + ': ' + (keeper.heldTickObject() !== undefined) + '\\n')
setTimeout(() => report('while up'), 500).unref()
process.on('exit', () => report('at exit'))
`

/**
 * cli/keygate.ts starts cli/tick-object-keeper.ts for the servers, before their modules load, and for no one-shot
 * command (the unit test covers the keeper itself).
 */
describe('the entry point and the tick object keeper', () => {
  let dir: string
  let probe: string
  const redis = useRedisServer()

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'keygate-keeper-'))
    probe = join(dir, 'probe.mjs')
    writeFileSync(probe, PROBE)
  })

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  it.each([
    ['dev', () => ({})],
    ['verifier', () => ({ REDIS_URL: redis.url })],
    ['control-plane', () => ({ REDIS_URL: redis.url })],
  ])('a server (keygate %s) holds a tick object while it serves', async (command, env) => {
    const server = await startKeygate([command], { ...env(), NODE_OPTIONS: `--import=${probe}` })
    try {
      await waitFor(() => server.output().includes('tick object held while up'), "the probe's report")
      expect(server.output()).toContain('tick object held while up: true')
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('a one-shot command (keygate root-key create) does not start the keeper', async () => {
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url], {
      NODE_OPTIONS: `--import=${probe}`,
    })
    expect(created.code, created.stderr).toBe(0)
    expect(created.stderr).toContain('tick object held at exit: false')
  })
})
