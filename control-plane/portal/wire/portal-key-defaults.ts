import { Type, type Static } from 'typebox'
import { KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../../shared/keys/key-material.js'
import { CreditsLowThreshold, Refill } from '../../keys/wire/key-schemas.js'
import { Ratelimits, Remaining } from '../../keys/wire/key-bodies.v2.js'
import type { PortalKeyDefaults } from '../portal-record.js'

/** The longest a portal may let its keys live, ms (10 years). */
const MAX_KEY_LIFETIME_MS = 10 * 365 * 86_400_000

/** Settings every key created through a portal gets: the operator's, never the browser's. */
export const PortalKeyDefaultsBody = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({ pattern: KEY_PREFIX_PATTERN, description: 'Starts every key (`sk` gives `sk_…`)' }),
    ),
    byteLength: Type.Optional(
      Type.Integer({ minimum: KEY_BYTES_MIN, maximum: KEY_BYTES_MAX, description: 'Random bytes in each key' }),
    ),
    credits: Type.Optional(
      Type.Object(
        {
          remaining: { ...Remaining, minimum: 1, description: 'The balance a new key starts with' },
          refill: Type.Optional(Refill),
          lowThreshold: Type.Optional(CreditsLowThreshold('`key.credits.low` is sent at or below this balance')),
        },
        { additionalProperties: false, description: 'Credits each new key starts with, and how they refill' },
      ),
    ),
    ratelimits: Type.Optional(Ratelimits),
    expiresInMs: Type.Optional(
      Type.Integer({
        minimum: 60_000,
        maximum: MAX_KEY_LIFETIME_MS,
        description: 'Each key expires this long after it is made, ms',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'What every key created in the portal gets (the customer chooses only its name)',
  },
)
/** true when A and B accept the same values and name the same fields. */
type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false
// The schema and the domain's type say the same: a body the schema passes is a PortalKeyDefaults, and back.
const sameShape: Same<Static<typeof PortalKeyDefaultsBody>, PortalKeyDefaults> = true
void sameShape
