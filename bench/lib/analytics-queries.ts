import { pino } from 'pino'
import type { Caller } from '../../control-plane/caller.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { runAnalyticsQuery } from '../../control-plane/analytics/query/run-query.js'
import { QUERIES_PER_HOUR, VERIFICATIONS } from '../../control-plane/analytics/query/query-rules.js'
import { getUsage } from '../../control-plane/analytics/get-usage.js'
import { usageReport } from '../../control-plane/analytics/usage-report.js'
import { ApiSettingsRecords } from '../../control-plane/apis/api-settings.js'
import type { ControlPlaneDeps } from '../../control-plane/control-plane-deps.js'
import { systemClock } from '../../shared/clock.js'
import { openBackend } from '../../shared/store/backend.js'
import { progress } from './rounds.js'
import { median, percentile } from './stats.js'

/**
 * Who and when a query asks about: a key, its api and its owner (a customer with keys), and the instant its window
 * ends (Unix ms).
 */
export interface QuerySubject {
  keyId: string
  apiId: string
  externalId: string
  nowMs: number
}

/** One of Unkey's typical questions, as a v2 analytics caller writes it for one key or api. */
export interface AnalyticsQuery {
  label: string
  sql(of: QuerySubject): string
}

/** An id as a SQL string: ids are letters, digits and `_` (the bench's own), checked rather than escaped. */
const literal = (id: string) => {
  if (!/^\w+$/.test(id)) throw new Error(`not an id: ${id}`)
  return `'${id}'`
}
const DAY_MS = 86_400_000
/** A window's start as a rollup's DateTime `time` compares with it, and as the raw table's Unix ms do. */
const since = (nowMs: number, days: number) => `toDateTime(${Math.floor((nowMs - days * DAY_MS) / 1000)})`
const sinceMs = (nowMs: number, days: number) => String(nowMs - days * DAY_MS)

/**
 * One key's verifications by outcome per hour over 30 days, and the 10 keys of an api verified most over 7 days: from
 * the hour rollup, as a dashboard asks them, and from the raw table, as a caller unaware of the rollups does. Each
 * window's start is written as a constant, as a dashboard computes it (so that repeated runs answer alike).
 */
export const ANALYTICS_QUERIES: readonly AnalyticsQuery[] = [
  {
    label: "a key's verifications by outcome per hour, 30 days (hour rollup)",
    sql: ({ keyId, nowMs }) =>
      'SELECT time, outcome, sum(count) AS verifications FROM key_verifications_per_hour_v1 ' +
      `WHERE key_id = ${literal(keyId)} AND time >= ${since(nowMs, 30)} ` +
      'GROUP BY time, outcome ORDER BY time, outcome',
  },
  {
    label: "a key's verifications by outcome per hour, 30 days (raw table)",
    sql: ({ keyId, nowMs }) =>
      'SELECT toStartOfHour(fromUnixTimestamp64Milli(time)) AS hour, outcome, count() AS verifications ' +
      `FROM key_verifications_v1 WHERE key_id = ${literal(keyId)} AND time >= ${sinceMs(nowMs, 30)} ` +
      'GROUP BY hour, outcome ORDER BY hour, outcome',
  },
  {
    label: 'top 10 keys of an api, 7 days (hour rollup)',
    sql: ({ apiId, nowMs }) =>
      'SELECT key_id, sum(count) AS verifications FROM key_verifications_per_hour_v1 ' +
      `WHERE key_space_id = ${literal(apiId)} AND time >= ${since(nowMs, 7)} ` +
      'GROUP BY key_id ORDER BY verifications DESC, key_id LIMIT 10',
  },
  {
    label: 'top 10 keys of an api, 7 days (raw table)',
    sql: ({ apiId, nowMs }) =>
      'SELECT key_id, count() AS verifications FROM key_verifications_v1 ' +
      `WHERE key_space_id = ${literal(apiId)} AND time >= ${sinceMs(nowMs, 7)} ` +
      'GROUP BY key_id ORDER BY verifications DESC, key_id LIMIT 10',
  },
]

export interface QueryTimes {
  label: string
  /** The SQL as the engine ran it alone, ms per run. */
  engine: number[]
  /** Through runAnalyticsQuery (checked, counted against the quota, scoped), ms per run. */
  route: number[]
  /** Rows the first run answered (both ways alike). */
  rows: number
}

export const timesOf = (ms: number[]) => ({ p50: median(ms), p99: percentile(ms, 99) })

/**
 * Times each query for each of `subjects` (a key and its api each), twice a subject: by the engine alone, and through
 * runAnalyticsQuery — what analytics.getVerifications runs for a caller, here one whose root key reads every api's
 * analytics, on a memory store for its quota — alternating which goes first. Each way must answer the same rows.
 * The first WARM_UP subjects are run untimed.
 */
export async function timeQueries(
  engine: AnalyticsEngine,
  subjects: readonly QuerySubject[],
  warmUp: number,
): Promise<QueryTimes[]> {
  const timed = subjects.length - warmUp
  if (ANALYTICS_QUERIES.length * subjects.length > QUERIES_PER_HOUR)
    throw new Error(`${ANALYTICS_QUERIES.length * subjects.length} queries exceed the hour's quota`)
  const backend = openBackend({ kind: 'memory' })
  const deps = {
    analytics: { engine: () => engine, why: () => 'unused' },
    store: backend.store,
    clock: systemClock,
  }
  const caller: Caller = {
    principal: { rootKeyId: 'root_bench', permissions: ['api.*.read_analytics'] },
    requestId: 'req_bench',
    log: pino({ level: 'silent' }),
  }
  try {
    const results: QueryTimes[] = []
    for (const query of ANALYTICS_QUERIES) {
      progress(`${query.label}: ${timed} runs each way (after ${warmUp} untimed)`)
      const times: QueryTimes = { label: query.label, engine: [], route: [], rows: 0 }
      for (const [i, subject] of subjects.entries()) {
        const sql = query.sql(subject)
        const ways = [
          { times: times.engine, run: () => engine.query(sql) },
          { times: times.route, run: () => runAnalyticsQuery(deps, caller, sql, VERIFICATIONS) },
        ]
        const answers: string[] = []
        for (const way of i % 2 === 0 ? ways : [...ways].reverse()) {
          const began = performance.now()
          const rows = await way.run()
          const ms = performance.now() - began
          answers.push(JSON.stringify(rows))
          if (i >= warmUp) way.times.push(ms)
          if (i === 0) times.rows = rows.length
        }
        if (answers[0] !== answers[1]) throw new Error(`${query.label}: the route and the engine answer otherwise`)
      }
      results.push(times)
    }
    return results
  } finally {
    await backend.close()
  }
}

/** The usage query: a customer's month, by day, as billing asks it. */
export const USAGE_QUERY_LABEL = "a customer's usage by day, 30 days (analytics.getUsage)"

/**
 * Times analytics.getUsage for each subject's customer over the 30 days before its `nowMs`, by the day, across every
 * api: through getUsage (scope, the apis' billable outcomes, periods) for a root key that reads every api's analytics,
 * and its report alone on the engine (usageReport). Both must count the same verifications.
 */
export async function timeUsage(
  engine: AnalyticsEngine,
  subjects: readonly QuerySubject[],
  warmUp: number,
): Promise<QueryTimes> {
  const backend = openBackend({ kind: 'memory' })
  const deps = {
    analytics: { engine: () => engine, why: () => 'unused' },
    store: backend.store,
    clock: systemClock,
    apiSettings: new ApiSettingsRecords(backend.store.entities, () => undefined),
  } as unknown as ControlPlaneDeps
  const caller: Caller = {
    principal: { rootKeyId: 'root_bench', permissions: ['api.*.read_analytics'] },
    requestId: 'req_bench',
    log: pino({ level: 'silent' }),
  }
  progress(`${USAGE_QUERY_LABEL}: ${subjects.length - warmUp} runs each way (after ${warmUp} untimed)`)
  const times: QueryTimes = { label: USAGE_QUERY_LABEL, engine: [], route: [], rows: 0 }
  try {
    for (const [i, { externalId, nowMs }] of subjects.entries()) {
      const [start, end] = [nowMs - 30 * DAY_MS, nowMs]
      const ways = [
        {
          times: times.engine,
          run: async () => {
            const query = { apiIds: 'all' as const, externalId, start, end, slice: 'day' as const, byApi: true }
            const rows = await usageReport(engine, query, nowMs)
            return { rows: rows.length, counted: rows.reduce((sum, row) => sum + row.total, 0) }
          },
        },
        {
          times: times.route,
          run: async () => {
            const usage = await getUsage(deps, caller, { externalId, apiIds: [], start, end, granularity: 'day' })
            return { rows: usage.periods.length, counted: usage.total.verifications.total }
          },
        },
      ]
      const counted: number[] = []
      for (const way of i % 2 === 0 ? ways : [...ways].reverse()) {
        const began = performance.now()
        const answer = await way.run()
        const ms = performance.now() - began
        counted.push(answer.counted)
        if (i >= warmUp) way.times.push(ms)
        if (i === 0 && way.times === times.route) times.rows = answer.rows
      }
      if (counted[0] !== counted[1]) throw new Error(`${USAGE_QUERY_LABEL}: the route and the report count otherwise`)
    }
    return times
  } finally {
    await backend.close()
  }
}
