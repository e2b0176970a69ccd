import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createMetricsRegistry } from '../../shared/http/metrics-registry.js'

setFlagsFromString('--expose-gc')
// gc() is a full (major) collection; { type: 'minor' } a scavenge.
const gc = runInNewContext('gc') as (options?: { type: 'minor' }) => void

const NAME = 'keygate_nodejs_gc_duration_seconds'
const REGISTRY = fileURLToPath(new URL('../../dist/shared/http/metrics-registry.js', import.meta.url))
const PROM_CLIENT = fileURLToPath(new URL('../../node_modules/prom-client/index.js', import.meta.url))

/** The `_count` of the GC histogram for one kind, as a scrape shows it (0 if the series is absent). */
async function collections(registry: Registry, kind: string): Promise<number> {
  const text = await registry.metrics()
  const match = new RegExp(`^${NAME}_count\\{[^}]*kind="${kind}"[^}]*\\} (\\S+)$`, 'm').exec(text)
  return Number(match?.[1] ?? 0)
}

/**
 * In a process of its own (nothing else observing collections there): how many bytes the old generation grew over
 * 300 forced scavenges once `setup` ran. The built modules (npm test builds first).
 */
async function oldSpaceGrowthOver300Scavenges(setup: string): Promise<number> {
  const script = `
    import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
    import { runInNewContext } from 'node:vm'
    ${setup}
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc')
    const old = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    // Settled first: what start-up and the first collections leave is not the question.
    for (let i = 0; i < 20; i++) { gc({ type: 'minor' }); await turn() }
    gc()
    const before = old()
    // A turn after each: node hands a collection to its observers in a later one.
    for (let i = 0; i < 300; i++) { gc({ type: 'minor' }); await turn() }
    console.log(old() - before)
    process.exit(0)
  `
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 20_000,
  })
  return Number(stdout.trim())
}

describe('keygate_nodejs_gc_duration_seconds', () => {
  it('counts every collection by kind, and none once the registry is closed', async () => {
    const metrics = createMetricsRegistry('probe')
    try {
      const [minorBefore, majorBefore] = [
        await collections(metrics.registry, 'minor'),
        await collections(metrics.registry, 'major'),
      ]
      gc({ type: 'minor' })
      gc({ type: 'minor' })
      gc()
      expect(await collections(metrics.registry, 'minor')).toBeGreaterThanOrEqual(minorBefore + 2)
      expect(await collections(metrics.registry, 'major')).toBeGreaterThanOrEqual(majorBefore + 1)
      // Durations in seconds: a forced collection of this small heap takes well under a second, and some time.
      const sum = Number(
        new RegExp(`^${NAME}_sum\\{[^}]*kind="major"[^}]*\\} (\\S+)$`, 'm').exec(await metrics.registry.metrics())?.[1],
      )
      expect(sum).toBeGreaterThan(0)
      expect(sum).toBeLessThan(1)
    } finally {
      metrics.close()
    }
    const closed = await collections(metrics.registry, 'major')
    gc()
    expect(await collections(metrics.registry, 'major')).toBe(closed)
  })

  it("is the only series prom-client's default metrics have that keygate records itself: the rest are prom-client's", async () => {
    const theirs = new Registry()
    collectDefaultMetrics({ register: theirs, prefix: 'keygate_' })
    const metrics = createMetricsRegistry('probe')
    try {
      const ours = new Set(metrics.registry.getMetricsAsArray().map((metric) => metric.name))
      const missing = theirs.getMetricsAsArray().filter((metric) => !ours.has(metric.name))
      expect(missing.map((metric) => metric.name)).toEqual([])
      const gcHistogram = (registry: Registry) =>
        registry.getSingleMetric(NAME) as unknown as { help: string; labelNames: string[]; upperBounds: number[] }
      const [mine, prom] = [gcHistogram(metrics.registry), gcHistogram(theirs)]
      expect([mine.help, mine.labelNames, mine.upperBounds]).toEqual([prom.help, prom.labelNames, prom.upperBounds])
    } finally {
      metrics.close()
    }
  })

  // Node builds a PerformanceEntry for every collection a perf_hooks observer is told of, and its old generation grows
  // with each (gc-durations.ts): the first measure shows the test can see that growth.
  it(
    'grows the old generation by nothing per collection, where a perf_hooks observer of collections does',
    { timeout: 60_000 },
    async () => {
      const observed = await oldSpaceGrowthOver300Scavenges(`
      import { createRequire } from 'node:module'
      const { collectDefaultMetrics, Registry } = createRequire(import.meta.url)(${JSON.stringify(PROM_CLIENT)})
      collectDefaultMetrics({ register: new Registry() })
    `)
      const recorded = await oldSpaceGrowthOver300Scavenges(`
      const { createMetricsRegistry } = await import(${JSON.stringify(REGISTRY)})
      createMetricsRegistry('probe')
    `)
      expect(observed).toBeGreaterThan(600_000)
      expect(recorded).toBeLessThan(100_000)
    },
  )
})
