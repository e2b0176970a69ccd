import { Type } from 'typebox'
import { normalisedAllowlist } from '../../shared/addresses/ip-allowlist.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { KeyAllowlistField, KeyIdField, EmptyResponse } from '../wire/fields.js'
import { CREDITS_LOW_THRESHOLD_DOC, CreditsLowThreshold, Refill } from './wire/key-schemas.js'
import { V2_CREDIT_WORDING } from './wire/credit-wording.v2.js'
import { checkRefillDayNamed } from './key-fields.js'
import {
  EXTERNAL_ID,
  Expires,
  Meta,
  Name,
  Nullable,
  Permissions,
  Ratelimits,
  Remaining,
  Roles,
} from './wire/key-bodies.v2.js'
import { updateKey, type KeyChanges } from './update-key.js'
import { UsageThresholdsInput } from '../analytics/wire/usage-threshold-schemas.js'

const CLEARS = '(null clears it)'
const UpdateKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to change: the `keyId` that keys.createKey returned'),
    name: Type.Optional(Nullable(Name, `A name for people ${CLEARS}`)),
    externalId: Type.Optional(Nullable(Type.String(EXTERNAL_ID), `Who the key belongs to ${CLEARS}`)),
    meta: Type.Optional(Nullable(Meta, `Replaces the key's meta ${CLEARS}`)),
    expires: Type.Optional(Nullable(Expires, `When the key stops verifying; now or past ends it at once ${CLEARS}`)),
    credits: Type.Optional(
      Nullable(
        Type.Object(
          {
            remaining: Type.Optional(Nullable(Remaining, 'Sets the balance (null: no credits, and no refill)')),
            refill: Type.Optional(Nullable(Refill, `The periodic refill ${CLEARS}`)),
            lowThreshold: Type.Optional(
              Nullable(
                CreditsLowThreshold(CREDITS_LOW_THRESHOLD_DOC),
                `${CREDITS_LOW_THRESHOLD_DOC}; needs credits (the key's, or \`remaining\`) ${CLEARS}. Taking the credits away clears it too`,
              ),
            ),
          },
          { additionalProperties: false },
        ),
        'Credits: left out, unchanged; null takes them away (no limit)',
      ),
    ),
    ratelimits: Type.Optional({ ...Ratelimits, description: "Replaces the key's named limits ([] removes them)" }),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the key stops verifying at once (DISABLED)' })),
    roles: Type.Optional({ ...Roles, description: "Replaces the key's roles ([] removes them); each must exist" }),
    permissions: Type.Optional({
      ...Permissions,
      description: "Replaces the key's permissions ([] removes them); a slug with no permission is created",
    }),
    ipAllowlist: Type.Optional(
      Nullable(KeyAllowlistField(), "Replaces the key's IP allow-list (null or [] removes it)"),
    ),
    usageThresholds: Type.Optional(Nullable(UsageThresholdsInput('key'), 'null or [] removes them')),
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ keyId: WIRE_EXAMPLES.keyId, enabled: false }],
  },
)

/**
 * v2's keys.updateKey: credits as one object, named limits only; a permission slug not made yet is made, a role must
 * exist (404). The rules on `credits` that depend on the key are the operation's, after the 404 and the 403, as
 * Unkey's handler orders them; a monthly refill without its day is refused as the schema refuses a bad field.
 */
export const updateKeyV2 = v2Route({
  operation: 'keys.updateKey',
  doc: {
    summary: 'Change a key: name, meta, expiry, credits, rate limits, enabled, permissions, roles',
    description: 'Fields left out stay as they are; `null` clears one.',
    tag: 'v2 keys',
  },
  body: UpdateKeyBody,
  data: EmptyResponse,
  wording: V2_CREDIT_WORDING,
  handle: async ({ keyId, credits, ratelimits, permissions, roles, ipAllowlist, ...rest }, caller, deps) => {
    checkRefillDayNamed(credits?.refill)
    const changes: KeyChanges = { ...rest }
    if (ipAllowlist !== undefined) {
      changes.ipAllowlist = ipAllowlist && (normalisedAllowlist({ field: 'ipAllowlist', entries: ipAllowlist }) ?? null)
    }
    if (credits === null) changes.remaining = null
    if (credits?.remaining !== undefined) changes.remaining = credits.remaining
    if (credits?.refill !== undefined) changes.refill = credits.refill
    if (credits?.lowThreshold !== undefined) changes.creditsLowThreshold = credits.lowThreshold
    // v1's single limit is the named limit `default` in v2's terms: a new list replaces it too.
    if (ratelimits !== undefined) {
      changes.ratelimits = ratelimits
      changes.ratelimit = null
    }
    const grants = { permissions, roles, grantRule: 'create-permissions' as const }
    await updateKey(deps, caller, { ...changes, ...grants, keyId })
    return { data: {} }
  },
})
