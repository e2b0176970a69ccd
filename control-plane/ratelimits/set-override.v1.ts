import { Type } from 'typebox'
import { RATELIMIT_RANGES } from '../../shared/ratelimits/limit-fields.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { Identifier, NamespaceFields, namespaceRefOf, OVERRIDDEN } from './wire/ratelimit-schemas.js'
import { setOverride } from './set-override.js'

const SetOverrideBody = Type.Object(
  {
    ...NamespaceFields,
    identifier: Identifier(OVERRIDDEN, 3),
    limit: Type.Integer({
      minimum: 0,
      maximum: RATELIMIT_RANGES.limit,
      description: 'Units allowed per window, in place of the request’s (0 refuses every call)',
      examples: [10],
    }),
    duration: Type.Integer({
      minimum: 1_000,
      maximum: RATELIMIT_RANGES.durationMs,
      description: 'The window, milliseconds, in place of the request’s',
      examples: [60_000],
    }),
    async: Type.Optional(
      Type.Boolean({ description: 'Whether calls it applies to are counted async (default false: exact)' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ namespaceName: WIRE_EXAMPLES.namespaceName, identifier: 'user_123', limit: 100, duration: 60_000 }],
  },
)

/** v1's ratelimits.setOverride: the namespace by id or by name; `async` left out sets it false. */
export const setOverrideV1 = v1Route({
  operation: 'ratelimits.setOverride',
  method: 'POST',
  doc: {
    summary: "Set an identifier's (or a `*` pattern's) limit in a namespace, in place of the one calls send",
    description: 'Every verifier applies it within the revocation bound. A namespace named for the first time is made.',
    tag: 'ratelimits',
  },
  input: SetOverrideBody,
  answer: Type.Object({ overrideId: Type.String({ description: 'The override’s id' }) }),
  handle: async ({ identifier, limit, duration, async, ...named }, caller, deps) => {
    const namespace = namespaceRefOf(named)
    const override = await setOverride(deps, caller, { namespace, identifier, limit, duration, async: async ?? false })
    return { overrideId: override.id }
  },
})
