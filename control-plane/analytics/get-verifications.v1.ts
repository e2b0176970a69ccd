import { Type } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, KeyIdField } from '../wire/fields.js'
import { LIMITS } from '../input-limits.js'
import { getVerifications, ORDER_BY } from './get-verifications.js'

/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
const MAX_TIME = 9_999_999_999_999
const Time = (description: string, examples?: number[]) =>
  Type.Integer({ minimum: 0, maximum: MAX_TIME, description, ...(examples ? { examples } : {}) })
/** Unkey's groupings; tags are not kept by Keygate, so `tag` and `tags` are refused by the operation. */
const GROUPING = 'hour, day or month: a row per time slice; key: per key; identity: per externalId (repeat to combine)'
const GROUP = StringEnum(['key', 'identity', 'tags', 'tag', 'month', 'day', 'hour'], { description: GROUPING })
/** Key ids one request may name. */
const MAX_KEY_IDS = 100
const MAX_ROWS = 10_000

const AnalyticsQuery = Type.Object({
  apiId: ApiIdField('Only keys of this api'),
  externalId: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength, description: 'Only keys of this owner (externalId)' }),
  ),
  keyId: Type.Optional(
    Type.Union([KeyIdField('Only this key'), Type.Array(KeyIdField(), { maxItems: MAX_KEY_IDS })], {
      description: `Only these keys (repeat the parameter; at most ${MAX_KEY_IDS}), summed unless grouped by key`,
    }),
  ),
  tag: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description: "Unkey's tag filter: Keygate keeps no tags with its counts, so it answers 400",
    }),
  ),
  start: Time(
    'From, unix milliseconds: counted from the start of the hour (day, month) that holds it',
    [1_767_225_600_000],
  ),
  end: Type.Optional(Time('To, unix milliseconds, including the hour (day, month) that holds it (default: now)')),
  groupBy: Type.Optional(Type.Union([GROUP, Type.Array(GROUP, { maxItems: 7 })], { description: GROUPING })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_ROWS, description: 'At most this many rows, after ordering' }),
  ),
  orderBy: Type.Optional(
    StringEnum(ORDER_BY, {
      description: 'Order rows by this count (default: by time); counts Keygate does not keep are 0',
    }),
  ),
  order: Type.Optional(StringEnum(['asc', 'desc'], { description: 'With orderBy: ascending (default) or descending' })),
})

const Count = (description: string) => Type.Integer({ description })
const AnalyticsRows = Type.Array(
  Type.Object({
    time: Type.Optional(Type.Number({ description: "The slice's start, unix milliseconds (when grouped by time)" })),
    valid: Count('Verifications answered VALID'),
    rateLimited: Count('Verifications answered RATE_LIMITED'),
    usageExceeded: Count('Verifications answered USAGE_EXCEEDED'),
    total: Count('valid + rateLimited + usageExceeded: Keygate counts no other outcome'),
    keyId: Type.Optional(Type.String({ description: 'The key (when grouped by key)' })),
    identity: Type.Optional(
      Type.Object(
        { externalId: Type.String({ description: "The keys' externalId (ownerId)" }) },
        { description: 'Whose keys (when grouped by identity)' },
      ),
    ),
  }),
  { description: 'Rows, by time then key or identity unless orderBy says otherwise' },
)

/** A query parameter given once or repeated. */
const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value])

/** v1's analytics.getVerifications: a GET; the groupings as Unkey names them, a month's slice taking precedence. */
export const getVerificationsV1 = v1Route({
  operation: 'analytics.getVerifications',
  method: 'GET',
  doc: {
    summary: "Verification counts across an api's keys: summed, or per hour, day, month, key or externalId",
    description:
      'From the counts verifiers keep per key and hour/day (90 days): VALID, RATE_LIMITED and USAGE_EXCEEDED. Sums over at most 1000 keys of the api or the externalId (more: 412, name the keys with keyId) and 100000 bucket reads. Needs read_analytics or read_api on the api.',
    tag: 'analytics',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'PRECONDITION_FAILED',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  input: AnalyticsQuery,
  answer: AnalyticsRows,
  handle: (query, caller, deps) => {
    const groupBy = list(query.groupBy)
    return getVerifications(deps, caller, {
      apiId: query.apiId,
      externalId: query.externalId,
      keyIds: list(query.keyId),
      start: query.start,
      end: query.end,
      slice: (['month', 'day', 'hour'] as const).find((slice) => groupBy.includes(slice)),
      byKey: groupBy.includes('key'),
      byIdentity: groupBy.includes('identity'),
      byTag: query.tag !== undefined || groupBy.includes('tag') || groupBy.includes('tags'),
      orderBy: query.orderBy,
      order: query.order ?? 'asc',
      limit: query.limit,
    })
  },
})
