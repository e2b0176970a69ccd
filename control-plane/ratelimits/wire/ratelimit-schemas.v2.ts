import { Type } from 'typebox'
import type { OverrideRecord } from '../../../shared/ratelimits/ratelimit-namespace.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'

/** The wire pieces that Unkey v2's ratelimit.setOverride, getOverride, listOverrides and deleteOverride share. */

const Text = (description: string, examples: string[]) =>
  Type.String({ minLength: 1, maxLength: 512, description, examples })

export const NamespaceField = Text('The namespace, by name or by id (`rlns_…`)', [WIRE_EXAMPLES.namespaceName])

export const IdentifierField = Text(
  'The identifier the override is for, or a pattern where `*` stands for any characters (`user_*`), exactly as set',
  ['user_123'],
)

/** One override of a namespace: getOverride's and deleteOverride's body. */
export const OverrideRef = Type.Object(
  { namespace: NamespaceField, identifier: IdentifierField },
  { additionalProperties: false },
)

/** Unkey v2's `RatelimitOverride`. */
export const V2Override = Type.Object({
  overrideId: Type.String({ description: 'The override’s id' }),
  identifier: Type.String({ description: 'The identifier or pattern it is for' }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, milliseconds' }),
})

export const overrideData = (override: OverrideRecord) => ({
  overrideId: override.id,
  identifier: override.identifier,
  limit: override.limit,
  duration: override.duration,
})
