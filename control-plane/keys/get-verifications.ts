import { BUCKET_MS, type Granularity } from '../../shared/analytics.js'
import { badRequest, invalid, notFound } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { keysInScope } from '../analytics/keys-in-scope.js'
import { requireOneOf, requireOneOfOnKey, type Principal } from '../root-keys/root-key-auth.js'
import { verificationReport, type ReportRow } from '../analytics/verification-report.js'

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
 * Verification counts of a key, or summed over an owner's keys, per hour or day (UTC), as its verifiers recorded
 * them (flushed every 5 s, kept 90 days), oldest first, buckets with none left out. Defaults: the last 24 hours by
 * hour, or the last 30 days by day. The range is checked (400) before the key or the api is looked up (404, 403).
 * read_analytics is Keygate's permission for it; read_key is Unkey's, which its clients' root keys hold.
 */
export async function getVerifications(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: GetVerificationsInput,
): Promise<ReportRow[]> {
  const { principal } = caller
  const { keyId, ownerId, apiId } = input
  if (keyId === undefined && ownerId === undefined) throw badRequest('keyId or ownerId must be provided')
  const granularity: Granularity = input.granularity ?? 'day'
  const end = input.end ?? deps.clock.now()
  const start = input.start ?? end - (granularity === 'hour' ? 24 : 30 * 24) * BUCKET_MS.hour
  if (start > end) throw invalid('start', 'must not be after end')
  if ((end - start) / BUCKET_MS[granularity] > MAX_BUCKETS)
    throw invalid('start', `at most ${MAX_BUCKETS} ${granularity}s per request`)
  const keys =
    keyId !== undefined ? [await oneKey(deps, principal, keyId)] : await ownersKeys(deps, principal, ownerId!, apiId)
  return verificationReport(deps.store.usage, {
    keys,
    start,
    end,
    now: deps.clock.now(),
    slice: granularity,
    byKey: false,
    byIdentity: false,
    fill: false,
  })
}

const READERS = ['read_analytics', 'read_key'] as const

async function oneKey(deps: ControlPlaneDeps, principal: Principal, keyId: string): Promise<KeyRecord> {
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireOneOfOnKey(principal, record, READERS)
  return record
}

async function ownersKeys(
  deps: ControlPlaneDeps,
  principal: Principal,
  ownerId: string,
  apiId: string | undefined,
): Promise<KeyRecord[]> {
  if (apiId === undefined) throw invalid('apiId', "is required with ownerId (Keygate finds an owner's keys per api)")
  requireOneOf(principal, apiId, READERS)
  if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  const keys = await keysInScope(deps.store.keys, apiId, ownerId)
  if (keys.length === 0) throw notFound('key', `no key of api ${apiId} has ownerId ${ownerId}`)
  return keys
}
