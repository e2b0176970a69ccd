import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { ApiError } from '../../../shared/errors/errors.js'
import type { EngineRow } from '../engine/analytics-engine.js'
import { analyticsError } from './analytics-errors.js'
import { checkedQuery } from './checked-query.js'
import { engineErrorOf, TOO_LARGE } from './engine-errors.js'
import {
  MAX_ANSWER_BYTES,
  MAX_EXECUTION_SECONDS,
  MAX_QUERY_MEMORY,
  MAX_RESULT_ROWS,
  QUERIES_PER_HOUR,
  type QueryDataset,
  type QueryTable,
} from './query-rules.js'
import { scopeOf, type QueryScope } from './query-scope.js'

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** The quota's window, counted as a rate-limit namespace of Keygate's own no caller can name. */
export const QUOTA_NAMESPACE = '\u0000keygate.analytics'

/**
 * Runs a caller's ClickHouse SQL over one dataset's tables (analytics.getVerifications, analytics.getRatelimits):
 * the root key's reach checked first (403), then that this control plane serves analytics (412), the query checked
 * (checked-query.ts: 400) and the hour's quota counted (429; before the analysis of a query with subqueries, which runs
 * them), and the query run with what it may see and spend set on it by the engine itself (below). Answers its rows.
 */
export async function runAnalyticsQuery(
  deps: Pick<ControlPlaneDeps, 'analytics' | 'store' | 'clock'>,
  caller: Caller,
  query: string,
  dataset: QueryDataset,
): Promise<EngineRow[]> {
  const scope = await scopeOf(deps, caller.principal, dataset)
  const engine = deps.analytics.engine()
  if (engine === undefined) throw analyticsError('notConfigured', deps.analytics.why())
  const now = deps.clock.now()
  const settings = settingsOf(dataset, scope, now)
  const checked = await checkedQuery(engine, query, dataset, now, settings, async () => {
    const quota = await deps.store.counters.consumeNamespaceLimit(
      QUOTA_NAMESPACE,
      'workspace',
      QUERIES_PER_HOUR,
      HOUR_MS,
      1,
      now,
    )
    if (!quota.ok) {
      throw analyticsError('quota', 'Query quota exceeded for the current time window. Please try again later.')
    }
  })
  let rows: EngineRow[]
  try {
    rows = await engine.query(`${checked.sql} SETTINGS ${settings}`)
  } catch (err) {
    throw err instanceof ApiError ? err : engineErrorOf(err)
  }
  if (Buffer.byteLength(JSON.stringify(rows)) > MAX_ANSWER_BYTES) throw analyticsError('memory', TOO_LARGE)
  return rows
}

/**
 * What the engine applies to the query, whatever it says: on every read of each of the dataset's tables (in a CTE,
 * subquery, join or UNION alike), only the rows of the apis or namespaces the root key may read and none older than the
 * table keeps (ClickHouse's `additional_table_filters`); read-only; bounded in time, memory and rows.
 */
function settingsOf(dataset: QueryDataset, scope: QueryScope, nowMs: number): string {
  const filters = dataset.tables.map((table) => {
    const reach =
      scope.kind === 'all'
        ? undefined
        : scope.ids.length === 0
          ? '0'
          : `${dataset.scopeColumn} IN (${scope.ids.map(sqlString).join(', ')})`
    const filter = [reach, `time >= ${floorOf(table, nowMs)}`].filter(Boolean).join(' AND ')
    return `${sqlString(table.name)}: ${sqlString(filter)}`
  })
  return [
    `additional_table_filters = {${filters.join(', ')}}`,
    'readonly = 1',
    `max_execution_time = ${MAX_EXECUTION_SECONDS}`,
    `max_memory_usage = ${MAX_QUERY_MEMORY}`,
    `max_result_rows = ${MAX_RESULT_ROWS}`,
    `max_result_bytes = ${MAX_ANSWER_BYTES}`,
    "result_overflow_mode = 'throw'",
  ].join(', ')
}

/** The oldest row a table shows: the start of the day (UTC) it keeps rows from, in its `time` column's terms. */
function floorOf(table: QueryTable, nowMs: number): string {
  const day = Math.floor((nowMs - table.keptDays * DAY_MS) / DAY_MS) * DAY_MS
  if (table.time === 'unix-ms') return String(day)
  if (table.time === 'datetime') return `toDateTime(${day / 1000}, 'UTC')`
  return `toDate(toDateTime(${day / 1000}, 'UTC'))`
}

/** A ClickHouse string literal of `text`. */
const sqlString = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
