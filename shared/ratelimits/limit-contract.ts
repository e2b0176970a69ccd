import { Type, type Static } from 'typebox'
import type { OperationDoc } from '../http/operation-doc.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'
import { limitFields, RATELIMIT_RANGES, RATELIMIT_TEXT_LIMITS, WINDOW_DOCS } from './limit-fields.js'
import type { NamespaceLimitRequest } from './namespace-limits.js'
import type { LimitOutcome } from './ratelimit.js'

/**
 * v1's ratelimits.limit (Unkey's v1), whole: what the API reference says of it, its body, its answer, and Unkey's
 * defaults. Served by the control plane (control-plane/ratelimits/limit.v1.ts, with a root key) and by the verifier
 * (verifier/ratelimits-limit-route.ts, without), from this one definition. The reference describes the control
 * plane's, a management route: control-plane/openapi/operations.ts documents it from its adapter's `doc`.
 */
export const LIMIT_DOC: Omit<OperationDoc, 'rootKey'> = {
  summary: 'Count a call of an identifier in a namespace: may it go on? (the standalone rate-limit service)',
  description:
    "Also served by the verifier sidecar, without a root key (it is reachable only beside your API): call it there to rate-limit anything next to your API. Here it needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. Exact across every process unless `async` (or the identifier's override) says otherwise.",
  tag: 'ratelimits',
}

const Meta = (description: string) =>
  Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean(), Type.Number(), Type.Null()]), { description })

/** The request body. */
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
    ...limitFields({
      identifier: { maxLength: RATELIMIT_TEXT_LIMITS.identifier },
      maxDurationMs: RATELIMIT_RANGES.durationMs,
    }),
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

/** The 200 answer. */
export const LimitResponse = Type.Object(
  {
    success: Type.Boolean({ description: WINDOW_DOCS.success }),
    limit: Type.Integer({ description: WINDOW_DOCS.limit }),
    remaining: Type.Integer({ description: WINDOW_DOCS.remaining }),
    reset: Type.Number({ description: WINDOW_DOCS.reset }),
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
