import { Type } from 'typebox'
import { BUCKET_MS, type Granularity } from '../../shared/analytics.js'
import { badRequest, notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { KeyIdField } from '../schemas/fields.js'
import { StringEnum } from '../../shared/http/schema-docs.js'

const MAX_BUCKETS = 1_000
/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
const MAX_TIME = 9_999_999_999_999
const Query = Type.Object({
  keyId: KeyIdField(),
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
 * Verification counts of a key per hour or day (UTC), as its verifiers recorded them (flushed about once a
 * second, kept 90 days). Defaults: the last 24 hours by hour, or the last 30 days by day.
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
      const { keyId } = request.query
      const granularity: Granularity = request.query.granularity ?? 'day'
      const end = request.query.end ?? deps.clock.now()
      const start = request.query.start ?? end - (granularity === 'hour' ? 24 : 30 * 24) * BUCKET_MS.hour
      if (start > end) throw badRequest('start: must not be after end')
      if ((end - start) / BUCKET_MS[granularity] > MAX_BUCKETS)
        throw badRequest(`start: at most ${MAX_BUCKETS} ${granularity}s per request`)
      const record = await deps.store.getKeyById(keyId)
      if (!record) throw notFound(`key ${keyId} not found`)
      requirePermission(principal, record.apiId, 'read_analytics')
      return { verifications: await deps.store.readUsage(keyId, granularity, start, end) }
    },
  )
}
