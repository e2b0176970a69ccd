import { invalid } from '../../shared/errors/errors.js'
import type { VerdictCode } from '../../shared/verification/verification.js'
import type { AnalyticsAccess } from './analytics-access.js'
import type { AnalyticsEngine, EngineRow } from './engine/analytics-engine.js'
import { analyticsError } from './query/analytics-errors.js'
import { KEY_VERIFICATION_ROLLUPS } from './engine/analytics-tables.js'
import { reportErrorOf } from './report-error.js'
import { stringListParam } from './string-list-param.js'
import { OUTCOME_FIELD, type VerificationCounts } from './usage-sum.js'

/** A time slice of a report. */
export type Slice = 'hour' | 'day' | 'month'

/** Whose verifications, over which range, grouped how: every filter narrows, none widens past `apiIds`. */
export interface UsageQuery {
  /** Only rows of these apis (`key_space_id`), or of every api (`all`): the reach the caller was checked for. */
  apiIds: readonly string[] | 'all'
  /** Only these keys; none: every key of the apis (and the apis' unknown-key counts, as notFound, unless byKey). */
  keyIds?: readonly string[] | undefined
  /** Only verifications that resolved to this identity (externalId), of whatever key, deleted ones included. */
  externalId?: string | undefined
  /** Only verifications that carried every one of these tags. */
  tags?: readonly string[] | undefined
  /**
   * The range, Unix ms: from the start of the slice holding `start` to the end of the one holding `end`; without
   * slices, of the hour (the day, when `start` is older than the hourly rollup keeps).
   */
  start: number
  end: number
  /** One row per slice, or (undefined) one sum over the range. */
  slice: Slice | undefined
  /** By api. */
  byApi?: boolean
  /** By key; verifications of unknown keys (notFound) are left out, as they have no key. */
  byKey?: boolean
  /** By externalId; verifications without an identity are left out, as Unkey leaves them out. */
  byIdentity?: boolean
  /** By the whole list of tags a verification carried (Unkey's `tags`). */
  byTags?: boolean
  /** By each tag (Unkey's `tag`): a verification with two tags counts in both rows, one without in none. */
  byTag?: boolean
  /**
   * Zero rows for the slices without verifications (Unkey's fill): from start's slice up to, not including, end's
   * (which shows when it has counts); without slices, the one sum even when it is zero.
   */
  fill?: boolean
}

/** Verifications by outcome, as Unkey's analytics name them; `total` counts every one. */
export interface OutcomeCounts extends VerificationCounts {
  /** Keygate records no verification answered UNAUTHORIZED; kept for Unkey's shape. */
  unauthorized: number
  /** Credits the verifications spent. */
  spentCredits: number
}

export interface UsageRow extends OutcomeCounts {
  time?: number
  apiId?: string
  keyId?: string
  identity?: { externalId: string }
  tags?: string[]
  tag?: string
}

/** Slices in one answer. */
export const MAX_SLICES = 1_000
/** Rows the engine may answer one report (groups × outcomes): past it the report is refused, not cut short. */
const MAX_ENGINE_ROWS = 100_000
/** A report is one of the control plane's own reads: bounded as a caller's query is, on fewer threads. */
const REPORT_SETTINGS =
  "max_execution_time = 10, max_threads = 2, max_result_rows = 100001, result_overflow_mode = 'throw'"
/** How long the hourly rollup keeps rows, ms: older ranges without slices are read by the day. */
export const HOURS_KEPT_MS = rollupOf('hour').keptDays * 86_400_000

export const noCounts = (): OutcomeCounts => ({
  valid: 0,
  rateLimited: 0,
  usageExceeded: 0,
  disabled: 0,
  expired: 0,
  forbidden: 0,
  insufficientPermissions: 0,
  notFound: 0,
  unauthorized: 0,
  total: 0,
  spentCredits: 0,
})

/** The engine reports run on, or the 412 that says why this control plane has none. */
export function reportEngine(analytics: AnalyticsAccess): AnalyticsEngine {
  const engine = analytics.engine()
  if (engine === undefined) throw analyticsError('notConfigured', analytics.why())
  return engine
}

/**
 * Verification counts from the analytics engine's rollups, grouped as asked, oldest first: by the hour from the
 * hourly rollup, by the day or month from theirs; one sum over a range from the hourly one (the daily one past the
 * hours' retention). Filters are bound as parameters, never spliced into the SQL.
 */
export async function usageReport(engine: AnalyticsEngine, query: UsageQuery, now: number): Promise<UsageRow[]> {
  const { slice, start, end } = query
  if (start > end) throw invalid('start', 'must not be after end')
  if (slice !== undefined && countSlices(slice, start, end) > MAX_SLICES)
    throw invalid('start', `at most ${MAX_SLICES} ${slice}s per request`)
  let answer: EngineRow[] = []
  // No api, or an empty list of keys, has no rows: nothing is asked.
  if ((query.apiIds === 'all' || query.apiIds.length > 0) && query.keyIds?.length !== 0) {
    const { sql, params } = reportStatement(query, rollupOf(slice ?? (start >= now - HOURS_KEPT_MS ? 'hour' : 'day')))
    try {
      answer = await engine.query(sql, params)
    } catch (err) {
      throw reportErrorOf(err)
    }
  }
  if (answer.length > MAX_ENGINE_ROWS)
    throw invalid('start', `this report has more than ${MAX_ENGINE_ROWS} rows: narrow the range or group less`)

  const rows = new Map<string, UsageRow>()
  for (const found of answer) {
    const row = rowOf(rows, {
      time: slice === undefined ? undefined : Number(found.slice),
      apiId: query.byApi === true ? String(found.key_space_id) : undefined,
      keyId: query.byKey === true ? String(found.key_id) : undefined,
      identity: query.byIdentity === true ? { externalId: String(found.external_id) } : undefined,
      tags: query.byTags === true ? (found.tags as string[]) : undefined,
      tag: query.byTag === true ? String(found.tag) : undefined,
    })
    const n = Number(found.n)
    const field = OUTCOME_FIELD[found.outcome as VerdictCode]
    if (field !== undefined) row[field] += n
    row.total += n
    row.spentCredits += Number(found.credits)
  }
  if (query.fill === true && slice === undefined) rowOf(rows, {})
  if (query.fill === true && slice !== undefined) {
    for (let t = sliceStart(slice, start); t < sliceStart(slice, end); t = nextSlice(slice, t)) rowOf(rows, { time: t })
  }
  return [...rows.values()].sort(byTimeThenGroup)
}

/** The statement a report runs, on `table`, and its parameters. */
function reportStatement(
  query: UsageQuery,
  table: ReturnType<typeof rollupOf>,
): { sql: string; params: Record<string, string> } {
  const byDay = table.time.type === 'Date'

  const columns: string[] = []
  const groups: string[] = []
  if (query.slice !== undefined) {
    columns.push(`toUnixTimestamp(toDateTime(time, 'UTC')) * 1000 AS slice`)
    groups.push('slice')
  }
  if (query.byApi === true) groups.push('key_space_id')
  if (query.byKey === true) groups.push('key_id')
  if (query.byIdentity === true) groups.push('external_id')
  if (query.byTags === true) groups.push('tags')
  if (query.byTag === true) {
    columns.push('arrayJoin(tags) AS tag')
    groups.push('tag')
  }
  const params: Record<string, string> = {}
  const filters = query.apiIds === 'all' ? [] : [`key_space_id IN ${stringListParam('api', query.apiIds, params)}`]
  if (query.keyIds !== undefined) filters.push(`key_id IN ${stringListParam('key', query.keyIds, params)}`)
  if (query.externalId !== undefined) {
    filters.push('external_id = {externalId:String}')
    params.externalId = query.externalId
  }
  // A row per key or identity is of verifications that had one: an unknown key's (NOT_FOUND) has neither.
  if (query.byKey === true) filters.push("key_id != ''")
  if (query.byIdentity === true) filters.push("external_id != ''")
  for (const [i, tag] of (query.tags ?? []).entries()) {
    filters.push(`has(tags, {tag${i}:String})`)
    params[`tag${i}`] = tag
  }
  if (byDay) {
    filters.push('time >= {from:Date} AND time <= {to:Date}')
    params.from = utcDay(query.slice === 'month' ? monthStart(query.start) : query.start)
    params.to = utcDay(query.end)
  } else {
    filters.push("time >= toDateTime({from:Int64}, 'UTC') AND time <= toDateTime({to:Int64}, 'UTC')")
    params.from = String(Math.floor(query.start / 3_600_000) * 3_600)
    params.to = String(Math.floor(query.end / 1_000))
  }
  const grouped = [...new Set(groups.filter((group) => group !== 'slice' && group !== 'tag'))]
  const sql =
    `SELECT ${[...columns, ...grouped, 'outcome', 'sum(count) AS n', 'sum(spent_credits) AS credits'].join(', ')} ` +
    `FROM \`${table.name}\` WHERE ${filters.join(' AND ')} ` +
    `GROUP BY ${[...groups, 'outcome'].join(', ')} LIMIT ${MAX_ENGINE_ROWS + 1} SETTINGS ${REPORT_SETTINGS}`
  return { sql, params }
}

function rollupOf(period: 'hour' | 'day' | 'month') {
  const table = KEY_VERIFICATION_ROLLUPS.find((rollup) => rollup.name === `key_verifications_per_${period}_v1`)
  if (table === undefined) throw new Error(`no ${period} rollup`)
  return table
}

type Group = Pick<UsageRow, 'time' | 'apiId' | 'keyId' | 'identity' | 'tags' | 'tag'>

function rowOf(rows: Map<string, UsageRow>, group: Group): UsageRow {
  const id = JSON.stringify([group.time, group.apiId, group.keyId, group.identity?.externalId, group.tags, group.tag])
  let row = rows.get(id)
  if (!row) {
    const defined = Object.fromEntries(Object.entries(group).filter(([, value]) => value !== undefined)) as Group
    rows.set(id, (row = { ...defined, ...noCounts() }))
  }
  return row
}

const byTimeThenGroup = (a: UsageRow, b: UsageRow) =>
  (a.time ?? 0) - (b.time ?? 0) ||
  (a.apiId ?? '').localeCompare(b.apiId ?? '') ||
  (a.keyId ?? '').localeCompare(b.keyId ?? '') ||
  (a.identity?.externalId ?? '').localeCompare(b.identity?.externalId ?? '') ||
  (a.tag ?? '').localeCompare(b.tag ?? '') ||
  JSON.stringify(a.tags ?? []).localeCompare(JSON.stringify(b.tags ?? []))

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

function monthStart(ms: number): number {
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

/** The start of the slice holding `ms`, Unix ms (UTC). */
export function sliceStart(slice: Slice, ms: number): number {
  if (slice === 'month') return monthStart(ms)
  const size = slice === 'hour' ? HOUR_MS : DAY_MS
  return Math.floor(ms / size) * size
}

/** The start of the slice after the one starting at `time`. */
export function nextSlice(slice: Slice, time: number): number {
  if (slice === 'hour') return time + HOUR_MS
  if (slice === 'day') return time + DAY_MS
  const date = new Date(time)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}

function countSlices(slice: Slice, start: number, end: number): number {
  if (slice !== 'month') return Math.floor((end - sliceStart(slice, start)) / (slice === 'hour' ? HOUR_MS : DAY_MS)) + 1
  const [from, to] = [new Date(start), new Date(end)]
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth() + 1
}
