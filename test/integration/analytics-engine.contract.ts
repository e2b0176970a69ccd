import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import {
  analyticsSchema,
  ensureAnalyticsSchema,
  KEY_VERIFICATION_ROLLUPS,
  PUBLIC_TABLES,
  RATELIMIT_ROLLUPS,
} from '../../control-plane/analytics/engine/analytics-tables.js'
import { compactRows, insertParts } from '../../control-plane/analytics/engine/insert-parts.js'
import type { EngineHarness } from '../support/analytics-engines.js'

/**
 * What an analytics engine does, embedded or a server (analytics-engine.ts), run on each (analytics-engine.test.ts):
 * the tables made and made again, a batch counted once in the raw table and every rollup however often it is sent (in
 * parts too), rows answered as objects with 64-bit integers as numbers, and parameters bound apart from the SQL.
 */
export function analyticsEngineContract(harness: EngineHarness): void {
  describe(`the ${harness.kind} analytics engine`, () => {
    const PART_CHARS = 4_096
    let opened: Awaited<ReturnType<EngineHarness['open']>>
    let engine: AnalyticsEngine
    beforeAll(async () => {
      // Inserts of more than a few rows go in parts: every test of counting once counts a batch of parts once.
      opened = await harness.open({ insertPartChars: PART_CHARS })
      engine = opened.engine
    })
    afterAll(async () => {
      await opened?.close()
    })

    const HOUR = 3_600_000
    // Three hours ago, on the hour: recent enough for every table's retention (rows past it are dropped at insert).
    const start = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR
    const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
    const verification = (n: number, overrides: object = {}) => ({
      request_id: `vr_${n}`,
      time: start + n * 60_000,
      workspace_id: 'ws_keygate',
      key_space_id: 'api_one',
      identity_id: 'id_one',
      external_id: 'user_one',
      key_id: n % 2 === 0 ? 'key_even' : 'key_odd',
      outcome: n % 3 === 0 ? 'RATE_LIMITED' : 'VALID',
      tags: n % 2 === 0 ? ['path=/a'] : [],
      source: 'v1.keys.verifyKey',
      region: 'local',
      spent_credits: 1,
      latency: 0.2,
      ...overrides,
    })
    const count = async (sql: string, params?: Record<string, string>) =>
      Number((await engine.query(sql, params))[0]!.n)

    it('makes every public table, and making them again changes nothing', async () => {
      await ensureAnalyticsSchema(engine)
      const tables = (await engine.query('SELECT name FROM system.tables WHERE database = currentDatabase()')).map(
        (row) => row.name,
      )
      expect(tables).toEqual(expect.arrayContaining([...PUBLIC_TABLES]))
    })

    it('counts a batch once in the raw table and every rollup, however often it is sent again', async () => {
      // 120 verifications over two hours: a retried batch (the same rows, the same id) is dropped everywhere.
      const batch = Array.from({ length: 120 }, (_, n) => verification(n))
      for (let attempt = 0; attempt < 3; attempt++) await engine.insert('key_verifications_v1', batch, 'shard0:1-120')
      expect(await count('SELECT count() AS n FROM key_verifications_v1')).toBe(120)
      for (const rollup of KEY_VERIFICATION_ROLLUPS) {
        expect(await count(`SELECT sum(count) AS n FROM ${rollup.name}`), rollup.name).toBe(120)
        expect(await count(`SELECT sum(spent_credits) AS n FROM ${rollup.name}`), rollup.name).toBe(120)
      }
      // A key's counts by hour and outcome, from the hourly rollup: n even in 0..119 is 60 verifications, 30 an hour;
      // multiples of 6 among them are RATE_LIMITED (10 an hour).
      const rows = await engine.query(
        "SELECT time, outcome, sum(count) AS total FROM key_verifications_per_hour_v1 WHERE key_id = 'key_even' " +
          'GROUP BY time, outcome ORDER BY time, outcome',
      )
      expect(rows).toEqual([
        { time: hourOf(start), outcome: 'RATE_LIMITED', total: 10 },
        { time: hourOf(start), outcome: 'VALID', total: 20 },
        { time: hourOf(start + HOUR), outcome: 'RATE_LIMITED', total: 10 },
        { time: hourOf(start + HOUR), outcome: 'VALID', total: 20 },
      ])
      // Another batch counts.
      await engine.insert('key_verifications_v1', [verification(200)], 'shard0:121-121')
      expect(await count('SELECT sum(count) AS n FROM key_verifications_per_month_v1')).toBe(121)
    })

    it('counts a batch sent again after only its first part went in once', async () => {
      const batch = Array.from({ length: 60 }, (_, n) => verification(n, { key_id: 'key_parted' }))
      const [first] = insertParts(compactRows(batch).lines, 'parted:1-60', PART_CHARS)
      const firstRows = first!.text.split('\n').length
      expect(firstRows).toBeLessThan(batch.length)
      // The insert died after its first part: that part alone is in.
      await engine.insert('key_verifications_v1', batch.slice(0, firstRows), 'parted:1-60')
      await engine.insert('key_verifications_v1', batch, 'parted:1-60')
      const where = "WHERE key_id = 'key_parted'"
      expect(await count(`SELECT count() AS n FROM key_verifications_v1 ${where}`)).toBe(60)
      for (const rollup of KEY_VERIFICATION_ROLLUPS)
        expect(await count(`SELECT sum(count) AS n FROM ${rollup.name} ${where}`), rollup.name).toBe(60)
    })

    it('counts two batches of the same rows twice: a batch is known by its id, not by its rows', async () => {
      // Unknown keys' verifications are ingested as counts per minute (analytics-ingest.ts): two passes that each
      // counted one for the same api in the same minute send the same row, under their own ids.
      const notFound = {
        time: Math.floor(start / 1000),
        workspace_id: 'ws_keygate',
        key_space_id: 'api_twice',
        identity_id: '',
        external_id: '',
        key_id: '',
        outcome: 'NOT_FOUND',
        tags: [],
        source: 'v1.keys.verifyKey',
        region: 'local',
        count: 1,
        spent_credits: 0,
      }
      const perMinute = KEY_VERIFICATION_ROLLUPS[0]!.name
      await engine.insert(perMinute, [notFound], 'pass1:n')
      await engine.insert(perMinute, [notFound], 'pass2:n')
      await engine.insert(perMinute, [notFound], 'pass2:n')
      for (const rollup of KEY_VERIFICATION_ROLLUPS)
        expect(
          await count(`SELECT sum(count) AS n FROM ${rollup.name} WHERE key_space_id = 'api_twice'`),
          rollup.name,
        ).toBe(2)
    })

    it('counts rate-limit decisions passed and total in every rollup, once', async () => {
      const decisions = Array.from({ length: 10 }, (_, n) => ({
        request_id: `rl_${n}`,
        time: start + n * 1_000,
        workspace_id: 'ws_keygate',
        namespace_id: 'rlns_one',
        identifier: 'user_one',
        passed: n < 7,
        limit: 7,
        remaining: Math.max(0, 6 - n),
        latency: 0.1,
      }))
      await engine.insert('ratelimits_v1', decisions, 'rl0:1-10')
      await engine.insert('ratelimits_v1', decisions, 'rl0:1-10')
      for (const rollup of RATELIMIT_ROLLUPS) {
        const [row] = await engine.query(`SELECT sum(passed) AS passed, sum(total) AS total FROM ${rollup.name}`)
        expect(row, rollup.name).toEqual({ passed: 7, total: 10 })
      }
    })

    it('answers no rows as an empty list', async () => {
      expect(await engine.query("SELECT * FROM key_verifications_v1 WHERE key_id = 'none'")).toEqual([])
    })

    it('says which it is, and the database its tables are in', () => {
      expect(engine.kind).toBe(harness.kind)
      expect(engine.database).toBe(harness.kind === 'server' ? 'keygate' : 'default')
    })

    it('answers 64-bit integers as numbers, non-finite numbers as null, and binds parameters apart from the SQL', async () => {
      const text = "it's \\ a\ttab, a\nline, {x:String}; DROP TABLE key_verifications_v1"
      expect(
        await engine.query(
          'SELECT toInt64(-5) AS signed, toUInt64(7) AS unsigned, 0 / 0 AS nan, 1 / 0 AS inf, {text:String} AS text',
          { text },
        ),
      ).toEqual([{ signed: -5, unsigned: 7, nan: null, inf: null, text }])
      expect(
        await count('SELECT count() AS n FROM system.tables WHERE name = {name:String}', {
          name: 'key_verifications_v1',
        }),
      ).toBe(1)
    })

    it('rejects a statement ClickHouse cannot parse with its exception', async () => {
      await expect(engine.query('SELEC 1')).rejects.toThrow(/Syntax error/)
    })

    it('reads the cluster form of every statement as ClickHouse statements (only one server runs here)', async () => {
      for (const { sql } of analyticsSchema({ cluster: 'keygate_cluster', database: engine.database })) {
        const [row] = await engine.query('SELECT formatQuerySingleLine({sql:String}) AS formatted', { sql })
        expect(row?.formatted, sql).toContain('ON CLUSTER keygate_cluster')
      }
    })
  })
}
