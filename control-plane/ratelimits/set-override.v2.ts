import { Type } from 'typebox'
import { RATELIMIT_RANGES } from '../../shared/ratelimits/limit-fields.js'
import { v2Route } from '../http/management-route.js'
import { IdentifierField, NamespaceField } from './wire/ratelimit-schemas.v2.js'
import { setOverride } from './set-override.js'

const SetOverrideBody = Type.Object(
  {
    namespace: NamespaceField,
    identifier: IdentifierField,
    limit: Type.Integer({
      minimum: 0,
      maximum: RATELIMIT_RANGES.limit,
      description: 'Units allowed per window, in place of the request’s (0 refuses every call)',
      examples: [100],
    }),
    duration: Type.Integer({
      minimum: 1_000,
      maximum: RATELIMIT_RANGES.durationMs,
      description: 'The window, milliseconds, in place of the request’s',
      examples: [60_000],
    }),
  },
  { additionalProperties: false },
)

/** v2's ratelimit.setOverride: the namespace by name or by id; v2 has no `async`, so an override keeps its own. */
export const setOverrideV2 = v2Route({
  operation: 'ratelimit.setOverride',
  doc: {
    summary: "Set an identifier's (or a `*` pattern's) limit in a namespace, in place of the one calls send",
    description: 'Every verifier applies it within the revocation bound.',
    tag: 'v2 ratelimit',
  },
  body: SetOverrideBody,
  data: Type.Object({ overrideId: Type.String({ description: 'The override’s id (the same when one changed)' }) }),
  handle: async ({ namespace, identifier, limit, duration }, caller, deps) => {
    const override = await setOverride(deps, caller, {
      namespace: { nameOrId: namespace },
      identifier,
      limit,
      duration,
    })
    return { data: { overrideId: override.id } }
  },
})
