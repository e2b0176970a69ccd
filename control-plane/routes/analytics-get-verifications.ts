import { invalid, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyRecord } from '../../shared/records.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { keysInScope } from '../keys-in-scope.js'
import { principalOf, requireOneOf } from '../root-key-auth.js'
import { AnalyticsQuery, AnalyticsRows, type OrderBy } from '../schemas/analytics-schemas.js'
import { verificationReport, type ReportRow, type Slice } from '../verification-report.js'

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

/**
 * Verification counts across an api's keys (or an owner's, or named keys), summed or per time slice, key or
 * owner. read_analytics is Keygate's permission for it; read_api is Unkey's, which its clients' root keys hold.
 */
export function registerAnalyticsGetVerifications(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/analytics.getVerifications',
    { schema: { querystring: AnalyticsQuery, response: { 200: AnalyticsRows } } },
    async (request) => {
      const query = request.query
      const now = deps.clock.now()
      const end = query.end ?? now
      // Unkey refuses an empty range too.
      if (query.start >= end) throw invalid('start', 'must be before end')
      const groupBy = list(query.groupBy)
      if (query.tag !== undefined || groupBy.includes('tag') || groupBy.includes('tags'))
        throw invalid('tag', 'Keygate keeps no tags with its verification counts')
      requireOneOf(principalOf(request), query.apiId, ['read_analytics', 'read_api'])
      if (!(await deps.store.keys.getApi(query.apiId))) throw notFound('api', `api ${query.apiId} not found`)

      const keys = await keysOf(deps, query.apiId, query.externalId, list(query.keyId))
      const slice = (['month', 'day', 'hour'] as const).find((s): s is Slice => groupBy.includes(s))
      const byKey = groupBy.includes('key')
      const byIdentity = groupBy.includes('identity')
      const rows = await verificationReport(deps.store.usage, {
        keys,
        start: query.start,
        end,
        now,
        slice,
        byKey,
        byIdentity,
        fill: !byKey && !byIdentity,
      })
      if (query.orderBy !== undefined) sortBy(rows, query.orderBy, query.order ?? 'asc')
      return query.limit === undefined ? rows : rows.slice(0, query.limit)
    },
  )
}

/** The keys the counts are summed over: named ones of the api (others are ignored, as Unkey filters), or all. */
async function keysOf(
  deps: ControlPlaneDeps,
  apiId: string,
  externalId: string | undefined,
  keyIds: string[],
): Promise<KeyRecord[]> {
  if (keyIds.length === 0) return keysInScope(deps.store.keys, apiId, externalId)
  const records = await Promise.all([...new Set(keyIds)].map((keyId) => deps.store.keys.getKeyById(keyId)))
  return records.filter(
    (record): record is KeyRecord =>
      record !== null && record.apiId === apiId && (externalId === undefined || record.ownerId === externalId),
  )
}

function sortBy(rows: ReportRow[], field: OrderBy, order: 'asc' | 'desc'): void {
  const value = (row: ReportRow) => (row as unknown as Record<string, number | undefined>)[field] ?? 0
  rows.sort((a, b) => (order === 'asc' ? value(a) - value(b) : value(b) - value(a)))
}
