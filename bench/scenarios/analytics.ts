import { mkdtempSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedisServer } from '../../test/support/redis-process.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import {
  ensureAnalyticsSchema,
  KEY_VERIFICATIONS,
  KEY_VERIFICATION_ROLLUPS,
} from '../../control-plane/analytics/engine/analytics-tables.js'
import { WORKSPACE_ID } from '../../control-plane/workspace.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { RedisAnalyticsBufferStore } from '../../shared/store/analytics-buffer/redis-analytics-buffer-store.js'
import { drainIngest, ROWS_PER_BATCH } from '../lib/analytics-ingest-drain.js'
import { timeQueries, timesOf, timeUsage } from '../lib/analytics-queries.js'
import { progress } from '../lib/rounds.js'
import type { Check, ScenarioReport } from '../lib/scenario-report.js'
import {
  APIS,
  generatedRowsSql,
  KEYS,
  makeTraffic,
  sample,
  TRAFFIC_KEYS_TABLE,
  trafficKeysTable,
} from '../lib/verification-traffic.js'

const INGEST_ROWS = Number(process.env.BENCH_ANALYTICS_INGEST_ROWS ?? 1_000_000)
const STORED_ROWS = Number(process.env.BENCH_ANALYTICS_ROWS ?? 10_000_000)
const QUERY_RUNS = Number(process.env.BENCH_ANALYTICS_QUERY_RUNS ?? 30)
const QUERY_WARM_UP = 3
/** The stored rows' span, days before the run: past the longest window queried (30 days). */
const STORED_DAYS = 35
/** Rows generated per statement (progress is printed after each). */
const GENERATE_CHUNK = 1_000_000
const INGEST_TARGET = 100_000
const QUERY_TARGET_MS = 100
/** The verification tables: the raw one and its rollups, each fed by a materialized view. */
const TABLES = [KEY_VERIFICATIONS.name, ...KEY_VERIFICATION_ROLLUPS.map((rollup) => rollup.name)]

const fmt = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

/**
 * `npm run bench:analytics`: what keeping every verification for analytics costs the control plane and answers its
 * callers with, on the embedded engine (chDB) in this process. The ingest: verifications recorded by the real recorder
 * into the store's buffers as verifiers hand them over, then drained by a real AnalyticsIngest, timed, with this
 * process's CPU. The queries: 10,000,000 verifications generated inside the engine through the same materialized views,
 * merged, then Unkey's typical questions timed by the engine alone and through runAnalyticsQuery (what
 * analytics.getVerifications runs). The disk: bytes per verification over the raw table and its rollups.
 */
export async function analytics(): Promise<ScenarioReport> {
  const loadAtStart = loadavg()[0]!
  const redis = await startRedisServer()
  let engine: ChdbEngine | undefined
  let connection: Awaited<ReturnType<typeof openRedis>> | undefined
  try {
    engine = new ChdbEngine(mkdtempSync(join(tmpdir(), 'keygate-bench-analytics-')), { temporary: true })
    connection = await openRedis(redis.url, 'bench-analytics')
    await ensureAnalyticsSchema(engine)
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.admin.info('server'))?.[1])
    const traffic = makeTraffic(Date.now())
    const ingest = await drainIngest(traffic, INGEST_ROWS, new RedisAnalyticsBufferStore(connection), engine, redisPid)
    for (const table of TABLES) await engine.command(`TRUNCATE TABLE \`${table}\``)

    const nowMs = Date.now()
    const keysTable = trafficKeysTable(traffic)
    await engine.command(keysTable.create)
    await engine.insert(TRAFFIC_KEYS_TABLE, keysTable.rows, 'bench-traffic-keys')
    const generating = performance.now()
    for (let first = 0; first < STORED_ROWS; first += GENERATE_CHUNK) {
      const count = Math.min(GENERATE_CHUNK, STORED_ROWS - first)
      await engine.command(generatedRowsSql(KEY_VERIFICATIONS.name, WORKSPACE_ID, first, count, nowMs, STORED_DAYS))
      progress(
        `generated ${(first + count).toLocaleString('en-US')} of ${STORED_ROWS.toLocaleString('en-US')} rows (${((performance.now() - generating) / 1000).toFixed(0)} s)`,
      )
    }
    await engine.command(`DROP TABLE \`${TRAFFIC_KEYS_TABLE}\``)
    progress('merging every table into one part (OPTIMIZE … FINAL)')
    for (const table of TABLES) await engine.command(`OPTIMIZE TABLE \`${table}\` FINAL`)
    const disk = await diskOf(engine)
    // Every generated row stored, and counted once in every rollup.
    for (const [table, { rows: stored, counted }] of disk) {
      if ((counted ?? stored) !== STORED_ROWS) throw new Error(`${table} holds ${counted ?? stored} verifications`)
    }

    const subjects = Array.from({ length: QUERY_WARM_UP + QUERY_RUNS }, () => {
      // A key with an owner: its owner is the customer whose usage is asked.
      for (;;) {
        const { key } = sample(traffic, Math.random)
        if (key.ownerId !== undefined) return { keyId: key.id, apiId: key.apiId, externalId: key.ownerId, nowMs }
      }
    })
    const queries = [
      ...(await timeQueries(engine, subjects, QUERY_WARM_UP)),
      await timeUsage(engine, subjects, QUERY_WARM_UP),
    ]
    const loadAtEnd = loadavg()[0]!

    const rowsPerSecond = ingest.rows / ingest.seconds
    const perMillion = (seconds: number) => (seconds * 1e6) / ingest.rows
    const diskBytes = [...disk.values()].reduce((sum, table) => sum + table.bytes, 0)
    const bytesPerVerification = diskBytes / STORED_ROWS
    const ms = (value: number) => fmt(value, 1)
    const { decode, encode, rawInsert } = ingest.parts
    const rest = ingest.cpuSeconds - decode - encode - rawInsert
    const rows: string[][] = [
      [
        `ingest, ${fmt(ingest.rows)} rows in ${ingest.batches} batches (${fmt(ingest.bufferBytes / 2 ** 20)} MiB)`,
        `${fmt(rowsPerSecond)} rows/s`,
        `${fmt(ingest.seconds, 1)} s; ${fmt(perMillion(ingest.cpuSeconds), 1)} CPU s per million rows (${fmt(perMillion(ingest.cpuSecondsWithMerges), 1)} with its merges${ingest.mergesEnded ? '' : ', unfinished after 60 s'}), Redis ${fmt(perMillion(ingest.redisCpuSeconds), 2)} CPU s`,
      ],
      ...queries.map((query) => {
        const [route, alone] = [timesOf(query.route), timesOf(query.engine)]
        return [
          query.label,
          `p50 ${ms(route.p50)}, p99 ${ms(route.p99)} ms`,
          `engine alone p50 ${ms(alone.p50)}, p99 ${ms(alone.p99)} ms; ${query.rows} rows`,
        ]
      }),
      [
        'on disk, five tables',
        `${fmt(bytesPerVerification, 1)} bytes per verification`,
        `${TABLES.map((table) => `${shortName(table)} ${fmt(disk.get(table)!.bytes / STORED_ROWS, 1)}`).join(', ')}; ${fmt(diskBytes / 2 ** 20)} MiB`,
      ],
    ]
    const checks: Check[] = [
      {
        what: 'ingest: rows/s into the embedded engine',
        value: rowsPerSecond,
        target: `≥ ${fmt(INGEST_TARGET)}`,
        pass: rowsPerSecond >= INGEST_TARGET,
      },
      {
        what: 'ingest: CPU s per million rows',
        value: perMillion(ingest.cpuSeconds),
        target: '(reported)',
        pass: true,
      },
      ...queries.map((query) => {
        const p50 = timesOf(query.route).p50
        return {
          what: `${query.label}: p50 ms`,
          value: p50,
          target: `≤ ${QUERY_TARGET_MS}`,
          pass: p50 <= QUERY_TARGET_MS,
        }
      }),
      { what: 'bytes on disk per verification', value: bytesPerVerification, target: '(reported)', pass: true },
    ]
    return {
      name: 'analytics',
      title: '8. Analytics: ingest, queries, disk',
      command: 'npm run bench:analytics',
      method:
        `The embedded engine (chDB) in the bench's process, a Redis of its own, nothing pinned; traffic of ${APIS} apis and ${fmt(KEYS)} keys, few keys taking most calls (bench/README.md says how each part is measured). ` +
        `Ingest: ${fmt(INGEST_ROWS)} verifications recorded by the real recorder in ${fmt(ROWS_PER_BATCH)}-row batches into the 8 buffers, drained by a real AnalyticsIngest; CPU is this process's. ` +
        `Queries: ${fmt(STORED_ROWS)} verifications over ${STORED_DAYS} days generated in the engine through the materialized views, merged (OPTIMIZE FINAL); each query for ${QUERY_RUNS} keys or apis drawn as traffic draws them, through runAnalyticsQuery (checks, quota, scope: the figure) and by the engine alone; a key's owner's usage through analytics.getUsage (the figure) and its report alone. ` +
        `Load average ${fmt(loadAtStart, 1)} at the start, ${fmt(loadAtEnd, 1)} at the end: rows/s and ms move with it.`,
      table: { headers: ['measured', 'figure', 'detail'], rows },
      checks,
      notes: [
        `The ingest's CPU per million rows, each part alone on the same batches: decoding ${fmt(perMillion(decode), 1)} s, encoding the insert's JSON ${fmt(perMillion(encode), 1)} s, the insert into a copy of the raw table without views ${fmt(perMillion(rawInsert), 1)} s; the rest (the four views, Redis, the ingest's own work) ${fmt(perMillion(rest), 1)} s.`,
      ],
      chart: [
        { label: 'ingest, rows/s', rps: { median: rowsPerSecond, min: rowsPerSecond, max: rowsPerSecond } },
        ...queries.map((query) => {
          const { p99 } = timesOf(query.route)
          return { label: query.label, p99Ms: { median: p99, min: p99, max: p99 } }
        }),
      ],
      summary: `analytics: ingest ${fmt(rowsPerSecond)} rows/s (${fmt(perMillion(ingest.cpuSeconds), 1)} CPU s per million); over ${fmt(STORED_ROWS)} rows, query p50 ${queries.map((query) => ms(timesOf(query.route).p50)).join(' / ')} ms; ${fmt(bytesPerVerification, 1)} bytes per verification on disk`,
    }
  } finally {
    connection?.disconnect()
    await engine?.close()
    await redis.stop()
  }
}

/** A verification table's name in the report: `raw`, or its rollup's period. */
const shortName = (table: string) => /_per_(\w+)_v1$/.exec(table)?.[1] ?? 'raw'

/** Per verification table: rows and bytes on disk over its active parts, and (rollups) the verifications counted. */
async function diskOf(
  engine: ChdbEngine,
): Promise<Map<string, { rows: number; bytes: number; counted: number | undefined }>> {
  const parts = await engine.query(
    'SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts ' +
      'WHERE active AND database = currentDatabase() GROUP BY table',
  )
  const disk = new Map<string, { rows: number; bytes: number; counted: number | undefined }>()
  for (const table of TABLES) {
    const part = parts.find((row) => row.table === table)
    const counted =
      table === KEY_VERIFICATIONS.name
        ? undefined
        : Number((await engine.query(`SELECT sum(count) AS n FROM \`${table}\``))[0]?.n)
    disk.set(table, { rows: Number(part?.rows ?? 0), bytes: Number(part?.bytes ?? 0), counted })
  }
  return disk
}
