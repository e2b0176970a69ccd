import { Type, type Static } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { ApiIdField, KeyIdField } from './fields.js'
import { LIMITS } from './limits.js'

/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
export const MAX_TIME = 9_999_999_999_999
const Time = (description: string, examples?: number[]) =>
  Type.Integer({ minimum: 0, maximum: MAX_TIME, description, ...(examples ? { examples } : {}) })
/** Unkey's groupings; tags are not kept by Keygate, so `tag` and `tags` are refused by the route. */
const GROUPING = 'hour, day or month: a row per time slice; key: per key; identity: per externalId (repeat to combine)'
const GROUP = StringEnum(['key', 'identity', 'tags', 'tag', 'month', 'day', 'hour'], { description: GROUPING })
const ORDER_BY = [
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
/** Key ids one request may name. */
export const MAX_KEY_IDS = 100
export const MAX_ROWS = 10_000

export const AnalyticsQuery = Type.Object({
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
export type AnalyticsQuery = Static<typeof AnalyticsQuery>

const Count = (description: string) => Type.Integer({ description })
export const AnalyticsRows = Type.Array(
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
