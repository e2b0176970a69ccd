import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { ensureAnalyticsSchema, KEY_VERIFICATIONS } from '../../control-plane/analytics/engine/analytics-tables.js'
import { compactRows } from '../../control-plane/analytics/engine/insert-parts.js'
import {
  AnalyticsIngest,
  INGEST_LEASE,
  INGEST_LEASE_MS,
  REPORT_LAG_MS,
  WATERMARK,
  type IngestDeps,
} from '../../control-plane/analytics/ingest/analytics-ingest.js'
import type { EncodedBatch } from '../../shared/analytics/analytics-batch.js'
import { AnalyticsRecorder } from '../../shared/analytics/analytics-recorder.js'
import { PackedIntegersWriter, unpackIntegers } from '../../shared/analytics/packed-integers.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import {
  ANALYTICS_BUFFER_SHARDS,
  type AnalyticsBufferStore,
} from '../../shared/store/analytics-buffer/analytics-buffer-store.js'
import { MemoryAnalyticsBufferStore } from '../../shared/store/analytics-buffer/memory-analytics-buffer-store.js'

const BIG = 1_000_000

/**
 * The ingest's protocol with the buffers, on the memory buffers and the embedded engine: what a pass takes, inserts
 * and completes when it fails half-way, when the buffer trims what it took, when a batch cannot be read, and who may
 * ingest. Each test counts rows of an api of its own.
 */
describe('the analytics ingest', () => {
  const directory = mkdtempSync(join(tmpdir(), 'keygate-ingest-'))
  let engine: ChdbEngine
  beforeAll(async () => {
    engine = new ChdbEngine(directory)
    await ensureAnalyticsSchema(engine)
  })
  afterAll(async () => {
    await engine?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  let apis = 0
  /** An api of the test's own, and a batch of `n` verifications of a key of it (and `unknown` unknown keys). */
  function apiOf() {
    const apiId = `api_ingest${apis++}`
    const recorder = new AnalyticsRecorder('eu', BIG)
    const batch = (n: number, unknown = 0): [string, number] => {
      const now = Date.now()
      for (let i = 0; i < n; i++)
        recorder.record({ id: `key_${apiId}`, apiId }, undefined, 'VALID', 'v1.verifyKey', now, 0, undefined, 1)
      for (let i = 0; i < unknown; i++) recorder.recordNotFound(apiId, 'v1.verifyKey', now)
      const { batch, rows } = recorder.take()!
      return [JSON.stringify(batch), rows]
    }
    /** Rows of the api in the raw table, and its counts in every rollup. */
    const counted = async () => {
      const where = `key_space_id = '${apiId}'`
      const raw = await engine.query(`SELECT count() AS n FROM key_verifications_v1 WHERE ${where}`)
      const rollups = []
      for (const period of ['minute', 'hour', 'day', 'month']) {
        const [row] = await engine.query(
          `SELECT toUInt64(sum(count)) AS n FROM key_verifications_per_${period}_v1 WHERE ${where}`,
        )
        rollups.push(row!.n)
      }
      return { raw: raw[0]!.n, rollups }
    }
    return { apiId, batch, counted, recorder }
  }

  const ingestOf = (buffer: AnalyticsBufferStore, deps: Partial<IngestDeps> = {}) =>
    new AnalyticsIngest({
      buffer,
      engine,
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      holder: 'test',
      namespaceIdOf: async () => undefined,
      ...deps,
    })

  /**
   * The engine, `before` told of each insert into the raw verifications table (and awaited) before it is made, its rows
   * as objects.
   */
  const engineBefore = (before: (rows: readonly Record<string, unknown>[]) => unknown): AnalyticsEngine => ({
    kind: engine.kind,
    database: engine.database,
    command: (sql) => engine.command(sql),
    query: (sql) => engine.query(sql),
    close: () => engine.close(),
    insert: async (table, rows, batchId) => {
      if (table === KEY_VERIFICATIONS.name) {
        const { columns, lines } = compactRows(rows)
        await before(
          lines.map((line) => Object.fromEntries((JSON.parse(line) as unknown[]).map((v, i) => [columns[i], v]))),
        )
      }
      return engine.insert(table, rows, batchId)
    },
  })

  /** The buffer, but `complete` fails its next `times` calls (after the engine took the rows). */
  function dyingOnComplete(buffer: AnalyticsBufferStore, times: number): AnalyticsBufferStore {
    return storeWith(buffer, {
      complete: async (shard, last) => {
        if (times-- > 0) throw new Error('died before completing')
        return buffer.complete(shard, last)
      },
    })
  }

  it('inserts again exactly what it took, even when more batches came meanwhile', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    await buffer.append(0, ...batch(3, 2), BIG)
    await expect(ingestOf(dyingOnComplete(buffer, 1)).ingestNow()).rejects.toThrow('died before completing')
    await buffer.append(0, ...batch(4, 1), BIG)
    await ingestOf(buffer).ingestNow()
    await ingestOf(buffer).ingestNow()
    expect(await counted()).toEqual({ raw: 7, rollups: [10, 10, 10, 10] })
    expect((await buffer.look(0, 10)).batches).toEqual([])
  })

  it('counts a taken set once when the buffer trimmed its oldest batches before the retry', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    const [a, b, c] = [batch(1), batch(2), batch(4)]
    const bound = Buffer.byteLength(b[0]) + Buffer.byteLength(c[0])
    await buffer.append(0, ...a, bound)
    await buffer.append(0, ...b, bound)
    await expect(ingestOf(dyingOnComplete(buffer, 1)).ingestNow()).rejects.toThrow('died before completing')
    // A third batch: the buffer trims the first, which the engine has, and keeps the second, which it has too.
    expect(await buffer.append(0, ...c, bound)).toBe(1)
    await ingestOf(buffer).ingestNow()
    await ingestOf(buffer).ingestNow()
    expect(await counted()).toEqual({ raw: 7, rollups: [7, 7, 7, 7] })
  })

  it('completes a taken set trimmed away whole, and ingests what came after it', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    const [a, b] = [batch(1), batch(2)]
    const bound = Math.max(Buffer.byteLength(a[0]), Buffer.byteLength(b[0]))
    await buffer.append(0, ...a, bound)
    await expect(ingestOf(dyingOnComplete(buffer, 1)).ingestNow()).rejects.toThrow('died before completing')
    expect(await buffer.append(0, ...b, bound)).toBe(1)
    const ingest = ingestOf(buffer)
    await ingest.ingestNow()
    await ingest.ingestNow()
    expect(await counted()).toEqual({ raw: 3, rollups: [3, 3, 3, 3] })
    expect(await buffer.look(0, 10)).toMatchObject({ batches: [], bytes: 0 })
    expect((await buffer.look(0, 10)).pending).toBeUndefined()
  })

  it('skips a batch it cannot read, counted, and ingests the others', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    await buffer.append(0, ...batch(2), BIG)
    await buffer.append(0, 'not json', 3, BIG)
    await buffer.append(0, JSON.stringify({ f: 2 }), 3, BIG)
    await buffer.append(0, ...batch(3), BIG)
    const registry = new Registry()
    expect(await ingestOf(buffer, { registry }).ingestNow()).toBe(true)
    expect(await counted()).toEqual({ raw: 5, rollups: [5, 5, 5, 5] })
    expect((await buffer.look(0, 10)).batches).toEqual([])
    const refused = await registry.getSingleMetric('keygate_analytics_batches_refused_total')!.get()
    expect(refused.values[0]!.value).toBe(2)
  })

  it('refuses a damaged batch whole, counted, and ingests the rest of its buffer', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted, recorder } = apiOf()
    /** A batch of `n` verifications and `unknown` unknown keys, damaged by `damage`. */
    const damaged = (n: number, unknown: number, damage: (batch: EncodedBatch) => object): [string, number] => {
      const [json, rows] = batch(n, unknown)
      return [JSON.stringify(damage(JSON.parse(json) as EncodedBatch)), rows]
    }
    const repacked = (packed: string, more: number[]) => {
      const writer = new PackedIntegersWriter()
      for (const value of [...unpackIntegers(packed), ...more]) writer.write(value)
      return writer.take()
    }
    await buffer.append(0, ...batch(2), BIG)
    // Its region lost: the engine would refuse its rows' text, and every batch of the buffer with it.
    await buffer.append(0, ...damaged(1, 0, ({ g: _, ...rest }) => rest), BIG)
    // A value too many: its rows would be read askew.
    await buffer.append(0, ...damaged(1, 0, (read) => ({ ...read, v: repacked(read.v, [0]) })), BIG)
    // Its unknown keys' counts are sound, its verification names a key it does not list: nothing of it goes in.
    await buffer.append(0, ...damaged(1, 2, (read) => ({ ...read, k: [] })), BIG)
    // Its verifications are sound, its rate-limit decision names a string it does not list: nothing of it goes in.
    recorder.recordRatelimit('ns-damaged', 'user-damaged', true, 10, 9, Date.now(), 1)
    await buffer.append(0, ...damaged(2, 0, (read) => ({ ...read, s: [] })), BIG)
    await buffer.append(0, ...batch(3), BIG)
    const registry = new Registry()
    expect(await ingestOf(buffer, { registry }).ingestNow()).toBe(true)
    expect(await counted()).toEqual({ raw: 5, rollups: [5, 5, 5, 5] })
    expect(await engine.query("SELECT count() AS n FROM ratelimits_v1 WHERE identifier = 'user-damaged'")).toEqual([
      { n: 0 },
    ])
    expect((await buffer.look(0, 10)).batches).toEqual([])
    const refused = await registry.getSingleMetric('keygate_analytics_batches_refused_total')!.get()
    expect(refused.values[0]!.value).toBe(4)
  })

  it('with an embedded engine, ingests only if it holds the lease at its first pass, ever', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    let refusals = 0
    const exclusive = (holder: string) => ingestOf(buffer, { holder, exclusive: { onRefused: () => refusals++ } })
    const first = exclusive('first')
    const second = exclusive('second')
    await buffer.append(0, ...batch(1), BIG)
    expect(await first.ingestNow()).toBe(true)
    await buffer.append(1, ...batch(1), BIG)
    expect(await second.ingestNow()).toBe(false)
    expect(refusals).toBe(1)
    // The same holder (the same control plane restarted on the same data) takes it on at once.
    const restarted = exclusive('first')
    expect(await restarted.ingestNow()).toBe(true)
    expect(await counted()).toEqual({ raw: 2, rollups: [2, 2, 2, 2] })
    // Given up: the one refused at its start still ingests nothing, and is not told again.
    await first.stop()
    await restarted.stop()
    await buffer.append(2, ...batch(1), BIG)
    expect(await second.ingestNow()).toBe(false)
    expect(refusals).toBe(1)
    expect((await buffer.look(2, 10)).batches).toHaveLength(1)
  })

  it('with an embedded engine, stops for good once another control plane took its lease over', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    let refusals = 0
    const first = ingestOf(buffer, { holder: 'first', exclusive: { onRefused: () => refusals++ } })
    await buffer.append(0, ...batch(1), BIG)
    expect(await first.ingestNow()).toBe(true)
    expect(first.refused).toBe(false)
    // Its lease ran out while it could not renew it, and another took it.
    await buffer.releaseLease('ingest', 'first')
    expect(await buffer.holdLease('ingest', 'other', 60_000)).toBe(true)
    await buffer.append(1, ...batch(1), BIG)
    expect(await first.ingestNow()).toBe(false)
    expect(refusals).toBe(1)
    expect(first.refused).toBe(true)
    // Even once the lease is free again: its engine would now hold other numbers than the other's.
    await buffer.releaseLease('ingest', 'other')
    expect(await first.ingestNow()).toBe(false)
    expect(refusals).toBe(1)
    expect(await counted()).toEqual({ raw: 1, rollups: [1, 1, 1, 1] })
  })

  it('with an embedded engine, stops for good once another took its lease over during a pass', async () => {
    let now = Date.now()
    const buffer = new MemoryAnalyticsBufferStore(() => now)
    const { batch, counted } = apiOf()
    await buffer.append(0, ...batch(2), BIG)
    await buffer.append(0, ...batch(3), BIG)
    const slow = engineBefore(async () => {
      now += INGEST_LEASE_MS + 1
      await buffer.holdLease(INGEST_LEASE, 'another', INGEST_LEASE_MS)
    })
    let refusals = 0
    const registry = new Registry()
    const ingest = ingestOf(buffer, {
      engine: slow,
      rowsPerInsert: 2,
      registry,
      exclusive: { onRefused: () => refusals++ },
    })
    // It found rows, and inserted those it took while it held the lease.
    expect(await ingest.ingestNow()).toBe(true)
    expect(refusals).toBe(1)
    expect(ingest.refused).toBe(true)
    // A pass cut short reports no bytes: what it saw of the buffers is not what they hold.
    const bytes = await registry.getSingleMetric('keygate_analytics_buffer_bytes')!.get()
    expect(bytes.values[0]!.value).toBe(0)
    await buffer.releaseLease(INGEST_LEASE, 'another')
    expect(await ingest.ingestNow()).toBe(false)
    expect(refusals).toBe(1)
    expect(await counted()).toEqual({ raw: 2, rollups: [2, 2, 2, 2] })
  })

  it('looks at no further buffer once it found its lease taken over', async () => {
    let now = Date.now()
    const store = new MemoryAnalyticsBufferStore(() => now)
    const { batch } = apiOf()
    for (let shard = 0; shard < ANALYTICS_BUFFER_SHARDS; shard++) await store.append(shard, ...batch(1), BIG)
    const looked = new Set<number>()
    const buffer = storeWith(store, {
      look: (shard, limit) => {
        looked.add(shard)
        return store.look(shard, limit)
      },
    })
    let taken = false
    const losing = engineBefore(async () => {
      if (taken) return
      taken = true
      now += INGEST_LEASE_MS + 1
      await store.holdLease(INGEST_LEASE, 'another', INGEST_LEASE_MS)
    })
    await ingestOf(buffer, { engine: losing }).ingestNow()
    // The buffers looked at before it learned so (one per buffer ingested at once) are all it looked at.
    expect(looked.size).toBeLessThan(ANALYTICS_BUFFER_SHARDS)
    for (let shard = 0; shard < ANALYTICS_BUFFER_SHARDS; shard++) {
      const left = await store.look(shard, 10)
      expect(left.pending, `buffer ${shard}`).toBeUndefined()
    }
  })

  it('fails a pass on the store being unreachable as such, and moves no counters then', async () => {
    const store = new MemoryAnalyticsBufferStore()
    const { batch } = apiOf()
    await store.append(1, ...batch(1), BIG)
    let looks = 0
    const unreachable = storeWith(store, {
      look: async () => {
        looks++
        throw new StoreUnavailableError('the store cannot be reached')
      },
    })
    let moves = 0
    const registry = new Registry()
    const ingest = ingestOf(unreachable, {
      registry,
      moveCounters: async () => {
        moves++
        return 0
      },
    })
    await expect(ingest.ingestNow()).rejects.toBeInstanceOf(StoreUnavailableError)
    // Nor is any other buffer, then: none is tried after the first failed.
    expect(looks).toBeLessThan(ANALYTICS_BUFFER_SHARDS)
    expect(moves).toBe(0)
    const bytes = await registry.getSingleMetric('keygate_analytics_buffer_bytes')!.get()
    expect(bytes.values[0]!.value).toBe(0)
  })

  it('fails a pass with the failure of every buffer that failed, having ingested the others', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const refused = apiOf()
    const taken = apiOf()
    await buffer.append(0, ...refused.batch(2), BIG)
    await buffer.append(1, ...taken.batch(3), BIG)
    await buffer.append(2, ...refused.batch(4), BIG)
    const refusing = engineBefore((rows) => {
      if (rows.some((row) => row.key_space_id === refused.apiId)) throw new Error('the engine refuses these rows')
    })
    const failed = await ingestOf(buffer, { engine: refusing })
      .ingestNow()
      .catch((err: unknown) => err)
    expect(failed).toBeInstanceOf(AggregateError)
    expect((failed as AggregateError).errors.map((err: Error) => err.message)).toEqual([
      'the engine refuses these rows',
      'the engine refuses these rows',
    ])
    expect(await taken.counted()).toEqual({ raw: 3, rollups: [3, 3, 3, 3] })
  })

  it('ingests two buffers at once', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    await buffer.append(0, ...batch(1), BIG)
    await buffer.append(1, ...batch(1), BIG)
    let inserting = 0
    let most = 0
    let bothBegun!: () => void
    const both = new Promise<void>((resolve) => (bothBegun = resolve))
    const overlapping = engineBefore(async () => {
      most = Math.max(most, ++inserting)
      if (inserting === 2) bothBegun()
      // The other buffer's insert begins meanwhile; one buffer at a time, this waits a second for nothing.
      await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 1_000))])
      inserting--
    })
    await ingestOf(buffer, { engine: overlapping }).ingestNow()
    expect(most).toBe(2)
    expect(await counted()).toEqual({ raw: 2, rollups: [2, 2, 2, 2] })
  })

  it('inserts at most rowsPerInsert rows at a time, but a batch holding more alone, each once', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    for (const rows of [3, 3, 3, 9, 1]) await buffer.append(0, ...batch(rows), BIG)
    const inserts: number[] = []
    const counting = engineBefore((rows) => inserts.push(rows.length))
    // Taken 3 + 3 and inserted, then the store failed: the retry inserts those again, whatever the bound is now.
    await expect(
      ingestOf(dyingOnComplete(buffer, 1), { engine: counting, rowsPerInsert: 6 }).ingestNow(),
    ).rejects.toThrow('died before completing')
    expect(await ingestOf(buffer, { engine: counting, rowsPerInsert: 2 }).ingestNow()).toBe(true)
    expect(inserts).toEqual([6, 6, 3, 9, 1])
    expect(await counted()).toEqual({ raw: 19, rollups: [19, 19, 19, 19] })
  })

  it('reports the bytes its buffers hold after a pass, however many inserts it took', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    for (let i = 0; i < 250; i++) await buffer.append(i % 2, ...batch(1), BIG)
    const registry = new Registry()
    const bytes = async () => (await registry.getSingleMetric('keygate_analytics_buffer_bytes')!.get()).values[0]!.value
    expect(await ingestOf(buffer, { registry }).ingestNow()).toBe(true)
    expect(await counted()).toEqual({ raw: 250, rollups: [250, 250, 250, 250] })
    expect(await bytes()).toBe(0)
  })

  it('stops a pass that outlasted its lease once another took it', async () => {
    let now = Date.now()
    const buffer = new MemoryAnalyticsBufferStore(() => now)
    const { batch, counted } = apiOf()
    await buffer.append(0, ...batch(2), BIG)
    await buffer.append(0, ...batch(3), BIG)
    const slow = engineBefore(async () => {
      // The first insert takes longer than the lease: another control plane takes it over meanwhile.
      now += INGEST_LEASE_MS + 1
      expect(await buffer.holdLease(INGEST_LEASE, 'another', INGEST_LEASE_MS)).toBe(true)
    })
    await ingestOf(buffer, { engine: slow, rowsPerInsert: 2 }).ingestNow()
    expect(await counted()).toEqual({ raw: 2, rollups: [2, 2, 2, 2] })
    // What it had not taken is left, untaken, to the holder; the watermark, to the holder's passes.
    const left = await buffer.look(0, 10)
    expect(left.pending).toBeUndefined()
    expect(left.batches.map(({ rows }) => rows)).toEqual([3])
    expect(await buffer.readMark(WATERMARK)).toBeUndefined()
  })

  it('ingests the other buffers when the engine refuses one buffer’s rows', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const refused = apiOf()
    const taken = apiOf()
    await buffer.append(0, ...refused.batch(2), BIG)
    await buffer.append(1, ...taken.batch(3), BIG)
    await buffer.append(2, ...taken.batch(4), BIG)
    const refusing = engineBefore((rows) => {
      if (rows.some((row) => row.key_space_id === refused.apiId)) throw new Error('the engine refuses these rows')
    })
    const registry = new Registry()
    await expect(ingestOf(buffer, { engine: refusing, registry }).ingestNow()).rejects.toThrow('refuses these rows')
    expect(await taken.counted()).toEqual({ raw: 7, rollups: [7, 7, 7, 7] })
    // The refused buffer keeps its batch, taken, for the next pass; the gauge counts it.
    const left = await buffer.look(0, 10)
    expect(left.pending).toBeDefined()
    expect(left.batches).toHaveLength(1)
    const bytes = (await registry.getSingleMetric('keygate_analytics_buffer_bytes')!.get()).values[0]!.value
    expect(bytes).toBe(left.bytes)
  })

  it('names each rate-limit row by its namespace id, looking up again a namespace that had none', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const ids = new Map([['ingest-made', 'rlns_made']])
    const asked: string[] = []
    const ingest = ingestOf(buffer, {
      namespaceIdOf: async (name) => {
        asked.push(name)
        return ids.get(name)
      },
    })
    const recorder = new AnalyticsRecorder('eu', BIG)
    const append = async () => {
      for (const namespace of ['ingest-made', 'ingest-later'])
        recorder.recordRatelimit(namespace, 'ingest-user', true, 10, 9, Date.now(), 1)
      const { batch, rows } = recorder.take()!
      await buffer.append(0, JSON.stringify(batch), rows, BIG)
      await ingest.ingestNow()
    }
    await append()
    ids.set('ingest-later', 'rlns_later')
    await append()
    expect(
      await engine.query(
        "SELECT namespace_id, count() AS n FROM ratelimits_v1 WHERE identifier = 'ingest-user' GROUP BY namespace_id ORDER BY namespace_id",
      ),
    ).toEqual([
      { namespace_id: '', n: 1 },
      { namespace_id: 'rlns_later', n: 1 },
      { namespace_id: 'rlns_made', n: 2 },
    ])
    // An id found is kept; an absence is not.
    expect(asked).toEqual(['ingest-made', 'ingest-later', 'ingest-later'])
  })

  it('raises the watermark to the earliest report read before it drained the buffers', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const { batch, counted } = apiOf()
    const now = Date.now()
    await buffer.reportThrough('recorder', now - 60_000, now)
    await buffer.append(0, ...batch(2), BIG)
    let late = false
    // Once the pass has drained buffer 0, the process hands more rows over to it and reports past them: rows this
    // pass leaves in the buffer, which the watermark must not pass.
    const handingOver: AnalyticsBufferStore = Object.assign(Object.create(buffer) as AnalyticsBufferStore, {
      complete: async (shard: number, last: string) => {
        await buffer.complete(shard, last)
        if (shard !== 0 || late) return
        late = true
        await buffer.append(0, ...batch(3), BIG)
        await buffer.reportThrough('recorder', now, now)
      },
    })
    const told: number[] = []
    const ingest = ingestOf(handingOver, { now: () => now, afterPass: async (watermark) => void told.push(watermark) })
    await ingest.ingestNow()
    expect(late).toBe(true)
    expect((await counted()).raw).toBe(2)
    expect(await buffer.readMark(WATERMARK)).toBe(now - 60_000)
    // The next pass reads the later report, and ingests the rows before it.
    await ingest.ingestNow()
    expect((await counted()).raw).toBe(5)
    expect(await buffer.readMark(WATERMARK)).toBe(now - REPORT_LAG_MS)
    expect(told).toEqual([now - 60_000, now - REPORT_LAG_MS])
  })

  it('leaves the watermark where it was after a pass that left a buffer behind', async () => {
    const buffer = new MemoryAnalyticsBufferStore()
    const refused = apiOf()
    await buffer.append(1, ...refused.batch(2), BIG)
    const refusing = engineBefore((rows) => {
      if (rows.some((row) => row.key_space_id === refused.apiId)) throw new Error('the engine refuses these rows')
    })
    const told: number[] = []
    const now = Date.now()
    const deps = { now: () => now, afterPass: async (watermark: number) => void told.push(watermark) }
    await expect(ingestOf(buffer, { ...deps, engine: refusing }).ingestNow()).rejects.toThrow('refuses these rows')
    expect(await buffer.readMark(WATERMARK)).toBeUndefined()
    expect(told).toEqual([])
    await ingestOf(buffer, deps).ingestNow()
    expect(await buffer.readMark(WATERMARK)).toBe(now - REPORT_LAG_MS)
    expect(told).toEqual([now - REPORT_LAG_MS])
  })
})

/** `store` as an AnalyticsBufferStore of its own, its methods bound, but for `overrides`. */
function storeWith(store: AnalyticsBufferStore, overrides: Partial<AnalyticsBufferStore>): AnalyticsBufferStore {
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>
  const names = Object.getOwnPropertyNames(Object.getPrototypeOf(store)).filter(
    (name) => name !== 'constructor' && typeof methods[name] === 'function',
  )
  const bound = Object.fromEntries(
    names.map((name) => [name, methods[name]!.bind(store)]),
  ) as unknown as AnalyticsBufferStore
  return { ...bound, ...overrides }
}
