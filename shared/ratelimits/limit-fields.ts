import { Type } from 'typebox'

/** Namespace names and identifiers: any text (Unkey's), bounded so that no window costs more than a short string. */
export const RATELIMIT_TEXT_LIMITS = { namespace: 512, identifier: 1024 } as const
/** The largest limit and window (those of verifyKey's ad-hoc limits). */
export const RATELIMIT_RANGES = { limit: 1_000_000_000, durationMs: 31 * 86_400_000, cost: 1_000_000 } as const

/**
 * The fields ratelimit.limit's body has on both wires (Unkey's v1 and v2), each wire giving its own bounds: the
 * identifier's length and the longest window.
 */
export function limitFields(bounds: { identifier: { minLength?: number; maxLength: number }; maxDurationMs: number }) {
  return {
    identifier: Type.String({
      ...bounds.identifier,
      description: 'Who or what is limited: a user id, an email, an ip… Each has its own window',
      examples: ['user_123'],
    }),
    limit: Type.Integer({
      minimum: 1,
      maximum: RATELIMIT_RANGES.limit,
      description: 'Units allowed per window (an override of the identifier wins)',
      examples: [10],
    }),
    duration: Type.Integer({
      minimum: 1_000,
      maximum: bounds.maxDurationMs,
      description: 'The window, milliseconds (fixed windows aligned to the epoch; an override of the identifier wins)',
      examples: [60_000],
    }),
    cost: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: RATELIMIT_RANGES.cost,
        description: 'Units this call uses (default 1); 0 reads the window without using any',
      }),
    ),
  }
}

/** What a limit's answer says of its window, on both wires. */
export const WINDOW_DOCS = {
  success: 'Whether the call may go on: false when the window has no room for its cost',
  limit: 'Units allowed per window: the override’s when one applies',
  remaining: 'Units left in this window after the call',
  reset: 'When the window ends, unix milliseconds',
} as const
