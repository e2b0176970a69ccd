import { Type, type Static } from 'typebox'
import type { NamespaceLimitRequest } from '../namespace-limits.js'
import type { LimitOutcome } from '../ratelimit.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'

/** Namespace names and identifiers: any text (Unkey's), bounded so that no window costs more than a short string. */
export const RATELIMIT_TEXT_LIMITS = { namespace: 512, identifier: 1024 } as const
/** The largest limit and window (those of verifyKey's ad-hoc limits). */
export const RATELIMIT_RANGES = { limit: 1_000_000_000, durationMs: 31 * 86_400_000, cost: 1_000_000 } as const

const Meta = (description: string) =>
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean(), Type.Number(), Type.Null()]), { description })

/** The wire shape of ratelimits.limit (Unkey's v1), served by the verifier and by the control plane. */
export const LimitBody = Type.Object(
  {
    namespace: Type.Optional(
      Type.String({
        maxLength: RATELIMIT_TEXT_LIMITS.namespace,
        description:
          'Groups limits, e.g. one namespace per API; overrides are set per namespace (default `default`). Made on first use',
        examples: [WIRE_EXAMPLES.namespaceName],
      }),
    ),
    identifier: Type.String({
      maxLength: RATELIMIT_TEXT_LIMITS.identifier,
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
      maximum: RATELIMIT_RANGES.durationMs,
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
    async: Type.Optional(
      Type.Boolean({
        description:
          'false (default): exact across every process (one Redis script); true: counted in memory and reconciled every poll',
      }),
    ),
    meta: Type.Optional(Meta('Accepted (Unkey’s analytics) and not stored')),
    resources: Type.Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.String({ maxLength: 256, description: 'What kind of resource, e.g. `project`' }),
            id: Type.String({ maxLength: 256, description: "The resource's id" }),
            name: Type.Optional(Type.String({ maxLength: 256, description: "The resource's name, for people" })),
            meta: Type.Optional(Meta('Accepted and not stored')),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'Accepted (Unkey’s audit log of limited resources) and not stored' },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ namespace: WIRE_EXAMPLES.namespaceName, identifier: 'user_123', limit: 10, duration: 60_000 }],
  },
)

export const LimitResponse = Type.Object(
  {
    success: Type.Boolean({
      description: 'Whether the call may go on: false when the window has no room for its cost',
    }),
    limit: Type.Integer({ description: 'Units allowed per window: the override’s when one applies' }),
    remaining: Type.Integer({ description: 'Units left in this window after the call' }),
    reset: Type.Number({ description: 'When the window ends, unix milliseconds' }),
  },
  { examples: [{ success: true, limit: 10, remaining: 9, reset: 1_790_000_040_000 }] },
)

export type LimitBodyInput = Static<typeof LimitBody>

/** The request, Unkey's defaults applied. */
export function limitRequestOf(body: LimitBodyInput): NamespaceLimitRequest {
  return {
    namespace: body.namespace ?? 'default',
    identifier: body.identifier,
    limit: body.limit,
    duration: body.duration,
    cost: body.cost ?? 1,
    async: body.async ?? false,
  }
}

export function limitAnswerOf(outcome: LimitOutcome): Static<typeof LimitResponse> {
  return { success: outcome.ok, limit: outcome.limit, remaining: outcome.remaining, reset: outcome.reset }
}
