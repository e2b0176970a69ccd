import { Type } from 'typebox'
import { RATELIMIT_RANGES, RATELIMIT_TEXT_LIMITS } from '../../shared/http/ratelimit-limit-schema.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from './limits.js'

/** The wire shapes of ratelimits.setOverride, getOverride, listOverrides and deleteOverride (Unkey's v1). */

/** The namespace an override call is about: by id or by name, one of them required (checked by the route). */
const NamespaceFields = {
  namespaceId: Type.Optional(
    Type.String({
      maxLength: LIMITS.idLength,
      description: 'The namespace’s id (`rlns_…`); either this or namespaceName',
    }),
  ),
  namespaceName: Type.Optional(
    Type.String({
      maxLength: RATELIMIT_TEXT_LIMITS.namespace,
      description: 'The namespace’s name, as ratelimits.limit names it; either this or namespaceId',
      examples: [WIRE_EXAMPLES.namespaceName],
    }),
  ),
}

const Identifier = (description: string, minLength = 0) =>
  Type.String({ minLength, maxLength: RATELIMIT_TEXT_LIMITS.identifier, description, examples: ['user_123'] })

const OVERRIDDEN =
  'The identifier the override is for, or a pattern where `*` stands for any characters (`user_*`): an identifier’s own override wins over a pattern’s, and the oldest matching pattern over the others'

export const SetOverrideBody = Type.Object(
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

export const OverrideQuery = Type.Object({ ...NamespaceFields, identifier: Identifier(OVERRIDDEN) })

export const DeleteOverrideBody = Type.Object(
  { ...NamespaceFields, identifier: Identifier(OVERRIDDEN) },
  { additionalProperties: false, examples: [{ namespaceName: WIRE_EXAMPLES.namespaceName, identifier: 'user_123' }] },
)

export const ListOverridesQuery = Type.Object({
  ...NamespaceFields,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Overrides per page (default 100)' })),
  cursor: Type.Optional(
    Type.String({ maxLength: 512, description: 'Where the next page starts: the `cursor` of the previous answer' }),
  ),
})

export const OverrideResponse = Type.Object({
  id: Type.String({ description: 'The override’s id' }),
  identifier: Type.String({ description: 'The identifier or pattern it is for' }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, milliseconds' }),
  async: Type.Boolean({ description: 'Whether calls it applies to are counted async' }),
})

export const ListOverridesResponse = Type.Object({
  overrides: Type.Array(OverrideResponse, { description: 'A page of the namespace’s overrides, oldest first' }),
  total: Type.Integer({ description: 'How many overrides the namespace has' }),
  cursor: Type.Optional(Type.String({ description: 'Present when there may be more: pass it to get the next page' })),
})
