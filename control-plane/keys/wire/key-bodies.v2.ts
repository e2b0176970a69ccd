import { Type, type TSchema } from 'typebox'
import { MAX_CREDITS } from '../../../shared/keys/credits.js'
import { NamedRateLimits } from '../../wire/named-limit-schemas.js'
import { Names } from './key-schemas.js'

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
