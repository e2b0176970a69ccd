import { pino } from 'pino'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { rowsOfBatch, type EncodedBatch } from '../../shared/analytics/analytics-batch.js'
import { AnalyticsRecorder } from '../../shared/analytics/analytics-recorder.js'
import { AnalyticsShipper, type ShipperSettings } from '../../shared/analytics/analytics-shipper.js'
import { MemoryAnalyticsBufferStore } from '../../shared/store/analytics-buffer/memory-analytics-buffer-store.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'

const T = Date.UTC(2031, 0, 1, 10, 15)
const BIG = 1_000_000

/**
 * A shipper on a memory buffer that refuses every call while `failing` says so, and appends only while `bufferDown`
 * does (the buffer's node down, the reports' up).
 */
function shipperOf(settings: Partial<ShipperSettings>, maxRows = 1_000) {
  const buffer = new MemoryAnalyticsBufferStore()
  const recorder = new AnalyticsRecorder('eu', maxRows)
  const registry = new Registry()
  const state: { failing: boolean; bufferDown?: boolean; appends: number; until?: Promise<void> } = {
    failing: false,
    appends: 0,
  }
  const store = {
    append: async (shard: number, batch: string, rows: number, maxBytes: number) => {
      state.appends++
      await state.until
      if (state.failing || state.bufferDown === true) throw new Error('store unreachable')
      return buffer.append(shard, batch, rows, maxBytes)
    },
    reportThrough: async (process: string, through: number, at: number) => {
      if (state.failing) throw new Error('store unreachable')
      return buffer.reportThrough(process, through, at)
    },
    forgetProcesses: (processes: readonly string[]) => buffer.forgetProcesses(processes),
  }
  const clock = { now: T + 1_000 }
  const shipper = new AnalyticsShipper(
    store,
    recorder,
    pino({ level: 'silent' }),
    registry,
    { shard: 0, flushMs: 3_600_000, maxBufferBytes: BIG, maxHeldRows: 1_000, ...settings },
    () => clock.now,
  )
  /** Records `n` verifications, their times numbered from `from`. */
  const record = (from: number, n: number) => {
    for (let i = from; i < from + n; i++)
      recorder.record({ id: 'key_a', apiId: 'api_1' }, undefined, 'VALID', 'v1.verifyKey', T + i, 0, undefined, 1)
  }
  /** Each batch the buffer holds, as the times (numbered) of its rows. */
  const held = async () =>
    (await buffer.look(0, 100)).batches.map(({ batch, id }) =>
      rowsOfBatch(JSON.parse(batch) as EncodedBatch, id, 'ws').verifications.map((row) => row.time - T),
    )
  const dropped = async (reason: string) =>
    (await registry.getSingleMetric('keygate_analytics_rows_dropped_total')!.get()).values.find(
      (value) => value.labels.reason === reason,
    )!.value
  return { shipper, recorder, state, record, held, dropped, buffer, clock }
}

describe('AnalyticsShipper', () => {
  it('holds batches while the store fails, drops the oldest beyond its bound, and hands the rest over in order', async () => {
    const { shipper, state, record, held, dropped } = shipperOf({ maxHeldRows: 5 })
    state.failing = true
    record(0, 2)
    await shipper.flush()
    record(2, 2)
    await shipper.flush()
    // 6 rows held > 5: the oldest batch goes, counted.
    record(4, 2)
    await shipper.flush()
    expect(await dropped('held')).toBe(2)
    expect(await held()).toEqual([])
    state.failing = false
    record(6, 1)
    await shipper.flush()
    expect(await held()).toEqual([[2, 3], [4, 5], [6]])
    expect(await dropped('held')).toBe(2)
    // All handed over: nothing is sent again.
    const appends = state.appends
    await shipper.flush()
    expect(state.appends).toBe(appends)
  })

  it('keeps the newest batch even when it alone is over the bound', async () => {
    const { shipper, state, record, held, dropped } = shipperOf({ maxHeldRows: 2 })
    state.failing = true
    record(0, 3)
    await shipper.flush()
    expect(await dropped('held')).toBe(0)
    state.failing = false
    await shipper.flush()
    expect(await held()).toEqual([[0, 1, 2]])
  })

  it('counts the rows the recorder dropped and those the buffer trimmed', async () => {
    // Room for two batches of three rows, not three: the bound from what such a batch takes.
    const sized = new AnalyticsRecorder('eu', 3)
    for (let i = 0; i < 3; i++)
      sized.record({ id: 'key_a', apiId: 'api_1' }, undefined, 'VALID', 'v1.verifyKey', T + 9, 0, undefined, 1)
    const threeRows = JSON.stringify(sized.take()!.batch).length
    const { shipper, record, dropped, held } = shipperOf({ maxBufferBytes: Math.floor(threeRows * 2.5) }, 3)
    record(0, 5)
    await shipper.flush()
    expect(await dropped('memory')).toBe(2)
    expect(await held()).toEqual([[0, 1, 2]])
    // Counted once: the next flush reports only new drops.
    await shipper.flush()
    expect(await dropped('memory')).toBe(2)
    // Two more batches of 3 rows: the buffer cannot hold three, so the oldest goes.
    record(3, 3)
    await shipper.flush()
    record(6, 3)
    await shipper.flush()
    expect(await held()).toEqual([
      [3, 4, 5],
      [6, 7, 8],
    ])
    expect(await dropped('buffer')).toBe(3)
  })

  it('reports how far it has handed its rows over after each flush that left nothing held, idle or not', async () => {
    const { shipper, state, record, buffer, clock } = shipperOf({})
    const reported = async () => (await buffer.readReports()).get(shipper.process)?.through
    expect(await reported()).toBeUndefined()
    record(0, 2)
    await shipper.flush()
    expect(await reported()).toBe(T + 1_000)
    // Nothing recorded: still reported, so that the watermark moves on.
    clock.now = T + 3_000
    await shipper.flush()
    expect(await reported()).toBe(T + 3_000)
    // The store unreachable: the rows are held, and nothing is reported past them.
    state.failing = true
    clock.now = T + 5_000
    record(4, 1)
    await shipper.flush()
    state.failing = false
    expect(await reported()).toBe(T + 3_000)
    clock.now = T + 7_000
    await shipper.flush()
    expect(await reported()).toBe(T + 7_000)
    // Only the buffer unreachable: what is reported is reachable, but nothing past the rows held is.
    state.bufferDown = true
    clock.now = T + 9_000
    record(5, 1)
    await shipper.flush()
    expect(await reported()).toBe(T + 7_000)
    state.bufferDown = false
    clock.now = T + 11_000
    await shipper.flush()
    expect(await reported()).toBe(T + 11_000)
    // Stopped with nothing held: forgotten.
    await shipper.stop()
    expect(await reported()).toBeUndefined()
  })

  it('reports as it starts: rows it cannot hand over from its first flush on hold the watermark back', async () => {
    const { shipper, state, record, buffer, clock } = shipperOf({})
    const reported = async () => (await buffer.readReports()).get(shipper.process)?.through
    shipper.start()
    await waitFor(async () => (await reported()) === T + 1_000 || undefined, 'the report of its start')
    state.failing = true
    clock.now = T + 5_000
    record(4, 1)
    await shipper.flush()
    expect(await reported()).toBe(T + 1_000)
    state.failing = false
    await shipper.stop()
  })

  it('is not forgotten when it stops with rows it could not hand over', async () => {
    const { shipper, state, record, buffer } = shipperOf({})
    await shipper.flush()
    state.failing = true
    record(0, 1)
    await shipper.stop()
    expect((await buffer.readReports()).has(shipper.process)).toBe(true)
  })

  it('hands over what is recorded when it stops, and then runs no more', async () => {
    const { shipper, state, record, held } = shipperOf({ flushMs: 1 })
    let answer = () => {}
    state.until = new Promise((resolve) => (answer = resolve))
    record(0, 1)
    shipper.start()
    // Stopped while its timer's flush waits on the store: that flush ends, then the last one runs.
    await waitFor(() => state.appends === 1, "the timer's flush")
    const stopped = shipper.stop()
    record(1, 1)
    answer()
    await stopped
    expect(await held()).toEqual([[0], [1]])
    const appends = state.appends
    record(2, 1)
    // Its timer (every 1 ms) would have handed this row over.
    await nothingHappensFor(20)
    expect(state.appends).toBe(appends)
  })
})
