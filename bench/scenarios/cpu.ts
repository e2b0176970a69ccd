import { Redis } from 'ioredis'
import { freePort } from '../../test/support/free-port.js'
import { BENCH_KEY_FIELDS } from '../lib/bench-key.js'
import { LOAD_CORE } from '../lib/cores.js'
import { CPU_CONNECTIONS, CPU_PIPELINING, keyedGetLoad, postLoad } from '../lib/cpu-loads.js'
import { runCpuRounds, windowsNote, CPU_ROUNDS, CPU_SECONDS, type CpuContender } from '../lib/cpu-rounds.js'
import { BENCH_ROOT_KEY, startKeygateFixture, stopPausedStage } from '../lib/keygate-fixture.js'
import { runLoad, runPinnedWorker, type LoadPlan, type LoadResult } from '../lib/load.js'
import type { LatencyPlan } from '../lib/latency-worker.js'
import type { PacedPlan } from '../lib/paced-worker.js'
import { metricSum } from '../lib/metrics-page.js'
import { ANALYTICS_BUFFER_SHARDS } from '../../shared/store/analytics-buffer/analytics-buffer-store.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { defaultRecording } from '../../verifier/key-verifier.js'
import { benchServer, startKeygate, startServer, type BenchProcess } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { Check, ScenarioReport } from '../lib/scenario-report.js'
import { progress } from '../lib/rounds.js'
import { measured, median, percentile, type Measured, type RoundRatios } from '../lib/stats.js'

const HIT_KEYS = 1_000
const MISS_KEYS = 10_000
const FIXED_RATE = 10_000
// The paced client's own warm-up: long enough for V8 to have compiled its code (each compile stalls its pinned core).
const PACED_WARMUP_SECONDS = 3
// A large young generation: a few short scavenges a second rather than hundreds, each a stall in its latencies.
const PACED_CLIENT_FLAGS = ['--min-semi-space-size=64', '--max-semi-space-size=64']
const RELAY_DELAY_MS = 0.5
const RELAY_RATE = 1_000
const RELAY_ROUNDS = 3
const RELAY_SECONDS = 5

const VERIFY = '/v1/keys.verifyKey'
/** How often a verifier hands what it recorded to the analytics buffer, ms. */
const ANALYTICS_FLUSH_MS = defaultRecording().flushMs

const C = 'ceiling: Fastify 5 route, body + response schema, constant verdict'
const CT = 'the same ceiling in a second process (its twin: the noise floor)'
const V1 = 'keygate verifyKey (v1), cache hit'
const V1U = 'keygate verifyKey (v1), cache hit, recording off'
const V1R = 'keygate verifyKey (v1), cache hit, recording on, its load alone'
const V2 = 'keygate keys.verifyKey (v2, root key), cache hit'
const A = 'keygate /v1/authorize (forward-auth), cache hit'
const P = 'keygate reverse proxy (verifies, then forwards)'
const B = 'bare node:http + undici pass-through proxy'
const BD = 'bare node:http + undici dispatch proxy (keygate’s technique)'
const M = 'keygate verifyKey, cache miss (one Redis read)'
const H = 'bare node:http + ioredis HMGET'
const C10 = `ceiling at a fixed ${FIXED_RATE.toLocaleString('en-US')} req/s`
const V10 = `keygate verifyKey (v1) at a fixed ${FIXED_RATE.toLocaleString('en-US')} req/s`
const CT10 = `the ceiling's twin at a fixed ${FIXED_RATE.toLocaleString('en-US')} req/s`

/**
 * bench:cpu's windows in the order each round rotates (bench/lib/cpu-rounds.ts' roundOrder; round r starts the list at
 * its r-th window, so windows at its end stay together longer): last, the saturated hit windows judged against each
 * other in pairs, side by side — the ceiling and the verifier, then the recording verifier that serves these hits alone
 * and the one with recording off;
 * before them the fixed-rate windows, the ceiling's between the twin's and the verifier's, so that each p99 is paired
 * with the ceiling's by adjacent windows (both groups stay whole in every round up to 9). The twin three to five
 * windows from the ceiling (as the ceiling's place in its group alternates), as far as the other ceiling-relative rows
 * (v2, authorize), so that it samples the drift between windows those rows are judged across.
 */
export const CPU_WINDOW_ORDER: readonly string[] = [V2, A, CT, P, B, BD, M, H, CT10, C10, V10, C, V1, V1R, V1U]

/**
 * Windows judged against each other by adjacent windows, each group in reverse every other round: rotation alone would
 * put the ceiling's saturated window before the verifier's, and the verifier's before the one with recording off, in
 * every round; and the first of three paced windows can have the better p99 whoever serves it.
 */
export const CPU_MIRRORED: readonly (readonly string[])[] = [
  [C, V1],
  [V1R, V1U],
  [CT10, C10, V10],
]

/**
 * The contenders in `order` (bench:cpu's CPU_WINDOW_ORDER), each once: refused if one is missing, doubled or unlisted,
 * or a label is listed twice in `order`.
 */
export function inWindowOrder<T extends { label: string }>(
  served: T[],
  order: readonly string[] = CPU_WINDOW_ORDER,
): T[] {
  const byLabel = new Map(served.map((contender) => [contender.label, contender]))
  const listed = new Set(order)
  if (byLabel.size !== served.length || listed.size !== order.length || served.length !== listed.size)
    throw new Error('bench:cpu: a contender is served twice, or the window order does not list each once')
  return order.map((label) => {
    const contender = byLabel.get(label)
    if (!contender) throw new Error(`bench:cpu: no contender is labelled ${JSON.stringify(label)}`)
    return contender
  })
}

/**
 * `npm run bench:cpu`: the hot path judged by server CPU per request (bench/lib/cpu-rounds.ts), each target a
 * same-run ratio — verifyKey and forward-auth against the Fastify ceiling, the proxy against a bare undici proxy,
 * the cache miss against a bare ioredis HMGET server, recording for analytics against the same verifier with it off —
 * then Redis commands per 1,000 verifications and the latency of the sidecar and of a read per request with Redis
 * 0.5 ms away.
 */
export async function cpu(): Promise<ScenarioReport> {
  const fixture = await startKeygateFixture()
  const started: BenchProcess[] = []
  const start = async (process: Promise<BenchProcess>) => {
    const server = await process
    started.push(server)
    return server
  }
  try {
    progress(`creating ${MISS_KEYS.toLocaleString('en-US')} keys with a name, an owner and meta`)
    const apiId = await fixture.createApi('bench')
    const keys = await fixture.createKeys(apiId, MISS_KEYS, 32, BENCH_KEY_FIELDS)
    const hitBodies = keys.slice(0, HIT_KEYS).map(({ key }) => JSON.stringify({ key }))
    const missBodies = keys.map(({ key }) => JSON.stringify({ key }))
    const keyHeaders = keys.slice(0, HIT_KEYS).map(({ key }) => ({ 'x-api-key': key }))

    const upstream = await start(startServer({ args: [benchServer('upstream')], readyPath: '/', core: LOAD_CORE }))
    const ceiling = await start(startServer({ args: [benchServer('ceiling')] }))
    // The same ceiling in a second process: one sample of what two processes of identical code measure apart in this
    // run (identical processes do not measure alike). It serves the rows the ceiling serves, saturated and at the fixed
    // rate, so the two have one load history: their CPU ratio and their p99 ratio at the fixed rate are what identical
    // code measures apart.
    const ceilingTwin = await start(startServer({ args: [benchServer('ceiling')] }))
    const proxyPort = await freePort()
    const verifier = await start(
      startKeygate(['verifier'], {
        ...fixture.env,
        UPSTREAM_URL: upstream.url,
        PROXY_PORT: String(proxyPort),
        AUTHORIZE_API_ID: apiId,
      }),
    )
    const proxyUrl = `http://127.0.0.1:${proxyPort}`
    // The same verifier, started by the same command and configuration, with recording turned off by a preload
    // (servers/recording-off.ts): what recording every verification costs is the verifier's CPU ÷ this one's.
    const unrecorded = await start(
      startKeygate(
        ['verifier'],
        {
          ...fixture.env,
          UPSTREAM_URL: upstream.url,
          PROXY_PORT: String(await freePort()),
          AUTHORIZE_API_ID: apiId,
        },
        { nodeFlags: ['--import', benchServer('recording-off')] },
      ),
    )
    // Recording on, started and loaded as the one with it off (only these hits, never v2, authorize or the proxy): the
    // verifier above serves every other row too, and a process's load history moves its CPU per request (V8's
    // feedback, what it compiled) by more than recording costs, so the pair that tells recording's cost is this one.
    const recorded = await start(
      startKeygate(['verifier'], {
        ...fixture.env,
        UPSTREAM_URL: upstream.url,
        PROXY_PORT: String(await freePort()),
        AUTHORIZE_API_ID: apiId,
      }),
    )
    const bareProxy = await start(
      startServer({ args: [benchServer('undici-proxy')], env: { UPSTREAM_URL: upstream.url } }),
    )
    const dispatchProxy = await start(
      startServer({ args: [benchServer('undici-dispatch-proxy')], env: { UPSTREAM_URL: upstream.url } }),
    )
    const missVerifier = await start(startKeygate(['verifier'], { ...fixture.env, CACHE_MAX_KEYS: '1' }))
    const hmget = await start(
      startServer({ args: [benchServer('hmget-server')], env: { REDIS_URL: fixture.redis.url } }),
    )

    await checkAnswers({
      verifier,
      unrecorded,
      recorded,
      proxyUrl,
      ceiling,
      ceilingTwin,
      bareProxy,
      dispatchProxy,
      missVerifier,
      hmget,
      keys,
      apiId,
    })

    const post = (url: string, bodies: string[], extra: Partial<LoadPlan> = {}) => postLoad(url, VERIFY, bodies, extra)
    const get = (url: string, path: string) => keyedGetLoad(url, path, keyHeaders)
    const pid = (server: BenchProcess) => server.child.pid!
    const redisPid = fixture.redisPid
    const verifierReady = `${verifier.url}/readyz`
    // At a fixed rate, the paced client (bench/lib/paced-worker.ts): autocannon's overallRate is a burst at the top of
    // every second, in whole milliseconds.
    const paced = (url: string) => (durationSeconds: number) =>
      runPinnedWorker<LoadResult>(
        'paced-worker',
        {
          url,
          path: VERIFY,
          bodies: hitBodies,
          connections: CPU_CONNECTIONS,
          rate: FIXED_RATE,
          warmupSeconds: PACED_WARMUP_SECONDS,
          durationSeconds,
        } satisfies PacedPlan,
        PACED_CLIENT_FLAGS,
      )
    // Listed in any order here: CPU_WINDOW_ORDER is the order the rounds rotate.
    const contenders = inWindowOrder<CpuContender>([
      { label: C, pids: [pid(ceiling)], run: post(ceiling.url, hitBodies) },
      {
        label: V1,
        pids: [pid(verifier)],
        needs: [redisPid],
        readyUrl: verifierReady,
        run: post(verifier.url, hitBodies),
      },
      {
        label: V1R,
        pids: [pid(recorded)],
        needs: [redisPid],
        readyUrl: `${recorded.url}/readyz`,
        run: post(recorded.url, hitBodies),
      },
      {
        label: V1U,
        pids: [pid(unrecorded)],
        needs: [redisPid],
        readyUrl: `${unrecorded.url}/readyz`,
        run: post(unrecorded.url, hitBodies),
      },
      {
        label: V2,
        pids: [pid(verifier)],
        needs: [redisPid],
        readyUrl: verifierReady,
        run: (durationSeconds) =>
          runLoad({
            url: verifier.url,
            path: '/v2/keys.verifyKey',
            headers: { authorization: `Bearer ${BENCH_ROOT_KEY}` },
            bodies: hitBodies,
            connections: CPU_CONNECTIONS,
            pipelining: CPU_PIPELINING,
            durationSeconds,
          }),
      },
      {
        label: A,
        pids: [pid(verifier)],
        needs: [redisPid],
        readyUrl: verifierReady,
        run: get(verifier.url, '/v1/authorize'),
      },
      { label: CT, pids: [pid(ceilingTwin)], run: post(ceilingTwin.url, hitBodies) },
      {
        label: P,
        pids: [pid(verifier)],
        needs: [redisPid, pid(upstream)],
        readyUrl: verifierReady,
        run: get(proxyUrl, '/'),
      },
      { label: B, pids: [pid(bareProxy)], needs: [pid(upstream)], run: get(bareProxy.url, '/') },
      { label: BD, pids: [pid(dispatchProxy)], needs: [pid(upstream)], run: get(dispatchProxy.url, '/') },
      {
        label: M,
        pids: [pid(missVerifier)],
        needs: [redisPid],
        readyUrl: `${missVerifier.url}/readyz`,
        run: post(missVerifier.url, missBodies),
      },
      { label: H, pids: [pid(hmget)], needs: [redisPid], run: post(hmget.url, missBodies) },
      { label: CT10, pids: [pid(ceilingTwin)], run: paced(ceilingTwin.url) },
      { label: C10, pids: [pid(ceiling)], run: paced(ceiling.url) },
      {
        label: V10,
        pids: [pid(verifier)],
        needs: [redisPid],
        readyUrl: verifierReady,
        run: paced(verifier.url),
      },
    ])
    // Everything that serves a contender may be paused while another is measured; Redis and the upstream are
    // needed by several and stay (they idle when nothing calls them), and so does the bench itself.
    const pausable = [
      pid(ceiling),
      pid(ceilingTwin),
      pid(verifier),
      pid(unrecorded),
      pid(recorded),
      pid(bareProxy),
      pid(dispatchProxy),
      pid(missVerifier),
      pid(hmget),
      pid(fixture.controlPlane),
    ]
    const results = await runCpuRounds(contenders, pausable, { mirrored: CPU_MIRRORED })

    // Redis commands on each design's verification path, and latency with Redis across a (simulated) network.
    const commands = redisCommands(fixture.redis.admin)
    // Only the server counted talks to Redis meanwhile (the control plane reconciles root keys every second).
    // (and no ingest empties the analytics buffer meanwhile: its bytes count what the verifier appended).
    for (const server of [
      ceiling,
      ceilingTwin,
      unrecorded,
      recorded,
      bareProxy,
      dispatchProxy,
      missVerifier,
      hmget,
      fixture.controlPlane,
    ])
      process.kill(pid(server), 'SIGSTOP')
    const hitCommands = await commands.per1000(verifier.url, post(verifier.url, hitBodies))
    process.kill(pid(verifier), 'SIGSTOP')
    // The verifier with recording off must append nothing, or its row measures part of what it stands in for.
    process.kill(pid(unrecorded), 'SIGCONT')
    await waitReady(`${unrecorded.url}/readyz`)
    const unrecordedCommands = await commands.per1000(unrecorded.url, post(unrecorded.url, hitBodies))
    process.kill(pid(unrecorded), 'SIGSTOP')
    if (unrecordedCommands.appends > 0 || unrecordedCommands.bytesPerVerification > 0)
      throw new Error('the verifier with recording off appended to the analytics buffer')
    process.kill(pid(missVerifier), 'SIGCONT')
    await waitReady(`${missVerifier.url}/readyz`)
    const missCommands = await commands.per1000(missVerifier.url, post(missVerifier.url, missBodies))
    process.kill(pid(missVerifier), 'SIGSTOP')
    const relay = await start(
      startServer({
        args: [benchServer('delay-relay')],
        env: { TARGET_PORT: String(fixture.redis.port), DELAY_MS: String(RELAY_DELAY_MS) },
        core: LOAD_CORE,
        ready: 'tcp',
      }),
    )
    const relayUrl = `redis://127.0.0.1:${relay.port}`
    const addedMs = await relayRoundTrip(fixture.redis.url, relayUrl)
    const farVerifier = await start(startKeygate(['verifier'], { ...fixture.env, REDIS_URL: relayUrl }))
    const farNaive = await start(startServer({ args: [benchServer('naive')], env: { REDIS_URL: relayUrl } }))
    const far = await farLatency(
      [
        { label: 'keygate verifier (cache hit)', server: farVerifier, other: farNaive },
        { label: 'naive: Redis read per request', server: farNaive, other: farVerifier },
      ],
      hitBodies,
      commands,
    )

    const [twin, v1, recording, v2, v2OverV1, auth, prox, proxDispatch, miss] = [
      results.cheaperBy(CT, C),
      results.cheaperBy(V1, C),
      // The recording verifier's CPU ÷ the same verifier's with recording off, both with one load history: what
      // recording costs a cache hit.
      results.cheaperBy(V1U, V1R),
      results.cheaperBy(V2, C),
      // v2's CPU ÷ v1's: what v2 callers pay beyond v1's for the same verdict.
      results.cheaperBy(V1, V2),
      results.cheaperBy(A, C),
      results.cheaperBy(B, P),
      results.cheaperBy(BD, P),
      results.cheaperBy(H, M),
    ]
    // The proxy and the miss are judged as costs (their CPU ÷ the baseline's, ≤), the rest as speed (≥).
    const proxyCost = prox.median
    const missCost = miss.median
    const p99 = results.p99By(V10, C10)
    const p99Ratio = p99.median
    // What identical code measures apart at the fixed rate, in this run: the ceiling's twin ÷ the ceiling, by round.
    const twinP99 = results.p99By(CT10, C10)
    const twinP99Ratio = twinP99.median
    const checks: Check[] = [
      {
        what: 'verifyKey cache hit: ceiling CPU ÷ keygate CPU per request',
        value: v1.median,
        target: '≥ 1.0',
        pass: v1.median >= 1,
      },
      {
        what: `verifyKey p99 at ${FIXED_RATE.toLocaleString('en-US')} req/s: keygate ÷ ceiling`,
        value: p99Ratio,
        target: '≤ 1.0',
        pass: p99Ratio <= 1,
      },
      {
        what: '/v1/authorize hit: ceiling CPU ÷ keygate CPU per request',
        value: auth.median,
        target: '≥ 1.0',
        pass: auth.median >= 1,
      },
      {
        what: 'v2 keys.verifyKey cache hit: keygate v2 CPU ÷ keygate v1 CPU per request',
        value: v2OverV1.median,
        target: '≤ 1.1',
        pass: v2OverV1.median <= 1.1,
      },
      {
        what: 'recording: with ÷ without CPU per request, cache hit',
        value: recording.median,
        target: '≤ 1.05',
        pass: recording.median <= 1.05,
      },
      {
        what: 'reverse proxy: keygate CPU ÷ bare undici proxy CPU per request',
        value: proxyCost,
        target: '≤ 1.1',
        pass: proxyCost <= 1.1,
      },
      {
        what: 'cache miss: keygate CPU ÷ bare HMGET server CPU per request',
        value: missCost,
        target: '≤ 1.2',
        pass: missCost <= 1.2,
      },
      {
        what: 'Redis commands on the path per 1,000 cache-hit verifications',
        value: hitCommands.onPath,
        target: '= 0',
        pass: hitCommands.onPath < 0.5,
      },
      {
        what: 'reverse proxy: keygate CPU ÷ bare undici dispatch proxy CPU per request (what verifying costs)',
        value: proxDispatch.median,
        target: '(reported)',
        pass: true,
      },
      {
        what: 'v2 keys.verifyKey cache hit: ceiling CPU ÷ keygate CPU per request',
        value: v2.median,
        target: '(reported)',
        pass: true,
      },
      {
        what: 'noise floor: ceiling CPU ÷ its twin’s CPU per request (identical code, another process; 1.00 ideally)',
        value: twin.median,
        target: '(reported)',
        pass: true,
      },
      {
        what: `noise floor of the p99 at ${FIXED_RATE.toLocaleString('en-US')} req/s: the twin's ÷ the ceiling's (identical code; 1.00 ideally)`,
        value: twinP99Ratio,
        target: '(reported)',
        pass: true,
      },
    ]
    const rows: string[][] = [
      [C, showMeasured(results.cpu(C), 1), '1.00 (the ceiling)'],
      [CT, showMeasured(results.cpu(CT), 1), `${showRatio(twin)} × the ceiling`],
      [V1, showMeasured(results.cpu(V1), 1), `${showRatio(v1)} × the ceiling`],
      [V1R, showMeasured(results.cpu(V1R), 1), `${showRatio(results.cheaperBy(V1R, C))} × the ceiling`],
      [
        V1U,
        showMeasured(results.cpu(V1U), 1),
        `${showRatio(results.cheaperBy(V1U, C))} × the ceiling; recording costs ${showRatio(recording)} × this`,
      ],
      [V2, showMeasured(results.cpu(V2), 1), `${showRatio(v2)} × the ceiling`],
      [A, showMeasured(results.cpu(A), 1), `${showRatio(auth)} × the ceiling`],
      [B, showMeasured(results.cpu(B), 1), '1.00 (the proxy baseline)'],
      [
        BD,
        showMeasured(results.cpu(BD), 1),
        `${(results.cpu(BD).median / results.cpu(B).median).toFixed(2)} × the baseline`,
      ],
      [
        P,
        showMeasured(results.cpu(P), 1),
        `costs ${proxyCost.toFixed(2)} × the baseline, ${proxDispatch.median.toFixed(2)} × the dispatch proxy`,
      ],
      [H, showMeasured(results.cpu(H), 1), '1.00 (the miss baseline)'],
      [M, showMeasured(results.cpu(M), 1), `costs ${missCost.toFixed(2)} × the baseline`],
      [C10, showMeasured(results.cpu(C10), 1), '—'],
      [V10, showMeasured(results.cpu(V10), 1), '—'],
      [CT10, showMeasured(results.cpu(CT10), 1), '—'],
    ].map(([label, cpuUs, ratio]) => {
      // The paced rows to the microsecond (their client's resolution); autocannon's in whole milliseconds.
      const digits = label === C10 || label === V10 || label === CT10 ? 3 : 1
      return [
        label!,
        cpuUs!,
        ratio!,
        showMeasured(results.rps(label!)),
        showMeasured(results.p50(label!), digits),
        showMeasured(results.p99(label!), digits),
      ]
    })
    const notes = [
      `Redis commands per 1,000 verifications (INFO commandstats over a run of the verifier alone, less its idle background — revision polls — over the same time): cache hit ${hitCommands.onPath.toFixed(1)} on the verification path, + ${hitCommands.appends.toFixed(3)} appends to the analytics buffer (one script call per flush, every ${ANALYTICS_FLUSH_MS / 1000} s, carrying every verification recorded since: ${hitCommands.bytesPerVerification.toFixed(1)} bytes a verification); with recording off ${unrecordedCommands.onPath.toFixed(1)} and no append; cache miss ${missCommands.onPath.toFixed(0)} (+ ${missCommands.appends.toFixed(3)} appends, ${missCommands.bytesPerVerification.toFixed(1)} bytes a verification); naive ${far[1]!.commands.toFixed(0)}.`,
      `With Redis behind a relay holding every chunk ${RELAY_DELAY_MS} ms each way (measured: +${addedMs.toFixed(2)} ms per round trip), at ${RELAY_RATE.toLocaleString('en-US')} req/s on 10 connections, ${RELAY_ROUNDS} rounds × ${RELAY_SECONDS} s interleaved: keygate verifier (cache hit) p50 ${showMeasured(far[0]!.p50, 2)} ms, p99 ${showMeasured(far[0]!.p99, 2)} ms; naive (a Redis read per request) p50 ${showMeasured(far[1]!.p50, 2)} ms, p99 ${showMeasured(far[1]!.p99, 2)} ms. With Redis on the same host a read per request is cheap in CPU; across a network the sidecar saves the round trip.`,
      `The p99 at ${FIXED_RATE.toLocaleString('en-US')} req/s, round by round: keygate ÷ the ceiling ${showByRound(p99)}; the ceiling's twin ÷ the ceiling ${showByRound(twinP99)} (median ${twinP99Ratio.toFixed(2)} [${twinP99.min.toFixed(2)}–${twinP99.max.toFixed(2)}]: what identical code lands apart in this run).`,
      windowsNote(results),
    ]
    return {
      name: 'cpu',
      title: 'Server CPU per request (the judge of the hot path)',
      command: 'npm run bench:cpu',
      method: `Servers pinned to the server core, autocannon on the other; ${CPU_CONNECTIONS} connections × ${CPU_PIPELINING} pipelined; the fixed-rate rows by a paced open-loop client instead (a request every ${(1000 / FIXED_RATE).toFixed(1)} ms on the first of ${CPU_CONNECTIONS} connections free, latency to the microsecond, after ${PACED_WARMUP_SECONDS} s of its own warm-up at that rate, counted in their CPU too), ${HIT_KEYS.toLocaleString('en-US')} keys with a name, an owner and meta rotated (${MISS_KEYS.toLocaleString('en-US')} for the miss rows, the verifier's cache cut to one record); ${CPU_ROUNDS} interleaved rounds × ${CPU_SECONDS} s, the order rotated between rounds, and the saturated hit windows of the ceiling and the verifier, those of the recording pair, and the three fixed-rate windows (twin, ceiling, verifier) each reversed every other round, every other server paused (SIGSTOP) while one is measured, each window started on a quiet machine after 1 s of warm-up. CPU µs/request = the server process's utime+stime from /proc/<pid>/stat over the window ÷ the responses in it; median [min–max]. Ratios are medians of per-round ratios. The ceiling runs in a second process too (its twin, serving the same rows): its CPU ratio and its p99 ratio at the fixed rate are one sample each of the run's noise. What recording costs a cache hit is told by a pair of verifier processes started by the same command and configuration, one with recording for analytics turned off (a preload, bench/servers/recording-off.ts), each serving only these hits: the recording one's CPU ÷ the other's (the verifier of the other rows serves v2, authorize and the proxy too, and that load history alone moves its CPU per request).`,
      table: { headers: ['server', 'CPU µs/request', 'by CPU', 'req/s', 'p50 ms', 'p99 ms'], rows },
      checks,
      chart: [C, V1, V1U, V2, A, B, BD, P, H, M].map((label) => ({
        label,
        rps: results.rps(label),
        p99Ms: results.p99(label),
      })),
      notes,
      summary: `cpu: verifyKey hit ${v1.median.toFixed(2)}× the ceiling (${results.cpu(V1).median.toFixed(1)} vs ${results.cpu(C).median.toFixed(1)} µs), recording ${recording.median.toFixed(3)}× without, authorize ${auth.median.toFixed(2)}×, proxy ${proxyCost.toFixed(2)}× bare undici, miss ${missCost.toFixed(2)}× bare HMGET, v2 ${v2.median.toFixed(2)}× (${v2OverV1.median.toFixed(2)}× v1's CPU); p99 at ${FIXED_RATE.toLocaleString('en-US')} req/s ${p99Ratio.toFixed(2)}× the ceiling's; the ceiling's twin ${twin.median.toFixed(2)}× by CPU, ${twinP99Ratio.toFixed(2)}× by the p99 (the noise floor)`,
    }
  } finally {
    await stopPausedStage(started, fixture)
  }
}

const showByRound = (ratio: RoundRatios) => ratio.byRound.map((r) => r.toFixed(2)).join(', ')
const showRatio = (ratio: Measured) => `${ratio.median.toFixed(2)} [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if ((await fetch(url).catch(() => undefined))?.status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`${url} did not become ready`)
}

/** A fast wrong answer is not a result: every contender must answer what it claims before anything is measured. */
async function checkAnswers(s: {
  verifier: BenchProcess
  unrecorded: BenchProcess
  recorded: BenchProcess
  proxyUrl: string
  ceiling: BenchProcess
  ceilingTwin: BenchProcess
  bareProxy: BenchProcess
  dispatchProxy: BenchProcess
  missVerifier: BenchProcess
  hmget: BenchProcess
  keys: { keyId: string; key: string }[]
  apiId: string
}): Promise<void> {
  const postJson = async (url: string, body: unknown, headers: Record<string, string> = {}) =>
    (await (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json()) as Record<string, unknown>
  for (const { key, keyId } of s.keys.slice(0, HIT_KEYS)) {
    const verdict = await postJson(`${s.verifier.url}${VERIFY}`, { key })
    if (verdict.valid !== true || verdict.keyId !== keyId || verdict.name !== BENCH_KEY_FIELDS.name)
      throw new Error(`the verifier did not verify ${keyId}: ${JSON.stringify(verdict)}`)
    // With recording off, the same verdict, byte for byte but for the request's own id.
    const unrecorded = await postJson(`${s.unrecorded.url}${VERIFY}`, { key })
    const withoutId = ({ requestId: _id, ...rest }: Record<string, unknown>) => JSON.stringify(rest)
    if (withoutId(unrecorded) !== withoutId(verdict))
      throw new Error(`the verifier with recording off answers otherwise: ${JSON.stringify(unrecorded)}`)
    const recorded = await postJson(`${s.recorded.url}${VERIFY}`, { key })
    if (withoutId(recorded) !== withoutId(verdict))
      throw new Error(`the recording verifier of the pair answers otherwise: ${JSON.stringify(recorded)}`)
  }
  // The ceiling answers a verdict of the same fields and length as Keygate's for these keys: a field Keygate's verdicts
  // gain and the ceiling's lack would make Keygate serialise more than the ceiling does.
  const ours = JSON.stringify(await postJson(`${s.verifier.url}${VERIFY}`, { key: s.keys[0]!.key }))
  const ceilings = JSON.stringify(await postJson(`${s.ceiling.url}${VERIFY}`, { key: s.keys[0]!.key }))
  const twins = JSON.stringify(await postJson(`${s.ceilingTwin.url}${VERIFY}`, { key: s.keys[0]!.key }))
  if (twins !== ceilings) throw new Error(`the ceiling's twin answers otherwise:\n${twins}\n${ceilings}`)
  // Every field's path, nested ones too (identity.meta.…): a renamed field of the same length shows.
  const paths = (value: unknown, at: string): string[] =>
    value !== null && typeof value === 'object'
      ? Object.entries(value).flatMap(([name, inner]) => [`${at}${name}`, ...paths(inner, `${at}${name}.`)])
      : []
  const fields = (json: string) => paths(JSON.parse(json), '').sort().join()
  if (fields(ours) !== fields(ceilings) || ours.length !== ceilings.length)
    throw new Error(`the ceiling's verdict is not shaped like Keygate's:\n${ceilings}\n${ours}`)
  const v2 = await postJson(
    `${s.verifier.url}/v2/keys.verifyKey`,
    { key: s.keys[0]!.key },
    { authorization: `Bearer ${BENCH_ROOT_KEY}` },
  )
  if ((v2.data as { valid?: boolean } | undefined)?.valid !== true)
    throw new Error(`v2 verifyKey: ${JSON.stringify(v2)}`)
  for (const [url, name] of [
    [`${s.verifier.url}/v1/authorize`, 'forward-auth'],
    [`${s.proxyUrl}/`, 'the proxy'],
    [`${s.bareProxy.url}/`, 'the bare proxy'],
    [`${s.dispatchProxy.url}/`, 'the bare dispatch proxy'],
  ] as const) {
    const response = await fetch(url, { headers: { 'x-api-key': s.keys[1]!.key } })
    if (response.status !== 200) throw new Error(`${name} refused a valid key`)
    const body = await response.text()
    if (name !== 'forward-auth' && body !== '{"hello":"world"}') throw new Error(`${name} answered ${body}`)
  }
  for (const url of [`${s.verifier.url}/v1/authorize`, `${s.proxyUrl}/`]) {
    if ((await fetch(url, { headers: { 'x-api-key': 'bench_not_a_key' } })).status !== 401)
      throw new Error(`${url} let an invalid key through`)
  }
  for (const { key } of s.keys.slice(-50)) {
    if ((await postJson(`${s.missVerifier.url}${VERIFY}`, { key })).valid !== true)
      throw new Error('the miss verifier refused a key')
    if ((await postJson(`${s.hmget.url}${VERIFY}`, { key })).valid !== true)
      throw new Error('the HMGET server missed a key')
  }
  if ((await postJson(`${s.hmget.url}${VERIFY}`, { key: 'bench_not_a_key' })).valid !== false)
    throw new Error('the HMGET server found a key that does not exist')
}

/** Redis' per-command call counts, and commands per 1,000 verifications of one server run alone. */
function redisCommands(admin: Redis) {
  const counts = async () => {
    const out = new Map<string, number>()
    for (const [, name, calls] of (await admin.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm))
      out.set(name!, Number(calls))
    return out
  }
  const total = (after: Map<string, number>, before: Map<string, number>, only?: (name: string) => boolean) =>
    [...after].filter(([name]) => !only || only(name)).reduce((sum, [name, n]) => sum + n - (before.get(name) ?? 0), 0)
  // What recording for analytics sends: every flush, one append to the analytics buffer, a script call (EVALSHA, or
  // EVAL once to load it) that Redis counts with the commands it runs inside: HGET, XADD and HSET (XRANGE, XDEL and
  // HINCRBY too when the buffer trims, which the bench's never does). The bench keys carry no credits and no limits:
  // no other script runs; and a verification's own reads are HMGETs, never these.
  const ANALYTICS = new Set(['evalsha', 'eval', 'hget', 'xadd', 'hset', 'xdel', 'hincrby'])
  // INFO itself is counted by Redis: it is the bench's, not the server's.
  const onPath = (name: string) => !ANALYTICS.has(name) && name !== 'info'
  // Bytes the analytics buffers hold, over every buffer (their state's `bytes`): nothing ingests while a verifier is
  // counted alone (the control plane is paused), so what they gain is what it appended.
  const bufferBytes = async () => {
    let bytes = 0
    for (let shard = 0; shard < ANALYTICS_BUFFER_SHARDS; shard++)
      bytes += Number((await admin.hget(redisKeys.analyticsBufferState(shard), 'bytes')) ?? 0)
    return bytes
  }
  // After the load, long enough for the last flush of what it recorded to land inside the window.
  const settleSeconds = ANALYTICS_FLUSH_MS / 1000 + 0.5
  return {
    counts,
    delta: total,
    onPath,
    /** Runs `load` against a server with a /metrics page; counts per 1,000 of its verdicts. */
    async per1000(url: string, load: (seconds: number) => Promise<LoadResult>) {
      const seconds = 3
      const verdicts = () => metricSum(url, 'keygate_verify_verdicts_total')
      // The idle spell also lets a flush of what the server recorded before it was counted land outside the window.
      const idle = await counts()
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
      const background = total(await counts(), idle, onPath)
      const [verdictsBefore, bytesBefore, before] = [await verdicts(), await bufferBytes(), await counts()]
      await load(seconds)
      await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1000))
      const after = await counts()
      const appended = (await bufferBytes()) - bytesBefore
      const answered = (await verdicts()) - verdictsBefore
      const byCommand = [...after]
        .map(([name, n]) => `${name} ${n - (before.get(name) ?? 0)}`)
        .filter((entry) => !entry.endsWith(' 0'))
      progress(`${url}: ${answered} verdicts; Redis commands meanwhile: ${byCommand.join(', ')}`)
      // The background ran for the load and the wait after it.
      const path = total(after, before, onPath) - (background * (seconds + settleSeconds)) / seconds
      return {
        onPath: Math.max(0, (path * 1000) / answered),
        // Round trips: the script calls (the commands they run inside are counted by Redis too, not sent).
        appends: (total(after, before, (name) => name === 'evalsha' || name === 'eval') * 1000) / answered,
        bytesPerVerification: appended / answered,
      }
    },
  }
}

/** The round trip a client sees through the relay, less the direct one: what the relay adds. */
async function relayRoundTrip(directUrl: string, relayUrl: string): Promise<number> {
  const time = async (url: string) => {
    const redis = new Redis(url)
    try {
      for (let i = 0; i < 50; i++) await redis.ping()
      const samples: number[] = []
      for (let i = 0; i < 500; i++) {
        const start = performance.now()
        await redis.ping()
        samples.push(performance.now() - start)
      }
      return percentile(samples, 50)
    } finally {
      redis.disconnect()
    }
  }
  return (await time(relayUrl)) - (await time(directUrl))
}

/** p50/p99 of each design at a modest fixed rate with Redis behind the relay, and its Redis commands per request. */
async function farLatency(
  designs: { label: string; server: BenchProcess; other: BenchProcess }[],
  bodies: string[],
  commands: ReturnType<typeof redisCommands>,
): Promise<{ label: string; p50: Measured; p99: Measured; commands: number }[]> {
  const results = designs.map((design) => ({
    ...design,
    p50: [] as number[],
    p99: [] as number[],
    commands: [] as number[],
  }))
  const run = (url: string, durationSeconds: number) =>
    runPinnedWorker<LoadResult>('latency-worker', {
      url,
      path: VERIFY,
      bodies,
      users: 10,
      rate: RELAY_RATE,
      durationSeconds,
    } satisfies LatencyPlan)
  for (const design of results) {
    process.kill(design.other.child.pid!, 'SIGSTOP')
    process.kill(design.server.child.pid!, 'SIGCONT')
    await waitReady(`${design.server.url}/readyz`)
    await run(design.server.url, 2)
  }
  for (let round = 0; round < RELAY_ROUNDS; round++) {
    for (const design of round % 2 === 0 ? results : [...results].reverse()) {
      process.kill(design.other.child.pid!, 'SIGSTOP')
      process.kill(design.server.child.pid!, 'SIGCONT')
      await waitReady(`${design.server.url}/readyz`)
      const before = await commands.counts()
      const result = await run(design.server.url, RELAY_SECONDS)
      if (result.errors > 0 || result.non2xx > 0)
        throw new Error(`${design.label}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      const after = await commands.counts()
      design.p50.push(result.p50)
      design.p99.push(result.p99)
      design.commands.push((commands.delta(after, before, commands.onPath) * 1000) / result.total)
      progress(
        `far Redis round ${round + 1}/${RELAY_ROUNDS} ${design.label}: p50 ${result.p50} ms, p99 ${result.p99} ms`,
      )
    }
  }
  for (const design of results) process.kill(design.server.child.pid!, 'SIGCONT')
  return results.map((design) => ({
    label: design.label,
    p50: measured(design.p50),
    p99: measured(design.p99),
    commands: median(design.commands),
  }))
}
