import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { onStage } from '../lib/keygate-fixture.js'
import { runLoad, runPinnedWorker, type LoadResult } from '../lib/load.js'
import { metric, metricSum } from '../lib/metrics-page.js'
import { benchServer, startKeygate, startServer } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { CONNECTIONS, PIPELINING, loadContender, ROUNDS, runRounds, SECONDS } from '../lib/rounds.js'

const KEYS = 10_000
const PATH = '/v1/keys.verifyKey'

/**
 * 2. verifyKey on keys the verifier does not hold: its cache is cut to one record (CACHE_MAX_KEYS=1), so each of
 * the 10,000 keys rotated is read from Redis every time. Compared with the same read in a bare ioredis loop and
 * with the naive server; Redis' own command counters show how many round trips a miss costs.
 */
export async function verifyMiss(): Promise<ScenarioReport> {
  return onStage(KEYS, async ({ fixture, keys, onStop }) => {
    const bodies = keys.map(({ key }) => JSON.stringify({ key }))
    const verifier = await startKeygate(['verifier'], { ...fixture.env, CACHE_MAX_KEYS: '1' })
    onStop(() => verifier.stop())
    const naive = await startServer({ args: [benchServer('naive')], env: { REDIS_URL: fixture.redis.url } })
    onStop(() => naive.stop())
    const recordKeys = keys.map(({ key }) => redisKeys.record(hashKey(key)))

    const results = await runRounds([
      {
        label: 'raw ioredis HMGET loop',
        run: (durationSeconds, _warmUp) =>
          runPinnedWorker<LoadResult>('redis-loop-worker', {
            redisUrl: fixture.redis.url,
            keys: recordKeys,
            connections: CONNECTIONS * PIPELINING,
            durationSeconds,
          }),
      },
      loadContender('keygate verifier (cache miss)', { url: verifier.url, path: PATH, bodies }),
      loadContender('naive: Redis read per request', { url: naive.url, path: PATH, bodies }),
    ])
    const [R, K, N] = [...results.byLabel.keys()] as [string, string, string]

    // Round trips per miss: Redis' HMGET counter around a run against the verifier alone, less what the
    // verifier reads in the background anyway (its revision polls) over an idle stretch of the same length.
    // Redis' per-command counters around a run against the verifier alone, less what it sends in the background
    // anyway (revision polls) over an idle stretch of the same length. The miss path's own reads are the HMGETs;
    // the analytics flush (HINCRBY and PEXPIRE per key every 5 s) is counted apart; anything else would show too.
    const commandCounts = async () => {
      const counts = new Map<string, number>()
      for (const [, name, calls] of (await fixture.redis.admin.info('commandstats')).matchAll(
        /^cmdstat_(\w+):calls=(\d+)/gm,
      ))
        counts.set(name!, Number(calls))
      return counts
    }
    const delta = (after: Map<string, number>, before: Map<string, number>) =>
      new Map([...after].map(([name, n]) => [name, n - (before.get(name) ?? 0)]))
    // The bench keys carry no credits and no limits: the only scripts they run are the usage flush's (EVALSHA,
    // EVAL once to load it; Redis also counts the HINCRBY and PEXPIRE run inside).
    const ANALYTICS = new Set(['hincrby', 'pexpire', 'evalsha', 'eval'])
    const idleStart = await commandCounts()
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const background = delta(await commandCounts(), idleStart)
    // Counted by the verifier itself (autocannon's total leaves out the requests still in flight when it stops).
    const verdicts = () => metricSum(verifier.url, 'keygate_verify_verdicts_total')
    const [missesBefore, verdictsBefore, before] = [
      await metric(verifier.url, 'keygate_verify_cache_misses_total'),
      await verdicts(),
      await commandCounts(),
    ]
    await runLoad({
      url: verifier.url,
      path: PATH,
      bodies,
      connections: CONNECTIONS,
      pipelining: PIPELINING,
      durationSeconds: 2,
    })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const answered = (await verdicts()) - verdictsBefore
    // The background ran over the 2.5 s window too (2 s of load, 0.5 s to settle); `background` is per 2 s.
    const during = [...delta(await commandCounts(), before)].map(
      ([name, n]) => [name, n - (background.get(name) ?? 0) * (2.5 / 2)] as const,
    )
    const perVerify = (pick: (name: string) => boolean) =>
      during.filter(([name]) => pick(name)).reduce((sum, [, n]) => sum + n, 0) / answered
    const readsPerVerify = perVerify((name) => name === 'hmget')
    const otherPerVerify = perVerify((name) => name !== 'hmget' && !ANALYTICS.has(name) && name !== 'info')
    const analyticsPerVerify = perVerify((name) => ANALYTICS.has(name))
    const missRatio = ((await metric(verifier.url, 'keygate_verify_cache_misses_total')) - missesBefore) / answered
    const p99VsRaw = results.ratio(K, R, 'p99')
    return {
      name: 'verify-miss',
      title: '2. verifyKey, cache miss',
      command: 'npm run bench:verify-miss',
      method: `${KEYS.toLocaleString('en-US')} keys rotated through a verifier whose cache holds one record, so every verification reads Redis; ${CONNECTIONS} connections × ${PIPELINING} pipelined, ${ROUNDS} rounds × ${SECONDS} s, interleaved. The raw loop is ${CONNECTIONS * PIPELINING} concurrent HMGETs of the same records on one ioredis connection (the read a miss makes), timed in-process.`,
      table: {
        headers: ['contender', 'req/s', 'p50 ms', 'p99 ms'],
        rows: [R, K, N].map((label) => [
          label,
          showMeasured(results.rps(label)),
          showMeasured(results.p50(label), 2),
          showMeasured(results.p99(label), 2),
        ]),
      },
      checks: [
        {
          what: 'Redis reads (HMGET) per verification, verifier alone, less its background polls',
          value: readsPerVerify,
          target: '= 1',
          pass: Math.abs(readsPerVerify - 1) < 0.02,
        },
        {
          what: 'other Redis commands per verification (not the analytics flush)',
          value: otherPerVerify,
          target: '= 0',
          pass: Math.abs(otherPerVerify) < 0.02,
        },
        { what: 'cache misses ÷ verifications', value: missRatio, target: '= 1', pass: Math.abs(missRatio - 1) < 0.01 },
      ],
      chart: [R, K, N].map((label) => ({ label, rps: results.rps(label), p99Ms: results.p99(label) })),
      notes: [
        `keygate's p99 on a miss is ${p99VsRaw.toFixed(2)}× the raw HMGET loop's: the difference is HTTP, JSON and the verdict around the one read.`,
        `The analytics flush added ${analyticsPerVerify.toFixed(2)} commands per verification here (four per distinct key every 5 s, and each of the 10,000 keys is distinct within that time: the worst case).`,
      ],
      summary: `verify miss: ${readsPerVerify.toFixed(2)} Redis reads per verification; keygate p99 ${results.p99(K).median} ms vs raw HMGET ${results.p99(R).median.toFixed(2)} ms (${p99VsRaw.toFixed(2)}×), ${Math.round(results.rps(K).median)} req/s`,
    }
  })
}
