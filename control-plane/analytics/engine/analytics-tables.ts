import type { AnalyticsEngine } from './analytics-engine.js'

/**
 * The tables callers query, by the names Unkey's v2 analytics gives them (`key_verifications_v1`, its rollups
 * `key_verifications_per_{minute,hour,day,month}_v1`, `ratelimits_v1` and its rollups), defined once here; the
 * statements that make them are generated from these definitions.
 *
 * A raw table holds a row per verification (or rate-limit decision); each rollup is fed by a materialized view from
 * the table one step finer (raw → minute → hour → day → month), counting rows as `count` (or `total` and `passed`).
 * Sort keys put the key (or the namespace) before time: the questions asked are one key's, one identity's or one
 * api's usage over a period, and a key-first key reads a tenth of what a time-first one does for them. Every table
 * keeps a deduplication window, so that a batch inserted again with its token is dropped by the raw table and every
 * rollup alike (analytics-engine.ts, insert).
 */

/** A column: its name and ClickHouse type. */
interface Column {
  name: string
  type: string
}

/** A table of rows as they were recorded. */
interface RawTable {
  name: string
  columns: Column[]
  orderBy: string[]
  /** How long a row is kept, in days (the TTL on its time, Unix ms). */
  keptDays: number
}

/** A rollup: rows of `from` counted per period and dimension, by a materialized view. */
interface Rollup {
  name: string
  from: string
  /** The period's start, as a column type and as the expression over `from`'s `time`. */
  time: { type: typeof UTC_DATETIME | 'Date'; of: string }
  dimensions: Column[]
  /** The counted columns: each a sum, and the expression that counts it over `from`. */
  sums: { name: string; of: string }[]
  /** The sort key, `time` among them: every dimension is in it, as an AggregatingMergeTree needs. */
  orderBy: string[]
  keptDays: number
  /** How the TTL reads a row's time. */
  ttlTime: string
}

/**
 * A rollup's period start: a DateTime in UTC, so that hours, days and months are UTC's whatever the timezone of the
 * machine or server the engine runs on (ClickHouse reads a plain DateTime in the server's own). Days and months are
 * Dates taken from it, in UTC too.
 */
const UTC_DATETIME = "DateTime('UTC')"

const DEDUPLICATION_WINDOW = 10_000

const VERIFICATION_DIMENSIONS: Column[] = [
  { name: 'workspace_id', type: 'LowCardinality(String)' },
  { name: 'key_space_id', type: 'String' },
  { name: 'identity_id', type: 'String' },
  { name: 'external_id', type: 'String' },
  { name: 'key_id', type: 'String' },
  { name: 'outcome', type: 'LowCardinality(String)' },
  { name: 'tags', type: 'Array(String)' },
  { name: 'source', type: 'LowCardinality(String)' },
  { name: 'region', type: 'LowCardinality(String)' },
]

/** One verification of a key that exists: what was asked, of which key, and the answer. */
export const KEY_VERIFICATIONS: RawTable = {
  name: 'key_verifications_v1',
  columns: [
    { name: 'request_id', type: 'String' },
    { name: 'time', type: 'Int64' },
    ...VERIFICATION_DIMENSIONS,
    { name: 'spent_credits', type: 'Int64' },
    { name: 'latency', type: 'Float64' },
  ],
  orderBy: ['workspace_id', 'key_space_id', 'key_id', 'time'],
  keptDays: 90,
}

const VERIFICATION_ORDER = [
  'workspace_id',
  'key_space_id',
  'key_id',
  'time',
  'identity_id',
  'external_id',
  'outcome',
  'tags',
  'source',
  'region',
]

/** A rollup fed by `from`: the raw table counts its rows, a rollup sums the counts of the one before it. */
const verificationRollup = (
  period: 'minute' | 'hour' | 'day' | 'month',
  from: string,
  time: Rollup['time'],
  keptDays: number,
): Rollup => ({
  name: `key_verifications_per_${period}_v1`,
  from,
  time,
  dimensions: VERIFICATION_DIMENSIONS,
  sums: [
    { name: 'count', of: from === KEY_VERIFICATIONS.name ? 'count(*)' : 'sum(count)' },
    { name: 'spent_credits', of: 'sum(spent_credits)' },
  ],
  orderBy: VERIFICATION_ORDER,
  keptDays,
  ttlTime: 'time',
})

/** The verification rollups, finest first: each is fed by the one before it (the first by the raw table). */
export const KEY_VERIFICATION_ROLLUPS: Rollup[] = [
  verificationRollup(
    'minute',
    KEY_VERIFICATIONS.name,
    { type: UTC_DATETIME, of: "toStartOfMinute(fromUnixTimestamp64Milli(time, 'UTC'))" },
    90,
  ),
  verificationRollup('hour', 'key_verifications_per_minute_v1', { type: UTC_DATETIME, of: 'toStartOfHour(time)' }, 90),
  verificationRollup('day', 'key_verifications_per_hour_v1', { type: 'Date', of: 'toDate(toStartOfDay(time))' }, 365),
  verificationRollup('month', 'key_verifications_per_day_v1', { type: 'Date', of: 'toStartOfMonth(time)' }, 3 * 365),
]

const RATELIMIT_DIMENSIONS: Column[] = [
  { name: 'workspace_id', type: 'LowCardinality(String)' },
  { name: 'namespace_id', type: 'String' },
  { name: 'identifier', type: 'String' },
]

/** One rate-limit decision: which namespace and identifier, whether it passed, the limit and what remained. */
export const RATELIMITS: RawTable = {
  name: 'ratelimits_v1',
  columns: [
    { name: 'request_id', type: 'String' },
    { name: 'time', type: 'Int64' },
    ...RATELIMIT_DIMENSIONS,
    { name: 'passed', type: 'Bool' },
    { name: 'limit', type: 'Int64' },
    { name: 'remaining', type: 'Int64' },
    { name: 'latency', type: 'Float64' },
  ],
  orderBy: ['workspace_id', 'namespace_id', 'identifier', 'time'],
  keptDays: 30,
}

const RATELIMIT_ORDER = ['workspace_id', 'namespace_id', 'identifier', 'time']

const ratelimitRollup = (
  period: 'minute' | 'hour' | 'day' | 'month',
  from: string,
  time: Rollup['time'],
  keptDays: number,
): Rollup => ({
  name: `ratelimits_per_${period}_v1`,
  from,
  time,
  dimensions: RATELIMIT_DIMENSIONS,
  sums:
    from === RATELIMITS.name
      ? [
          { name: 'passed', of: 'countIf(passed)' },
          { name: 'total', of: 'count(*)' },
        ]
      : [
          { name: 'passed', of: 'sum(passed)' },
          { name: 'total', of: 'sum(total)' },
        ],
  orderBy: RATELIMIT_ORDER,
  keptDays,
  ttlTime: 'time',
})

/** The rate-limit rollups, finest first, kept as Unkey keeps them. */
export const RATELIMIT_ROLLUPS: Rollup[] = [
  ratelimitRollup(
    'minute',
    RATELIMITS.name,
    { type: UTC_DATETIME, of: "toStartOfMinute(fromUnixTimestamp64Milli(time, 'UTC'))" },
    7,
  ),
  ratelimitRollup('hour', 'ratelimits_per_minute_v1', { type: UTC_DATETIME, of: 'toStartOfHour(time)' }, 30),
  ratelimitRollup('day', 'ratelimits_per_hour_v1', { type: 'Date', of: 'toDate(toStartOfDay(time))' }, 100),
  ratelimitRollup('month', 'ratelimits_per_day_v1', { type: 'Date', of: 'toStartOfMonth(time)' }, 3 * 365),
]

/** Every table callers may query, raw and rollups. */
export const PUBLIC_TABLES: readonly string[] = [
  KEY_VERIFICATIONS.name,
  ...KEY_VERIFICATION_ROLLUPS.map((rollup) => rollup.name),
  RATELIMITS.name,
  ...RATELIMIT_ROLLUPS.map((rollup) => rollup.name),
]

const columnsOf = (columns: Column[]) => columns.map(({ name, type }) => `\`${name}\` ${type}`).join(', ')
const keyOf = (names: string[]) => names.map((name) => `\`${name}\``).join(', ')
/** A name in backquotes, as ClickHouse reads it whatever it holds. */
export const quotedName = (name: string) => `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``

/**
 * Where the tables are made. On one server (the embedded engine, or a ClickHouse server): MergeTree tables, their
 * names unqualified (the engine's database). On a cluster (`CLICKHOUSE_CLUSTER`, as its `remote_servers` names it):
 * every statement `ON CLUSTER`, so that every replica runs it, its names qualified by the database the statement was
 * sent in (each replica runs it in its own context); the tables Replicated, with no arguments, so that the servers'
 * `default_replica_path` and `default_replica_name` place them (by default `/clickhouse/tables/{uuid}/{shard}` and
 * `{replica}`, the usual macros). One shard: every replica holds every row, and the public names are the tables
 * themselves (no Distributed table in front), so the query rules and `additional_table_filters` read them as on one
 * server. Sharding is not generated (docs/analytics.md, on a cluster).
 */
export type SchemaTarget = { cluster: string; database: string } | undefined

/** How a statement names a table or view on `target`. */
const nameOn = (name: string, target: SchemaTarget) =>
  target === undefined ? quotedName(name) : `${quotedName(target.database)}.${quotedName(name)}`

/** The `ON CLUSTER` clause, on a cluster. */
const onCluster = (target: SchemaTarget) => (target === undefined ? '' : ` ON CLUSTER ${quotedName(target.cluster)}`)

/**
 * A table's engine and the deduplication window that drops a batch sent again: on one server the window of a
 * MergeTree's own; on a cluster the replicated window (kept in Keeper: a batch sent again to another replica is
 * dropped too).
 */
function engineOf(
  kind: 'MergeTree' | 'AggregatingMergeTree',
  target: SchemaTarget,
): { engine: string; window: string } {
  return target === undefined
    ? { engine: kind, window: `non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}` }
    : { engine: `Replicated${kind}`, window: `replicated_deduplication_window = ${DEDUPLICATION_WINDOW}` }
}

/** A statement that makes a table or view when it is missing, and the name it makes. */
export interface SchemaStatement {
  name: string
  sql: string
}

function rawTableStatement(table: RawTable, target: SchemaTarget): SchemaStatement {
  const { engine, window } = engineOf('MergeTree', target)
  return {
    name: table.name,
    sql:
      `CREATE TABLE IF NOT EXISTS ${nameOn(table.name, target)}${onCluster(target)} (${columnsOf(table.columns)}) ` +
      `ENGINE = ${engine} ORDER BY (${keyOf(table.orderBy)}) ` +
      `TTL toDateTime(fromUnixTimestamp64Milli(time)) + INTERVAL ${table.keptDays} DAY ` +
      `SETTINGS ${window}`,
  }
}

function rollupStatements(rollup: Rollup, target: SchemaTarget): SchemaStatement[] {
  const { engine, window } = engineOf('AggregatingMergeTree', target)
  const sums = rollup.sums.map(({ name }) => ({ name, type: 'SimpleAggregateFunction(sum, Int64)' }))
  const dimensions = rollup.dimensions.map(({ name }) => `\`${name}\``).join(', ')
  const view = `${rollup.name}_mv`
  return [
    {
      name: rollup.name,
      sql:
        `CREATE TABLE IF NOT EXISTS ${nameOn(rollup.name, target)}${onCluster(target)} ` +
        `(\`time\` ${rollup.time.type}, ${columnsOf(rollup.dimensions)}, ${columnsOf(sums)}) ` +
        `ENGINE = ${engine} ORDER BY (${keyOf(rollup.orderBy)}) ` +
        `TTL toDateTime(${rollup.ttlTime}) + INTERVAL ${rollup.keptDays} DAY ` +
        `SETTINGS ${window}`,
    },
    {
      name: view,
      sql:
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${nameOn(view, target)}${onCluster(target)} ` +
        `TO ${nameOn(rollup.name, target)} AS ` +
        `SELECT ${rollup.time.of} AS time, ${dimensions}, ` +
        `${rollup.sums.map(({ name, of }) => `${of} AS \`${name}\``).join(', ')} ` +
        `FROM ${nameOn(rollup.from, target)} GROUP BY time, ${dimensions}`,
    },
  ]
}

/**
 * The statements that make every table and view on `target` (default: one server), in the order they must run (a
 * view after the tables it reads and feeds): each does nothing when its table or view exists.
 */
export function analyticsSchema(target?: SchemaTarget): SchemaStatement[] {
  return [
    rawTableStatement(KEY_VERIFICATIONS, target),
    ...KEY_VERIFICATION_ROLLUPS.flatMap((rollup) => rollupStatements(rollup, target)),
    rawTableStatement(RATELIMITS, target),
    ...RATELIMIT_ROLLUPS.flatMap((rollup) => rollupStatements(rollup, target)),
  ]
}

/**
 * Makes every table and view that is missing, in the engine's database (on `cluster`'s replicas when given); run at
 * every start. On a cluster only the statements for what the replica reached lacks are sent: each waits for every
 * replica, and one replica down would otherwise hold every start until it is back.
 */
export async function ensureAnalyticsSchema(engine: AnalyticsEngine, cluster?: string): Promise<void> {
  const target = cluster === undefined ? undefined : { cluster, database: engine.database }
  let statements = analyticsSchema(target)
  if (target !== undefined) {
    const present = new Set(
      (await engine.query('SELECT name FROM system.tables WHERE database = currentDatabase()')).map((row) =>
        String(row.name),
      ),
    )
    statements = statements.filter(({ name }) => !present.has(name))
  }
  for (const { sql } of statements) await engine.command(sql)
}
