import { rateLimitId } from '../../../shared/ratelimits/ratelimit-id.js'
import { Type, type Static } from 'typebox'
import { UsageThresholdsResponse } from '../../analytics/wire/usage-threshold-schemas.js'
import { LeakedData } from '../../leaks/wire/leak-schemas.js'
import type { NamedRateLimit } from '../../../shared/identity.js'
import type { KeyContext } from '../../../shared/keys/key-context.js'
import { DEFAULT_LIMIT } from '../../../shared/keys/key-limits.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { withRefillDay } from '../key-fields.js'
import { CREDITS_LOW_THRESHOLD_DOC } from './key-schemas.js'
import { IpAllowlistResponse } from '../../wire/fields.js'

/** Unkey v2's shapes of a key (`KeyResponseData` and what it holds): allow-lists, so no hash reaches the wire. */

export const RatelimitData = Type.Object(
  {
    id: Type.String({ description: "The limit's id: stable, derived from its owner and name (`rl_…`)" }),
    name: Type.String({ description: "The limit's name: verifyKey's `ratelimits[].name` uses it" }),
    limit: Type.Integer({ description: 'Units allowed per window' }),
    duration: Type.Integer({ description: 'The window, milliseconds' }),
    autoApply: Type.Boolean({ description: 'Applied to every verification without being named' }),
  },
  { description: 'A named rate limit' },
)

export const CreditsRefillData = Type.Object(
  {
    interval: StringEnum(['daily', 'monthly'], { description: 'Reset each UTC day, or each month on `refillDay`' }),
    amount: Type.Integer({ description: 'The balance each refill sets' }),
    refillDay: Type.Optional(Type.Integer({ description: 'Monthly only: the day of the month' })),
  },
  { description: 'The periodic refill of the credits' },
)

export const CreditsData = Type.Object(
  {
    remaining: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Credits left; null: no credits, no limit',
    }),
    refill: Type.Optional(CreditsRefillData),
    lowThreshold: Type.Optional(Type.Integer({ description: `${CREDITS_LOW_THRESHOLD_DOC}, when set` })),
  },
  { description: "The key's credits" },
)

export const IdentityData = Type.Object(
  {
    id: Type.String({ description: "The identity's id" }),
    externalId: Type.String({ description: 'Its id in your system: the key’s externalId' }),
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
    ratelimits: Type.Optional(Type.Array(RatelimitData, { description: 'Its rate limits, shared by its keys' })),
  },
  { description: 'The identity the key belongs to (through its externalId)' },
)

export const KeyData = Type.Object({
  keyId: Type.String({ description: "The key's id" }),
  start: Type.String({ description: 'The first characters of the key (its prefix and 4 more), to recognise it by' }),
  enabled: Type.Boolean({ description: 'Whether it verifies (false: DISABLED)' }),
  name: Type.Optional(Type.String({ description: 'Its name' })),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
  createdAt: Type.Integer({ description: 'When it was created, unix milliseconds' }),
  updatedAt: Type.Optional(Type.Integer({ description: 'When it last changed, unix milliseconds' })),
  expires: Type.Optional(Type.Integer({ description: 'When it stops verifying, unix milliseconds' })),
  permissions: Type.Optional(
    Type.Array(Type.String(), { description: 'Its permissions (slugs): its own and those its roles grant' }),
  ),
  roles: Type.Optional(Type.Array(Type.String(), { description: 'Its roles (names)' })),
  credits: Type.Optional(CreditsData),
  identity: Type.Optional(IdentityData),
  ratelimits: Type.Optional(
    Type.Array(RatelimitData, {
      description: "Its own rate limits (its v1 `ratelimit` as the auto-applied 'default')",
    }),
  ),
  leaked: Type.Optional(LeakedData),
  ipAllowlist: Type.Optional(IpAllowlistResponse("Keygate's: the key's IP allow-list (its api's applies too)")),
  usageThresholds: Type.Optional(UsageThresholdsResponse('key')),
})
export type KeyData = Static<typeof KeyData>

/** Limits as v2 shows them (autoApply always said), or undefined when there are none. */
export function ratelimitsData(ownerId: string, limits: readonly NamedRateLimit[]) {
  if (limits.length === 0) return undefined
  return limits.map(({ name, limit, duration, autoApply }) => ({
    id: rateLimitId(ownerId, name),
    name,
    limit,
    duration,
    autoApply: autoApply ?? false,
  }))
}

/** A stored key as v2 shows it, with what it is granted and who it belongs to (`context`). */
export function toKeyData(record: KeyRecord, context: KeyContext): KeyData {
  const own: NamedRateLimit[] = [
    // v1's single limit is the auto-applied `default` among named ones (as Unkey migrated it).
    ...(record.ratelimit ? [{ ...record.ratelimit, name: DEFAULT_LIMIT, autoApply: true }] : []),
    ...(record.ratelimits ?? []),
  ]
  const identity = context.identity
  return {
    keyId: record.id,
    start: record.start,
    enabled: record.enabled,
    name: record.name,
    meta: record.meta,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    expires: record.expires,
    permissions: context.permissions.length > 0 ? context.permissions : undefined,
    roles: context.roles.length > 0 ? context.roles : undefined,
    credits:
      record.remaining === undefined
        ? undefined
        : {
            remaining: record.remaining,
            refill: withRefillDay(record.refill),
            lowThreshold: record.creditsLowThreshold,
          },
    identity: identity && {
      id: identity.id,
      externalId: identity.externalId,
      meta: identity.meta,
      ratelimits: ratelimitsData(identity.id, identity.ratelimits ?? []),
    },
    ratelimits: ratelimitsData(record.id, own),
    leaked: record.leaked,
    ipAllowlist: record.ipAllowlist,
    usageThresholds: record.usageThresholds,
  }
}

/** A key as issued (createKey, rerollKey): the only time the key itself is on the wire. */
export const NewKeyData = Type.Object({
  keyId: Type.String({ description: "The new key's id: for keys.getKey, updateKey, deleteKey" }),
  key: Type.String({ description: 'The key itself, shown this once (Keygate keeps only its hash)' }),
})
