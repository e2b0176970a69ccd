import {
  KEY_VERIFICATIONS,
  KEY_VERIFICATION_ROLLUPS,
  RATELIMITS,
  RATELIMIT_ROLLUPS,
} from '../engine/analytics-tables.js'

/** The longest query text taken, bytes. */
export const MAX_QUERY_BYTES = 16 * 1024
/** The most nodes a query's syntax tree may have. */
export const MAX_QUERY_NODES = 2_000
/** The most columns a query may project, over every SELECT in it. */
export const MAX_PROJECTED_COLUMNS = 64
/** The largest answer, bytes of JSON. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024
/** How long a query may run, seconds. */
export const MAX_EXECUTION_SECONDS = 10
/** How much memory a query may use, bytes. */
export const MAX_QUERY_MEMORY = 1_000_000_000
/** The most rows a query may answer. */
export const MAX_RESULT_ROWS = 1_000_000
/** Queries a workspace may run per UTC hour, over both calls. */
export const QUERIES_PER_HOUR = 1_000

/** A table a call may read: its name, how its `time` column counts, and how long rows are kept. */
export interface QueryTable {
  name: string
  time: 'unix-ms' | 'datetime' | 'date'
  keptDays: number
}

/** The tables of one call, and the column its rows are scoped by (the api, or the namespace). */
export interface QueryDataset {
  name: 'verifications' | 'ratelimits'
  tables: readonly QueryTable[]
  /** The column a root key's reach is applied to. */
  scopeColumn: 'key_space_id' | 'namespace_id'
}

const rollupTime = (time: { type: string }): QueryTable['time'] => (time.type === 'Date' ? 'date' : 'datetime')

export const VERIFICATIONS: QueryDataset = {
  name: 'verifications',
  tables: [
    { name: KEY_VERIFICATIONS.name, time: 'unix-ms', keptDays: KEY_VERIFICATIONS.keptDays },
    ...KEY_VERIFICATION_ROLLUPS.map((r) => ({ name: r.name, time: rollupTime(r.time), keptDays: r.keptDays })),
  ],
  scopeColumn: 'key_space_id',
}

export const RATELIMIT_DECISIONS: QueryDataset = {
  name: 'ratelimits',
  tables: [
    { name: RATELIMITS.name, time: 'unix-ms', keptDays: RATELIMITS.keptDays },
    ...RATELIMIT_ROLLUPS.map((r) => ({ name: r.name, time: rollupTime(r.time), keptDays: r.keptDays })),
  ],
  scopeColumn: 'namespace_id',
}

/**
 * The functions a query may call, by the names ClickHouse's parser gives them (lowercase): aggregates, dates and
 * times, strings, arrays, conditionals and conversions, and the functions operators are (`a = b` is `equals`, `x IN
 * (…)` is `in`, `CASE` is `multiIf`, `count(DISTINCT x)` is `countDistinct`). Nothing that reads files, the network,
 * dictionaries or the server's settings: an allow-list, so a function ClickHouse adds is refused until named here.
 */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(
  [
    // Aggregates.
    'count',
    'countDistinct',
    'countIf',
    'sum',
    'sumIf',
    'avg',
    'avgIf',
    'min',
    'minIf',
    'max',
    'maxIf',
    'any',
    'anyLast',
    'argMin',
    'argMax',
    'groupArray',
    'groupUniqArray',
    'uniq',
    'uniqExact',
    'uniqIf',
    'quantile',
    'quantiles',
    'median',
    'topK',
    // Window functions.
    'row_number',
    'rank',
    'dense_rank',
    'lagInFrame',
    'leadInFrame',
    // Dates and times.
    'now',
    'now64',
    'today',
    'yesterday',
    'toDate',
    'toDateTime',
    'toDateTime64',
    'toStartOfMinute',
    'toStartOfFiveMinutes',
    'toStartOfFifteenMinutes',
    'toStartOfHour',
    'toStartOfDay',
    'toStartOfWeek',
    'toMonday',
    'toStartOfMonth',
    'toStartOfQuarter',
    'toStartOfYear',
    'toStartOfInterval',
    'date_trunc',
    'dateTrunc',
    'formatDateTime',
    'fromUnixTimestamp',
    'fromUnixTimestamp64Milli',
    'toUnixTimestamp',
    'toUnixTimestamp64Milli',
    'toYYYYMM',
    'toYYYYMMDD',
    'toYear',
    'toMonth',
    'toDayOfMonth',
    'toDayOfWeek',
    'toHour',
    'toMinute',
    'dateDiff',
    'date_diff',
    'addDays',
    'addHours',
    'addMinutes',
    'subtractDays',
    'subtractHours',
    'subtractMinutes',
    'toIntervalNanosecond',
    'toIntervalMicrosecond',
    'toIntervalMillisecond',
    'toIntervalSecond',
    'toIntervalMinute',
    'toIntervalHour',
    'toIntervalDay',
    'toIntervalWeek',
    'toIntervalMonth',
    'toIntervalQuarter',
    'toIntervalYear',
    // Strings.
    'lower',
    'upper',
    'substring',
    'concat',
    'length',
    'trim',
    'startsWith',
    'endsWith',
    'like',
    'notLike',
    'ilike',
    'notILike',
    'position',
    'replaceAll',
    'splitByChar',
    'JSONExtractString',
    // Numbers.
    'round',
    'floor',
    'ceil',
    'abs',
    'intDiv',
    'greatest',
    'least',
    // Conditionals and nulls.
    'if',
    'multiIf',
    'coalesce',
    'ifNull',
    'nullIf',
    'isNull',
    'isNotNull',
    // Conversions.
    'toString',
    'toInt32',
    'toInt64',
    'toUInt32',
    'toUInt64',
    'toFloat64',
    'CAST',
    '_CAST',
    // Arrays and tuples.
    'has',
    'hasAny',
    'hasAll',
    'arrayJoin',
    'arrayFilter',
    'arrayMap',
    'arrayExists',
    'empty',
    'notEmpty',
    'indexOf',
    'array',
    'tuple',
    'arrayElement',
    'tupleElement',
    'lambda',
    // Operators.
    'and',
    'or',
    'not',
    'xor',
    'equals',
    'notEquals',
    'less',
    'greater',
    'lessOrEquals',
    'greaterOrEquals',
    'plus',
    'minus',
    'multiply',
    'divide',
    'modulo',
    'negate',
    'in',
    'notIn',
  ].map((name) => name.toLowerCase()),
)
