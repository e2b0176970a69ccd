import { Type } from 'typebox'
import { KEY_BYTES_DEFAULT, KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../shared/keys/key-material.js'
import { normalisedAllowlist } from '../../shared/addresses/ip-allowlist.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { ApiIdField, KeyAllowlistField } from '../wire/fields.js'
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
import { NewKeyData } from './wire/key-data.v2.js'
import { authorizeCreateKey, createKey } from './create-key.js'

const CreateKeyBody = Type.Object(
  {
    apiId: ApiIdField('The api the key belongs to: the `apiId` that apis.createApi returned'),
    prefix: Type.Optional(
      Type.String({
        pattern: KEY_PREFIX_PATTERN,
        description: 'Starts the key, followed by `_`: 1–16 letters or digits (e.g. `sk` gives `sk_…`)',
        examples: ['sk'],
      }),
    ),
    name: Type.Optional(Name),
    byteLength: Type.Optional(
      Type.Integer({
        minimum: KEY_BYTES_MIN,
        maximum: KEY_BYTES_MAX,
        description: `Random bytes in the key, ${KEY_BYTES_MIN}–${KEY_BYTES_MAX} (default ${KEY_BYTES_DEFAULT})`,
      }),
    ),
    externalId: Type.Optional(Type.String(EXTERNAL_ID)),
    meta: Type.Optional(Meta),
    roles: Type.Optional(Roles),
    permissions: Type.Optional(Permissions),
    expires: Type.Optional({
      ...Expires,
      description: 'When the key stops verifying (EXPIRED), unix ms; in the future',
    }),
    credits: Type.Optional(
      Type.Object(
        {
          remaining: Nullable(
            Remaining,
            'Credits: the key verifies this many times, then USAGE_EXCEEDED (null: no limit)',
          ),
          refill: Type.Optional(Refill),
          lowThreshold: Type.Optional(CreditsLowThreshold(`${CREDITS_LOW_THRESHOLD_DOC}. Needs \`remaining\``)),
        },
        { additionalProperties: false, description: 'Usage credits, and their periodic refill' },
      ),
    ),
    ratelimits: Type.Optional(Ratelimits),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the key exists but does not verify (DISABLED)' })),
    recoverable: Type.Optional(
      Type.Boolean({ description: 'Keygate keeps only a hash of each key, so `true` answers 412: leave it out' }),
    ),
    ipAllowlist: Type.Optional(KeyAllowlistField()),
  },
  {
    additionalProperties: false,
    examples: [{ apiId: WIRE_EXAMPLES.apiId, prefix: 'sk', externalId: 'acme', credits: { remaining: 1000 } }],
  },
)

/**
 * v2's keys.createKey: credits as one object, named limits only; a permission slug not made yet is made, a role
 * must exist (404); a root key without `create_key` on the api is told the api does not exist (404).
 */
export const createKeyV2 = v2Route({
  operation: 'keys.createKey',
  doc: {
    summary: 'Create a key (the key is shown once; only its hash is stored)',
    description:
      'Needs an api: create one with apis.createApi and put its `apiId` here. The answer holds the key itself, shown this once.',
    tag: 'v2 keys',
  },
  body: CreateKeyBody,
  data: NewKeyData,
  authorize: ({ apiId }, caller) => authorizeCreateKey(caller, apiId),
  wording: V2_CREDIT_WORDING,
  handle: async ({ credits, ipAllowlist, ...fields }, caller, deps) => {
    checkRefillDayNamed(credits?.refill)
    const input = {
      ...fields,
      ipAllowlist: ipAllowlist && normalisedAllowlist({ field: 'ipAllowlist', entries: ipAllowlist }),
      remaining: credits?.remaining ?? undefined,
      refill: credits?.refill,
      creditsLowThreshold: credits?.lowThreshold,
    }
    return { data: await createKey(deps, caller, { ...input, missingGrantNames: 'create-permissions' }) }
  },
})
