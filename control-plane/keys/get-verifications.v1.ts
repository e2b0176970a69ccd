import { Type } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, KeyIdField } from '../wire/fields.js'
import { LIMITS } from '../input-limits.js'
import { getVerifications, MAX_BUCKETS } from './get-verifications.js'

/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
const MAX_TIME = 9_999_999_999_999
const GetVerificationsQuery = Type.Object({
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
const GetVerificationsResponse = Type.Object({
  verifications: Type.Array(Bucket, { description: 'Counts per bucket, oldest first; buckets with none left out' }),
})

/** v1's keys.getVerifications: a GET; VALID counts are Unkey's `success`. */
export const getVerificationsV1 = v1Route({
  operation: 'keys.getVerifications',
  method: 'GET',
  doc: { summary: "A key's verification counts per hour or day", tag: 'keys' },
  input: GetVerificationsQuery,
  answer: GetVerificationsResponse,
  handle: async (query, caller, deps) => {
    const rows = await getVerifications(deps, caller, query)
    return {
      verifications: rows.map((row) => ({
        time: row.time!,
        success: row.valid,
        rateLimited: row.rateLimited,
        usageExceeded: row.usageExceeded,
      })),
    }
  },
})
