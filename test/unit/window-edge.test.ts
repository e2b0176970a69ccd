import { afterEach, describe, expect, it, vi } from 'vitest'
import { windowStart } from '../../shared/ratelimits/ratelimit.js'
import { clearOfWindowEdge } from '../support/window-edge.js'

describe('clearOfWindowEdge (e2e tests counting on one rate-limit window)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Where the wait ends, with the clock set to `at`: the time it resolves. */
  async function resolvedAt(at: number, marginMs?: number): Promise<number> {
    vi.useFakeTimers({ now: at, toFake: ['Date', 'setTimeout'] })
    let done = -1
    void clearOfWindowEdge(60_000, marginMs).then(() => (done = Date.now()))
    await vi.advanceTimersByTimeAsync(20_000)
    return done
  }

  it('returns at once with the margin left in the window, else waits into the next window', async () => {
    const window = 1_700_000_040_000 // a multiple of 60 s: a window starts here
    expect(windowStart(60_000, window)).toBe(window)
    expect(await resolvedAt(window)).toBe(window)
    expect(await resolvedAt(window + 56_999)).toBe(window + 56_999)
    // 3 s or less left: the wait ends just past the boundary, in the next window with all of it left.
    for (const at of [window + 57_001, window + 59_999]) {
      const done = await resolvedAt(at)
      expect(windowStart(60_000, done)).toBe(window + 60_000)
      expect(done - (window + 60_000)).toBeLessThan(1_000)
    }
    expect(await resolvedAt(window + 50_000, 15_000)).toBeGreaterThanOrEqual(window + 60_000)
  })
})
