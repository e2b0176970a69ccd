import { Type } from 'typebox'
import type { OperationDoc } from '../http/operation-doc.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'
import { limitFields, WINDOW_DOCS } from './limit-fields.js'

/**
 * v2's ratelimit.limit (Unkey's v2) as the API reference describes it; below, multiLimit's, then the bodies and
 * answers of both: their whole contract. Served by the verifier and by the control plane from one registration
 * (shared/ratelimits/v2-limit-routes.ts); control-plane/openapi/v2-operations.ts documents them from here.
 */
export const V2_LIMIT_DOC: OperationDoc = {
  summary: 'Count a call of an identifier in a namespace: may it go on?',
  description:
    'Also served by the verifier sidecar, from memory (`@unkey/ratelimit` calls it). Needs `ratelimit.<namespaceId|*>.limit`; a namespace named for the first time is made when the root key also has `ratelimit.*.create_namespace`. A call over the limit is an answer (`success: false`), not an error.',
  rootKey: true,
  tag: 'v2 ratelimit',
}

/** v2's ratelimit.multiLimit: several limits in one call, each charged only if all have room. */
export const V2_MULTI_LIMIT_DOC: OperationDoc = {
  summary: 'Count a call against several limits at once: may it go on?',
  description:
    'Also served by the verifier sidecar. Needs `ratelimit.*.limit`, or `ratelimit.<namespaceId>.limit` on every namespace named.',
  rootKey: true,
  tag: 'v2 ratelimit',
}

/** Unkey v2's bounds: names and identifiers of 1 to 512 characters, windows of 1 second to 30 days. */
const V2_TEXT = { minLength: 1, maxLength: 512 } as const
const V2_MAX_DURATION_MS = 30 * 86_400_000

/** V2RatelimitLimitRequestBody: no `async` (v2 counts every call exactly, unless an override says async). */
export const V2LimitBody = Type.Object(
  {
    namespace: Type.String({
      ...V2_TEXT,
      description:
        'The namespace, by name or by id (`rlns_…`). A name not seen before makes the namespace (the root key needs ratelimit.*.create_namespace)',
      examples: [WIRE_EXAMPLES.namespaceName],
    }),
    ...limitFields({ identifier: V2_TEXT, maxDurationMs: V2_MAX_DURATION_MS }),
  },
  {
    additionalProperties: false,
    examples: [{ namespace: WIRE_EXAMPLES.namespaceName, identifier: 'user_123', limit: 10, duration: 60_000 }],
  },
)

const Window = {
  limit: Type.Integer({ description: WINDOW_DOCS.limit }),
  remaining: Type.Integer({ description: WINDOW_DOCS.remaining }),
  reset: Type.Integer({ description: WINDOW_DOCS.reset }),
  overrideId: Type.Optional(Type.String({ description: 'The override that set the limit, when one did' })),
}

export const V2LimitData = Type.Object({
  ...Window,
  success: Type.Boolean({ description: WINDOW_DOCS.success }),
})

export const V2MultiLimitBody = Type.Array(V2LimitBody, {
  minItems: 1,
  maxItems: 100,
  description: 'The limits to check together: every window is charged only if each has room',
})

export const V2MultiLimitData = Type.Object({
  passed: Type.Boolean({ description: 'Whether every limit had room (then, and only then, each was charged)' }),
  limits: Type.Array(
    Type.Object({
      namespace: Type.String({ description: 'The namespace as the request named it' }),
      identifier: Type.String({ description: 'The identifier limited' }),
      ...Window,
      passed: Type.Boolean({ description: 'Whether this window had room for its cost' }),
    }),
    { description: 'One per limit, in the order asked' },
  ),
})
