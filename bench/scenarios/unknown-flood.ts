import type { Redis } from 'ioredis'
import { onStage } from '../lib/keygate-fixture.js'
import { runLoad, type LoadPlan, type LoadResult } from '../lib/load.js'
import { measured, median } from '../lib/stats.js'
import { metric, metricSum } from '../lib/metrics-page.js'
import { startKeygate } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { CONNECTIONS, ROUNDS, runRounds, SECONDS, type Contender } from '../lib/rounds.js'

const HOT_KEYS = 1_000
const HOT_RATE = 2_000
const PATH = '/v1/keys.verifyKey'
const ALONE_SECONDS = 3

/**
 * 3. A flood of random (unknown) keys at full speed, beside a steady 2,000 req/s of hot keys. The same hot
 * load beside a full-speed load of the hot keys themselves is the baseline: same CPU pressure, no unknowns,
 * so a difference in the hot keys' p99 is what the unknowns cost them (eviction, Redis reads, memory).
 */
export async function unknownFlood(): Promise<ScenarioReport> {
  return onStage(HOT_KEYS, async ({ fixture, keys, onStop }) => {
    const bodies = keys.map(({ key }) => JSON.stringify({ key }))
    const verifier = await startKeygate(['verifier'], fixture.env)
    onStop(() => verifier.stop())
    const memory = async () => ({
      rss: await metric(verifier.url, 'keygate_process_resident_memory_bytes'),
      heap: await metric(verifier.url, 'keygate_nodejs_heap_size_used_bytes'),
    })

    const hotBeside = (label: string, background: Omit<LoadPlan, 'durationSeconds'>): Contender => ({
      label,
      // The hot keys' figures are the result; the background load's throughput is kept apart below.
      run: async (durationSeconds, warmUp) => {
        const [hot, bulk] = await Promise.all([
          runLoad({ url: verifier.url, path: PATH, bodies, connections: 8, overallRate: HOT_RATE, durationSeconds }),
          runLoad({ ...background, durationSeconds }),
        ])
        if (!warmUp) backgroundRps.get(label)!.push(bulk.rps)
        if (bulk.errors > 0 || bulk.non2xx > 0)
          throw new Error(`${label}: background load had ${bulk.non2xx} non-2xx and ${bulk.errors} errors`)
        return hot
      },
    })
    const HOT = 'hot keys beside a full-speed load of hot keys'
    const FLOOD = 'hot keys beside a flood of unknown keys'
    const backgroundRps = new Map<string, number[]>([
      [HOT, []],
      [FLOOD, []],
    ])
    const before = await memory()
    const results = await runRounds([
      hotBeside(HOT, { url: verifier.url, path: PATH, bodies, connections: CONNECTIONS }),
      hotBeside(FLOOD, { url: verifier.url, path: PATH, randomKeys: true, connections: CONNECTIONS }),
    ])
    const after = await memory()
    const cached = await metric(verifier.url, 'keygate_cache_keys')
    // Every hot key must still be cached: the unknowns live in their own bounded LRU.
    const hitsBefore = await metric(verifier.url, 'keygate_verify_cache_hits_total')
    const missesBefore = await metric(verifier.url, 'keygate_verify_cache_misses_total')
    const probe: LoadResult = await runLoad({
      url: verifier.url,
      path: PATH,
      bodies,
      connections: 8,
      durationSeconds: 1,
    })
    const hits = (await metric(verifier.url, 'keygate_verify_cache_hits_total')) - hitsBefore
    const misses = (await metric(verifier.url, 'keygate_verify_cache_misses_total')) - missesBefore
    const hotHitRatio = hits / (hits + misses)
    const perThousand = await redisPerThousand(fixture.redis.admin, verifier.url)
    const p99Ratio = results.ratio(FLOOD, HOT, 'p99')
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`
    const floodRps = backgroundRps.get(FLOOD)!
    return {
      name: 'unknown-flood',
      title: '3. Unknown keys flood',
      command: 'npm run bench:unknown-flood',
      method: `${HOT_KEYS} hot keys at a steady ${HOT_RATE} req/s (8 connections) while ${CONNECTIONS} more connections send either random unknown keys or the hot keys as fast as they are answered; ${ROUNDS} rounds × ${SECONDS} s, interleaved. Default limits (UNKNOWN_CACHE_MAX 100,000, MAX_PENDING_READS 10,000).`,
      table: {
        headers: ['hot keys (2,000 req/s)', 'hot p50 ms', 'hot p99 ms', 'background req/s'],
        rows: [HOT, FLOOD].map((label) => [
          label,
          showMeasured(results.p50(label), 1),
          showMeasured(results.p99(label), 1),
          showMeasured(measured(backgroundRps.get(label)!)),
        ]),
      },
      checks: [
        {
          what: 'hot keys p99 under the flood ÷ beside a full-speed load of hot keys (the same connections; its throughput differs, see the table)',
          value: p99Ratio,
          target: '≤ 1.2',
          pass: p99Ratio <= 1.2,
        },
        {
          what: 'hot keys still cached after the flood (hit ratio of a probe)',
          value: hotHitRatio,
          target: '= 1',
          pass: hotHitRatio === 1 && probe.non2xx === 0,
        },
        {
          what: 'cached key records after the flood',
          value: cached,
          target: `= ${HOT_KEYS}`,
          pass: cached === HOT_KEYS,
        },
        {
          what: `Redis commands per 1,000 unknown keys verified (the flood alone, ${CONNECTIONS} connections, ${ALONE_SECONDS} s; less the processes' idle polls); a read each would be 1,000`,
          value: Math.round(perThousand.commands),
          target: '< 1,000',
          pass: perThousand.commands < 1_000,
        },
      ],
      chart: [HOT, FLOOD].map((label) => ({ label, p99Ms: results.p99(label) })),
      notes: [
        `Verifier memory before → after all rounds: RSS ${mb(before.rss)} → ${mb(after.rss)}, heap used ${mb(before.heap)} → ${mb(after.heap)}; the flood's ${Math.round(median(floodRps) * SECONDS * ROUNDS).toLocaleString('en-US')} or so unknown keys are remembered in a LRU of at most 100,000 for 10 s.`,
        `Redis per 1,000 unknown keys (the flood alone): ${Math.round(perThousand.commands)} commands, ${perThousand.cpuMs.toFixed(1)} ms of its CPU. An unknown key is not read: the verifier's filter of known hashes says no, and one revision poll (one SORT_RO and an INFO) started after it arrived, shared by every unknown key of the next 10 ms, confirms that no key was created meanwhile; a read each was 1,000 commands.`,
      ],
      summary: `unknown flood: ${Math.round(median(floodRps))} unknown req/s, ${Math.round(perThousand.commands)} Redis commands and ${perThousand.cpuMs.toFixed(1)} ms of Redis CPU per 1,000; hot p99 ${results.p99(FLOOD).median} ms vs ${results.p99(HOT).median} ms under equal hot load (${p99Ratio.toFixed(2)}×); ${cached} hot keys still cached; RSS ${mb(before.rss)} → ${mb(after.rss)}`,
    }
  })
}

/**
 * Redis' command counters and CPU time around a flood of random keys alone, less what the processes cost it anyway
 * (revision polls, the control plane's included) over an idle stretch of the same length, per 1,000 verifications the
 * verifier counted. The analytics flush (HINCRBY and PEXPIRE of the hot keys' counts every 5 s) is left out of the
 * commands: it falls in one stretch or the other, and an unknown key has no counts.
 */
async function redisPerThousand(admin: Redis, url: string): Promise<{ commands: number; cpuMs: number }> {
  const counters = async () => {
    const [stats, cpu] = [await admin.info('commandstats'), await admin.info('cpu')]
    const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? NaN)
    return {
      commands: [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)]
        .filter(([, name]) => name !== 'hincrby' && name !== 'pexpire')
        // Each counting INFO counts itself: two per reading.
        .reduce((sum, [, , calls]) => sum + Number(calls), -2),
      cpuMs: 1_000 * (seconds('used_cpu_user') + seconds('used_cpu_sys')),
    }
  }
  const since = (from: { commands: number; cpuMs: number }, to: { commands: number; cpuMs: number }) => ({
    commands: to.commands - from.commands,
    cpuMs: to.cpuMs - from.cpuMs,
  })
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const idleFrom = await counters()
  await pause(ALONE_SECONDS * 1_000)
  const idle = since(idleFrom, await counters())
  const [from, verdictsFrom] = [await counters(), await metricSum(url, 'keygate_verify_verdicts_total')]
  await runLoad({ url, path: PATH, randomKeys: true, connections: CONNECTIONS, durationSeconds: ALONE_SECONDS })
  // Requests still in flight when the load stopped are answered meanwhile, and counted below.
  await pause(500)
  const verdicts = (await metricSum(url, 'keygate_verify_verdicts_total')) - verdictsFrom
  const used = since(from, await counters())
  const stretch = (ALONE_SECONDS + 0.5) / ALONE_SECONDS
  return {
    commands: (1_000 * (used.commands - idle.commands * stretch)) / verdicts,
    cpuMs: (1_000 * (used.cpuMs - idle.cpuMs * stretch)) / verdicts,
  }
}
