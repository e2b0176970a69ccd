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
/** Unkey's groupings. */
const GROUPING =
  'hour, day or month: a row per time slice; key: per key; identity: per externalId; tags: per list of tags a verification carried; tag: per tag (repeat to combine)'
const GROUP = StringEnum(['key', 'identity', 'tags', 'tag', 'month', 'day', 'hour'], { description: GROUPING })
/** Key ids one request may name. */
const MAX_KEY_IDS = 100
const MAX_ROWS = 10_000
/** Tags one request may filter by, and their length, as verifyKey accepts them. */
const MAX_TAGS = 10
const Tag = Type.String({ minLength: 1, maxLength: 128 })

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
    Type.Union([Tag, Type.Array(Tag, { maxItems: MAX_TAGS })], {
      description: `Only verifications that carried every one of these tags (repeat the parameter; at most ${MAX_TAGS})`,
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
    notFound: Count('Verifications of keys that do not exist (counted per api: 0 when filtered by key or identity)'),
    forbidden: Count('Verifications answered FORBIDDEN'),
    usageExceeded: Count('Verifications answered USAGE_EXCEEDED'),
    rateLimited: Count('Verifications answered RATE_LIMITED'),
    unauthorized: Count('Verifications answered UNAUTHORIZED (Keygate answers none: 0)'),
    disabled: Count('Verifications answered DISABLED'),
    insufficientPermissions: Count('Verifications answered INSUFFICIENT_PERMISSIONS'),
    expired: Count('Verifications answered EXPIRED'),
    total: Count('Every verification counted'),
    keyId: Type.Optional(Type.String({ description: 'The key (when grouped by key)' })),
    identity: Type.Optional(
      Type.Object(
        { externalId: Type.String({ description: 'The externalId the verifications resolved to' }) },
        { description: 'Whose verifications (when grouped by identity)' },
      ),
    ),
    tags: Type.Optional(Type.Array(Type.String(), { description: 'The tags carried (when grouped by tags)' })),
    tag: Type.Optional(Type.String({ description: 'The tag (when grouped by tag)' })),
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
    summary: "Verification counts across an api's keys: summed, or per hour, day, month, key, externalId or tag",
    description:
      "From the analytics engine's rollups (docs/analytics.md): every outcome, by the hour for 90 days, by the day for a year, by the month for three. A deleted key's verifications still count. Needs read_analytics or read_api on the api; answers 412 where this control plane serves no analytics.",
    tag: 'analytics',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'PRECONDITION_FAILED',
      'UNPROCESSABLE',
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
      tags: list(query.tag),
      byTags: groupBy.includes('tags'),
      byTag: groupBy.includes('tag'),
      orderBy: query.orderBy,
      order: query.order ?? 'asc',
      limit: query.limit,
    })
  },
})
