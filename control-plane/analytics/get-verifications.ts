import { invalid, notFound } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { keysInScope } from './keys-in-scope.js'
import { requireOneOf } from '../root-keys/root-key-auth.js'
import { verificationReport, type ReportRow, type Slice } from './verification-report.js'

/** What rows can be ordered by: Unkey's outcomes; those Keygate does not count are 0 in every row. */
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

/** Which keys' counts, over which range, grouped and ordered how. */
export interface GetVerificationsInput {
  apiId: string
  /** Only keys of this owner. */
  externalId?: string | undefined
  /** Only these keys of the api; none: every key of the api (or of the owner). */
  keyIds: string[]
  start: number
  /** Default: now. */
  end?: number | undefined
  /** One row per slice, or (undefined) one sum over the range. */
  slice: Slice | undefined
  byKey: boolean
  /** By the key's owner (externalId). */
  byIdentity: boolean
  /** The call filters or groups by tag: Keygate keeps no tags with its counts, so it is refused (400). */
  byTag: boolean
  /** Default: by time, then key or identity. */
  orderBy?: OrderBy | undefined
  order: 'asc' | 'desc'
  /** At most this many rows, after ordering. */
  limit?: number | undefined
}

/**
 * Verification counts across an api's keys (or an owner's, or named keys), summed or per time slice, key or owner.
 * In order: the range and the grouping (400), the root key's read_analytics or read_api on the api (403;
 * read_analytics is Keygate's permission for it, read_api Unkey's, which its clients' root keys hold), the api (404).
 */
export async function getVerifications(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: GetVerificationsInput,
): Promise<ReportRow[]> {
  const now = deps.clock.now()
  const end = input.end ?? now
  // Unkey refuses an empty range too.
  if (input.start >= end) throw invalid('start', 'must be before end')
  if (input.byTag) throw invalid('tag', 'Keygate keeps no tags with its verification counts')
  requireOneOf(caller.principal, input.apiId, ['read_analytics', 'read_api'])
  if (!(await deps.store.keys.getApi(input.apiId))) throw notFound('api', `api ${input.apiId} not found`)

  const keys = await keysOf(deps, input.apiId, input.externalId, input.keyIds)
  const { start, slice, byKey, byIdentity } = input
  const rows = await verificationReport(deps.store.usage, {
    keys,
    start,
    end,
    now,
    slice,
    byKey,
    byIdentity,
    fill: !byKey && !byIdentity,
  })
  if (input.orderBy !== undefined) sortBy(rows, input.orderBy, input.order)
  return input.limit === undefined ? rows : rows.slice(0, input.limit)
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
