import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { COUNTER_SOURCE, moveUsageCounters } from '../../control-plane/analytics/ingest/move-usage-counters.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { createRedis, openRedis } from '../../shared/store/redis/redis-connection.js'
import { MemoryUsageCounterStore } from '../../shared/store/usage-counters/memory-usage-counter-store.js'
import { counterEntry, RedisUsageCounterStore } from '../../shared/store/usage-counters/redis-usage-counter-store.js'
import type { HourCounter, UsageCounterStore } from '../../shared/store/usage-counters/usage-counter-store.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { startRedisServer } from '../support/redis-server.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

const HOUR = 3_600_000
const BASE = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR

/** `keys` keys with `hours` hourly counters each: what verifiers kept in the store before analytics. */
function countersOf(keys: number, hours: number, prefix = 'key_'): HourCounter[] {
  return Array.from({ length: keys }, (_, k) =>
    Array.from({ length: hours }, (_, h) => ({
      keyId: `${prefix}${k}`,
      hour: BASE + h * HOUR,
      valid: k + h + 1,
      rateLimited: h % 2,
      usageExceeded: k === 0 ? 1 : 0,
    })),
  ).flat()
}

/** Writes counters as verifiers did: a HASH per key and hour (and the day's, which holds the same counts). */
async function writeAsVerifiers(redis: Redis | Cluster, counters: HourCounter[]): Promise<void> {
  for (const counter of counters) {
    const counts = { success: counter.valid, rateLimited: counter.rateLimited, usageExceeded: counter.usageExceeded }
    await redis.hset(counterEntry(counter.keyId, counter.hour), counts)
    await redis.hincrby(
      `kg:usage:{${counter.keyId}}:day:${Math.floor(counter.hour / 86_400_000) * 86_400_000}`,
      'success',
      counter.valid,
    )
  }
}

async function readAll(store: UsageCounterStore): Promise<{ counters: HourCounter[]; entries: string[] }> {
  const counters: HourCounter[] = []
  const entries: string[] = []
  let cursor: string | undefined
  do {
    const page = await store.readCounters(cursor)
    counters.push(...page.counters)
    entries.push(...page.entries)
    cursor = page.cursor
  } while (cursor !== undefined)
  return { counters, entries }
}

/** `store`, but for its `nth` drop of counters, where the control plane dies (after that page's insert). */
function diesAtDrop(store: UsageCounterStore, nth: number): UsageCounterStore {
  let drops = 0
  return {
    readCounters: (cursor) => store.readCounters(cursor),
    dropCounters: async (entries) => {
      if (++drops === nth) throw new Error('the control plane died here')
      await store.dropCounters(entries)
    },
    pendingMove: () => store.pendingMove(),
    beginMove: (move) => store.beginMove(move),
    endMove: () => store.endMove(),
  }
}

const byKeyAndHour = (a: HourCounter, b: HourCounter) => a.keyId.localeCompare(b.keyId) || a.hour - b.hour

/** The same contract for each store: every counter read once across pages, and gone once dropped. */
function counterStoreContract(name: string, open: (counters: HourCounter[]) => Promise<UsageCounterStore>) {
  describe(`the verification counters kept before analytics, on ${name}`, () => {
    it('reads every hourly counter across pages, each page dropped before the next is read (as a move does)', async () => {
      // Past one page (SCAN's COUNT, the memory store's page): 1,500 hourly counters.
      const counters = countersOf(30, 50)
      const store = await open(counters)
      const read: HourCounter[] = []
      let cursor: string | undefined
      do {
        const page = await store.readCounters(cursor)
        read.push(...page.counters)
        await store.dropCounters(page.entries)
        cursor = page.cursor
      } while (cursor !== undefined)
      expect([...new Map(read.map((c) => [`${c.keyId} ${c.hour}`, c])).values()].sort(byKeyAndHour)).toEqual(
        [...counters].sort(byKeyAndHour),
      )
      // The daily entries were dropped with the pages too.
      expect(await readAll(store)).toEqual({ counters: [], entries: [] })
    })

    it('answers no counters, and a last page, when there are none; keeps one move written down until it ends', async () => {
      const store = await open([])
      expect(await readAll(store)).toEqual({ counters: [], entries: [] })
      expect(await store.pendingMove()).toBeUndefined()
      const move = { token: 'first', rows: [{ key_id: 'key_0', count: 2, tags: [] }], entries: ['a', 'b'] }
      await store.beginMove(move)
      await store.beginMove({ ...move, token: 'second' })
      expect(await store.pendingMove()).toEqual({ ...move, token: 'second' })
      await store.endMove()
      expect(await store.pendingMove()).toBeUndefined()
    })
  })
}

const stoppable = stopAfterAll()

counterStoreContract('the memory store', async (counters) => new MemoryUsageCounterStore(counters))

counterStoreContract('Redis', async (counters) => {
  const server = await startRedisServer()
  stoppable.push(server)
  const redis = await openRedis(server.url, 'counters')
  stoppable.push({ stop: async () => redis.disconnect() })
  await writeAsVerifiers(redis, counters)
  return new RedisUsageCounterStore(redis)
})

counterStoreContract('a Redis Cluster (every master read in turn)', async (counters) => {
  const nodes = await startRedisCluster(stoppable.stopped)
  const cluster = createRedis(
    'redis://127.0.0.1:6379',
    'counters',
    {},
    {
      cluster: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    },
  )
  stoppable.push({ stop: async () => cluster.disconnect() })
  await waitFor(async () => cluster.status === 'ready', 'the Cluster ready', 10_000, 20)
  await writeAsVerifiers(cluster, counters)
  return new RedisUsageCounterStore(cluster)
})

describe('moving the counters into the analytics engine, once', () => {
  const directory = mkdtempSync(join(tmpdir(), 'keygate-counters-'))
  let engine: ChdbEngine
  const keys = new Map<string, KeyRecord>(
    Array.from({ length: 3 }, (_, k): [string, KeyRecord] => [
      `key_${k}`,
      {
        id: `key_${k}`,
        hash: `h${k}`,
        apiId: k === 2 ? 'api_other' : 'api_moved',
        start: 'x',
        enabled: true,
        createdAt: 0,
        rev: 1,
        ...(k === 1 ? { ownerId: 'user_1' } : {}),
      },
    ]),
  )
  const keyOf = async (keyId: string) => keys.get(keyId) ?? null

  beforeAll(async () => {
    engine = new ChdbEngine(directory)
    await ensureAnalyticsSchema(engine)
  })
  afterAll(async () => {
    await engine?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  const sums = async (table: string) =>
    engine.query(
      `SELECT key_space_id, key_id, external_id, outcome, source, sum(count) AS n FROM ${table} ` +
        `WHERE key_space_id IN ('api_moved', 'api_other', '') GROUP BY ALL ORDER BY ALL`,
    )

  it('counts each hour into the rollups by api, key, owner and outcome; drops deleted keys; leaves nothing behind', async () => {
    // key_3 was deleted: its counts have no api to be read under.
    const counters = countersOf(4, 3)
    const store = new MemoryUsageCounterStore(counters)
    expect(await moveUsageCounters({ counters: store, engine, keyOf })).toBe(12)
    expect(await readAll(store)).toEqual({ counters: [], entries: [] })

    const expected = (keyId: string, field: 'valid' | 'rateLimited' | 'usageExceeded') =>
      counters.filter((c) => c.keyId === keyId).reduce((sum, c) => sum + c[field], 0)
    const hourly = await sums('key_verifications_per_hour_v1')
    const row = (keyId: string, outcome: string) =>
      hourly.find((r) => r.key_id === keyId && r.outcome === outcome)?.n ?? 0
    expect(row('key_0', 'VALID')).toBe(expected('key_0', 'valid'))
    expect(row('key_0', 'USAGE_EXCEEDED')).toBe(expected('key_0', 'usageExceeded'))
    expect(row('key_1', 'RATE_LIMITED')).toBe(expected('key_1', 'rateLimited'))
    expect(hourly.find((r) => r.key_id === 'key_1')).toMatchObject({ key_space_id: 'api_moved', external_id: 'user_1' })
    expect(hourly.find((r) => r.key_id === 'key_2')).toMatchObject({
      key_space_id: 'api_other',
      source: COUNTER_SOURCE,
    })
    expect(hourly.some((r) => r.key_id === 'key_3')).toBe(false)
    // No zero rows: an outcome never counted is not a row.
    expect(hourly.some((r) => r.n === 0)).toBe(false)
    // The daily and monthly rollups are fed from the hourly one.
    const total = (rows: Record<string, unknown>[]) => rows.reduce((sum, r) => sum + Number(r.n), 0)
    expect(total(await sums('key_verifications_per_day_v1'))).toBe(total(hourly))
    expect(total(await sums('key_verifications_per_month_v1'))).toBe(total(hourly))
  })

  it('counts a page once when it is moved again after its insert but before its drop (a crash in between)', async () => {
    const counters = countersOf(2, 2)
    const crashing = new MemoryUsageCounterStore(counters)
    const before = await sums('key_verifications_per_hour_v1')
    const dropsFail = diesAtDrop(crashing, 1)
    await expect(moveUsageCounters({ counters: dropsFail, engine, keyOf })).rejects.toThrow('died')
    await moveUsageCounters({ counters: crashing, engine, keyOf })
    const after = await sums('key_verifications_per_hour_v1')
    const added = (keyId: string) =>
      after.filter((r) => r.key_id === keyId).reduce((sum, r) => sum + Number(r.n), 0) -
      before.filter((r) => r.key_id === keyId).reduce((sum, r) => sum + Number(r.n), 0)
    const counted = (keyId: string) =>
      counters.filter((c) => c.keyId === keyId).reduce((sum, c) => sum + c.valid + c.rateLimited + c.usageExceeded, 0)
    expect(added('key_0')).toBe(counted('key_0'))
    expect(added('key_1')).toBe(counted('key_1'))
  })

  /** Keys `<prefix><n>` of api `apiId`, whatever n: for counters of many keys. */
  const keysOfApi = (prefix: string, apiId: string) => async (keyId: string) =>
    keyId.startsWith(prefix) ? { ...keys.get('key_0')!, id: keyId, apiId, ownerId: undefined } : null
  const movedInto = async (apiId: string) =>
    Number(
      (
        await engine.query(
          'SELECT sum(count) AS n FROM key_verifications_per_hour_v1 WHERE key_space_id = {api:String}',
          { api: apiId },
        )
      )[0]?.n ?? 0,
    )
  const countOf = (counters: HourCounter[]) =>
    counters.reduce((sum, c) => sum + c.valid + c.rateLimited + c.usageExceeded, 0)

  it('moves every page of a store holding more than one', async () => {
    const counters = countersOf(30, 50, 'paged_')
    const store = new MemoryUsageCounterStore(counters)
    expect(await moveUsageCounters({ counters: store, engine, keyOf: keysOfApi('paged_', 'api_paged') })).toBe(1_500)
    expect(await readAll(store)).toEqual({ counters: [], entries: [] })
    expect(await movedInto('api_paged')).toBe(countOf(counters))
  })

  it('stops before the next page once this process no longer holds the ingest, and says so', async () => {
    const counters = countersOf(30, 50, 'lost_')
    const store = new MemoryUsageCounterStore(counters)
    let asked = 0
    const keyOf = keysOfApi('lost_', 'api_lost')
    // Held for the start and the first page only.
    const stillHeld = async () => ++asked <= 2
    expect(await moveUsageCounters({ counters: store, engine, keyOf, stillHeld })).toBeUndefined()
    expect((await readAll(store)).counters).toHaveLength(500)
    expect(await moveUsageCounters({ counters: store, engine, keyOf })).toBe(500)
    expect(await movedInto('api_lost')).toBe(countOf(counters))
  })

  it('counts once what a move that died after a later page was inserted had moved (Redis, among other keys)', async () => {
    const server = await startRedisServer()
    const redis = await openRedis(server.url, 'counters-crash')
    try {
      const counters = countersOf(50, 50, 'crash_')
      await writeAsVerifiers(redis, counters)
      // The store's other keys: SCAN's pages are of every key, the counters among them.
      for (let i = 0; i < 5_000; i += 500)
        await redis.mset(Object.fromEntries(Array.from({ length: 500 }, (_, j) => [`kg:other:${i + j}`, '1'])))
      const store = new RedisUsageCounterStore(redis)
      const keyOf = keysOfApi('crash_', 'api_crash')
      await expect(moveUsageCounters({ counters: diesAtDrop(store, 2), engine, keyOf })).rejects.toThrow('died')
      await moveUsageCounters({ counters: store, engine, keyOf })
      expect(await readAll(store)).toEqual({ counters: [], entries: [] })
      expect(await movedInto('api_crash')).toBe(countOf(counters))
    } finally {
      redis.disconnect()
      await server.stop()
    }
  })

  // Last: the rows recorded here start the analytics for every later move of this engine.
  it('moves only the hours before verifications were first recorded for analytics: those after are rows already', async () => {
    const first = BASE + 10 * HOUR + 20 * 60_000
    await engine.insert(
      'key_verifications_v1',
      [0, 1, 2].map((i) => ({
        request_id: `recorded_${i}`,
        time: first + i * HOUR,
        workspace_id: 'ws_keygate',
        key_space_id: 'api_both',
        identity_id: '',
        external_id: '',
        key_id: 'both_0',
        outcome: 'VALID',
        tags: [],
        source: 'v1.verifyKey',
        region: 'test',
        spent_credits: 0,
        latency: 0.1,
      })),
      'recorded-both',
    )
    // The verifiers of then counted these hours too (and recorded the rows above).
    const counters = countersOf(1, 14, 'both_')
    const store = new MemoryUsageCounterStore(counters)
    await moveUsageCounters({ counters: store, engine, keyOf: keysOfApi('both_', 'api_both') })
    expect(await readAll(store)).toEqual({ counters: [], entries: [] })
    const before = counters.filter((c) => c.hour < BASE + 10 * HOUR)
    expect(await movedInto('api_both')).toBe(countOf(before) + 3)
  })
})
