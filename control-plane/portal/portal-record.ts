import { Type, type Static } from 'typebox'
import { KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../shared/key-material.js'
import { CreditsLowThreshold, Refill } from '../schemas/key-schemas.js'
import { Ratelimits, Remaining } from '../v2/key-bodies.js'

/** The longest a portal may let its keys live, ms (10 years). */
const MAX_KEY_LIFETIME_MS = 10 * 365 * 86_400_000

/** Settings every key created through a portal gets: the operator's, never the browser's. */
export const PortalKeyDefaults = Type.Object(
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
export type PortalKeyDefaults = Static<typeof PortalKeyDefaults>

/** What a portal allows when it does not say. */
export const DEFAULT_MAX_KEYS_PER_IDENTITY = 20

/** A portal as stored (an entity `portal:<id>`, unique by slug). */
export interface PortalRecord {
  id: string
  /** `[a-z0-9-]{3,64}`: sessions name a portal by it or by its id. */
  slug: string
  /** The page's title. */
  name: string
  apiIds: string[]
  enabled: boolean
  /** An https URL of the logo the page shows. */
  logoUrl?: string
  /** `#rrggbb`: the page's accent colour. */
  accentColor?: string
  keyDefaults?: PortalKeyDefaults
  /** Keys one identity may hold in each of the portal's apis: the portal creates no more. */
  maxKeysPerIdentity: number
  createdAt: number
  updatedAt?: number
}
