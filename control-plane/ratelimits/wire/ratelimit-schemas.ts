import { Type } from 'typebox'
import { badRequest } from '../../../shared/errors/errors.js'
import { RATELIMIT_TEXT_LIMITS } from '../../../shared/ratelimits/limit-fields.js'
import type { OverrideRecord } from '../../../shared/ratelimits/ratelimit-namespace.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { NamespaceRef } from '../ratelimit-namespaces.js'
import { LIMITS } from '../../input-limits.js'

/** The wire pieces that Unkey v1's ratelimits.setOverride, getOverride, listOverrides and deleteOverride share. */

/** The namespace an override call is about: by id or by name, one of them required (namespaceRefOf). */
export const NamespaceFields = {
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

/** The namespace v1's fields name (an empty one counts as absent): the id wins when both are given (Unkey's rule). */
export function namespaceRefOf(fields: { namespaceId?: string; namespaceName?: string }): NamespaceRef {
  const { namespaceId, namespaceName } = fields
  if (namespaceId) return { id: namespaceId }
  if (namespaceName) return { name: namespaceName }
  throw badRequest('You must provide a namespaceId or a namespaceName')
}

export const Identifier = (description: string, minLength = 0) =>
  Type.String({ minLength, maxLength: RATELIMIT_TEXT_LIMITS.identifier, description, examples: ['user_123'] })

export const OVERRIDDEN =
  'The identifier the override is for, or a pattern where `*` stands for any characters (`user_*`): an identifier’s own override wins over a pattern’s, and the oldest matching pattern over the others'

export const OverrideResponse = Type.Object({
  id: Type.String({ description: 'The override’s id' }),
  identifier: Type.String({ description: 'The identifier or pattern it is for' }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, milliseconds' }),
  async: Type.Boolean({ description: 'Whether calls it applies to are counted async' }),
})

/** An override as v1 shows it. */
export const overrideResponseOf = (override: OverrideRecord) => ({
  id: override.id,
  identifier: override.identifier,
  limit: override.limit,
  duration: override.duration,
  async: override.async,
})
