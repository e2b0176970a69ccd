import { Type, type TSchema } from 'typebox'
import { KEY_BYTES_DEFAULT, KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../shared/key-material.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { MAX_CREDITS } from '../../shared/credits.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { ApiIdField, KeyIdField } from '../schemas/fields.js'
import { NamedRateLimits } from '../schemas/identity-schemas.js'
import { Names, Refill } from '../schemas/key-schemas.js'

/**
 * Unkey v2's request bodies for keys (V2Keys*RequestBody, V2ApisListKeysRequestBody), with Keygate's bounds where
 * they are narrower (credits up to 1e12, 100 permissions or roles per key, a prefix without `_`).
 */

const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description })

const Name = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'A name for people',
  examples: ['acme checkout'],
})
const EXTERNAL_ID = {
  minLength: 1,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_.-]+$',
  description: 'Who the key belongs to (a user or organisation id in your system): its identity, made when missing',
  examples: ['acme'],
}
const Meta = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: 100,
  description: 'Any JSON object (≤ 64 KiB, ≤ 16 levels), returned by every verification of the key',
  examples: [{ plan: 'pro' }],
})
const Expires = Type.Integer({
  minimum: 0,
  maximum: 4_102_444_800_000,
  description: 'When the key stops verifying (EXPIRED), unix milliseconds',
  examples: [1_893_456_000_000],
})
const Remaining = Type.Integer({ minimum: 0, maximum: MAX_CREDITS, examples: [1000] })
const Ratelimits = NamedRateLimits(
  "The key's named limits: verifyKey's `ratelimits[]` names them, or they apply themselves (autoApply)",
)
const Permissions = Names(
  "The key's permissions by slug, checked by verifyKey's `permissions`; a slug with no permission is created",
  ['documents.read'],
)
const Roles = Names('Roles by name, each granting the key its permissions; each must exist (404)', ['editor'], 'role')

export const CreateKeyBody = Type.Object(
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
        },
        { additionalProperties: false, description: 'Usage credits, and their periodic refill' },
      ),
    ),
    ratelimits: Type.Optional(Ratelimits),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the key exists but does not verify (DISABLED)' })),
    recoverable: Type.Optional(
      Type.Boolean({ description: 'Keygate keeps only a hash of each key, so `true` answers 412: leave it out' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ apiId: WIRE_EXAMPLES.apiId, prefix: 'sk', externalId: 'acme', credits: { remaining: 1000 } }],
  },
)

const CLEARS = '(null clears it)'
export const UpdateKeyBody = Type.Object(
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
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ keyId: WIRE_EXAMPLES.keyId, enabled: false }],
  },
)

export const GetKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to read: the `keyId` that keys.createKey returned'),
    decrypt: Type.Optional(
      Type.Boolean({ description: 'Show the key itself: Keygate keeps only its hash, so `true` answers 412' }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

export const DeleteKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to delete: the `keyId` that keys.createKey returned'),
    permanent: Type.Optional(
      Type.Boolean({ description: 'Accepted: Keygate always removes a deleted key (only its hash existed)' }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

export const WhoamiBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'A key itself (as keys.createKey returned it once), to find its record',
      examples: [WIRE_EXAMPLES.key],
    }),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)

// Unkey's schema takes other fields too (it has no additionalProperties: false here), and so does Keygate.
export const RerollKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to replace: the `keyId` that keys.createKey returned'),
    expiration: Type.Integer({
      minimum: 0,
      maximum: 4_102_444_800_000,
      description: 'Grace period: the old key keeps working this many milliseconds (0: it stops at once)',
      examples: [3_600_000],
    }),
  },
  { examples: [{ keyId: WIRE_EXAMPLES.keyId, expiration: 3_600_000 }] },
)

export const UpdateCreditsBody = Type.Object(
  {
    keyId: KeyIdField('The key whose credits to change: the `keyId` that keys.createKey returned'),
    operation: StringEnum(['set', 'increment', 'decrement'], {
      description: 'Set the balance to `value`, add it, or take it away (stopping at 0)',
    }),
    value: Type.Optional(
      Nullable(Remaining, 'Credits; with `set`, null (or none) takes the credits away: no limit, no refill'),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, operation: 'set', value: 100 }] },
)

export const ListKeysBody = Type.Object(
  {
    apiId: ApiIdField('The api whose keys to list: the `apiId` that apis.createApi returned'),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Keys per page, 1–100 (default 100)' })),
    cursor: Type.Optional(
      Type.String({ maxLength: 256, description: "The previous page's `pagination.cursor`, for the page after it" }),
    ),
    externalId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Only the keys of this owner (their externalId)' }),
    ),
    decrypt: Type.Optional(
      Type.Boolean({ description: 'Show the keys themselves: Keygate keeps only hashes, so `true` answers 412' }),
    ),
    revalidateKeysCache: Type.Optional(
      Type.Boolean({ description: "Unkey's cache switch: Keygate reads the store every time, so it changes nothing" }),
    ),
  },
  { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId, limit: 10 }] },
)
