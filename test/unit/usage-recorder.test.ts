import { describe, expect, it } from 'vitest'
import { pino } from 'pino'
import type { UsageIncrement } from '../../shared/analytics.js'
import type { UsageStore } from '../../shared/store/usage/usage-store.js'
import { UsageRecorder, type UsageCellHolder } from '../../verifier/usage-recorder.js'
import { nothingHappensFor } from '../support/nothing-happens.js'

describe('UsageRecorder', () => {
  it('batches counts per key and hour, and never sends a failed batch twice', async () => {
    const sent: UsageIncrement[][] = []
    let failing = true
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        sent.push([...batch])
        if (failing) throw new Error('partly written')
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    recorder.record('key_a', 'VALID', t)
    recorder.record('key_a', 'VALID', t + 60_000)
    recorder.record('key_a', 'RATE_LIMITED', t)
    recorder.record('key_b', 'DISABLED', t) // not an analytics outcome
    recorder.record(undefined, 'NOT_FOUND', t)
    await recorder.flush()
    expect(sent).toHaveLength(1)
    expect(sent[0]).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 2, rateLimited: 1 } },
      { keyId: 'key_a', granularity: 'day', time: Date.UTC(2031, 0, 1), counts: { success: 2, rateLimited: 1 } },
    ])
    failing = false
    await recorder.flush()
    // The failed call's counts are not sent again: the next flush has nothing to send.
    expect(sent.slice(1).flat()).toEqual([])
    recorder.record('key_a', 'USAGE_EXCEEDED', t)
    await recorder.flush()
    expect(sent.at(-1)![0]!.counts).toEqual({ usageExceeded: 1 })
  })

  it('counts through a kept cell into the batch and hour it belongs to, never into one already taken', async () => {
    const sent: UsageIncrement[][] = []
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => void sent.push([...batch]),
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const hours = (batch: UsageIncrement[] | undefined) =>
      (batch ?? []).filter((increment) => increment.granularity === 'hour')
    const t = Date.UTC(2031, 0, 1, 10, 15)
    const holder: UsageCellHolder = {}
    recorder.record('key_a', 'VALID', t, holder)
    const cell = holder.usage
    expect(cell).toBeDefined()
    recorder.record('key_a', 'VALID', t + 1, holder)
    recorder.record('key_a', 'RATE_LIMITED', t + 2, holder)
    expect(holder.usage).toBe(cell)
    // The same key counted without the holder lands on the same counts.
    recorder.record('key_a', 'VALID', t + 3)
    await recorder.flush()
    expect(hours(sent[0])).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 3, rateLimited: 1 } },
    ])
    // A flush took the cell's counts and zeroed it: it goes on counting, into the next batch.
    recorder.record('key_a', 'VALID', t + 4, holder)
    expect(holder.usage).toBe(cell)
    await recorder.flush()
    expect(hours(sent[1])).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 1 } },
    ])
    // An hour later, within one batch: the count goes to the new hour, not to the cell of the last one.
    recorder.record('key_a', 'VALID', t + 5, holder)
    recorder.record('key_a', 'VALID', t + 3_600_000, holder)
    recorder.record('key_a', 'VALID', t + 3_600_001, holder)
    await recorder.flush()
    expect(hours(sent[2])).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 1 } },
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 11), counts: { success: 2 } },
    ])
  })

  it('ends the batch of a flush in flight or failed: a kept cell never counts into the batch it took', async () => {
    const sent: UsageIncrement[][] = []
    let answer = () => {}
    let failing = true
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        // Every count taken when the call comes, as a store sending one call would.
        sent.push([...batch])
        await new Promise<void>((resolve) => (answer = resolve))
        if (failing) throw new Error('partly written')
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    const hour = (batch: UsageIncrement[] | undefined) =>
      (batch ?? [])
        .filter((increment) => increment.granularity === 'hour')
        .map(({ keyId, counts }) => ({ keyId, counts }))
    const holder: UsageCellHolder = {}
    recorder.record('key_a', 'VALID', t, holder)
    const flushing = recorder.flush()
    // Counted while the store has not answered yet: the next batch.
    recorder.record('key_a', 'VALID', t + 1, holder)
    answer()
    await flushing
    // That batch failed and is dropped (by design); a count after it goes to the next batch too.
    recorder.record('key_a', 'RATE_LIMITED', t + 2, holder)
    failing = false
    const next = recorder.flush()
    answer()
    await next
    expect(sent.map(hour)).toEqual([
      [{ keyId: 'key_a', counts: { success: 1 } }],
      [{ keyId: 'key_a', counts: { success: 1, rateLimited: 1 } }],
    ])
  })

  it('counts through a kept cell into the hour of each verification when the clock goes back and forth', async () => {
    const sent: UsageIncrement[][] = []
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => void sent.push([...batch]),
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 11, 10)
    const holder: UsageCellHolder = {}
    recorder.record('key_a', 'VALID', t, holder)
    recorder.record('key_a', 'VALID', t - 20 * 60_000, holder) // 10:50: the clock went back over the hour
    recorder.record('key_a', 'RATE_LIMITED', t - 20 * 60_000 + 1, holder)
    recorder.record('key_a', 'VALID', t + 60_000, holder) // 11:11 again
    await recorder.flush()
    const hours = sent[0]!.filter((increment) => increment.granularity === 'hour').sort((x, y) => x.time - y.time)
    expect(hours.map(({ time, counts }) => ({ time, counts }))).toEqual([
      { time: Date.UTC(2031, 0, 1, 10), counts: { success: 1, rateLimited: 1 } },
      { time: Date.UTC(2031, 0, 1, 11), counts: { success: 2 } },
    ])
  })

  it("keeps a busy key's cell across flushes and drops a key left idle through one", async () => {
    const sent: UsageIncrement[][] = []
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => void sent.push([...batch]),
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    const busy: UsageCellHolder = {}
    const idle: UsageCellHolder = {}
    recorder.record('key_busy', 'VALID', t, busy)
    recorder.record('key_idle', 'VALID', t, idle)
    const [busyCell, idleCell] = [busy.usage, idle.usage]
    await recorder.flush()
    recorder.record('key_busy', 'VALID', t + 1, busy)
    await recorder.flush()
    expect(sent.map((batch) => batch.length)).toEqual([4, 2])
    expect(busy.usage).toBe(busyCell)
    expect(busyCell!.table).toBeDefined()
    // Idle through a flush: dropped from the table, and its kept cell with it — a count on that cell would be lost.
    expect(idleCell!.table).toBeUndefined()
    recorder.record('key_idle', 'RATE_LIMITED', t + 2, idle)
    expect(idle.usage).not.toBe(idleCell)
    // Counted without a holder, the busy key lands on its kept cell.
    recorder.record('key_busy', 'VALID', t + 3)
    expect(busyCell!.success).toBe(1)
    await recorder.flush()
    const hours = sent[2]!.filter((increment) => increment.granularity === 'hour')
    expect(hours.sort((x, y) => x.keyId.localeCompare(y.keyId))).toEqual([
      { keyId: 'key_busy', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { success: 1 } },
      { keyId: 'key_idle', granularity: 'hour', time: Date.UTC(2031, 0, 1, 10), counts: { rateLimited: 1 } },
    ])
    // Nothing counted since: the flush sends nothing (the store is handed no increments), and both keys, idle through
    // it, are dropped.
    await recorder.flush()
    expect(sent.slice(3).flat()).toEqual([])
    expect(busyCell!.table).toBeUndefined()
  })

  it("releases a past hour's table at the flush that takes it: its kept cells are dropped, the hour made anew", async () => {
    const sent: UsageIncrement[][] = []
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => void sent.push([...batch]),
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 55)
    const holder: UsageCellHolder = {}
    recorder.record('key_a', 'VALID', t, holder)
    const cell = holder.usage!
    recorder.record('key_a', 'VALID', t + 10 * 60_000) // 11:05: 10 o'clock's table is closed
    await recorder.flush()
    // The closed table is gone with its flush: its cell no longer holds it.
    expect(cell.table).toBeUndefined()
    // The clock back at 10 o'clock after that flush: a new table, not the one flushed.
    const again: UsageCellHolder = {}
    recorder.record('key_a', 'RATE_LIMITED', t + 1, again)
    expect(again.usage).not.toBe(cell)
    expect(again.usage!.table).toBeDefined()
    recorder.record('key_a', 'VALID', t + 2, holder)
    expect(holder.usage).toBe(again.usage)
    await recorder.flush()
    const hours = sent.map((batch) =>
      batch.filter((increment) => increment.granularity === 'hour').map(({ time, counts }) => ({ time, counts })),
    )
    expect(hours).toEqual([
      [
        { time: Date.UTC(2031, 0, 1, 10), counts: { success: 1 } },
        { time: Date.UTC(2031, 0, 1, 11), counts: { success: 1 } },
      ],
      [{ time: Date.UTC(2031, 0, 1, 10), counts: { success: 1, rateLimited: 1 } }],
    ])
  })

  it('keeps a busy key of a reopened hour across the flush after', async () => {
    const sent: UsageIncrement[][] = []
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => void sent.push([...batch]),
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 11, 5)
    const holder: UsageCellHolder = {}
    recorder.record('key_a', 'VALID', t, holder)
    const cell = holder.usage!
    recorder.record('key_b', 'VALID', t - 10 * 60_000) // 10:55: 11 o'clock's table closed
    recorder.record('key_a', 'VALID', t + 1, holder) // 11:05 again: reopened, the cell still the key's
    expect(holder.usage).toBe(cell)
    await recorder.flush()
    // Counted since the flush before: kept, still the current table's.
    expect(cell.table).toBeDefined()
    recorder.record('key_a', 'VALID', t + 2, holder)
    expect(holder.usage).toBe(cell)
    await recorder.flush()
    expect(sent[1]!.filter((increment) => increment.granularity === 'hour')).toEqual([
      { keyId: 'key_a', granularity: 'hour', time: Date.UTC(2031, 0, 1, 11), counts: { success: 1 } },
    ])
  })

  it('loses and double-counts nothing: every count lands once, in its hour, unless its call failed', async () => {
    let seed = 12345
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
      return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
    }
    const landed = new Map<string, number>()
    const failedCounts = new Map<string, number>()
    const add = (to: Map<string, number>, id: string, n: number) => to.set(id, (to.get(id) ?? 0) + n)
    const pending: (() => void)[] = []
    const store = {
      // As a store sends calls: a key's two increments to a call, read as the call is made, a round trip each; a call
      // may fail (its counts lost), and then nothing more is read (the recorder keeps the rest, past hours' included).
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        const failingCall = random() < 0.2 ? Math.floor(random() * 4) : -1
        let call: UsageIncrement[] = []
        let calls = 0
        const send = async () => {
          await new Promise<void>((resolve) => pending.push(resolve))
          const fail = calls++ === failingCall
          for (const { keyId, granularity, time, counts } of call) {
            for (const [outcome, n] of Object.entries(counts)) {
              add(fail ? failedCounts : landed, `${keyId} ${granularity} ${time} ${outcome}`, n)
            }
          }
          call = []
          if (fail) throw new Error('partly written')
        }
        for (const increment of batch) {
          call.push(increment)
          if (call.length === 2) await send()
        }
        if (call.length > 0) await send()
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const expected = new Map<string, number>()
    const base = Date.UTC(2031, 0, 1, 23, 59, 30) // within a minute of three hours' turns, a day's among them
    const keys = ['key_a', 'key_b', 'key_c', 'key_d']
    const holders = keys.map(() => [{}, {}] as UsageCellHolder[])
    const codes = ['VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED'] as const
    const outcome = { VALID: 'success', RATE_LIMITED: 'rateLimited', USAGE_EXCEEDED: 'usageExceeded' } as const
    let now = base
    const flushes: Promise<void>[] = []
    for (let step = 0; step < 20_000; step++) {
      const r = random()
      if (r < 0.01) now = base + Math.floor(random() * 3) * 3_600_000 - 60_000 + Math.floor(random() * 120_000)
      else if (r < 0.03) flushes.push(recorder.flush())
      else if (r < 0.06) {
        // A reply: the store goes on (to its next call) once the microtasks it queued have run.
        pending.shift()?.()
        await new Promise((resolve) => setImmediate(resolve))
      } else if (r < 0.065) await Promise.resolve()
      else {
        const k = Math.floor(random() * keys.length)
        const code = codes[Math.floor(random() * 3)]!
        const which = random()
        recorder.record(keys[k], code, now, which < 0.4 ? holders[k]![0] : which < 0.8 ? holders[k]![1] : undefined)
        const hour = Math.floor(now / 3_600_000) * 3_600_000
        add(expected, `${keys[k]} hour ${hour} ${outcome[code]}`, 1)
        add(expected, `${keys[k]} day ${Math.floor(now / 86_400_000) * 86_400_000} ${outcome[code]}`, 1)
      }
    }
    // A flush waits for every one before it: answer the store until it is done.
    const settle = async (flush: Promise<void>) => {
      let done = false
      void flush.then(() => (done = true))
      while (!done) {
        pending.shift()?.()
        await new Promise((resolve) => setTimeout(resolve, 0))
      }
    }
    await settle(recorder.flush())
    await Promise.all(flushes)
    const total = new Map(landed)
    for (const [id, n] of failedCounts) add(total, id, n)
    expect(Object.fromEntries([...total].sort())).toEqual(Object.fromEntries([...expected].sort()))
    expect(failedCounts.size).toBeGreaterThan(0)
    // Idle through one more flush, every key is dropped: no kept cell holds a table any longer.
    await settle(recorder.flush())
    expect(holders.flat().map((holder) => holder.usage?.table)).toEqual(holders.flat().map(() => undefined))
  })

  // Shutdown stops the recorder, flushes and then closes the store's connection: a periodic flush still sending
  // (a large batch goes out over several turns) must finish before the last flush starts and before that close.
  it('starts a flush only once the one still sending has finished', async () => {
    const events: string[] = []
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        const call = ++calls
        events.push(`start ${call} (${[...batch].length / 2} keys)`)
        if (call === 1) await held
        events.push(`end ${call}`)
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 60_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    recorder.record('key_a', 'VALID', t)
    const periodic = recorder.flush()
    recorder.record('key_b', 'VALID', t)
    recorder.stop()
    const last = recorder.flush()
    let lastDone = false
    void last.then(() => (lastDone = true))
    // What must not happen while the periodic flush is held: the last one starting, or finishing.
    await nothingHappensFor(20)
    expect(events).toEqual(['start 1 (1 keys)'])
    expect(lastDone).toBe(false)
    release()
    await Promise.all([periodic, last])
    expect(events).toEqual(['start 1 (1 keys)', 'end 1', 'start 2 (1 keys)', 'end 2'])
  })
  // A flush lasts as many Redis round trips as it has calls (40-314 ms for 1,000 keys on a busy verifier): taken all at
  // its start, its batch outlived scavenges and was promoted. Each key's counts are taken when the store pulls them.
  it("takes each key's counts only when the store pulls them: a count before that goes with this flush", async () => {
    const sent: UsageIncrement[] = []
    let pullRest = () => {}
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        const increments = batch[Symbol.iterator]()
        // The first key's hour and day, as a store sends its first call; the rest after a round trip.
        for (let i = 0; i < 2; i++) sent.push(increments.next().value as UsageIncrement)
        await new Promise<void>((resolve) => (pullRest = resolve))
        for (let next = increments.next(); !next.done; next = increments.next()) sent.push(next.value)
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    const [a, b] = [{}, {}] as UsageCellHolder[]
    recorder.record('key_a', 'VALID', t, a)
    recorder.record('key_b', 'VALID', t, b)
    const flushing = recorder.flush()
    await Promise.resolve()
    expect(sent.map(({ keyId }) => keyId)).toEqual(['key_a', 'key_a'])
    // Counted while the flush is sending: key_a's counts were taken (the next flush), key_b's not yet (this one).
    recorder.record('key_a', 'RATE_LIMITED', t + 1, a)
    recorder.record('key_b', 'RATE_LIMITED', t + 1, b)
    recorder.record('key_c', 'VALID', t + 1)
    pullRest()
    await flushing
    const hours = (from: number) =>
      sent
        .slice(from)
        .filter((increment) => increment.granularity === 'hour')
        .map(({ keyId, counts }) => ({ keyId, counts }))
    expect(hours(0)).toEqual([
      { keyId: 'key_a', counts: { success: 1 } },
      { keyId: 'key_b', counts: { success: 1, rateLimited: 1 } },
      { keyId: 'key_c', counts: { success: 1 } },
    ])
    const before = sent.length
    const next = recorder.flush()
    pullRest()
    await next
    expect(hours(before)).toEqual([{ keyId: 'key_a', counts: { rateLimited: 1 } }])
  })

  it('keeps the counts a failed store did not pull for the next flush, and drops those it pulled', async () => {
    const sent: UsageIncrement[][] = []
    let failAfter: number | undefined = 2
    const store = {
      addUsage: async (batch: Iterable<UsageIncrement>) => {
        const pulled: UsageIncrement[] = []
        for (const increment of batch) {
          pulled.push(increment)
          if (pulled.length === failAfter) {
            sent.push(pulled)
            throw new Error('Connection is closed.')
          }
        }
        sent.push(pulled)
      },
    } as unknown as UsageStore
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const t = Date.UTC(2031, 0, 1, 10, 15)
    for (const keyId of ['key_a', 'key_b', 'key_c']) recorder.record(keyId, 'VALID', t)
    await recorder.flush()
    failAfter = undefined
    await recorder.flush()
    const keys = sent.map((batch) => [...new Set(batch.map(({ keyId }) => keyId))])
    // key_a's counts went with the failed call (lost, as any count of a failed call); b's and c's with the next flush.
    expect(keys).toEqual([['key_a'], ['key_b', 'key_c']])
  })

  it("takes back a past hour's counts a failed store did not read, into that hour's table if it has one again", async () => {
    const sent: UsageIncrement[][] = []
    let fail = true
    let resume = () => {}
    const store = readingStore(sent, async () => {
      if (fail) {
        // The store's first call is under way when the clock comes back to 10 o'clock (below); then it fails.
        await new Promise<void>((resolve) => (resume = resolve))
        throw new Error('Connection is closed.')
      }
    })
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const ten = Date.UTC(2031, 0, 1, 10, 55)
    for (const keyId of ['key_a', 'key_b', 'key_c']) recorder.record(keyId, 'VALID', ten)
    recorder.record('key_d', 'VALID', ten + 10 * 60_000) // 11:05: 10 o'clock's table is a past one
    const failing = recorder.flush()
    await Promise.resolve()
    recorder.record('key_b', 'RATE_LIMITED', ten + 1) // 10:55 again: a table for that hour anew
    resume()
    await failing
    fail = false
    await recorder.flush()
    const hours = sent.map((batch) =>
      batch
        .filter((increment) => increment.granularity === 'hour')
        .map(({ keyId, time, counts }) => ({ keyId, hour: new Date(time).getUTCHours(), counts }))
        .sort((x, y) => x.hour - y.hour || x.keyId.localeCompare(y.keyId)),
    )
    // key_a went with the failed call (lost); b's and c's 10 o'clock counts were taken back (b's added to the count
    // made meanwhile), d's 11 o'clock ones were never read.
    expect(hours).toEqual([
      [{ keyId: 'key_a', hour: 10, counts: { success: 1 } }],
      [
        { keyId: 'key_b', hour: 10, counts: { success: 1, rateLimited: 1 } },
        { keyId: 'key_c', hour: 10, counts: { success: 1 } },
        { keyId: 'key_d', hour: 11, counts: { success: 1 } },
      ],
    ])
  })

  it("takes back a past hour's table as it was when that hour has no table again", async () => {
    const sent: UsageIncrement[][] = []
    let fail = true
    // Fails once it has read one increment: the first key's counts are taken, the rest not.
    const store = readingStore(sent, () => {
      if (fail) throw new Error('Connection is closed.')
    })
    const recorder = new UsageRecorder(store, pino({ level: 'silent' }), 1_000)
    const ten = Date.UTC(2031, 0, 1, 10, 55)
    for (const keyId of ['key_a', 'key_b', 'key_c']) recorder.record(keyId, 'VALID', ten)
    recorder.record('key_d', 'VALID', ten + 10 * 60_000) // 11:05: 10 o'clock's table is a past one
    await recorder.flush()
    fail = false
    await recorder.flush()
    const keys = sent.map((batch) => [...new Set(batch.map(({ keyId }) => keyId))].sort())
    expect(keys).toEqual([['key_a'], ['key_b', 'key_c', 'key_d']])
  })
})

/**
 * A store that keeps what each flush read (a list a flush) and calls `afterRead` after each increment it reads: a hook
 * that may wait (a round trip) or throw (a failed call, after which it reads no more).
 */
function readingStore(sent: UsageIncrement[][], afterRead: () => void | Promise<void>): UsageStore {
  return {
    addUsage: async (batch: Iterable<UsageIncrement>) => {
      const read: UsageIncrement[] = []
      sent.push(read)
      for (const increment of batch) {
        read.push(increment)
        await afterRead()
      }
    },
  } as unknown as UsageStore
}
