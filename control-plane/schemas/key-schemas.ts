import { Type, type Static } from 'typebox'
import { KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../shared/key-material.js'
import { PERMISSION_NAME } from '../../shared/permission-query.js'

/** Limits on input, documented in the README. */
export const LIMITS = {
  idLength: 256,
  nameLength: 256,
  ownerIdLength: 256,
  environmentLength: 256,
  metaBytes: 64 * 1024,
  metaDepth: 16,
  namesPerKey: 100,
} as const

const Meta = Type.Record(Type.String(), Type.Unknown())
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])
const Id = Type.String({ minLength: 1, maxLength: LIMITS.idLength })
/** Permission or role names: at most 100 per key, each 1–256 of [A-Za-z0-9_.:*-/]. */
export const Names = Type.Array(Type.String({ pattern: PERMISSION_NAME.source }), { maxItems: LIMITS.namesPerKey })
const Credits = Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })
export const Refill = Type.Object(
  {
    interval: Type.Union([Type.Literal('daily'), Type.Literal('monthly')]),
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
    refillDay: Type.Optional(Type.Integer({ minimum: 1, maximum: 31 })),
  },
  { additionalProperties: false },
)
/**
 * A key's rate limit. `type` ('fast' = async, 'consistent' = exact), `refillRate` (= limit) and
 * `refillInterval` (= duration) are Unkey's deprecated spellings, accepted as aliases.
 */
export const RateLimitBody = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    duration: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 31 * 86_400_000 })),
    async: Type.Optional(Type.Boolean()),
    type: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('consistent')])),
    refillRate: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    refillInterval: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 31 * 86_400_000 })),
  },
  { additionalProperties: false },
)
/** Unix milliseconds; up to year 2286, so that a seconds value sent by mistake is caught by the future check. */
const Expires = Type.Integer({ minimum: 0, maximum: 9_999_999_999_999 })

export const CreateKeyBody = Type.Object(
  {
    apiId: Id,
    name: Type.Optional(Type.String({ maxLength: LIMITS.nameLength })),
    prefix: Type.Optional(Type.String({ pattern: KEY_PREFIX_PATTERN })),
    byteLength: Type.Optional(Type.Integer({ minimum: KEY_BYTES_MIN, maximum: KEY_BYTES_MAX })),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength })),
    ownerId: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength })),
    meta: Type.Optional(Meta),
    expires: Type.Optional(Expires),
    remaining: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
    refill: Type.Optional(Refill),
    ratelimit: Type.Optional(RateLimitBody),
    permissions: Type.Optional(Names),
    roles: Type.Optional(Names),
    enabled: Type.Optional(Type.Boolean()),
    environment: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.environmentLength })),
    recoverable: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CreateKeyBody = Static<typeof CreateKeyBody>

export const UpdateKeyBody = Type.Object(
  {
    keyId: Id,
    name: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.nameLength }))),
    externalId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength }))),
    ownerId: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength }))),
    meta: Type.Optional(Nullable(Meta)),
    expires: Type.Optional(Nullable(Expires)),
    remaining: Type.Optional(Nullable(Credits)),
    refill: Type.Optional(Nullable(Refill)),
    ratelimit: Type.Optional(Nullable(RateLimitBody)),
    permissions: Type.Optional(Names),
    roles: Type.Optional(Names),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type UpdateKeyBody = Static<typeof UpdateKeyBody>

/** The key as clients see it: this schema is the allow-list that keeps the hash off the wire. */
export const KeyResponse = Type.Object({
  id: Type.String(),
  start: Type.String(),
  apiId: Type.String(),
  name: Type.Optional(Type.String()),
  ownerId: Type.Optional(Type.String()),
  meta: Type.Optional(Meta),
  expires: Type.Optional(Type.Number()),
  remaining: Type.Optional(Type.Integer()),
  refill: Type.Optional(Refill),
  ratelimit: Type.Optional(Type.Object({ limit: Type.Integer(), duration: Type.Integer(), async: Type.Boolean() })),
  createdAt: Type.Number(),
  updatedAt: Type.Optional(Type.Number()),
  enabled: Type.Boolean(),
  environment: Type.Optional(Type.String()),
  permissions: Type.Optional(Type.Array(Type.String())),
  roles: Type.Optional(Type.Array(Type.String())),
})

export const EmptyResponse = Type.Object({})
