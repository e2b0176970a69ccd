import { Type, type Static, type TSchema } from 'typebox'
import { UsageThresholdsResponse } from '../../analytics/wire/usage-threshold-schemas.js'
import { LeakedData } from '../../leaks/wire/leak-schemas.js'
import { MAX_CREDITS } from '../../../shared/keys/credits.js'
import { PERMISSION_NAME } from '../../../shared/verification/permission-query.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { ApiIdField, CreatedAtField, IpAllowlistResponse, WorkspaceIdField } from '../../wire/fields.js'
import { LIMITS } from '../../input-limits.js'
import { NamedRateLimits, NamedRateLimitsResponse } from '../../wire/named-limit-schemas.js'

/** A key's meta: any JSON object. */
export const Meta = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { description, examples: [{ plan: 'pro' }] })
export const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description })
/** A permission or role name: 1–256 of [A-Za-z0-9_.:*-/]. */
export const NameField = (description: string) =>
  Type.String({
    pattern: PERMISSION_NAME.source,
    description: `${description}: 1–256 of letters, digits and _ . : * - /`,
  })
/**
 * A role's name as keys name it: any name a role can have (permissions.createRole: up to 512 characters, spaces
 * included), not a permission's slug pattern.
 */
export const RoleNameField = (description: string) =>
  Type.String({ minLength: 1, maxLength: 512, description: `${description}: 1–512 characters` })
/** Permission slugs or role names: at most 100 per key. */
export const Names = (description: string, example: string[], noun: 'permission' | 'role' = 'permission') =>
  Type.Array(noun === 'role' ? RoleNameField('A name') : NameField('A name'), {
    maxItems: LIMITS.namesPerKey,
    description: `${description}; at most ${LIMITS.namesPerKey}`,
    examples: [example],
  })
export const Refill = Type.Object(
  {
    interval: StringEnum(['daily', 'monthly'], {
      description: 'Reset the balance at the start of each UTC day, or each month on `refillDay`',
    }),
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'The balance each refill sets' }),
    refillDay: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 31,
        description: "Monthly only: the day of the month (the month's last day when shorter; default 1)",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Refill the credits periodically (lazily, at the first verification after the boundary). Needs `remaining`',
    examples: [{ interval: 'monthly', amount: 1000, refillDay: 1 }],
  },
)
const LIMIT = { minimum: 1, maximum: 1_000_000_000 }
const DURATION = { minimum: 1_000, maximum: 31 * 86_400_000 }
/**
 * A key's rate limit. `type` ('fast' = async, 'consistent' = exact), `refillRate` (= limit) and
 * `refillInterval` (= duration) are Unkey's deprecated spellings, accepted as aliases.
 */
export const RateLimitBody = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ ...LIMIT, description: 'Verifications allowed per window' })),
    duration: Type.Optional(
      Type.Integer({ ...DURATION, description: 'The window, in milliseconds (fixed windows aligned to the epoch)' }),
    ),
    async: Type.Optional(
      Type.Boolean({
        description:
          'true (default): counted by each verifier in memory, reconciled every poll (fast, may overshoot across verifiers); false: exact, one Redis call per verification',
      }),
    ),
    type: Type.Optional(
      StringEnum(['fast', 'consistent'], {
        description: "Deprecated (Unkey): 'fast' = async true, 'consistent' = false",
      }),
    ),
    refillRate: Type.Optional(Type.Integer({ ...LIMIT, description: 'Deprecated (Unkey): the same as `limit`' })),
    refillInterval: Type.Optional(
      Type.Integer({ ...DURATION, description: 'Deprecated (Unkey): the same as `duration`' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A rate limit on the key: `limit` verifications per `duration` ms',
    examples: [{ limit: 100, duration: 60_000 }],
  },
)
/**
 * Keygate's: the balance at or below which spending sends the webhook event `key.credits.low` (bounded as a balance).
 * `description` says where it goes and what else it needs.
 */
export const CreditsLowThreshold = (description: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_CREDITS, description, examples: [100] })
export const CREDITS_LOW_THRESHOLD_DOC =
  "Keygate's: the balance at or below which spending sends the webhook event `key.credits.low` (1 to 1e12)"
/** Unix milliseconds; up to year 2286, so that a seconds value sent by mistake is caught by the future check. */
export const Expires = Type.Integer({ minimum: 0, maximum: 9_999_999_999_999, examples: [1_893_456_000_000] })
export const EXTERNAL_ID =
  'Who the key belongs to, in your terms (a user or customer id): returned by verifyKey as `ownerId`'

/**
 * What every new key may be given, whether Keygate makes the key (keys.createKey) or it is imported
 * (migrations.createKeys): one list, so that a field added to a key is accepted by both.
 */
export const NEW_KEY_FIELDS = {
  apiId: ApiIdField('The api the key belongs to: the `apiId` that apis.createApi returned'),
  name: Type.Optional(
    Type.String({
      maxLength: LIMITS.nameLength,
      description: 'A name for people, up to 256 characters',
      examples: ['acme checkout'],
    }),
  ),
  externalId: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength, description: EXTERNAL_ID, examples: ['acme'] }),
  ),
  ownerId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: LIMITS.ownerIdLength,
      description: 'Deprecated (Unkey): the same as `externalId`',
    }),
  ),
  meta: Type.Optional(Meta('Any JSON object (≤ 64 KiB, ≤ 16 levels), returned by every verification of the key')),
  expires: Type.Optional({
    ...Expires,
    description: 'When the key stops verifying (EXPIRED), unix milliseconds; must be in the future',
  }),
  remaining: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000_000_000,
      description: 'Credits: the key verifies this many times (each verification spends its cost), then USAGE_EXCEEDED',
    }),
  ),
  refill: Type.Optional(Refill),
  creditsLowThreshold: Type.Optional(CreditsLowThreshold(`${CREDITS_LOW_THRESHOLD_DOC}. Needs \`remaining\``)),
  ratelimit: Type.Optional(RateLimitBody),
  ratelimits: Type.Optional(
    NamedRateLimits(
      "Keygate's (Unkey v2's): limits verifyKey's `ratelimits[]` names, or that apply themselves (autoApply); the key's win over its identity's of the same name. `default` is `ratelimit`'s name",
    ),
  ),
  permissions: Type.Optional(
    Names(
      "The key's permissions by slug, checked by verifyKey's `authorization`; a slug with no permission record is created (the root key needs rbac.*.create_permission then)",
      ['documents.read'],
    ),
  ),
  roles: Type.Optional(
    Names(
      'Roles by name, each granting the key its permissions; a name with no role is created (the root key needs rbac.*.create_role then)',
      ['editor'],
      'role',
    ),
  ),
  enabled: Type.Optional(
    Type.Boolean({ description: 'false: the key exists but does not verify (DISABLED); default true' }),
  ),
  environment: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: LIMITS.environmentLength,
      description: 'A label such as `live` or `test`, returned by verifyKey',
    }),
  ),
}
/** The fields of NEW_KEY_FIELDS as a request carries them. */
export type NewKeyFields = Static<ReturnType<typeof Type.Object<typeof NEW_KEY_FIELDS>>>

/** The identity a key belongs to (through its externalId), as getKey and verifyKey show it. */
export const IdentityResponse = Type.Object(
  {
    id: Type.String({ description: "The identity's id" }),
    externalId: Type.String({ description: 'Its externalId: the id of the user or organisation in your system' }),
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
  },
  { description: 'The identity the key belongs to, when one exists with its externalId' },
)

/** The key as clients see it: this schema is the allow-list that keeps the hash off the wire. */
export const KeyResponse = Type.Object({
  id: Type.String({ description: "The key's id (`keyId` elsewhere)" }),
  start: Type.String({ description: 'The first characters of the key (its prefix and 4 more), to recognise it by' }),
  apiId: Type.String({ description: 'The api it belongs to' }),
  workspaceId: WorkspaceIdField(),
  name: Type.Optional(Type.String({ description: 'Its name' })),
  ownerId: Type.Optional(Type.String({ description: 'Its externalId: who it belongs to' })),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
  expires: Type.Optional(Type.Number({ description: 'When it stops verifying, unix milliseconds' })),
  remaining: Type.Optional(Type.Integer({ description: 'Credits left (keys with credits only)' })),
  refill: Type.Optional(Refill),
  creditsLowThreshold: Type.Optional(
    Type.Integer({ description: `${CREDITS_LOW_THRESHOLD_DOC} (keys with credits only)` }),
  ),
  ratelimit: Type.Optional(
    Type.Object(
      {
        limit: Type.Integer({ description: 'Verifications allowed per window' }),
        duration: Type.Integer({ description: 'The window, milliseconds' }),
        async: Type.Boolean({ description: 'Counted in each verifier (true) or exactly in Redis (false)' }),
      },
      { description: 'Its rate limit' },
    ),
  ),
  ratelimits: Type.Optional(NamedRateLimitsResponse),
  createdAt: CreatedAtField(),
  updatedAt: Type.Optional(Type.Number({ description: 'When it last changed, unix milliseconds' })),
  enabled: Type.Boolean({ description: 'Whether it verifies (false: DISABLED)' }),
  environment: Type.Optional(Type.String({ description: 'Its environment label' })),
  permissions: Type.Optional(
    Type.Array(Type.String(), { description: 'Its permissions (slugs): its own and those its roles grant' }),
  ),
  roles: Type.Optional(Type.Array(Type.String(), { description: 'Its roles (names)' })),
  identity: Type.Optional(IdentityResponse),
  leaked: Type.Optional(LeakedData),
  ipWhitelist: Type.Optional(IpAllowlistResponse("Keygate's: the key's IP allow-list (its api's applies too)")),
  usageThresholds: Type.Optional(UsageThresholdsResponse('key')),
})

/** A key as issued (createKey, rerollKey): the only time the key itself is on the wire. */
export const NewKeyResponse = Type.Object(
  {
    keyId: Type.String({ description: "The new key's id: for keys.getKey, updateKey, deleteKey" }),
    key: Type.String({
      description:
        'The key itself, shown this once (Keygate keeps only its hash): give it to your client, which sends it to be verified',
    }),
  },
  { examples: [{ keyId: WIRE_EXAMPLES.keyId, key: WIRE_EXAMPLES.key }] },
)
