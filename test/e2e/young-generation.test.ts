import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * The verifier gives back the young generation its start-up grew (cli/young-generation.ts): V8 13 (Node 24) shrinks it
 * for a last-resort collection; older V8 collects and keeps the size, which must not break anything either.
 */

const run = promisify(execFile)
const MB = 1024 * 1024
const MODULE = fileURLToPath(new URL('../../dist/cli/young-generation.js', import.meta.url))
const shrinks = Number(process.versions.v8.split('.')[0]) >= 13

describe('resetYoungGeneration, in a process of its own', () => {
  it(`grows the young generation, resets it: ${shrinks ? 'back to 1 MB' : 'the same size on this V8'}, and leaves no gc behind`, async () => {
    // Survivors grow V8's young generation as start-up does; the process then resets it and says what it measured.
    const script = `
      const { resetYoungGeneration, youngGenerationBytes } = await import(${JSON.stringify(MODULE)})
      const vm = await import('node:vm')
      const kept = []
      for (let i = 0; i < 300000; i++) kept.push({ i, text: 'survivor ' + i })
      const grown = youngGenerationBytes()
      const reset = resetYoungGeneration()
      console.log(JSON.stringify({
        grown, reset, kept: kept.length,
        globalGc: typeof globalThis.gc, newContextGc: vm.runInNewContext('typeof gc'),
      }))`
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script])
    const seen = JSON.parse(stdout) as {
      grown: number
      reset: { beforeBytes: number; afterBytes: number; ms: number }
      kept: number
      globalGc: string
      newContextGc: string
    }
    expect(seen.grown).toBeGreaterThanOrEqual(8 * MB)
    expect(seen.reset.beforeBytes).toBe(seen.grown)
    if (shrinks) expect(seen.reset.afterBytes).toBeLessThanOrEqual(1 * MB)
    else expect(seen.reset.afterBytes).toBe(seen.reset.beforeBytes)
    expect(seen.reset.ms).toBeGreaterThan(0)
    // A collection, not a loss: what was reachable still is.
    expect(seen.kept).toBe(300000)
    // The flag is turned off again: neither the program nor a context made later can call the collector.
    expect(seen.globalGc).toBe('undefined')
    expect(seen.newContextGc).toBe('undefined')
  })
})

describe('keygate verifier', () => {
  const redis = useRedisServer()
  let verifier: KeygateProcess | undefined
  afterEach(async () => {
    await verifier?.stop()
    verifier = undefined
  })

  it('resets its young generation once, when it has started and synced, and serves with it small', async () => {
    verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'info' })
    const logged = () =>
      verifier!
        .output()
        .split('\n')
        .filter((line) => line.includes('young generation reset after start-up'))
    await waitFor(() => logged().length > 0, 'the verifier to log its reset', 10_000, 20)
    const [line, ...more] = logged()
    expect(more).toEqual([])
    const { youngGenerationMb, ms } = JSON.parse(line!) as {
      youngGenerationMb: { before: number; after: number }
      ms: number
    }
    // Its start-up grew the young generation beyond V8's initial 1 MB: there was something to give back.
    expect(youngGenerationMb.before).toBeGreaterThanOrEqual(8)
    expect(ms).toBeGreaterThanOrEqual(0)
    // It was synced by then: the line comes after the first sync has confirmed the cache (readiness).
    expect((await fetch(`${verifier.url}/readyz`)).status).toBe(200)
    const metrics = await (await fetch(`${verifier.url}/metrics`)).text()
    const newSpace = Number(/keygate_nodejs_heap_space_size_total_bytes\{space="new"[^}]*\} (\d+)/.exec(metrics)?.[1])
    if (shrinks) {
      expect(youngGenerationMb.after).toBeLessThanOrEqual(1)
      // Still small while it answers: nothing regrew it on the way to its first scrape.
      expect(newSpace).toBeLessThanOrEqual(4 * MB)
    } else {
      expect(youngGenerationMb.after).toBe(youngGenerationMb.before)
    }
  })
})
