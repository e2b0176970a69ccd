import { onStage } from '../lib/keygate-fixture.js'
import { benchServer, startKeygate, startServer } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { CONNECTIONS, PIPELINING, loadContender, ROUNDS, runRounds, SECONDS } from '../lib/rounds.js'
import { metric } from '../lib/metrics-page.js'

const KEYS = 1_000
const PATH = '/v1/keys.verifyKey'

/** 1. verifyKey on cached keys vs the framework's ceiling and vs a Redis read per request. */
export async function verifyHit(): Promise<ScenarioReport> {
  return onStage(KEYS, async ({ fixture, keys, onStop }) => {
    const bodies = keys.map(({ key }) => JSON.stringify({ key }))

    const ceiling = await startServer({ args: [benchServer('ceiling')] })
    onStop(() => ceiling.stop())
    const verifier = await startKeygate(['verifier'], fixture.env)
    onStop(() => verifier.stop())
    const naive = await startServer({ args: [benchServer('naive')], env: { REDIS_URL: fixture.redis.url } })
    onStop(() => naive.stop())
    // A fast wrong answer is not a result: every key must verify before anything is measured.
    for (const url of [verifier.url, naive.url]) {
      for (const body of bodies) {
        const verdict = (await (
          await fetch(`${url}${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        ).json()) as { valid: boolean }
        if (!verdict.valid) throw new Error(`${url}: a created key did not verify`)
      }
    }

    const results = await runRounds([
      loadContender('ceiling: bare fastify, constant answer', { url: ceiling.url, path: PATH, bodies }),
      loadContender('keygate verifier (cache hit)', { url: verifier.url, path: PATH, bodies }),
      loadContender('naive: Redis read per request', { url: naive.url, path: PATH, bodies }),
    ])
    const [C, K, N] = [...results.byLabel.keys()] as [string, string, string]
    const misses = await metric(verifier.url, 'keygate_verify_cache_misses_total')
    const hits = await metric(verifier.url, 'keygate_verify_cache_hits_total')
    const vsCeiling = results.ratio(K, C, 'rps')
    const vsNaive = results.ratio(K, N, 'rps')
    const p99VsCeiling = results.ratio(K, C, 'p99')
    return {
      name: 'verify-hit',
      title: '1. verifyKey, cache hit',
      command: 'npm run bench:verify-hit',
      method: `${KEYS} distinct keys rotated, ${CONNECTIONS} connections × ${PIPELINING} pipelined, ${ROUNDS} rounds × ${SECONDS} s per contender, interleaved. The verifier answered ${Math.round(hits).toLocaleString('en-US')} verifications from its cache and read Redis ${Math.round(misses)} times (the first sight of each key).`,
      table: {
        headers: ['contender', 'req/s', 'p50 ms', 'p99 ms'],
        rows: [C, K, N].map((label) => [
          label,
          showMeasured(results.rps(label)),
          showMeasured(results.p50(label), 1),
          showMeasured(results.p99(label), 1),
        ]),
      },
      checks: [
        { what: 'keygate ÷ ceiling, req/s', value: vsCeiling, target: '≥ 0.9', pass: vsCeiling >= 0.9 },
        { what: 'keygate ÷ naive, req/s', value: vsNaive, target: '≥ 2', pass: vsNaive >= 2 },
        { what: 'keygate p99 ÷ ceiling p99', value: p99VsCeiling, target: '≤ 1.2', pass: p99VsCeiling <= 1.2 },
      ],
      chart: [C, K, N].map((label) => ({ label, rps: results.rps(label), p99Ms: results.p99(label) })),
      summary: `verify hit: keygate ${Math.round(results.rps(K).median)} req/s = ${vsCeiling.toFixed(2)}× ceiling, ${vsNaive.toFixed(2)}× naive; p99 ${results.p99(K).median} ms (${p99VsCeiling.toFixed(2)}× ceiling)`,
    }
  })
}
