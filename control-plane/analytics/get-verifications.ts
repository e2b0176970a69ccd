import { invalid, notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireOneOf } from '../root-keys/root-key-auth.js'
import { reportEngine, usageReport, type Slice, type UsageRow } from './usage-report.js'

/** What rows can be ordered by: Unkey's outcomes (Keygate records no UNAUTHORIZED: 0 in every row). */
export const ORDER_BY = [
  'time',
  'valid',
  'notFound',
  'forbidden',
  'usageExceeded',
  'rateLimited',
  'unauthorized',
  'disabled',
  'insufficientPermissions',
  'expired',
  'total',
] as const
export type OrderBy = (typeof ORDER_BY)[number]

/** Which verifications' counts, over which range, grouped and ordered how. */
export interface GetVerificationsInput {
  apiId: string
  /** Only verifications that resolved to this identity (externalId). */
  externalId?: string | undefined
  /** Only these keys of the api; none: every key of the api. */
  keyIds: string[]
  /** Only verifications that carried every one of these tags. */
  tags: string[]
  start: number
  /** Default: now. */
  end?: number | undefined
  /** One row per slice, or (undefined) one sum over the range. */
  slice: Slice | undefined
  byKey: boolean
  /** By the identity's externalId. */
  byIdentity: boolean
  /** By the whole list of tags (Unkey's `tags`). */
  byTags: boolean
  /** By each tag (Unkey's `tag`). */
  byTag: boolean
  /** Default: by time, then key or identity. */
  orderBy?: OrderBy | undefined
  order: 'asc' | 'desc'
  /** At most this many rows, after ordering. */
  limit?: number | undefined
}

/**
 * Verification counts of an api's keys (or an identity's, or named keys, or those carrying tags), summed or per time
 * slice, key, identity or tag, from the analytics engine (usage-report.ts). In order: the range (400), the root key's
 * read_analytics or read_api on the api (403; read_analytics is Keygate's permission for it, read_api Unkey's, which
 * its clients' root keys hold), the api (404), analytics on this control plane (412). A deleted key's verifications
 * still count.
 */
export async function getVerifications(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: GetVerificationsInput,
): Promise<UsageRow[]> {
  const now = deps.clock.now()
  const end = input.end ?? now
  // Unkey refuses an empty range too.
  if (input.start >= end) throw invalid('start', 'must be before end')
  requireOneOf(caller.principal, input.apiId, ['read_analytics', 'read_api'])
  if (!(await deps.store.keys.getApi(input.apiId))) throw notFound('api', `api ${input.apiId} not found`)
  const engine = reportEngine(deps.analytics)
  const rows = await usageReport(
    engine,
    {
      apiIds: [input.apiId],
      keyIds: input.keyIds.length === 0 ? undefined : [...new Set(input.keyIds)],
      externalId: input.externalId,
      tags: input.tags,
      start: input.start,
      end,
      slice: input.slice,
      byKey: input.byKey,
      byIdentity: input.byIdentity,
      byTags: input.byTags,
      byTag: input.byTag,
      fill: !input.byKey && !input.byIdentity && !input.byTags && !input.byTag,
    },
    now,
  )
  if (input.orderBy !== undefined) sortBy(rows, input.orderBy, input.order)
  return input.limit === undefined ? rows : rows.slice(0, input.limit)
}

function sortBy(rows: UsageRow[], field: OrderBy, order: 'asc' | 'desc'): void {
  const value = (row: UsageRow) => (row as unknown as Record<string, number | undefined>)[field] ?? 0
  rows.sort((a, b) => (order === 'asc' ? value(a) - value(b) : value(b) - value(a)))
}
