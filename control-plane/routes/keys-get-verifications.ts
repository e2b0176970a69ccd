import { Type } from 'typebox'
import { BUCKET_MS, type Granularity } from '../../shared/analytics.js'
import { badRequest, invalid, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyRecord } from '../../shared/records.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { keysInScope } from '../keys-in-scope.js'
import { principalOf, requireOneOf, requireOneOfOnKey, type Principal } from '../root-key-auth.js'
import { ApiIdField, KeyIdField } from '../schemas/fields.js'
import { LIMITS } from '../schemas/limits.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { verificationReport } from '../verification-report.js'

const MAX_BUCKETS = 1_000
/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
const MAX_TIME = 9_999_999_999_999
const Query = Type.Object({
  keyId: Type.Optional(KeyIdField('The key; or give ownerId (and apiId) for all the keys of an owner')),
  ownerId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: LIMITS.ownerIdLength,
      description: "Instead of keyId: the keys of this owner (externalId) in apiId, counts summed (Unkey's)",
    }),
  ),
  apiId: Type.Optional(
    ApiIdField('With ownerId: the api whose keys of that owner count (Keygate finds owners per api)'),
  ),
  start: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_TIME,
      description: `From, unix milliseconds (default: 30 days before end by day, 24 hours by hour; at most ${MAX_BUCKETS} buckets)`,
    }),
  ),
  end: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_TIME, description: 'To, unix milliseconds (default: now)' }),
  ),
  granularity: Type.Optional(
    StringEnum(['day', 'hour'], { description: 'One bucket per UTC day (default) or per hour' }),
  ),
})
const Bucket = Type.Object({
  time: Type.Number({ description: "The bucket's start, unix milliseconds" }),
  success: Type.Integer({ description: 'Verifications answered VALID' }),
  rateLimited: Type.Integer({ description: 'Verifications answered RATE_LIMITED' }),
  usageExceeded: Type.Integer({ description: 'Verifications answered USAGE_EXCEEDED' }),
})

/**
 * Verification counts of a key, or summed over an owner's keys, per hour or day (UTC), as its verifiers recorded
 * them (flushed every 5 s, kept 90 days). Defaults: the last 24 hours by hour, or the last 30 days by
 * day. read_analytics is Keygate's permission for it; read_key is Unkey's, which its clients' root keys hold.
 */
export function registerGetVerifications(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/keys.getVerifications',
    {
      schema: {
        querystring: Query,
        response: {
          200: Type.Object({
            verifications: Type.Array(Bucket, {
              description: 'Counts per bucket, oldest first; buckets with none left out',
            }),
          }),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { keyId, ownerId, apiId } = request.query
      if (keyId === undefined && ownerId === undefined) throw badRequest('keyId or ownerId must be provided')
      const granularity: Granularity = request.query.granularity ?? 'day'
      const end = request.query.end ?? deps.clock.now()
      const start = request.query.start ?? end - (granularity === 'hour' ? 24 : 30 * 24) * BUCKET_MS.hour
      if (start > end) throw invalid('start', 'must not be after end')
      if ((end - start) / BUCKET_MS[granularity] > MAX_BUCKETS)
        throw invalid('start', `at most ${MAX_BUCKETS} ${granularity}s per request`)
      const keys =
        keyId !== undefined
          ? [await oneKey(deps, principal, keyId)]
          : await ownersKeys(deps, principal, ownerId!, apiId)
      const rows = await verificationReport(deps.store.usage, {
        keys,
        start,
        end,
        now: deps.clock.now(),
        slice: granularity,
        byKey: false,
        byIdentity: false,
        fill: false,
      })
      return {
        verifications: rows.map((row) => ({
          time: row.time!,
          success: row.valid,
          rateLimited: row.rateLimited,
          usageExceeded: row.usageExceeded,
        })),
      }
    },
  )
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
