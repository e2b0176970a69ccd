import { Type } from 'typebox'
import { UsageThresholdsInput } from '../analytics/wire/usage-threshold-schemas.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import type { RecordRef } from '../permissions/rbac.js'
import { KeyAllowlistField, KeyIdField, EmptyResponse } from '../wire/fields.js'
import { NamedRateLimits } from '../wire/named-limit-schemas.js'
import {
  CREDITS_LOW_THRESHOLD_DOC,
  CreditsLowThreshold,
  EXTERNAL_ID,
  Expires,
  Meta,
  NameField,
  Nullable,
  RateLimitBody,
  Refill,
  RoleNameField,
} from './wire/key-schemas.js'
import { LIMITS } from '../input-limits.js'
import { normalisedAllowlist } from '../../shared/addresses/ip-allowlist.js'
import { rateLimitOf } from './rules/rate-limit-body.js'
import { ownerIdOf } from './rules/v1-field-rules.js'
import { updateKey } from './update-key.js'

/** updateKey's roles and permissions: names, or Unkey's `{id?, name?, create?}` references. */
const References = (noun: 'permission' | 'role', description: string, example: string) =>
  Type.Array(
    Type.Union([
      noun === 'permission' ? NameField('A permission slug') : RoleNameField('A role name'),
      Type.Object(
        {
          id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: `The ${noun}'s id` })),
          name: Type.Optional(
            noun === 'permission' ? NameField("The permission's slug") : RoleNameField("The role's name"),
          ),
          create: Type.Optional(
            Type.Boolean({ description: `Create the ${noun} if none has this name (needs rbac.*.create_${noun})` }),
          ),
        },
        { additionalProperties: false },
      ),
    ]),
    {
      maxItems: LIMITS.namesPerKey,
      description: `${description}; at most ${LIMITS.namesPerKey}`,
      examples: [[example]],
    },
  )
const Credits = Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })
const CLEARS = '(null clears it)'
const UpdateKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to change: the `keyId` that keys.createKey returned'),
    name: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.nameLength }), `A name for people ${CLEARS}`)),
    externalId: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength }), `${EXTERNAL_ID} ${CLEARS}`),
    ),
    ownerId: Type.Optional(
      Nullable(
        Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength }),
        'Deprecated (Unkey): the same as `externalId`',
      ),
    ),
    meta: Type.Optional(Nullable(Meta('Any JSON object'), `Replaces the key's meta ${CLEARS}`)),
    expires: Type.Optional(
      Nullable(Expires, `When the key stops verifying, unix milliseconds; now or past ends it at once ${CLEARS}`),
    ),
    remaining: Type.Optional(
      Nullable(Credits, `Sets the credits (0 stops the key: USAGE_EXCEEDED) ${CLEARS}: no credits, no limit`),
    ),
    refill: Type.Optional(Nullable(Refill, `The periodic refill ${CLEARS}`)),
    creditsLowThreshold: Type.Optional(
      Nullable(
        CreditsLowThreshold(CREDITS_LOW_THRESHOLD_DOC),
        `${CREDITS_LOW_THRESHOLD_DOC}; needs credits (the key's, or \`remaining\`) ${CLEARS}. Taking the credits away (\`remaining: null\`) clears it too`,
      ),
    ),
    ratelimit: Type.Optional(Nullable(RateLimitBody, `The key's rate limit ${CLEARS}`)),
    usageThresholds: Type.Optional(Nullable(UsageThresholdsInput('key'), `null or [] removes them`)),
    ratelimits: Type.Optional(
      Nullable(
        NamedRateLimits("Keygate's (Unkey v2's): replaces the key's named limits"),
        `Replaces the key's named limits ([] or null removes them)`,
      ),
    ),
    permissions: Type.Optional(
      References(
        'permission',
        "Replaces the key's permissions ([] clears them): slugs, or Unkey's {id?, name?, create?}",
        'documents.read',
      ),
    ),
    roles: Type.Optional(
      References(
        'role',
        "Replaces the key's roles ([] clears them): names, or Unkey's {id?, name?, create?}",
        'editor',
      ),
    ),
    enabled: Type.Optional(
      Type.Boolean({ description: 'false: the key stops verifying at once (DISABLED); true: it verifies again' }),
    ),
    ipWhitelist: Type.Optional(
      Nullable(KeyAllowlistField(), "Replaces the key's IP allow-list (null or [] removes it)"),
    ),
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ keyId: WIRE_EXAMPLES.keyId, enabled: false }],
  },
)

/**
 * v1's keys.updateKey: Unkey's v1 fields. Changing a key's permissions or roles needs the rbac actions for it, as
 * keys.addPermissions does.
 */
export const updateKeyV1 = v1Route({
  operation: 'keys.updateKey',
  method: 'POST',
  doc: { summary: 'Change a key: enable or disable it, expiry, meta, credits, rate limit', tag: 'keys' },
  input: UpdateKeyBody,
  answer: EmptyResponse,
  handle: async ({ permissions, roles, ipWhitelist, ownerId, externalId, ratelimit, ...changes }, caller, deps) => {
    const grants = { permissions: permissions?.map(named), roles: roles?.map(named) }
    await updateKey(deps, caller, {
      ...changes,
      externalId: ownerIdOf({ externalId, ownerId }),
      ratelimit: rateLimitOf(ratelimit),
      ipAllowlist: ipWhitelist && (normalisedAllowlist({ field: 'ipWhitelist', entries: ipWhitelist }) ?? null),
      ...grants,
      grantRule: 'needs-rbac-actions',
    })
    return {}
  },
})

/** A bare name is created when missing, as keys.createKey does; Unkey's {name} only with `create: true`. */
function named(ref: string | RecordRef): RecordRef {
  return typeof ref === 'string' ? { name: ref, create: true } : ref
}
