import { badRequest, invalid, notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireOneOf, requireOneOfOnKey, type Principal } from '../root-keys/root-key-auth.js'
import { reportEngine, usageReport, type UsageRow } from '../analytics/usage-report.js'

type Granularity = 'hour' | 'day'
const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000 }

/** Buckets one request may span. */
export const MAX_BUCKETS = 1_000

/** Whose counts (a key, or an owner's keys in an api), over which range (unix ms), in which buckets. */
export interface GetVerificationsInput {
  keyId?: string | undefined
  ownerId?: string | undefined
  apiId?: string | undefined
  start?: number | undefined
  end?: number | undefined
  granularity?: Granularity | undefined
}

/**
 * Verification counts of a key, or summed over an owner's verifications in an api, per hour or day (UTC), from the
 * analytics engine's rollups (docs/analytics.md), oldest first, buckets with none left out. Defaults: the last 24
 * hours by hour, or the last 30 days by day. The range is checked (400) before the key or the api is looked up (404,
 * 403), then analytics on this control plane (412). read_analytics is Keygate's permission for it; read_key is
 * Unkey's, which its clients' root keys hold.
 */
export async function getVerifications(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: GetVerificationsInput,
): Promise<UsageRow[]> {
  const { principal } = caller
  const { keyId, ownerId, apiId } = input
  if (keyId === undefined && ownerId === undefined) throw badRequest('keyId or ownerId must be provided')
  const granularity: Granularity = input.granularity ?? 'day'
  const end = input.end ?? deps.clock.now()
  const start = input.start ?? end - (granularity === 'hour' ? 24 : 30 * 24) * BUCKET_MS.hour
  if (start > end) throw invalid('start', 'must not be after end')
  if ((end - start) / BUCKET_MS[granularity] > MAX_BUCKETS)
    throw invalid('start', `at most ${MAX_BUCKETS} ${granularity}s per request`)
  const whose =
    keyId !== undefined ? await oneKey(deps, principal, keyId) : await ownersApi(deps, principal, ownerId!, apiId)
  return usageReport(reportEngine(deps.analytics), { ...whose, start, end, slice: granularity }, deps.clock.now())
}

const READERS = ['read_analytics', 'read_key'] as const

/** Whose verifications a report reads. */
interface Whose {
  apiIds: string[]
  keyIds?: string[]
  externalId?: string
}

async function oneKey(deps: ControlPlaneDeps, principal: Principal, keyId: string): Promise<Whose> {
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireOneOfOnKey(principal, record, READERS)
  return { apiIds: [record.apiId], keyIds: [record.id] }
}

/** An owner's verifications in an api: of every key that resolved to that externalId, deleted ones included. */
async function ownersApi(
  deps: ControlPlaneDeps,
  principal: Principal,
  ownerId: string,
  apiId: string | undefined,
): Promise<Whose> {
  if (apiId === undefined) throw invalid('apiId', "is required with ownerId (Keygate finds an owner's keys per api)")
  requireOneOf(principal, apiId, READERS)
  if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  return { apiIds: [apiId], externalId: ownerId }
}
