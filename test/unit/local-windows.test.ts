import { pino } from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { windowStart } from '../../shared/ratelimits/ratelimit.js'
import { LocalWindows, type LocalWindow } from '../../verifier/local-windows.js'
import { ManualClock } from '../support/apps.js'

const log = pino({ level: 'silent' })
const DURATION = 60_000

/** One window counter in a pretend store; `hold()` keeps the next calls waiting until its release is called. */
function counterStore() {
  const state = { total: 0, failNext: false }
  let gate: Promise<void> = Promise.resolve()
  const addUsage = async (_window: LocalWindow, delta: number) => {
    await gate
    if (state.failNext) {
      state.failNext = false
      throw new Error('store unavailable')
    }
    state.total += delta
    return state.total
  }
  const hold = () => {
    let release!: () => void
    gate = new Promise((resolve) => (release = resolve))
    return () => {
      gate = Promise.resolve()
      release()
    }
  }
  return { state, addUsage, hold }
}

function windowsOn(clock: ManualClock) {
  const store = counterStore()
  const windows = new LocalWindows(store.addUsage, log, 1_000, clock)
  const opened = () =>
    windows.add('w', { duration: DURATION, window: windowStart(DURATION, clock.now()), global: 0, pending: 0 })
  return { store, windows, opened }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('local windows, reconciled with the store', () => {
  it('learns the total of a window new to this process at once, without waiting for a reconcile', async () => {
    const { store, opened } = windowsOn(new ManualClock())
    store.state.total = 7
    const window = opened()
    await new Promise((resolve) => setImmediate(resolve))
    expect(window).toMatchObject({ global: 7, pending: 0 })
  })

  it('keeps usage counted while a reconcile is in flight pending for the next one', async () => {
    const { store, windows, opened } = windowsOn(new ManualClock())
    const window = opened()
    await windows.reconcile()
    window.pending += 3
    const release = store.hold()
    const inFlight = windows.reconcile()
    window.pending += 2
    release()
    await inFlight
    expect(window).toMatchObject({ global: 3, pending: 2 })
    await windows.reconcile()
    expect(window).toMatchObject({ global: 5, pending: 0 })
    expect(store.state.total).toBe(5)
  })

  it('keeps the usage pending when the store fails, and hands it over at the next reconcile', async () => {
    const { store, windows, opened } = windowsOn(new ManualClock())
    const window = opened()
    await windows.reconcile()
    window.pending += 3
    store.state.failNext = true
    await expect(windows.reconcile()).rejects.toThrow('store unavailable')
    expect(window.pending).toBe(3)
    await windows.reconcile()
    expect(store.state.total).toBe(3)
  })

  it('forgets a window once it has ended by its clock, without pushing what it counted', async () => {
    const clock = new ManualClock()
    const { store, windows, opened } = windowsOn(clock)
    const window = opened()
    await windows.reconcile()
    window.pending += 3
    clock.advance(DURATION)
    await windows.reconcile()
    expect(windows.get('w')).toBeUndefined()
    expect(store.state.total).toBe(0)
  })

  it('reconciles no more once stopped, even when stopped while a reconcile is in flight', async () => {
    vi.useFakeTimers()
    const { store, windows, opened } = windowsOn(new ManualClock())
    opened()
    await vi.advanceTimersByTimeAsync(0)
    windows.start()
    const release = store.hold()
    await vi.advanceTimersByTimeAsync(1_000)
    windows.stop()
    release()
    await vi.advanceTimersByTimeAsync(0)
    expect(vi.getTimerCount()).toBe(0)
  })
})
