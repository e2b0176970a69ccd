import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_KEY_FIELDS } from '../lib/bench-key.js'
import { CPU_CONNECTIONS, postLoad } from '../lib/cpu-loads.js'
import { runCpuRounds, windowsNote, CPU_ROUNDS, CPU_SECONDS, type CpuContender } from '../lib/cpu-rounds.js'
import { readGcPauses } from '../lib/gc-pauses.js'
import { explainWindow, LONG_EPISODE, type WindowTail } from '../lib/slow-episodes.js'
import { readTimerCallbacks } from '../lib/timer-callbacks.js'
import { startKeygateFixture, stopPausedStage } from '../lib/keygate-fixture.js'
import { runPinnedWorker, type LoadResult } from '../lib/load.js'
import type { PacedPlan } from '../lib/paced-worker.js'
import { benchServer, startKeygate, startServer, type BenchProcess } from '../lib/processes.js'
import { showMeasured } from '../lib/report.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { progress } from '../lib/rounds.js'
import { measured, median } from '../lib/stats.js'

const KEYS = 1_000
const FIXED_RATE = 10_000
/** Requests slower than this (ms) are reported one by one and put beside the server's collections. */
const SLOW_MS = 1
// As bench:cpu's fixed-rate rows: the paced client's own warm-up and young generation (bench/scenarios/cpu.ts).
const PACED_WARMUP_SECONDS = 3
const PACED_CLIENT_FLAGS = ['--min-semi-space-size=64', '--max-semi-space-size=64']
const VERIFY = '/v1/keys.verifyKey'

/**
 * `npm run bench:tail`: why a server's p99 at a fixed rate is what it is. bench:cpu's fixed-rate rows (the ceiling
 * and keygate's verifyKey at 10,000 req/s, the paced client, the same rounds, each server after saturating windows
 * of its own as there), with every request over 1 ms reported by the client with its write time and every
 * collection of each server logged by bench/servers/gc-pause-log.ts: how many slow requests a pause of the server
 * held, and how many nothing in the server did (the host, the client). It reports; it sets no target.
 */
export async function tail(): Promise<ScenarioReport> {
  const fixture = await startKeygateFixture()
  const logs = mkdtempSync(join(tmpdir(), 'keygate-gc-'))
  const gcLog = (name: string) => join(logs, `${name}.log`)
  const timerLog = (name: string) => join(logs, `${name}.timers.log`)
  const logged = (name: string) => ({
    nodeFlags: [`--import=${benchServer('gc-pause-log')}`, `--import=${benchServer('timer-callback-log')}`],
    env: { BENCH_GC_LOG: gcLog(name), BENCH_TIMER_LOG: timerLog(name) },
  })
  const started: BenchProcess[] = []
  try {
    progress(`creating ${KEYS.toLocaleString('en-US')} keys with a name, an owner and meta`)
    const apiId = await fixture.createApi('bench')
    const keys = await fixture.createKeys(apiId, KEYS, 32, BENCH_KEY_FIELDS)
    const bodies = keys.map(({ key }) => JSON.stringify({ key }))
    const ceilingLog = logged('ceiling')
    const ceiling = await startServer({ args: [benchServer('ceiling')], ...ceilingLog })
    started.push(ceiling)
    const verifierLog = logged('verifier')
    const verifier = await startKeygate(
      ['verifier'],
      { ...fixture.env, ...verifierLog.env },
      { nodeFlags: verifierLog.nodeFlags },
    )
    started.push(verifier)

    const paced = (url: string) => (durationSeconds: number) =>
      runPinnedWorker<LoadResult>(
        'paced-worker',
        {
          url,
          path: VERIFY,
          bodies,
          connections: CPU_CONNECTIONS,
          rate: FIXED_RATE,
          warmupSeconds: PACED_WARMUP_SECONDS,
          durationSeconds,
          slowOverMs: SLOW_MS,
        } satisfies PacedPlan,
        PACED_CLIENT_FLAGS,
      )
    const rate = FIXED_RATE.toLocaleString('en-US')
    const C = 'ceiling: Fastify 5 route, body + response schema, constant verdict'
    const V = 'keygate verifyKey (v1), cache hit'
    const C10 = `ceiling at a fixed ${rate} req/s`
    const V10 = `keygate verifyKey (v1) at a fixed ${rate} req/s`
    const verifierReady = `${verifier.url}/readyz`
    const redis = [fixture.redisPid]
    const contenders: CpuContender[] = [
      { label: C, pids: [ceiling.child.pid!], run: postLoad(ceiling.url, VERIFY, bodies) },
      {
        label: V,
        pids: [verifier.child.pid!],
        needs: redis,
        readyUrl: verifierReady,
        run: postLoad(verifier.url, VERIFY, bodies),
      },
      { label: C10, pids: [ceiling.child.pid!], run: paced(ceiling.url) },
      { label: V10, pids: [verifier.child.pid!], needs: redis, readyUrl: verifierReady, run: paced(verifier.url) },
    ]
    // The two paced windows in either order, every other round (as bench:cpu's: cpu-rounds.ts' roundOrder).
    const results = await runCpuRounds(
      contenders,
      [ceiling.child.pid!, verifier.child.pid!, fixture.controlPlane.child.pid!],
      { mirrored: [[C10, V10]] },
    )

    const windows = (label: string, name: string) =>
      results.samples
        .get(label)!
        .map((sample) => explainWindow(sample.result, readGcPauses(gcLog(name)), readTimerCallbacks(timerLog(name))))
    const [ceilingWindows, verifierWindows] = [windows(C10, 'ceiling'), windows(V10, 'verifier')]
    const row = (label: string, explained: WindowTail[]) => {
      // A window without a collection has no new-space figure (NaN): left out of the median.
      const of = (pick: (window: WindowTail) => number) =>
        measured(explained.map(pick).filter((value) => !Number.isNaN(value)))
      return [
        label,
        showMeasured(results.cpu(label), 1),
        showMeasured(results.p99(label), 3),
        showMeasured(of((w) => w.slowPerSecond)),
        showMeasured(of((w) => w.gcShare * 100)),
        showMeasured(of((w) => w.timerShare * 100)),
        showMeasured(of((w) => w.longUnheldShare * 100)),
        showMeasured(
          of((w) => w.pausesPerSecond),
          1,
        ),
        showMeasured(
          of((w) => w.longestPauseMs),
          2,
        ),
        showMeasured(
          of((w) => w.pauseMsPerSecond),
          1,
        ),
        showMeasured(of((w) => w.youngMb)),
      ]
    }
    // Window by window, round by round (the ceiling's row first, whichever of the two ran first): what a median over
    // rounds hides (a window of a host stall, a server whose new space V8 resized between its windows).
    const perWindow = [
      '| round | server | CPU µs/request | p99 ms | over 1 ms per s | held by its GC | by its timers | long, neither | GC pauses per s | longest ms | new space MiB |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...results.samples
        .get(C10)!
        .flatMap((ceilingSample, i) =>
          [
            ['ceiling', ceilingSample, ceilingWindows[i]!] as const,
            ['keygate', results.samples.get(V10)![i]!, verifierWindows[i]!] as const,
          ].map(
            ([server, sample, w]) =>
              `| ${i + 1} | ${server} | ${sample.cpuUsPerRequest.toFixed(1)} | ${sample.result.p99.toFixed(3)} | ${w.slowPerSecond.toFixed(0)} | ${(w.gcShare * 100).toFixed(0)}% | ${(w.timerShare * 100).toFixed(0)}% | ${(w.longUnheldShare * 100).toFixed(0)}% | ${w.pausesPerSecond.toFixed(1)} | ${w.longestPauseMs.toFixed(2)} | ${Number.isNaN(w.youngMb) ? '—' : w.youngMb.toFixed(0)} |`,
          ),
        ),
    ]
    const p99Ratio = results.p99By(V10, C10).median
    const perSecond = (explained: WindowTail[], share: (w: WindowTail) => number) =>
      median(explained.map((w) => w.slowPerSecond * share(w)))
    const held = (explained: WindowTail[]) => perSecond(explained, (w) => w.gcShare)
    const unheld = (explained: WindowTail[]) => perSecond(explained, (w) => 1 - w.gcShare)
    // What each server's slow requests a second come from, by the median of windows (they need not add up).
    const sources = (explained: WindowTail[]) =>
      `its collections ${held(explained).toFixed(0)}, its timers ${perSecond(explained, (w) => w.timerShare).toFixed(0)}, long episodes neither held ${perSecond(explained, (w) => w.longUnheldShare).toFixed(0)}, the rest ${perSecond(explained, (w) => 1 - w.gcShare - w.timerShare - w.longUnheldShare).toFixed(0)}`
    return {
      name: 'tail',
      title: `The p99 at ${rate} req/s, explained`,
      command: 'npm run bench:tail',
      method: `bench:cpu's fixed-rate rows alone: the ceiling and keygate's verifier, ${KEYS.toLocaleString('en-US')} cached keys, the paced client at ${rate} req/s on ${CPU_CONNECTIONS} connections after ${PACED_WARMUP_SECONDS} s of its warm-up; each server also saturated (autocannon, as bench:cpu's hit rows) between its paced windows, so that its heap has bench:cpu's history; ${CPU_ROUNDS} interleaved rounds × ${CPU_SECONDS} s (the two paced windows in either order, every other round), the other server paused. The client reports every request over ${SLOW_MS} ms with its write time; each server logs its collections (bench/servers/gc-pause-log.ts) and every callback of a global setTimeout or setInterval that held its thread over 30 µs (bench/servers/timer-callback-log.ts: a verifier's revision polls, usage flushes); a slow request is held by a pause when it was written before one ended and answered after it began, and so is every slow request written less than 1 ms from another held one (the queue the pause left) — an episode; likewise for a timer callback, where no collection held it. Held means overlapped, not caused (a timer due during a host stall runs as it ends, in the stall's episode): the shares held are upper bounds on what the logged spans cost. A long episode (${LONG_EPISODE} or more slow requests: ${(LONG_EPISODE / (FIXED_RATE / 1000)).toFixed(0)} ms of arrivals) that neither held is a stall of the core the logs do not see — the host's (the guest kernel's DAMON thread, other services), the server's V8 helper threads, Redis, which shares the server core, or the server's own work outside a logged span (what a timer leaves for a later turn, setImmediate callbacks, replies). Pause lengths are wall-clock (a host stall inside a collection counts in it). Medians over rounds [min–max].`,
      table: {
        headers: [
          'server',
          'CPU µs/request',
          'p99 ms',
          `requests over ${SLOW_MS} ms, per s`,
          '% of them held by its GC pauses',
          '% held by its timer callbacks (not its GC)',
          `% in long episodes (≥ ${LONG_EPISODE}) neither held`,
          'GC pauses per s',
          'longest pause ms',
          'GC ms per s',
          'new space MiB',
        ],
        rows: [row(C10, ceilingWindows), row(V10, verifierWindows)],
      },
      checks: [
        {
          what: `verifyKey p99 at ${rate} req/s: keygate ÷ ceiling (bench:cpu judges it; reported here)`,
          value: p99Ratio,
          target: '(reported)',
          pass: true,
        },
      ],
      chart: [],
      notes: [
        `Requests over ${SLOW_MS} ms per second, held by the server's own collections / not: ceiling ${held(ceilingWindows).toFixed(0)} / ${unheld(ceilingWindows).toFixed(0)}, keygate ${held(verifierWindows).toFixed(0)} / ${unheld(verifierWindows).toFixed(0)} (1% of the requests is ${FIXED_RATE / 100} a second).`,
        `Slow requests a second by source, median of windows — ceiling: ${sources(ceilingWindows)}; keygate: ${sources(verifierWindows)}.`,
        windowsNote(results),
      ],
      markdown: ['Each window:', '', ...perWindow],
      summary: `tail: p99 at ${rate} req/s keygate ${results.p99(V10).median.toFixed(3)} ms vs ceiling ${results.p99(C10).median.toFixed(3)} ms; over ${SLOW_MS} ms per s held by own GC / not: keygate ${held(verifierWindows).toFixed(0)} / ${unheld(verifierWindows).toFixed(0)}, ceiling ${held(ceilingWindows).toFixed(0)} / ${unheld(ceilingWindows).toFixed(0)}`,
    }
  } finally {
    await stopPausedStage(started, fixture)
    rmSync(logs, { recursive: true, force: true })
  }
}
