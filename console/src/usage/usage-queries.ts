import { sqlString } from './sql-literal.js'
import { RANGES, sinceOf, type UsageRange } from './usage-ranges.js'
import { countOf, seriesOf, type AnalyticsRow, type UsageSeries } from './usage-series.js'

/**
 * The questions the console asks of the verifications (v2 analytics.getVerifications), each one SELECT over the
 * rollup of its range and the reading of its rows. Every value in the SQL is a number the console made or went through
 * sqlString: an id from the address bar and a tag the admin typed alike.
 */
export interface UsageQuery<T> {
  sql: string
  read: (rows: AnalyticsRow[]) => T
}

/** Whose usage is shown: an api's (its rows' key_space_id), a key's or an identity's; none for every api's. */
export interface UsageScope {
  kind: 'api' | 'key' | 'identity'
  id: string
}

const SCOPE_COLUMNS = { api: 'key_space_id', key: 'key_id', identity: 'identity_id' } as const

/** How many keys and identities the overview lists. */
export const BUSIEST = 10

/** What a count is narrowed to: one api, key or identity, and the verifications that carried a tag. */
export interface UsageFilter {
  scope?: UsageScope | undefined
  tag?: string | undefined
}

function whereOf(range: UsageRange, now: number, filter: UsageFilter): string {
  const conditions = [sinceOf(range, now)]
  if (filter.scope) conditions.push(`${SCOPE_COLUMNS[filter.scope.kind]} = ${sqlString(filter.scope.id)}`)
  if (filter.tag !== undefined) conditions.push(`has(tags, ${sqlString(filter.tag)})`)
  return conditions.join(' AND ')
}

/** Verifications per bucket and outcome over the range ending at `now`. */
export function usageByOutcome(range: UsageRange, now: number, filter: UsageFilter = {}): UsageQuery<UsageSeries> {
  const { table, bucket } = RANGES[range]
  return {
    sql:
      `SELECT ${bucket} AS bucket, outcome, sum(count) AS verifications FROM ${table} ` +
      `WHERE ${whereOf(range, now, filter)} GROUP BY bucket, outcome ORDER BY bucket, outcome`,
    read: (rows) => seriesOf(rows, range, now),
  }
}

/** A key or identity among the busiest: its verifications, and how many of them were refused. */
export interface BusiestRow {
  verifications: number
  refused: number
}

export interface BusiestKey extends BusiestRow {
  keyId: string
  apiId: string
}

export interface BusiestIdentity extends BusiestRow {
  externalId: string
  /** '' for verifications of keys whose identity had no record. */
  identityId: string
}

const COUNTS = "sum(count) AS verifications, sumIf(count, outcome != 'VALID') AS refused"

/** The keys verified most over the range, busiest first. */
export function busiestKeys(range: UsageRange, now: number): UsageQuery<BusiestKey[]> {
  return {
    sql:
      `SELECT key_id, any(key_space_id) AS api_id, ${COUNTS} FROM ${RANGES[range].table} ` +
      `WHERE ${whereOf(range, now, {})} AND key_id != '' ` +
      `GROUP BY key_id ORDER BY verifications DESC, key_id LIMIT ${BUSIEST}`,
    read: (rows) =>
      rows.map((row) => ({
        keyId: String(row.key_id),
        apiId: String(row.api_id),
        verifications: countOf(row.verifications),
        refused: countOf(row.refused),
      })),
  }
}

/** The identities (by externalId) whose keys were verified most over the range, busiest first. */
export function busiestIdentities(range: UsageRange, now: number): UsageQuery<BusiestIdentity[]> {
  return {
    sql:
      `SELECT external_id, any(identity_id) AS identity_id, ${COUNTS} FROM ${RANGES[range].table} ` +
      `WHERE ${whereOf(range, now, {})} AND external_id != '' ` +
      `GROUP BY external_id ORDER BY verifications DESC, external_id LIMIT ${BUSIEST}`,
    read: (rows) =>
      rows.map((row) => ({
        externalId: String(row.external_id),
        identityId: String(row.identity_id),
        verifications: countOf(row.verifications),
        refused: countOf(row.refused),
      })),
  }
}

/** Verifications refused over the range, by reason (every outcome but VALID), most first. */
export function refusalsByReason(range: UsageRange, now: number): UsageQuery<{ outcome: string; count: number }[]> {
  return {
    sql:
      `SELECT outcome, sum(count) AS verifications FROM ${RANGES[range].table} ` +
      `WHERE ${whereOf(range, now, {})} AND outcome != 'VALID' ` +
      `GROUP BY outcome ORDER BY verifications DESC, outcome`,
    read: (rows) => rows.map((row) => ({ outcome: String(row.outcome), count: countOf(row.verifications) })),
  }
}
