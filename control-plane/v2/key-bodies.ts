import { Type, type TSchema } from 'typebox'
import { MAX_CREDITS } from '../../shared/credits.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { ApiIdField } from '../schemas/fields.js'
import { NamedRateLimits } from '../schemas/identity-schemas.js'
import { Names } from '../schemas/key-schemas.js'

/**
 * Unkey v2's request bodies for keys (V2Keys*RequestBody, V2ApisListKeysRequestBody), with Keygate's bounds where
 * they are narrower (credits up to 1e12, 100 permissions or roles per key, a prefix without `_`).
 */

export const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description })

export const Name = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'A name for people',
  examples: ['acme checkout'],
})
export const EXTERNAL_ID = {
  minLength: 1,
  maxLength: 255,
  pattern: '^[a-zA-Z0-9_.-]+$',
  description: 'Who the key belongs to (a user or organisation id in your system): its identity, made when missing',
  examples: ['acme'],
}
export const Meta = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: 100,
  description: 'Any JSON object (≤ 64 KiB, ≤ 16 levels), returned by every verification of the key',
  examples: [{ plan: 'pro' }],
})
export const Expires = Type.Integer({
  minimum: 0,
  maximum: 4_102_444_800_000,
  description: 'When the key stops verifying (EXPIRED), unix milliseconds',
  examples: [1_893_456_000_000],
})
export const Remaining = Type.Integer({ minimum: 0, maximum: MAX_CREDITS, examples: [1000] })
export const Ratelimits = NamedRateLimits(
  "The key's named limits: verifyKey's `ratelimits[]` names them, or they apply themselves (autoApply)",
)
export const Permissions = Names(
  "The key's permissions by slug, checked by verifyKey's `permissions`; a slug with no permission is created",
  ['documents.read'],
)
export const Roles = Names(
  'Roles by name, each granting the key its permissions; each must exist (404)',
  ['editor'],
  'role',
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
