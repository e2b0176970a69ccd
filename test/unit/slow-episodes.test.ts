import { describe, expect, it } from 'vitest'
import type { GcPause } from '../../bench/lib/gc-pauses.js'
import type { LoadResult, SlowRequests } from '../../bench/lib/load.js'
import { episodesOf, explainWindow, LONG_EPISODE } from '../../bench/lib/slow-episodes.js'
import type { Span } from '../../bench/lib/span.js'

/** bench:tail's account of a paced window: its slow requests in episodes, and what of the server's held each. */
describe('slow episodes (bench:tail)', () => {
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
  const heldByPauses = (requests: SlowRequests, pauses: GcPause[]) =>
    Math.round(explainWindow(windowOf(requests), pauses, []).gcShare * requests.sentAtEpochMs.length)

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
      [],
    )
    expect(explained.slowPerSecond).toBe(1.5)
    expect(explained.gcShare).toBeCloseTo(2 / 3, 9)
    expect(explained.pausesPerSecond).toBe(1)
    expect(explained.longestPauseMs).toBe(3)
    expect(explained.pauseMsPerSecond).toBe(2)
    expect(explained.youngMb).toBe(24)
    const quiet = explainWindow(window([]), [], [])
    expect(quiet).toMatchObject({ slowPerSecond: 0, gcShare: 0, pausesPerSecond: 0, longestPauseMs: 0 })
    expect(quiet.youngMb).toBeNaN()
    expect(() => explainWindow({ ...window([]), slow: undefined }, log, [])).toThrow(/no slow requests/)
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
    expect(explained.gcShare).toBeCloseTo(3 / count, 9)
    expect(explained.timerShare).toBeCloseTo(2 / count, 9)
    expect(explained.longUnheldShare).toBeCloseTo(LONG_EPISODE / count, 9)
    // An episode a collection and a timer both held is the collection's; one request short of long is not long.
    const both = explainWindow(window, [pause(2_000, 1), pause(3_000.1, 0.2)], timers)
    expect(both.gcShare).toBeCloseTo(5 / count, 9)
    expect(both.timerShare).toBe(0)
    const shorter = slow(long.slice(1))
    expect(
      explainWindow({ ...window, slow: { ...shorter, fromEpochMs: 1_000, toEpochMs: 11_000 } }, [], []).longUnheldShare,
    ).toBe(0)
    // Without timer callbacks given, none holds anything.
    expect(explainWindow(window, [pause(2_000, 1)], []).timerShare).toBe(0)
    // A long episode a collection held is the collection's, one a timer held the timer's: counted once, never as long.
    for (const [pauses, spans] of [
      [[pause(5_000.5, 1)], []],
      [[], [{ beganEpochMs: 5_000.5, durationMs: 1 }]],
    ] as [GcPause[], Span[]][]) {
      const heldLong = explainWindow(window, pauses, spans)
      expect(heldLong.longUnheldShare).toBe(0)
      expect(heldLong.gcShare + heldLong.timerShare).toBeCloseTo(LONG_EPISODE / count, 9)
    }
    // The shares are of disjoint episodes: never more than all of them.
    const all = explainWindow(window, [pause(2_000, 1)], timers)
    expect(all.gcShare + all.timerShare + all.longUnheldShare).toBeLessThanOrEqual(1)
  })
})
