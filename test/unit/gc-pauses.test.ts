import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { pausesBetween, readGcPauses, type GcPause } from '../../bench/lib/gc-pauses.js'
import type { LoadResult, SlowRequests } from '../../bench/lib/load.js'
import { episodesOf, explainWindow, LONG_EPISODE, type Span } from '../../bench/lib/slow-episodes.js'
import { readTimerCallbacks } from '../../bench/lib/timer-callbacks.js'

/** bench:tail's two halves: a server's log of its collections, and slow requests put beside it. */
describe('gc pauses (bench:tail)', () => {
  const dirs: string[] = []
  const scratch = () => {
    const dir = mkdtempSync(join(tmpdir(), 'keygate-gc-test-'))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  const pause = (beganEpochMs: number, durationMs: number): GcPause => ({
    beganEpochMs,
    durationMs,
    kind: 'minor',
    youngBytes: 1,
  })
  const slow = (requests: [sentAt: number, latency: number][]): SlowRequests => ({
    overMs: 1,
    fromEpochMs: 0,
    toEpochMs: 10_000,
    sentAtEpochMs: requests.map(([sentAt]) => sentAt),
    latencyMs: requests.map(([, latency]) => latency),
  })

  /** A window of the given slow requests, as the paced client reports one. */
  const windowOf = (requests: SlowRequests): LoadResult => ({
    rps: 10_000,
    p50: 0.05,
    p99: 1,
    max: 5,
    total: 100_000,
    non2xx: 0,
    errors: 0,
    slow: requests,
  })
  /** How many of the slow requests the pauses held, as explainWindow counts them. */
  const heldByPauses = (requests: SlowRequests, pauses: Span[]) =>
    Math.round(
      explainWindow(
        windowOf(requests),
        pauses.map((p) => ({ ...p, kind: 'minor' as const, youngBytes: 1 })),
      ).heldShare * requests.sentAtEpochMs.length,
    )

  it('counts a slow request as held when it was in flight during a pause, and only then', () => {
    // One pause over [100, 102).
    const pauses = [pause(100, 2)]
    // In flight across it; written during it; answered during it; just before it; just after it.
    expect(heldByPauses(slow([[99, 5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[101, 1.5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[98, 2.5]]), pauses)).toBe(1)
    expect(heldByPauses(slow([[97, 3]]), pauses)).toBe(0)
    expect(heldByPauses(slow([[102, 4]]), pauses)).toBe(0)
    // Several requests and pauses in any order: each request counted once.
    expect(
      heldByPauses(
        slow([
          [99, 5],
          [150, 2],
          [300, 9],
          [500, 1.2],
        ]),
        [pause(305, 1), pause(100, 2), pause(301, 1)],
      ),
    ).toBe(2)
  })

  it('holds a whole episode when a pause held one of its requests: the queue a pause leaves drains behind it', () => {
    const pauses = [pause(100, 2)]
    // Written during the pause, then just after it, less than 1 ms apart: one episode, all held. The last one
    // comes 1.3 ms after the one before: an episode of its own, which no pause touched.
    expect(
      heldByPauses(
        slow([
          [101.5, 1.5],
          [101.9, 1.4],
          [102.3, 1.2],
          [102.7, 1.1],
          [104.0, 1.1],
        ]),
        pauses,
      ),
    ).toBe(4)
    // The same episode in another order (the client lists them as answered): the same count.
    expect(
      heldByPauses(
        slow([
          [102.7, 1.1],
          [104.0, 1.1],
          [101.5, 1.5],
          [102.3, 1.2],
          [101.9, 1.4],
        ]),
        pauses,
      ),
    ).toBe(4)
    // Without the pause, none.
    expect(heldByPauses(slow([[101.5, 1.5]]), [])).toBe(0)
    // Held through a later request: the first was answered before the pause began, the second was in flight in it.
    expect(
      heldByPauses(
        slow([
          [98.0, 1.1],
          [98.8, 1.5],
        ]),
        pauses,
      ),
    ).toBe(2)
    // Exactly EPISODE_GAP_MS (1 ms) apart is another episode: the later one, alone, is not held.
    expect(
      heldByPauses(
        slow([
          [101.5, 1.2],
          [102.5, 1.1],
        ]),
        pauses,
      ),
    ).toBe(1)
  })

  it("explains a window: slow requests per second and the share its server's pauses held, its pauses, its new space", () => {
    const window = (requests: [number, number][]): LoadResult => ({
      rps: 10_000,
      p50: 0.05,
      p99: 1,
      max: 5,
      total: 20_000,
      non2xx: 0,
      errors: 0,
      slow: { ...slow(requests), fromEpochMs: 1_000, toEpochMs: 3_000 },
    })
    const log: GcPause[] = [
      // Began before the window and held its first requests: it counts for them, not among the window's pauses.
      { beganEpochMs: 990, durationMs: 15, kind: 'major', youngBytes: 64 * 2 ** 20 },
      { beganEpochMs: 1_500, durationMs: 1, kind: 'minor', youngBytes: 16 * 2 ** 20 },
      { beganEpochMs: 2_500, durationMs: 3, kind: 'minor', youngBytes: 32 * 2 ** 20 },
      // After the window: neither.
      { beganEpochMs: 3_000, durationMs: 9, kind: 'minor', youngBytes: 8 * 2 ** 20 },
    ]
    const explained = explainWindow(
      window([
        [1_001, 5],
        [1_700, 2],
        [2_501, 2],
      ]),
      log,
    )
    expect(explained.slowPerSecond).toBe(1.5)
    expect(explained.heldShare).toBeCloseTo(2 / 3, 9)
    expect(explained.pausesPerSecond).toBe(1)
    expect(explained.longestPauseMs).toBe(3)
    expect(explained.pauseMsPerSecond).toBe(2)
    expect(explained.youngMb).toBe(24)
    const quiet = explainWindow(window([]), [])
    expect(quiet).toMatchObject({ slowPerSecond: 0, heldShare: 0, pausesPerSecond: 0, longestPauseMs: 0 })
    expect(quiet.youngMb).toBeNaN()
    expect(() => explainWindow({ ...window([]), slow: undefined }, log)).toThrow(/no slow requests/)
  })

  it('puts slow requests into episodes by when they were written, and tells what held each: GC, a timer, the host', () => {
    // A run of LONG_EPISODE requests 0.1 ms apart from 5,000 ms (no pause or callback near it), one of three held by a
    // collection at 2,000 ms, one of two held by a timer callback at 3,000 ms, and a lone slow request at 4,000 ms.
    const long = Array.from({ length: LONG_EPISODE }, (_, i) => [5_000 + i * 0.1, 4] as [number, number])
    const requests: [number, number][] = [
      [4_000, 1.5],
      ...long,
      [2_000.5, 2],
      [2_001, 1.6],
      [2_001.5, 1.2],
      [3_000.2, 1.3],
      [3_000.9, 1.1],
    ]
    const given = slow(requests)
    expect(episodesOf(given).map((episode) => episode.length)).toStrictEqual([3, 2, 1, LONG_EPISODE])
    // Each episode lists its requests in the order written, whatever order the client reported them in.
    expect(episodesOf(given)[0]!.map((i) => requests[i]![0])).toStrictEqual([2_000.5, 2_001, 2_001.5])
    const window: LoadResult = {
      rps: 10_000,
      p50: 0.05,
      p99: 1,
      max: 5,
      total: 10_000,
      non2xx: 0,
      errors: 0,
      slow: { ...given, fromEpochMs: 1_000, toEpochMs: 11_000 },
    }
    const count = requests.length
    const timers = [{ beganEpochMs: 3_000, durationMs: 0.5 }]
    const explained = explainWindow(window, [pause(2_000, 1)], timers)
    expect(explained.heldShare).toBeCloseTo(3 / count, 9)
    expect(explained.timerShare).toBeCloseTo(2 / count, 9)
    expect(explained.longUnheldShare).toBeCloseTo(LONG_EPISODE / count, 9)
    // An episode a collection and a timer both held is the collection's; one request short of long is not long.
    const both = explainWindow(window, [pause(2_000, 1), pause(3_000.1, 0.2)], timers)
    expect(both.heldShare).toBeCloseTo(5 / count, 9)
    expect(both.timerShare).toBe(0)
    const shorter = slow(long.slice(1))
    expect(
      explainWindow({ ...window, slow: { ...shorter, fromEpochMs: 1_000, toEpochMs: 11_000 } }, []).longUnheldShare,
    ).toBe(0)
    // Without timer callbacks given, none holds anything.
    expect(explainWindow(window, [pause(2_000, 1)]).timerShare).toBe(0)
    // A long episode a collection held is the collection's, one a timer held the timer's: counted once, never as long.
    for (const [pauses, spans] of [
      [[pause(5_000.5, 1)], []],
      [[], [{ beganEpochMs: 5_000.5, durationMs: 1 }]],
    ] as [GcPause[], Span[]][]) {
      const heldLong = explainWindow(window, pauses, spans)
      expect(heldLong.longUnheldShare).toBe(0)
      expect(heldLong.heldShare + heldLong.timerShare).toBeCloseTo(LONG_EPISODE / count, 9)
    }
    // The shares are of disjoint episodes: never more than all of them.
    const all = explainWindow(window, [pause(2_000, 1)], timers)
    expect(all.heldShare + all.timerShare + all.longUnheldShare).toBeLessThanOrEqual(1)
  })

  it('reads a log line by line and picks the pauses that began in a window', () => {
    const file = join(scratch(), 'gc.log')
    writeFileSync(file, '1000.500 0.250 minor 16777216\n1100.000 12.000 major 16777216\n1200.125 0.300 minor 8388608\n')
    const pauses = readGcPauses(file)
    expect(pauses).toStrictEqual([
      { beganEpochMs: 1000.5, durationMs: 0.25, kind: 'minor', youngBytes: 16_777_216 },
      { beganEpochMs: 1100, durationMs: 12, kind: 'major', youngBytes: 16_777_216 },
      { beganEpochMs: 1200.125, durationMs: 0.3, kind: 'minor', youngBytes: 8_388_608 },
    ])
    expect(pausesBetween(pauses, 1000.5, 1200.125).map((p) => p.kind)).toStrictEqual(['minor', 'major'])
    expect(readGcPauses(join(scratch(), 'none.log'))).toStrictEqual([])
  })

  it('logs the collections of a process it is imported into: kind, when, how long, the new space then', () => {
    const file = join(scratch(), 'gc.log')
    const logger = fileURLToPath(new URL('../../dist/bench/servers/gc-pause-log.js', import.meta.url))
    const before = Date.now()
    // A full collection of a heap holding 300,000 objects, timed by the process itself; another, and one of the young
    // generation. The observer is called after them, in a later turn: the process lingers a moment, then says its
    // new space's size and how long the timed collection took it.
    const script = `
      const keep = Array.from({ length: 300_000 }, (_, i) => ({ i }))
      const started = performance.now()
      gc()
      const majorMs = performance.now() - started
      gc({ type: 'minor' })
      gc()
      setTimeout(() => {
        const young = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size
        console.log(JSON.stringify({ young, majorMs, kept: keep.length }))
      }, 100)`
    const run = spawnSync(process.execPath, ['--expose-gc', `--import=${logger}`, '-e', script], {
      env: { ...process.env, BENCH_GC_LOG: file },
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).toBe(0)
    const said = JSON.parse(run.stdout) as { young: number; majorMs: number }
    const pauses = readGcPauses(file)
    const majors = pauses.filter((p) => p.kind === 'major')
    expect(majors.length).toBeGreaterThanOrEqual(2)
    expect(pauses.filter((p) => p.kind === 'minor').length).toBeGreaterThanOrEqual(1)
    // In milliseconds: marking 300,000 objects takes more than 50 µs, and no longer than the process saw it take.
    expect(majors[0]!.durationMs).toBeGreaterThan(0.05)
    expect(majors[0]!.durationMs).toBeLessThanOrEqual(said.majorMs + 0.5)
    for (const p of pauses) {
      expect(p.beganEpochMs).toBeGreaterThanOrEqual(before - 1)
      expect(p.beganEpochMs).toBeLessThanOrEqual(Date.now())
    }
    // The new space's size, as the process itself reads it afterwards.
    expect(pauses.at(-1)!.youngBytes).toBe(said.young)
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true)
  })

  it('logs the timer callbacks of a process it is imported into that held its thread, and leaves timers working', () => {
    const file = join(scratch(), 'timers.log')
    const logger = fileURLToPath(new URL('../../dist/bench/servers/timer-callback-log.js', import.meta.url))
    const before = Date.now()
    // A timeout that holds the thread 5 ms, one that holds it 3 ms and throws, an interval that holds it 2 ms twice;
    // quick ones (not logged), one cleared before it ran, an unref'd one that never runs. Timers keep their
    // semantics: `this` is the Timeout, extra arguments arrive, the error still reaches the process, a callback that
    // is not a function is refused as before, util.promisify's form of setTimeout resolves, the name is kept.
    const script = `
      const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end); }
      const { promisify } = require('node:util')
      process.on('uncaughtException', (err) => console.log('uncaught ' + err.message))
      setTimeout(() => spin(5), 1)
      const timeout = setTimeout(function (a, b) { console.log('this ' + (this === timeout) + ' ' + a + b) }, 2, 'x', 'y')
      setTimeout(() => { spin(3); throw new Error('boom') }, 10)
      let ticks = 0
      const interval = setInterval(() => { spin(2); if (++ticks === 2) clearInterval(interval) }, 20)
      setTimeout(() => {}, 1)
      clearTimeout(setTimeout(() => spin(50), 5))
      setTimeout(() => spin(50), 60_000).unref()
      try { setTimeout('not a function') } catch (err) { console.log('refused ' + err.code) }
      console.log('named ' + setTimeout.name + ' ' + setInterval.name)
      promisify(setTimeout)(80, 'resolved').then((value) => console.log(value))`
    const run = spawnSync(process.execPath, [`--import=${logger}`, '-e', script], {
      env: { ...process.env, BENCH_TIMER_LOG: file },
      encoding: 'utf8',
      timeout: 10_000,
    })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout.trim().split('\n').sort()).toStrictEqual(
      [
        'named setTimeout setInterval',
        'refused ERR_INVALID_ARG_TYPE',
        'resolved',
        'this true xy',
        'uncaught boom',
      ].sort(),
    )
    const callbacks = readTimerCallbacks(file)
    // The spun ones, at least as long as each spun, in the order they ran (the throwing one too); neither 50 ms one
    // ran. A quick callback may be logged on a loaded machine (a first call compiled, the thread preempted), but
    // never one under the 30 µs floor.
    const durations = callbacks.map((c) => c.durationMs)
    const spun = durations.filter((ms) => ms >= 1)
    expect(spun).toHaveLength(4)
    expect(spun[0]).toBeGreaterThanOrEqual(5)
    expect(spun[1]).toBeGreaterThanOrEqual(3)
    expect(spun[2]).toBeGreaterThanOrEqual(2)
    expect(spun[3]).toBeGreaterThanOrEqual(2)
    for (const ms of durations) {
      expect(ms).toBeGreaterThan(0.03)
      expect(ms).toBeLessThan(40)
    }
    for (const c of callbacks) {
      expect(c.beganEpochMs).toBeGreaterThanOrEqual(before - 1)
      expect(c.beganEpochMs).toBeLessThanOrEqual(Date.now())
    }
    expect(readTimerCallbacks(join(scratch(), 'none.log'))).toStrictEqual([])
  })

  it.each([
    ['gc-pause-log', 'BENCH_GC_LOG'],
    ['timer-callback-log', 'BENCH_TIMER_LOG'],
  ])('%s refuses to start without a file to write to (%s)', (name, variable) => {
    const logger = fileURLToPath(new URL(`../../dist/bench/servers/${name}.js`, import.meta.url))
    const env = { ...process.env }
    delete env[variable]
    const run = spawnSync(process.execPath, [`--import=${logger}`, '-e', '0'], { env, encoding: 'utf8' })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(variable)
  })
})
